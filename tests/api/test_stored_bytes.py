"""What Redis keeps for a complete match: one key, at most 8 KiB (issue #4's goal), for every
game at every player count, with an Idempotency-Key on every move. Random legal moves make
long games (a random 4-player New York 1901 runs to ~370 moves; people finish sooner), so
this is a worst case, not a typical one."""

from __future__ import annotations

import random

import pytest

from service import games
from service.api.models import CreateMatchRequest
from service.api.service import MatchService
from service.games.base import dump_action
from service.store.redis import RedisStore

pytestmark = pytest.mark.redis

GOAL_BYTES = 8 * 1024
# The longest of 300 random 4-player New York 1901 games (575 moves; median 278, p90 392).
SEEDS = {("ny1901", 4): (0, 118)}
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
        engine = games.get(game)
        for seed in SEEDS.get((game, players), (0, 1, 2)):
            created = await service.create_match(
                CreateMatchRequest(game=game, players=players, seed=seed)
            )
            tokens = {s.seat: s.token for s in created.seats}
            chooser = random.Random(seed)
            moves = 0
            while (state := await service.get_state(created.match_id, None)).status != "finished":
                seat = chooser.choice(state.active_seats)
                legal = (await service.legal_moves(created.match_id, tokens[seat])).moves
                # With an Idempotency-Key on every move, as a careful client sends: the
                # record then also holds the last 16 keys.
                await service.act(created.match_id, tokens[seat],
                                  dump_action(engine, chooser.choice(legal)), None,
                                  f"move-{moves}")
                moves += 1
            key = store.key(created.match_id)
            assert await store.client.keys(f"{redis_prefix}*{created.match_id}*") == [key.encode()]
            used = int(await store.client.memory_usage(key, samples=0))
            assert used <= GOAL_BYTES, f"{used} bytes after {moves} moves"
            page = await service.log(created.match_id, None, 0)
            assert len(page.entries) == moves  # nothing was dropped to fit
    finally:
        await store.close()
