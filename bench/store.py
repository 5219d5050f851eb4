"""Store benchmark: round trips per operation, stored bytes per match, CAS throughput, and
REST act throughput on the embedded SQLite store against the old in-memory store.

    .venv/bin/python -m bench.store [--redis-url URL] [--rounds 5] [--ops 2000] [--cluster]
                                    [--act-seconds 3]

Runs against $SKYLINE_BENCH_REDIS_URL, else redis://127.0.0.1:6379, else a redis-server it
starts on a free port; keys live under a unique prefix and are deleted afterwards. Reports
medians over ``--rounds`` rounds; the throughput figures are for comparison between
backends and settings on one machine, not absolute promises.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

from bench.memory_store import MemoryStore
from service.store import MatchStore, RedisStore, SqliteStore


def typical_record(game: str = "ny1901") -> tuple[bytes, str]:
    """What the service stores for a fresh 4-player match of ``game``: its ``MatchRecord``
    (engine state + seat token digests + header) when the API package is importable, else
    the engine's state alone, else a synthetic 2 KiB record."""
    try:
        from service import games

        engine = games.get(game)
        state = engine.dumps(engine.setup(4, None, 1901))
    except Exception:
        return os.urandom(2048), "synthetic 2 KiB record"
    try:
        import hashlib

        from service.matches.records import MatchRecord

        tokens = tuple(hashlib.sha256(b"seat%d" % i).hexdigest() for i in range(4))
        record = MatchRecord(game=game, players=4, options=None, seed=1901, tokens=tokens,
                             state=state)
        return record.encode(), f"{game} 4-player MatchRecord after setup"
    except Exception:
        return state, f"{game} 4-player engine state after setup"


@contextlib.contextmanager
def redis_url(given: str | None) -> Iterator[str]:
    url = given or os.environ.get("SKYLINE_BENCH_REDIS_URL") or "redis://127.0.0.1:6379"
    from tests.support.redis_servers import RedisServer, ping

    if ping(url):
        yield url
        return
    with RedisServer.start() as server:
        yield server.url


async def round_trips(store: RedisStore, record: bytes) -> dict[str, float]:
    m = uuid.uuid4().hex
    await store.load_scripts()  # cached on every primary first: steady-state figures
    costs: dict[str, float] = {}

    async def cost(name: str, op: object) -> None:
        before = store.round_trips
        await op  # type: ignore[misc]
        costs[name] = store.round_trips - before

    await cost("create", store.create(m, record))
    await cost("load", store.load(m))
    await cost("compare_and_set (won)", store.compare_and_set(m, 0, record, b"entry"))
    await cost("compare_and_set (lost race)", store.compare_and_set(m, 0, record, b"entry"))
    await cost("log(after)", store.log(m, 0))
    before = store.round_trips
    version, current = await store.load(m)
    await store.compare_and_set(m, version, current, b"entry")
    costs["action = load + compare_and_set"] = store.round_trips - before
    return costs


async def stored_bytes(
    store: RedisStore, record: bytes, entry: bytes, writes: int
) -> dict[str, int]:
    m = uuid.uuid4().hex
    await store.create(m, record)
    sizes = {"hash after create": int(await store.client.memory_usage(store.key(m)) or 0)}
    for v in range(writes):
        await store.compare_and_set(m, v, record, entry)
    sizes[f"hash (record + log) after {writes} writes"] = int(
        await store.client.memory_usage(store.key(m)) or 0
    )
    return sizes


async def cas_rate(store: MatchStore, record: bytes, ops: int, tasks: int) -> float:
    """CAS per second: ``tasks`` concurrent writers, each on its own match, load + CAS."""
    ids = [uuid.uuid4().hex for _ in range(tasks)]
    for m in ids:
        await store.create(m, record)
    per_task = ops // tasks

    async def writer(m: str) -> None:
        for v in range(per_task):
            assert await store.compare_and_set(m, v, record, b"entry")

    start = time.perf_counter()
    await asyncio.gather(*(writer(m) for m in ids))
    return per_task * tasks / (time.perf_counter() - start)


async def contended_rate(store: MatchStore, record: bytes, ops: int,
                         tasks: int) -> tuple[float, float]:
    """``tasks`` writers on ONE match with load + CAS + retry: (successes/s, attempts per
    success)."""
    m = uuid.uuid4().hex
    await store.create(m, record)
    attempts = 0
    per_task = ops // tasks

    async def writer() -> None:
        nonlocal attempts
        for _ in range(per_task):
            while True:
                version, _ = await store.load(m)
                attempts += 1
                if await store.compare_and_set(m, version, record, b"entry"):
                    break

    start = time.perf_counter()
    await asyncio.gather(*(writer() for _ in range(tasks)))
    done = per_task * tasks
    return done / (time.perf_counter() - start), attempts / done


async def cluster_figures(args: argparse.Namespace, record: bytes) -> None:
    """Round trips and CAS/s on a local 3-primary Redis Cluster started for the run."""
    from tests.support.redis_servers import RedisClusterProcesses

    with RedisClusterProcesses.start() as cluster:
        store = RedisStore.from_cluster_nodes(cluster.nodes_arg, prefix="bench:")
        try:
            print("\nlocal Redis Cluster (3 primaries + 3 replicas)")
            print("\nround trips per operation")
            for name, n in (await round_trips(store, record)).items():
                print(f"  {name:36} {n:g}")
            print(f"\nCAS/s, median of {args.rounds} rounds of {args.ops} writes")
            for tasks in (1, 16):
                rates = [
                    await cas_rate(store, record, args.ops, tasks) for _ in range(args.rounds)
                ]
                print(f"  redis cluster      {tasks:2} writers, own matches   "
                      f"{statistics.median(rates):9.0f}")
        finally:
            await store.close()


async def main_async(args: argparse.Namespace) -> None:
    for game in ("ny1901", "ginkgopolis"):
        record, what = typical_record(game)
        print(f"record: {what}, {len(record)} bytes")
    record, what = typical_record()
    entry = os.urandom(200)
    print(f"used below: {what}; log entry: {len(entry)} bytes")
    if args.cluster:
        await cluster_figures(args, record)
        return
    await act_figures(args)
    if args.act_only:
        return
    with redis_url(args.redis_url) as url:
        prefix = f"bench:{uuid.uuid4().hex[:8]}:"
        store = RedisStore.from_url(url, prefix=prefix)
        try:
            print(f"\nRedis at {url}")
            print("\nround trips per operation")
            for name, n in (await round_trips(store, record)).items():
                print(f"  {name:36} {n:g}")
            print("\nstored bytes (MEMORY USAGE)")
            for name, n in (await stored_bytes(store, record, entry, 100)).items():
                print(f"  {name:36} {n}")
            print(f"\nCAS/s, median of {args.rounds} rounds of {args.ops} writes")
            with tempfile.TemporaryDirectory() as folder:
                sqlite = SqliteStore(Path(folder) / "bench.sqlite3")
                stores: list[tuple[str, MatchStore]] = [
                    ("old memory store", MemoryStore()),
                    ("sqlite file (WAL)", sqlite),
                    ("redis single node", store),
                ]
                try:
                    for label, st in stores:
                        await cas_figures(label, st, record, args)
                finally:
                    await sqlite.close()
        finally:
            keys = [k async for k in store.client.scan_iter(match=prefix + "*", count=1000)]
            for k in keys:
                await store.client.delete(k)
            await store.close()


async def cas_figures(label: str, store: MatchStore, record: bytes,
                      args: argparse.Namespace) -> None:
    for tasks in (1, 16):
        rates = [await cas_rate(store, record, args.ops, tasks) for _ in range(args.rounds)]
        print(f"  {label:18} {tasks:2} writers, own matches   {statistics.median(rates):9.0f}")
    results = [await contended_rate(store, record, args.ops // 4, 8) for _ in range(args.rounds)]
    rate = statistics.median(r[0] for r in results)
    tries = statistics.median(r[1] for r in results)
    print(f"  {label:18}  8 writers, one match     {rate:9.0f}"
          f"   ({tries:.2f} attempts per success)")


async def act_rate(store: MatchStore, seconds: float, writers: int = 16) -> float:
    """REST act throughput: ``writers`` clients, each playing its own 2-player New York 1901
    match through the app in process (state, legal moves, act), for ``seconds``; acts/s."""
    import httpx

    from service.app import Settings, create_app
    from service.limits import LimitSettings

    # Limits off (`--rate-limits off`): one client measured at full speed.
    app = create_app(store, settings=Settings(limits=LimitSettings(enabled=False)))
    done = 0
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:

        async def writer(n: int) -> None:
            nonlocal done
            created = (await client.post("/v1/matches", json={
                "game": "ny1901", "players": 2, "seed": n})).json()
            url = f"/v1/matches/{created['matchId']}"
            auth = {s["seat"]: {"Authorization": f"Bearer {s['token']}"}
                    for s in created["seats"]}
            end = time.perf_counter() + seconds
            while time.perf_counter() < end:
                state = (await client.get(url)).json()
                if state["status"] == "finished":
                    return
                seat = state["activeSeats"][0]
                moves = (await client.get(f"{url}/legal-moves", headers=auth[seat])).json()
                answer = await client.post(f"{url}/actions", headers=auth[seat],
                                           json={"action": moves["moves"][0]})
                assert answer.status_code == 200, answer.text
                done += 1

        start = time.perf_counter()
        await asyncio.gather(*(writer(n) for n in range(writers)))
        elapsed = time.perf_counter() - start
    return done / elapsed


async def act_figures(args: argparse.Namespace) -> None:
    """REST act/s on the old memory store and on SQLite (file and in memory), same run."""
    print(f"\nREST act/s (16 clients, in-process ASGI), median of {args.rounds} rounds of "
          f"{args.act_seconds:g} s")
    rates: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        makers: list[tuple[str, Callable[[int], MatchStore]]] = [
            ("old memory store", lambda _: MemoryStore()),
            ("sqlite file (WAL)", lambda n: SqliteStore(Path(folder) / f"act{n}.sqlite3")),
            ("sqlite :memory:", lambda _: SqliteStore(":memory:")),
        ]
        for n in range(args.rounds):  # interleaved, so drift hits every store alike
            for label, make in makers:
                st = make(n)
                try:
                    rate = await act_rate(st, args.act_seconds)
                finally:
                    await st.close()
                rates.setdefault(label, []).append(rate)
    base = statistics.median(rates["old memory store"])
    for label, measured in rates.items():
        rate = statistics.median(measured)
        print(f"  {label:18} {rate:9.0f}   ({rate / base:.2f} x the old memory store)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis-url", default=None)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--ops", type=int, default=2000)
    parser.add_argument("--act-seconds", type=float, default=3.0,
                        help="length of one REST act round")
    parser.add_argument("--act-only", action="store_true",
                        help="only the REST act figures (no Redis needed)")
    parser.add_argument("--cluster", action="store_true",
                        help="measure on a local Redis Cluster started for the run instead")
    args = parser.parse_args(argv)
    asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.path.insert(0, os.getcwd())  # tests.support for starting a server when none runs
    main()
