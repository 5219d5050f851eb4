"""Players benchmark (issue 16): what "my matches" and the player feed cost, and whether the
feed of many players across replicas delivers every ``your_turn`` exactly once, in order.

Run: ``.venv/bin/python -m bench.players`` (Redis at ``--redis-url``, default
``redis://127.0.0.1:6379``, keys under a fresh prefix deleted at the end; then a private
3-primary cluster: ``--store redis,cluster``), ``--quick`` (small sizes), ``--json PATH``.

What runs (in this process: the service layer without HTTP, one ``MatchService`` +
``PlayerService`` per replica on its own store connection, as replicas are)
----------------------------------------------------------------------------------------
``matches``
  One player seated in ``--player-matches`` (200) two-seat toy matches; its whole list read
  in pages of 20 and of 100, ``--rounds`` times. Per page: store round trips (the store's
  own counter: the credential's check, the index page, one pipeline of match records) and
  the process's CPU time, medians.
``feed``
  ``--players`` (1,000) guests on ``--replicas`` (3) replicas, seated in pairs in toy matches
  (1 round: about 5 versions each); every player's feed followed on replica ``i % 3`` (an
  open ``follow_feed``: the store's feed watch, one pub/sub connection per replica). Moves are
  made by a random replica, ``--concurrency`` at a time, until every match is over; then the
  feeds drain. Counted per player and match: the ``your_turn`` events received against the
  versions at which its seat became active (replayed from the log), duplicates, gaps and
  order. Reported: events delivered, missing / extra / out of order (the goal: 0), round
  trips and CPU per delivered event (appends are done by the writing replica).
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
from dataclasses import dataclass
from typing import Any

from service import games
from service.games import get as get_engine
from service.identity.callers import Caller
from service.matches import MatchService
from service.matches.models import CreateMatchRequest, wire_action
from service.matches.replay import state_at
from service.players import DEFAULT_APP, PlayerService
from service.players.feed import FeedItem
from service.players.models import CreatePlayerRequest
from service.store.redis import RedisStore

TOY = "toy"


@dataclass
class Replica:
    store: RedisStore
    matches: MatchService
    players: PlayerService


def _stores(kind: str, where: str, prefix: str, count: int) -> list[RedisStore]:
    if kind == "redis":
        return [RedisStore.from_url(where, prefix=prefix) for _ in range(count)]
    return [RedisStore.from_cluster_nodes(where, prefix=prefix) for _ in range(count)]


def _replicas(stores: list[RedisStore]) -> list[Replica]:
    out = []
    for store in stores:
        matches = MatchService(store, ttl_finished=None, ttl_idle=None)
        out.append(Replica(store, matches, PlayerService(store, matches)))
    return out


async def _guest(replica: Replica, name: str) -> Caller:
    created = await replica.players.create_guest(CreatePlayerRequest(name=name))
    caller = await replica.players.authenticate(created.token)
    assert isinstance(caller, Caller)
    return caller


async def _seat(replica: Replica, who: list[Caller]) -> str:
    request = CreateMatchRequest.model_validate(
        {"game": TOY, "options": {"rounds": 1},
         "seats": [{"player": c.player} for c in who]})
    created = await replica.players.create_match(Caller(app=DEFAULT_APP), request)
    return created.match_id


async def bench_matches(kind: str, where: str, args: argparse.Namespace) -> dict[str, Any]:
    prefix = f"bench-players:{uuid.uuid4().hex[:8]}:"
    (replica,) = _replicas(_stores(kind, where, prefix, 1))
    try:
        me = await _guest(replica, "Me")
        other = await _guest(replica, "Other")
        for _ in range(args.player_matches):
            await _seat(replica, [me, other])
        await replica.players.my_matches(me, limit=1)  # the app's settings, cached after
        out: dict[str, Any] = {}
        for size in (20, 100):
            trips: list[int] = []
            cpu: list[float] = []
            pages = 0
            for _ in range(args.rounds):
                cursor = None
                while True:
                    before, started = replica.store.round_trips, time.process_time()
                    page = await replica.players.my_matches(me, cursor=cursor, limit=size)
                    cpu.append(time.process_time() - started)
                    trips.append(replica.store.round_trips - before)
                    pages += 1
                    cursor = page.next_cursor
                    if cursor is None:
                        break
            out[f"page_{size}"] = {
                "pages": pages, "round_trips_median": statistics.median(trips),
                "round_trips_max": max(trips),
                "cpu_ms_median": round(statistics.median(cpu) * 1000, 2),
                "cpu_us_per_item": round(statistics.median(cpu) / size * 1e6, 1),
            }
        return out
    finally:
        await _close([replica], prefix)


async def bench_feed(kind: str, where: str, args: argparse.Namespace) -> dict[str, Any]:
    prefix = f"bench-players:{uuid.uuid4().hex[:8]}:"
    replicas = _replicas(_stores(kind, where, prefix, args.replicas))
    rng = random.Random(16)
    try:
        people = [await _guest(replicas[i % len(replicas)], f"P{i}")
                  for i in range(args.players)]
        received: dict[str, list[dict[str, Any]]] = {p.player or "": [] for p in people}
        ready = asyncio.Event()
        opened = 0

        async def follow(index: int, person: Caller) -> None:
            nonlocal opened
            assert person.player is not None
            stream = replicas[index % len(replicas)].players.follow_feed(person.player, 0)
            waiting = asyncio.ensure_future(stream.__anext__())
            opened += 1
            if opened == len(people):
                ready.set()
            try:
                while True:
                    event = await waiting
                    if isinstance(event, FeedItem):
                        received[person.player].append(json.loads(event.data))
                    waiting = asyncio.ensure_future(stream.__anext__())
            except (asyncio.CancelledError, StopAsyncIteration):
                waiting.cancel()
            finally:
                await stream.aclose()

        print(f"  {len(people)} players made; opening their feeds", flush=True)
        followers = [asyncio.create_task(follow(i, p)) for i, p in enumerate(people)]
        await ready.wait()
        print("  feeds open; seating and playing", flush=True)
        pairs = [(people[i], people[i + 1]) for i in range(0, len(people) - 1, 2)]
        trips_before = sum(r.store.round_trips for r in replicas)
        cpu_before = time.process_time()
        matches = [await _seat(replicas[i % len(replicas)], list(pair))
                   for i, pair in enumerate(pairs)]
        writes = 0

        async def play(match_id: str, pair: tuple[Caller, Caller]) -> None:
            nonlocal writes
            while True:
                writer = rng.choice(replicas)
                state = await writer.matches.get_state(match_id, None)
                if state.status == "finished":
                    return
                who = pair[rng.choice(state.active_seats)]
                moves = await writer.matches.legal_moves(match_id, who)
                move = wire_action(rng.choice(moves.moves))
                try:
                    await writer.matches.act(match_id, who, move, moves.version, None)
                    writes += 1
                except Exception:  # a lost race (409): read again
                    continue

        semaphore = asyncio.Semaphore(args.concurrency)

        async def limited(match_id: str, pair: tuple[Caller, Caller]) -> None:
            async with semaphore:
                await play(match_id, pair)

        started = time.perf_counter()
        await asyncio.gather(*(limited(m, p) for m, p in zip(matches, pairs, strict=True)))
        played = time.perf_counter() - started
        print(f"  {len(matches)} matches played ({writes} moves); draining the feeds",
              flush=True)
        expected: dict[tuple[str, str], list[int]] = {}
        for match_id, pair in zip(matches, pairs, strict=True):
            for seat, person in enumerate(pair):
                expected[(person.player or "", match_id)] = await _activations(
                    replicas[0].matches, match_id, seat)
        total_expected = sum(len(v) for v in expected.values())
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            got = sum(1 for evs in received.values() for e in evs if e["kind"] == "your_turn")
            if got >= total_expected:
                break
            await asyncio.sleep(0.2)
        print(f"  {got} of {total_expected} your_turn events received", flush=True)
        cpu = time.process_time() - cpu_before
        trips = sum(r.store.round_trips for r in replicas) - trips_before
        for task in followers:
            task.cancel()
        await asyncio.gather(*followers, return_exceptions=True)
        print("  feeds closed", flush=True)
        missing = extra = disorder = 0
        delivered = 0
        for (player, match_id), want in expected.items():
            events = [e for e in received[player] if e["matchId"] == match_id]
            delivered += len(events)
            turns = [e["version"] for e in events if e["kind"] == "your_turn"]
            missing += len(set(want) - set(turns))
            extra += len(turns) - len(set(turns)) + len(set(turns) - set(want))
            versions = [e["version"] for e in events]
            disorder += int(versions != sorted(versions))
        for evs in received.values():
            seqs = [e["seq"] for e in evs]
            disorder += int(seqs != sorted(set(seqs)))
        return {
            "players": len(people), "replicas": len(replicas), "matches": len(matches),
            "writes": writes, "play_seconds": round(played, 1),
            "your_turn_expected": total_expected, "events_delivered": delivered,
            "missing": missing, "extra": extra, "out_of_order": disorder,
            "round_trips_per_event": round(trips / max(delivered, 1), 2),
            "round_trips_per_write": round(trips / max(writes + len(matches), 1), 2),
            "cpu_us_per_event": round(cpu / max(delivered, 1) * 1e6, 1),
        }
    finally:
        await _close(replicas, prefix)


async def bench_feed_costs(kind: str, where: str, args: argparse.Namespace) -> dict[str, Any]:
    """What one feed event costs apart from the move that causes it: the writer's append
    (after its compare-and-set: the mark read and the append, per bound player) and the
    reader's delivery (the wake-up's version read and the feed page), in round trips and
    CPU, medians over ``--rounds * 20`` events."""
    prefix = f"bench-players:{uuid.uuid4().hex[:8]}:"
    writer, reader = _replicas(_stores(kind, where, prefix, 2))
    try:
        me, other = await _guest(writer, "Me"), await _guest(writer, "Other")
        assert me.player is not None
        append_trips: list[int] = []
        append_cpu: list[float] = []
        deliver_trips: list[int] = []
        deliver_cpu: list[float] = []
        stream = reader.players.follow_feed(me.player, None)
        waiting = asyncio.ensure_future(stream.__anext__())
        await asyncio.sleep(0.2)
        listeners = list(writer.matches.storage.listeners)
        writer.matches.storage.listeners.clear()  # appended by hand below, measured
        for _ in range(args.rounds * 20):
            match_id = await _seat(writer, [me, other])
            version, record = await writer.matches.storage.load(match_id)
            from service.matches.storage import Written

            written = Written(match_id, 0, None, record, None)
            before, started = writer.store.round_trips, time.process_time()
            await writer.players.feed.on_write(written)
            append_cpu.append(time.process_time() - started)
            append_trips.append(writer.store.round_trips - before)
            before, started = reader.store.round_trips, time.process_time()
            got = 0
            while got < 2:  # match_started and your_turn for seat 0
                event = await asyncio.wait_for(waiting, timeout=10)
                got += 1
                waiting = asyncio.ensure_future(stream.__anext__())
            deliver_cpu.append((time.process_time() - started) / 2)
            deliver_trips.append(reader.store.round_trips - before)
            del event, version
        writer.matches.storage.listeners[:] = listeners
        waiting.cancel()
        await asyncio.gather(waiting, return_exceptions=True)
        await stream.aclose()
        return {
            "append_round_trips_per_write_median": statistics.median(append_trips),
            "append_cpu_us_per_write_median": round(statistics.median(append_cpu) * 1e6, 1),
            "players_per_write": 2,
            "delivery_round_trips_per_2_events_median": statistics.median(deliver_trips),
            "delivery_cpu_us_per_event_median": round(statistics.median(deliver_cpu) * 1e6, 1),
        }
    finally:
        await _close([writer, reader], prefix)


async def _activations(matches: MatchService, match_id: str, seat: int) -> list[int]:
    storage = matches.storage
    version, record = await storage.load(match_id)
    engine = get_engine(record.game)
    found, before = [], set()
    for v in range(version + 1):
        state = await state_at(storage, match_id, engine, record, v)
        now = set() if engine.result(state) is not None else set(engine.active_seats(state))
        if seat in now and seat not in before:
            found.append(v)
        before = now
    return found


async def _close(replicas: list[Replica], prefix: str) -> None:
    print("  deleting the run's keys", flush=True)
    client = replicas[0].store.client
    try:
        async for key in client.scan_iter(match=prefix + "*", count=1000):
            await client.delete(key)
    except Exception:  # a cluster's scan_iter goes node by node; cleanup is best effort
        pass
    for replica in replicas:
        await replica.players.aclose()
        await replica.store.close()


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from tests.support.redis_servers import RedisClusterProcesses

    games.register(TOY, "tests.toy_game:engine")
    results: dict[str, Any] = {}
    for kind in args.store.split(","):
        if kind == "redis":
            where = args.redis_url
            results[kind] = await _both(kind, where, args)
        elif kind == "cluster":
            with RedisClusterProcesses.start(primaries=3) as cluster:
                results[kind] = await _both(kind, cluster.nodes_arg, args)
        else:
            raise SystemExit(f"unknown store {kind!r}")
    return results


async def _both(kind: str, where: str, args: argparse.Namespace) -> dict[str, Any]:
    out = {"matches": await bench_matches(kind, where, args)}
    print(kind, "my matches", json.dumps(out["matches"]), flush=True)
    out["feed_costs"] = await bench_feed_costs(kind, where, args)
    print(kind, "feed costs", json.dumps(out["feed_costs"]), flush=True)
    out["feed"] = await bench_feed(kind, where, args)
    print(kind, "feed", json.dumps(out["feed"]), flush=True)
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.players")
    parser.add_argument("--store", default="redis,cluster")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379")
    parser.add_argument("--player-matches", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--players", type=int, default=1000)
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    if args.quick:
        args.player_matches, args.rounds, args.players = 60, 2, 100
    results = asyncio.run(run(args))
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
