"""Quick-match benchmark (issue 17): guests queueing through several replicas, how fast
matches form, how soon each player learns of its match, and that nobody is in two matches or
left waiting.

Run: ``.venv/bin/python -m bench.quick_match`` (Redis at ``--redis-url``, default
``redis://127.0.0.1:6379``, keys under a fresh prefix deleted at the end; ``--store
redis,cluster`` adds a private 3-primary cluster), ``--quick`` (100 guests), ``--json PATH``.

What runs (in this process: the service layer without HTTP, one ``MatchService`` +
``PlayerService`` + ``QueueService`` per replica on its own store connection, as replicas
are): ``--guests`` (1,000) guests, half queueing for 4-player New York 1901 and half for
3-player Ginkgopolis, each through a random one of ``--replicas`` (3), all at once (at most
``--concurrency`` enqueues in flight). Each guest then long-polls its ticket
(``wait=30``) on replica ``i % 3`` until it is matched.

Reported: matches formed per second (matches / the time from the first enqueue to the last
match noticed); per match, the time from the start of the enqueue of its last needed player
to ``match_started`` in each player's feed (the feed's item carries no time: it is taken as
the moment the player's long poll answered ``matched``, which comes *after* the feed append
-- an upper bound), p50/p99 over matches (the last of its players to know) and over
players; players in two matches (the goal: 0), tickets left waiting beyond what cannot form
a match (the goal: 0), players without exactly one ``match_started`` (the goal: 0).
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
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

from service.identity.callers import Caller
from service.matches import MatchService
from service.players import PlayerService
from service.players.models import CreatePlayerRequest
from service.queue import QueueService
from service.queue.models import EnqueueRequest
from service.queue.records import QueueDoc, digest_of_ticket, queue_key
from service.store.redis import RedisStore

QUEUES = ({"game": "ny1901", "players": 4}, {"game": "ginkgopolis", "players": 3})


@dataclass
class Replica:
    store: RedisStore
    matches: MatchService
    players: PlayerService
    queue: QueueService


def _replicas(kind: str, where: str, prefix: str, count: int) -> list[Replica]:
    out = []
    for _ in range(count):
        store = (RedisStore.from_url(where, prefix=prefix) if kind == "redis"
                 else RedisStore.from_cluster_nodes(where, prefix=prefix))
        matches = MatchService(store, ttl_finished=None, ttl_idle=None)
        players = PlayerService(store, matches)
        out.append(Replica(store, matches, players, QueueService(store, players)))
    return out


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def bench(kind: str, where: str, args: argparse.Namespace) -> dict[str, Any]:
    prefix = f"bench-queue:{uuid.uuid4().hex[:8]}:"
    replicas = _replicas(kind, where, prefix, args.replicas)
    rng = random.Random(args.seed)
    try:
        print(f"{kind}: {args.guests} guests", flush=True)
        guests: list[Caller] = []
        for n in range(args.guests):
            created = await replicas[n % len(replicas)].players.create_guest(
                CreatePlayerRequest(name=f"G{n}"))
            caller = await replicas[0].players.authenticate(created.token)
            assert isinstance(caller, Caller)
            guests.append(caller)
        wanted = [QUEUES[n % 2] for n in range(args.guests)]
        rng.shuffle(wanted)
        gate = asyncio.Semaphore(args.concurrency)
        enqueued_at: dict[str, float] = {}
        noticed_at: dict[str, float] = {}
        answers: dict[str, Any] = {}
        enqueue_ms: list[float] = []

        async def one(n: int) -> None:
            caller = guests[n]
            assert caller.player is not None
            async with gate:
                began = time.perf_counter()
                enqueued_at[caller.player] = began
                ticket, _ = await rng.choice(replicas).queue.enqueue(
                    caller, EnqueueRequest.model_validate(wanted[n]))
                enqueue_ms.append((time.perf_counter() - began) * 1000)
            poller = replicas[n % len(replicas)].queue
            answer = ticket
            deadline = time.perf_counter() + args.patience
            while answer.status == "waiting" and time.perf_counter() < deadline:
                answer = await poller.poll(caller, ticket.ticket, 30)
            noticed_at[caller.player] = time.perf_counter()
            answers[caller.player] = answer

        start = time.perf_counter()
        # Those that cannot complete a match wait until --patience: run the rest first.
        await asyncio.gather(*(one(n) for n in range(args.guests)))
        matched = {p: a for p, a in answers.items() if a.status == "matched"}
        per_match: dict[str, list[str]] = defaultdict(list)
        for player, answer in matched.items():
            per_match[answer.match_id].append(player)
        last_notice = max((noticed_at[p] for p in matched), default=start)
        elapsed = last_notice - start
        # Latency: from the start of the last needed player's enqueue to each player knowing.
        match_lat, player_lat = [], []
        for players in per_match.values():
            last_needed = max(enqueued_at[p] for p in players)
            lat = [(noticed_at[p] - last_needed) * 1000 for p in players]
            player_lat += lat
            match_lat.append(max(lat))
        # Checks.
        seats_seen: Counter[str] = Counter()
        for match_id in per_match:
            _, record = await replicas[0].matches.load_record(match_id)
            for holder in record.seat_players:
                if holder is not None:
                    seats_seen[holder.player] += 1
        in_two = sum(1 for c in seats_seen.values() if c > 1)
        started_wrong = 0
        for player in answers:
            items, _ = await replicas[1].players.feed.read(player, 0)
            kinds = [json.loads(i.data)["kind"] for i in items if hasattr(i, "data")]
            want = 1 if player in matched else 0
            if kinds.count("match_started") != want:
                started_wrong += 1
        left_waiting = 0
        expected_left = 0
        for spec in QUEUES:
            count = sum(1 for w in wanted if w == spec)
            expected_left += count % spec["players"]
        digests = {digest_of_ticket(a.ticket) for a in answers.values()}
        for digest in digests:
            assert digest is not None
            doc = await replicas[2].store.get_doc(queue_key(guests[0].app, digest))
            assert doc is not None
            queue = QueueDoc.decode(doc.data)
            left_waiting += len(queue.waiting) + (queue.forming is not None)
        out = {
            "guests": args.guests, "replicas": args.replicas, "matches": len(per_match),
            "seconds": round(elapsed, 2),
            "matches_per_second": round(len(per_match) / elapsed, 1) if elapsed else None,
            "enqueue_ms_p50": round(statistics.median(enqueue_ms), 1),
            "enqueue_ms_p99": round(_pct(enqueue_ms, 0.99), 1),
            "match_started_ms_p50_per_match": round(statistics.median(match_lat), 1),
            "match_started_ms_p99_per_match": round(_pct(match_lat, 0.99), 1),
            "match_started_ms_p50_per_player": round(statistics.median(player_lat), 1),
            "match_started_ms_p99_per_player": round(_pct(player_lat, 0.99), 1),
            "players_in_two_matches": in_two,
            "left_waiting": left_waiting, "could_not_form": expected_left,
            "players_without_exactly_one_match_started": started_wrong,
            "formed_by_replica": [r.queue.formed for r in replicas],
        }
        print(kind, json.dumps(out), flush=True)
        return out
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


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from tests.support.redis_servers import RedisClusterProcesses

    results: dict[str, Any] = {}
    for kind in args.store.split(","):
        if kind == "redis":
            results[kind] = await bench(kind, args.redis_url, args)
        elif kind == "cluster":
            with RedisClusterProcesses.start(primaries=3) as cluster:
                results[kind] = await bench(kind, cluster.nodes_arg, args)
        else:
            raise SystemExit(f"unknown store {kind!r}")
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379")
    parser.add_argument("--store", default="redis")
    parser.add_argument("--guests", type=int, default=1000)
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--patience", type=float, default=3.0,
                        help="seconds a guest that cannot be matched polls before giving up")
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    if args.quick:
        args.guests = 100
    results = asyncio.run(run(args))
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
