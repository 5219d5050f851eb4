"""The order of ``legal_actions`` is meaningful: moves that make progress first, passing and
ending the turn last. A client that always posts the first listed move -- the simplest bot a
new user writes -- plays every match to its end (it never passes forever)."""

from __future__ import annotations

from typing import Any

import pytest

from service import games
from service.games.ny1901.actions import Ny1901EndTurn

CAP = 5000  # moves; the longest first-move match of these seeds takes 175


def first_move_match(game: str, players: int, seed: int) -> int | None:
    """Moves until the end when the lowest active seat always posts its first legal move;
    None when the match has not ended after ``CAP`` moves."""
    engine = games.get(game)
    state = engine.setup(players, None, seed)
    for moves in range(CAP):
        if engine.result(state) is not None:
            return moves
        seat = min(engine.active_seats(state))
        state, _ = engine.apply(state, seat, engine.legal_actions(state, seat)[0])
    return None


@pytest.mark.parametrize(("game", "players"), [
    ("ny1901", 2), ("ny1901", 3), ("ny1901", 4),
    *[("ginkgopolis", n) for n in range(1, 6)],
])
def test_the_first_listed_move_ends_every_match(game: str, players: int) -> None:
    unfinished = [seed for seed in range(50) if first_move_match(game, players, seed) is None]
    assert unfinished == []


def test_NY_A9_ending_the_turn_is_listed_last() -> None:
    engine: Any = games.get("ny1901")
    state = engine.setup(2, None, 3)
    seen = 0
    for _ in range(60):
        if engine.result(state) is not None:
            break
        seat = min(engine.active_seats(state))
        legal = engine.legal_actions(state, seat)
        ends = [i for i, a in enumerate(legal) if isinstance(a, Ny1901EndTurn)]
        if ends and len(legal) > 1:
            assert ends == [len(legal) - 1]
            seen += 1
        state, _ = engine.apply(state, seat, legal[0])
    assert seen >= 5
