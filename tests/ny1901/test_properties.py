"""Property tests over seeded random games (tests/conformance.py) and engine-specific checks:
the move generator and the direct validator of ``apply`` agree, hidden information never
changes a view, serialization stays compact."""

from __future__ import annotations

import random
from typing import Any

import pytest

from service.games.base import IllegalAction
from service.games.ny1901 import ENGINE, Ny1901Options
from service.games.ny1901 import state as st
from service.games.ny1901.actions import (
    CONSTRUCTION_BOOM,
    END_TURN,
    LAND_GRAB,
    MARKET_SHIFT,
    Ny1901Acquire,
    Ny1901Build,
    Ny1901Rebuild,
    Ny1901ReturnLot,
)
from service.games.ny1901.shapes import SHAPE_NAMES, TILES
from tests.conformance import check_random_games, play_random_game

E = ENGINE
GAMES = 1000
FULL = 50


@pytest.mark.slow  # a long property run
@pytest.mark.parametrize(("players", "expert"), [(2, False), (3, False), (4, False), (4, True)])
def test_random_games_conform(players: int, expert: bool) -> None:
    """Every game ends; every listed action applies; unlisted ones are refused with a stable
    code and leave the state unchanged; states round-trip; replay reproduces; scores equal
    their breakdown (1,000 seeded games per configuration)."""
    options = Ny1901Options(expert=expert)
    base = 10_000 * players + (50_000 if expert else 0)
    check_random_games(E, players, range(base, base + FULL), options, full_check_every=4)
    check_random_games(E, players, range(base + FULL, base + GAMES), options, refusal_probes=1)


@pytest.mark.slow  # a long property run
def test_expert_random_games_for_two_and_three_players() -> None:
    for players in (2, 3):
        options = Ny1901Options(expert=True)
        check_random_games(E, players, range(300), options, refusal_probes=1)


def _universe(state: st.State) -> list[Any]:
    """Every action of every type that could plausibly be posted in this position."""
    board = E.board
    out: list[Any] = [END_TURN, MARKET_SHIFT, LAND_GRAB, CONSTRUCTION_BOOM]
    out += [Ny1901Acquire(lot.name) for lot in board.lots] + [Ny1901Acquire("nowhere")]
    out += [Ny1901ReturnLot(lot.name) for lot in board.lots]
    land = state.land[state.seat]
    for tile in TILES:
        if tile.id == "start":
            continue
        for placement in E.geometry.placements:
            if placement.shape == tile.shape and placement.mask & land:
                for kind in (Ny1901Build, Ny1901Rebuild):
                    out.append(kind(tile.id, placement.rotation,  # type: ignore[arg-type]
                                    placement.x, placement.y))
        out.append(Ny1901Build(tile.id, 5, 0, 0))  # type: ignore[arg-type]
        out.append(Ny1901Rebuild(tile.id, 3, 20, 15))  # type: ignore[arg-type]
    return out


def test_generator_and_validator_agree_on_every_action() -> None:
    """``apply`` succeeds exactly for the listed actions (perft-style oracle over whole action
    universes in sampled positions of random games)."""
    chooser = random.Random(7)
    checked = 0
    for seed in range(12):
        playout = play_random_game(E, 2 + seed % 3, seed, refusal_probes=0)
        for blob in playout.states[::9]:
            state = E.loads(blob)
            if state.phase == st.OVER:
                continue
            legal = set(E.legal_actions(state, state.seat))
            universe = _universe(state)
            assert legal <= set(universe), legal - set(universe)
            for action in universe:
                try:
                    E.apply(state, state.seat, action)
                except IllegalAction as refusal:
                    assert action not in legal, (action, refusal.code)
                    assert refusal.code.strip() and " " not in refusal.code
                else:
                    assert action in legal, action
                checked += 1
            assert E.dumps(state) == blob
        chooser.random()
    assert checked > 10_000


def test_shapes_listed_once_per_footprint() -> None:
    """No two listed placements of one tile cover the same squares (symmetric rotations
    and twin tiles are not listed twice)."""
    for seed in range(20):
        playout = play_random_game(E, 4, seed, refusal_probes=0)
        for blob in playout.states[::5]:
            state = E.loads(blob)
            seen: set[tuple[int, int, int]] = set()
            for action in E.legal_actions(state, state.seat):
                if action.type not in ("build", "rebuild"):
                    continue
                tile = TILES[[t.id for t in TILES].index(action.tile)]
                placement = E.geometry.find(tile.shape, action.rotation, action.x, action.y)
                assert placement is not None
                key = (tile.level * 100 + tile.points, placement.mask, action.type == "build")
                assert key not in seen or tile.legendary >= 0, action
                seen.add(key)
    assert len(SHAPE_NAMES) == 12


def test_views_do_not_change_with_hidden_information() -> None:
    """The future market's order and the RNG state never reach a view."""
    for seed in range(20):
        playout = play_random_game(E, 2 + seed % 3, seed, refusal_probes=0)
        for blob in playout.states[::13]:
            state = E.loads(blob)
            other = state.copy()
            random.Random(seed).shuffle(other.future)
            other.rng ^= 0xDEADBEEF
            for seat in [None, *range(state.n)]:
                assert E.view(state, seat) == E.view(other, seat)


def test_serialized_states_are_compact_and_events_hide_the_future_market() -> None:
    biggest = 0
    for seed in range(50):
        playout = play_random_game(E, 4, seed, refusal_probes=0)
        biggest = max(biggest, *(len(b) for b in playout.states))
    assert biggest <= 400
    state = E.setup(4, None, 1)
    hidden = list(state.future)
    state, events = E.apply(state, 0, MARKET_SHIFT)
    for event in events:
        shown = event.for_seat(None)
        assert "future" not in shown and len(shown["revealed"]) == 4
    assert hidden[-4:][::-1] == state.market


def test_loads_refuses_garbage() -> None:
    with pytest.raises(ValueError):
        E.loads(b"\x01\x02")
    blob = E.dumps(E.setup(2, None, 3))
    with pytest.raises(ValueError):
        E.loads(blob + b"\x00")


def test_setup_is_deterministic_and_seeds_differ() -> None:
    assert E.dumps(E.setup(3, None, 42)) == E.dumps(E.setup(3, None, 42))
    assert E.dumps(E.setup(3, None, 42)) != E.dumps(E.setup(3, None, 43))
    with pytest.raises(ValueError):
        E.setup(5, None, 1)
