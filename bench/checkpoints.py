"""Checkpoint benchmark: what a state checkpoint every K versions costs in stored bytes and
saves in replayed moves (docs/performance.md, "Checkpoints").

    .venv/bin/python -m bench.checkpoints [--redis-url URL] [--every 0,50,100,200]

Stored bytes: Redis ``MEMORY USAGE`` of each finished match, played as
``tests/api/test_stored_bytes.py`` plays them (random legal moves, an Idempotency-Key on every
move), for every game and player count (seeds 0-2; 4-player New York 1901 also seeds 118, the
test's long game, and 100, the longest of 300 random games), once per K (0: no checkpoints).
Replay cost: microseconds per replayed move and per log entry of a 200-entry page, so that
the worst extra replay (K - 1 moves before ``after``) can be set against a page's own cost.
Keys live under a unique prefix and are deleted afterwards.
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid

from bench.store import redis_url
from service import games
from service.matches import MatchService, records, replay
from service.store import RedisStore, SqliteStore
from tests.support.random_match import play_random_match

SEEDS = {("ny1901", 4): (0, 118, 100)}
LONG = [("ny1901", 4, 100), ("ny1901", 2, 1), ("ginkgopolis", 4, 1), ("ginkgopolis", 5, 0)]


async def stored_bytes(url: str, every: int) -> dict[tuple[str, int, int], tuple[int, int]]:
    """(game, players, seed) -> (moves, MEMORY USAGE bytes) with a checkpoint every ``every``
    versions (0: none)."""
    records.CHECKPOINT_EVERY = every or 10**12
    prefix = f"bench-checkpoints:{uuid.uuid4().hex[:12]}:"
    store = RedisStore.from_url(url, prefix=prefix)
    out: dict[tuple[str, int, int], tuple[int, int]] = {}
    try:
        service = MatchService(store, ttl_finished=3600, ttl_idle=3600)
        for engine in games.all():
            for players in range(engine.min_players, engine.max_players + 1):
                for seed in SEEDS.get((engine.id, players), (0, 1, 2)):
                    played = await play_random_match(service, engine.id, players, seed,
                                                     idempotency_keys=True)
                    used = await store.client.memory_usage(store.key(played.match_id),
                                                           samples=0)
                    out[(engine.id, players, seed)] = (len(played.answered), int(used or 0))
    finally:
        async for key in store.client.scan_iter(match=f"{prefix}*"):
            await store.client.delete(key)
        await store.close()
        records.CHECKPOINT_EVERY = 100
    return out


async def replay_costs() -> None:
    service = MatchService(SqliteStore(":memory:"), ttl_finished=None, ttl_idle=None)
    print("\nreplay cost (best of 5; embedded store in memory)")
    print("| game | players | versions | µs per replayed move | µs per entry of a page "
          "(replay + views + texts) | 99 extra moves, ms |")
    print("| --- | --- | --- | --- | --- | --- |")
    for game, players, seed in LONG:
        played = await play_random_match(service, game, players, seed)
        engine = games.get(game)
        _, record = await service.storage.load(played.match_id)
        versions = max(played.answered)
        per_move = per_page = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            await replay.replay(service.storage, played.match_id, engine, record, versions)
            middle = time.perf_counter()
            await service.log(played.match_id, played.tokens[0], 0, limit=200)
            per_move = min(per_move, (middle - start) / versions)
            per_page = min(per_page, (time.perf_counter() - middle) / min(200, versions))
        print(f"| {game} | {players} | {versions} | {per_move * 1e6:.0f} | "
              f"{per_page * 1e6:.0f} | {99 * per_move * 1e3:.1f} |")


async def main_async(args: argparse.Namespace) -> None:
    everies = [int(k) for k in args.every.split(",")]
    with redis_url(args.redis_url) as url:
        figures = {every: await stored_bytes(url, every) for every in everies}
    print("stored bytes per finished match (Redis MEMORY USAGE), by checkpoint interval K")
    print("| game | players | seed | moves | " + " | ".join(
        f"K = {k}" if k else "none" for k in everies) + " |")
    print("| --- " * (4 + len(everies)) + "|")
    for key in figures[everies[0]]:
        moves = figures[everies[0]][key][0]
        print(f"| {key[0]} | {key[1]} | {key[2]} | {moves} | " + " | ".join(
            str(figures[k][key][1]) for k in everies) + " |")
    print("| **most** | | | | " + " | ".join(
        f"**{max(used for _, used in figures[k].values())}**" for k in everies) + " |")
    await replay_costs()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis-url", default=None)
    parser.add_argument("--every", default="0,50,100,200",
                        help="checkpoint intervals to measure, comma-separated (0: none)")
    asyncio.run(main_async(parser.parse_args(argv)))


if __name__ == "__main__":
    main()
