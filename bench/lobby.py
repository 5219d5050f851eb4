"""Lobby benchmark (issue 17): 50 players racing for one open seat through three replicas,
and the lobby list's latency with 10,000 waiting public matches.

Run: ``.venv/bin/python -m bench.lobby`` (Redis at ``--redis-url``, default
``redis://127.0.0.1:6379``, keys under a fresh prefix deleted at the end; ``--store
redis,cluster`` adds a private 3-primary cluster), ``--quick`` (1,000 matches, 5 races),
``--json PATH``.

What runs (in this process: the service layer without HTTP, one ``MatchService`` +
``PlayerService`` + ``TableService`` per replica on its own store connection, as replicas
are):

- **Join race**: ``--races`` (20) times, a host creates a public 2-seat New York 1901 match
  with one open seat and 50 guests post ``join`` for seat 1 at once, through a random
  replica each. Reported: winners per race (the goal: exactly 1), the other answers' codes
  (the goal: all ``seat_taken``), the time until all 50 answered (p50/p99 over races) and
  per join (p50/p99).
- **Lobby list**: ``--matches`` (10,000) waiting public matches (half New York 1901 for 2-4
  seats, half Ginkgopolis for 2-5) created by 100 hosts, at most 64 in flight; then
  ``--reads`` (200) reads of each page kind through a random replica: the first page (limit
  20) unfiltered, filtered by game, by game and seat count, and a page deep in the list (a
  cursor after 5,000 entries). Reported: p50/p99 per kind, and the same for reading one
  match's state (the reference).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from typing import Any

from service.errors import ApiError
from service.identity.callers import Caller
from service.matches import MatchService
from service.matches.models import CreateMatchRequest
from service.players import PlayerService
from service.players.listing import encode_cursor
from service.players.models import CreatePlayerRequest
from service.store.redis import RedisStore
from service.tables import TableService
from service.tables.models import JoinRequest

from .quick_match import _pct


@dataclass
class Replica:
    store: RedisStore
    matches: MatchService
    players: PlayerService
    tables: TableService


def _replicas(kind: str, where: str, prefix: str, count: int) -> list[Replica]:
    out = []
    for _ in range(count):
        store = (RedisStore.from_url(where, prefix=prefix) if kind == "redis"
                 else RedisStore.from_cluster_nodes(where, prefix=prefix))
        matches = MatchService(store, ttl_finished=None, ttl_idle=None)
        players = PlayerService(store, matches)
        out.append(Replica(store, matches, players, TableService(players, matches)))
    return out



async def _guest(replica: Replica, name: str) -> Caller:
    created = await replica.players.create_guest(CreatePlayerRequest(name=name))
    caller = await replica.players.authenticate(created.token)
    assert isinstance(caller, Caller)
    return caller


async def _waiting(replica: Replica, host: Caller, game: str, seats: int) -> str:
    body = {"game": game, "visibility": "public",
            "seats": [{"player": "me"}, *[{"open": True}] * (seats - 1)]}
    created = await replica.tables.create_match(host, CreateMatchRequest.model_validate(body))
    return created.match_id


async def races(replicas: list[Replica], args: argparse.Namespace,
                rng: random.Random) -> dict[str, Any]:
    racers = [await _guest(replicas[n % 3], f"R{n}") for n in range(50)]
    host = await _guest(replicas[0], "Host")
    winners: list[int] = []
    codes: Counter[str] = Counter()
    whole_ms: list[float] = []
    join_ms: list[float] = []
    for race in range(args.races):
        match_id = await _waiting(replicas[race % 3], host, "ny1901", 2)

        async def join(who: Caller, match_id: str = match_id) -> str:
            began = time.perf_counter()
            try:
                await rng.choice(replicas).tables.join(who, match_id, JoinRequest(seat=1))
                return "won"
            except ApiError as error:
                return error.code
            finally:
                join_ms.append((time.perf_counter() - began) * 1000)

        began = time.perf_counter()
        answers = await asyncio.gather(*(join(who) for who in racers))
        whole_ms.append((time.perf_counter() - began) * 1000)
        winners.append(answers.count("won"))
        codes.update(a for a in answers if a != "won")
        _, record = await replicas[0].matches.load_record(match_id)
        seated = [p.player for p in record.seat_players if p is not None]
        assert record.started and len(seated) == 2, "a race left the match wrong"
    return {
        "races": args.races, "winners per race": sorted(set(winners)),
        "other answers": dict(codes),
        "all 50 answered p50/p99 ms": [round(_pct(whole_ms, 0.5)), round(_pct(whole_ms, 0.99))],
        "one join p50/p99 ms": [round(_pct(join_ms, 0.5)), round(_pct(join_ms, 0.99))],
    }


async def lists(replicas: list[Replica], args: argparse.Namespace,
                rng: random.Random) -> dict[str, Any]:
    hosts = [await _guest(replicas[n % 3], f"H{n}") for n in range(100)]
    gate = asyncio.Semaphore(64)
    made: list[str] = []

    async def make(n: int) -> None:
        game, seats = (("ny1901", 2 + n % 3) if n % 2 == 0 else ("ginkgopolis", 2 + n % 4))
        async with gate:
            made.append(await _waiting(replicas[n % 3], hosts[n % 100], game, seats))

    began = time.perf_counter()
    step = max(args.matches // 10, 1)
    for first in range(0, args.matches, step):
        await asyncio.gather(*(make(n) for n in range(first, min(first + step,
                                                                   args.matches))))
        print(f"  {len(made):,} waiting matches created", flush=True)
    create_s = time.perf_counter() - began
    reader = hosts[0]
    deep = encode_cursor(await _member_at(replicas[0], reader.app, args.matches // 2))
    kinds: dict[str, Any] = {
        "first page": {},
        "by game": {"game": "ny1901"},
        "by game and seats": {"game": "ginkgopolis", "players": 3},
        "deep page (after half)": {"cursor": deep},
    }
    out: dict[str, Any] = {"matches": args.matches, "created in s": round(create_s, 1)}
    for name, query in kinds.items():
        times: list[float] = []
        for _ in range(args.reads):
            began = time.perf_counter()
            page = await rng.choice(replicas).tables.lobby(
                reader, game=query.get("game"), players=query.get("players"),
                cursor=query.get("cursor"), limit=20)
            times.append((time.perf_counter() - began) * 1000)
            assert len(page.items) == 20, f"{name}: a short page"
        out[f"{name} p50/p99 ms"] = [round(_pct(times, 0.5), 2), round(_pct(times, 0.99), 2)]
    one = made[0]
    times = []
    for _ in range(args.reads):
        began = time.perf_counter()
        await rng.choice(replicas).matches.get_state(one, reader)
        times.append((time.perf_counter() - began) * 1000)
    out["one match's state p50/p99 ms (reference)"] = [round(_pct(times, 0.5), 2),
                                                       round(_pct(times, 0.99), 2)]
    first = out["first page p50/p99 ms"][0]
    out["first page / one state (p50)"] = round(first / statistics.median(times), 1)
    return out


async def _member_at(replica: Replica, app: str, position: int) -> str:
    """The lobby index member at ``position`` (for a cursor deep in the list)."""
    after: str | None = None
    seen = 0
    while True:
        members = await replica.players.store.index_page(f"lobby:{app}", "w", after=after,
                                                         limit=500)
        if seen + len(members) > position:
            return members[position - seen]
        seen += len(members)
        after = members[-1]


async def bench(kind: str, where: str, args: argparse.Namespace) -> dict[str, Any]:
    prefix = f"bench-lobby:{uuid.uuid4().hex[:8]}:"
    replicas = _replicas(kind, where, prefix, 3)
    rng = random.Random(args.seed)
    try:
        print(f"{kind}: join races", flush=True)
        result = {"join race": await races(replicas, args, rng)}
        print(f"{kind}: lobby list", flush=True)
        result["lobby list"] = await lists(replicas, args, rng)
        return result
    finally:
        client = replicas[0].store.client
        try:
            async for key in client.scan_iter(match=prefix + "*", count=1000):
                await client.delete(key)
        except Exception:  # best effort (a cluster's scan goes node by node)
            pass
        for replica in replicas:
            await replica.players.aclose()
            await replica.store.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379")
    parser.add_argument("--store", default="redis", help="redis, cluster or both (comma)")
    parser.add_argument("--races", type=int, default=20)
    parser.add_argument("--matches", type=int, default=10_000)
    parser.add_argument("--reads", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    if args.quick:
        args.races, args.matches, args.reads = 5, 1_000, 50
    from tests.support.redis_servers import RedisClusterProcesses

    results: dict[str, Any] = {}
    for kind in args.store.split(","):
        if kind == "cluster":
            with RedisClusterProcesses.start(primaries=3) as cluster:
                results[kind] = asyncio.run(bench(kind, cluster.nodes_arg, args))
        elif kind == "redis":
            results[kind] = asyncio.run(bench(kind, args.redis_url, args))
        else:
            raise SystemExit(f"unknown store {kind!r}")
    print(json.dumps(results, indent=2))
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
