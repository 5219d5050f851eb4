"""The greedy player: immediate score gain first, sensible tie-breaks, deterministic."""

from __future__ import annotations

from typing import Any

from service.bots import get_bot
from service.games.ny1901.actions import Ny1901Build, Ny1901EndTurn, Ny1901Rebuild

from .helpers import engine, positions


def gain(eng: Any, state: Any, seat: int, action: Any) -> int:
    """Points (and prestige) ``seat`` has after ``action`` minus before it."""
    after, _ = eng.apply(state, seat, action)
    return int(after.points[seat] + after.prestige[seat] - state.points[seat]
               - state.prestige[seat])


def test_ny_greedy_builds_the_most_valuable_tile_rather_than_ending_the_turn() -> None:
    eng = engine("ny1901")
    bot = get_bot("greedy", 0)
    seen = 0
    for state, seat in positions("ny1901", 2, seed=3):
        legal = eng.legal_actions(state, seat)
        builds = [a for a in legal if isinstance(a, Ny1901Build)]
        if not builds or Ny1901EndTurn() not in legal:
            continue
        choice = bot.choose(eng, eng.view(state, seat), legal, seat)
        assert isinstance(choice, Ny1901Build | Ny1901Rebuild)
        # The immediate gain as the rules count it (printed points, Gold Prestige and all).
        placements = [a for a in legal if isinstance(a, Ny1901Build | Ny1901Rebuild)]
        assert gain(eng, state, seat, choice) == max(gain(eng, state, seat, a)
                                                     for a in placements)
        seen += 1
    assert seen >= 3


def test_greedy_is_deterministic() -> None:
    for game in ("ny1901", "ginkgopolis"):
        eng = engine(game)
        for state, seat in list(positions(game, 3, seed=6, every=13))[:5]:
            view = eng.view(state, seat)
            legal = eng.legal_actions(state, seat)
            picks = {get_bot("greedy", s).choose(eng, view, legal, seat) for s in (1, 1, 1)}
            assert len(picks) == 1
