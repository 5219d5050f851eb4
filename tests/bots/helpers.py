"""Shared helpers for the bot tests: engines by id and seeded playouts."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from service.bots.selfplay import engine_for
from service.games.base import Engine

GAMES_AND_COUNTS = [("ny1901", n) for n in (2, 3, 4)] + [
    ("ginkgopolis", n) for n in (1, 2, 3, 4, 5)
]


def engine(game: str) -> Engine[Any]:
    return engine_for(game)


def positions(game: str, players: int, seed: int, every: int = 1,
              options: Any = None) -> Iterator[tuple[Any, int]]:
    """(state, active seat) along a seeded random playout, every ``every``-th step."""
    eng = engine(game)
    rng = random.Random(seed)
    state = eng.setup(players, options, seed)
    step = 0
    while eng.result(state) is None:
        active = sorted(eng.active_seats(state))
        seat = active[rng.randrange(len(active))]
        if step % every == 0:
            yield state, seat
        legal = eng.legal_actions(state, seat)
        state, _ = eng.apply(state, seat, rng.choice(legal))
        step += 1
