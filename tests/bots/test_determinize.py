"""Determinizers: built from the seat's view alone, the sampled state shows that seat exactly
the same view, offers the same legal moves and is accepted by the engine (moves apply, play
goes on to the end)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from service.bots.determinize import ginkgopolis as gk_det
from service.bots.determinize import ny1901 as ny_det
from service.bots.games import model_for

from .helpers import GAMES_AND_COUNTS, engine, positions


def _play_out(eng: Any, state: Any, rng: random.Random, steps: int = 40) -> None:
    for _ in range(steps):
        if eng.result(state) is not None:
            return
        seat = min(eng.active_seats(state))
        state, _ = eng.apply(state, seat, rng.choice(eng.legal_actions(state, seat)))


@pytest.mark.parametrize(("game", "players"), GAMES_AND_COUNTS)
def test_view_and_legal_moves_are_those_of_the_real_state(game: str, players: int) -> None:
    eng = engine(game)
    model = model_for(eng)
    checked = 0
    for seed in range(3):
        for state, seat in positions(game, players, seed, every=3):
            view = eng.view(state, seat)
            legal = eng.legal_actions(state, seat)
            sample = model.determinize(view, seat, random.Random(seed), legal)
            assert eng.view(sample, seat) == view
            assert eng.legal_actions(sample, seat) == legal
            # The engine accepts it: every listed move applies, and play goes on.
            rng = random.Random(checked)
            for action in rng.sample(legal, min(3, len(legal))):
                eng.apply(sample, seat, action)
            if checked % 10 == 0:
                _play_out(eng, sample, rng)
            checked += 1
    assert checked > 20


def test_ginkgopolis_draft_positions() -> None:
    eng = engine("ginkgopolis")
    options = eng.Options(characters="draft")
    for state, seat in positions("ginkgopolis", 4, 3, options=options):
        view = eng.view(state, seat)
        legal = eng.legal_actions(state, seat)
        sample = gk_det.determinize(eng, view, seat, random.Random(1), legal)
        assert eng.view(sample, seat) == view
        assert eng.legal_actions(sample, seat) == legal


def test_ny_future_market_holds_exactly_the_unseen_cards() -> None:
    eng = engine("ny1901")
    for state, seat in positions("ny1901", 3, 4, every=7):
        view = eng.view(state, seat)
        assert ny_det.unseen_cards(eng, view) == sorted(state.future)
        sample = ny_det.determinize(eng, view, seat, random.Random(2))
        assert sorted(sample.future) == sorted(state.future)


def test_samples_vary_the_hidden_parts() -> None:
    eng = engine("ny1901")
    state = eng.setup(2, None, 11)
    view = eng.view(state, 0)
    futures = {tuple(ny_det.determinize(eng, view, 0, random.Random(i)).future) for i in range(5)}
    assert len(futures) > 1

    gk = engine("ginkgopolis")
    state = gk.setup(3, None, 11)
    view = gk.view(state, 0)
    hands = {tuple(gk_det.determinize(gk, view, 0, random.Random(i)).hands[1])
             for i in range(8)}
    assert len(hands) > 1
    # The seat's own hand is never resampled.
    assert all(sorted(gk_det.determinize(gk, view, 0, random.Random(i)).hands[0])
               == sorted(state.hands[0]) for i in range(3))


def test_ginkgopolis_other_hands_and_screens_have_the_public_sizes() -> None:
    eng = engine("ginkgopolis")
    for state, seat in positions("ginkgopolis", 2, 8, every=9):
        view = eng.view(state, seat)
        sample = gk_det.determinize(eng, view, seat, random.Random(0))
        for other in range(state.players):
            assert len(sample.hands[other]) == len(state.hands[other])
            assert (sample.res_screen[other] + sample.res_supply[other]
                    == state.res_screen[other] + state.res_supply[other])
        assert sample.res_screen[seat] == state.res_screen[seat]
        # Two players: the other screen's tile count follows from the counts too.
        assert [len(t) for t in sample.tiles] == [len(t) for t in state.tiles]
        assert len(sample.deck) == len(state.deck)
        assert len(sample.supply_tiles) == len(state.supply_tiles)
