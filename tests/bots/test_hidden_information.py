"""The search player's picture of the game comes from the seat's view alone.

For positions of both games we build a second real state that differs only in what the seat
cannot see (another future-market order / other hands, screens, deck and supply, another
RNG), check that it really differs and that the seat's view and legal moves are the same,
then ask the search bot in both worlds: for the same seed and iteration budget it makes the
same choice. A bot that peeked at the real state would, with these budgets, diverge.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from service.bots import Budget, get_bot
from service.bots.games import model_for

from .helpers import engine, positions


def _other_world(eng: Any, state: Any, seat: int, seed: int) -> Any:
    """A real state with the same view for ``seat`` and different hidden parts."""
    view = eng.view(state, seat)
    legal = eng.legal_actions(state, seat)
    model = model_for(eng)
    for attempt in range(20):
        other = model.determinize(view, seat, random.Random(seed * 100 + attempt), legal)
        if eng.dumps(other) != eng.dumps(state):
            return other
    raise AssertionError("could not vary the hidden information")


def _hidden_differs(game: str, a: Any, b: Any, seat: int) -> bool:
    if game == "ny1901":
        return bool(a.future != b.future or a.rng != b.rng)
    others = [o for o in range(a.players) if o != seat]
    return bool(a.deck != b.deck or a.supply_tiles != b.supply_tiles or a.rng != b.rng
                or any(sorted(a.hands[o]) != sorted(b.hands[o]) for o in others))


@pytest.mark.parametrize(("game", "players"), [("ny1901", 2), ("ny1901", 3),
                                               ("ginkgopolis", 2), ("ginkgopolis", 4)])
def test_changing_unseen_information_does_not_change_the_choice(game: str,
                                                                 players: int) -> None:
    eng = engine(game)
    compared = 0
    for state, seat in positions(game, players, seed=21, every=11):
        legal = eng.legal_actions(state, seat)
        if len(legal) < 2:
            continue
        other = _other_world(eng, state, seat, compared)
        assert _hidden_differs(game, state, other, seat)
        view = eng.view(state, seat)
        assert eng.view(other, seat) == view
        other_legal = eng.legal_actions(other, seat)
        assert other_legal == legal
        first = get_bot("search", 5, Budget(iterations=25)).choose(eng, view, legal, seat)
        second = get_bot("search", 5, Budget(iterations=25)).choose(
            eng, eng.view(other, seat), other_legal, seat)
        assert first == second
        compared += 1
        if compared == 6:
            break
    assert compared >= 3


@pytest.mark.parametrize("game", ["ny1901", "ginkgopolis"])
def test_search_is_deterministic_per_seed_and_budget(game: str) -> None:
    eng = engine(game)
    state, seat = next(p for p in positions(game, 2, seed=4, every=5)
                       if len(eng.legal_actions(p[0], p[1])) > 3)
    view = eng.view(state, seat)
    legal = eng.legal_actions(state, seat)
    choices = {get_bot("search", 9, Budget(iterations=30)).choose(eng, view, legal, seat)
               for _ in range(3)}
    assert len(choices) == 1
    assert choices.pop() in legal
