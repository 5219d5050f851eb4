"""Rules version 2 of New York 1901: NY-C3 revised (Land Grab any time in the turn, also after
the turn's build with a worker that build released). Version 1 keeps the old behaviour: its
tests are ``test_NY_C3_v1_*`` here and the version-1 tests of ``test_rules.py``."""

from __future__ import annotations

import pytest

from service.games.base import IllegalAction
from service.games.ny1901 import rules as R
from service.games.ny1901 import state as st
from service.games.ny1901.actions import (
    CONSTRUCTION_BOOM,
    END_TURN,
    LAND_GRAB,
    Ny1901Acquire,
    Ny1901Build,
    Ny1901Rebuild,
)
from service.games.ny1901.data import SUPPLY_TILES

from .helpers import BOARD, FIRST_DRAWING, E, blank, give, kind, legal, of_type, put, use_tiles

MARKET = [kind("red", 2), kind("blue", 2), kind("blue", 3), kind("green", 3)]
TILE_POINTS = {tile[0]: tile[3] for tile in SUPPLY_TILES}


def refused(state: st.State, action: object, code: str) -> None:
    before = E.dumps(state)
    with pytest.raises(IllegalAction) as caught:
        E.apply(state, state.seat, action)
    assert caught.value.code == code, caught.value
    assert E.dumps(state) == before


def last_worker_on_rb(version: int = FIRST_DRAWING) -> st.State:
    """Seat 0 has one free worker (gC, gD, gE staffed) and puts it on the 2-square lot rB."""
    state = give(blank(players=2, rules_version=version), 0, "gC", "gD", "gE")
    state.market = list(MARKET)
    state, _ = E.apply(state, 0, Ny1901Acquire("rB"))
    assert state.free_workers(0) == 0 and LAND_GRAB not in legal(state)
    refused(state, LAND_GRAB, R.LAND_GRAB_UNAVAILABLE)  # before the build: no free worker
    return state


def sizes(actions: list[object]) -> set[int]:
    return {BOARD.lots[BOARD.lot_index[a.lot]].size for a in of_type(actions, "acquire")}


def test_the_engine_plays_versions_1_to_3_and_new_matches_get_3() -> None:
    """Version 3 keeps version 2's rules on the redrawn board (test_board_v3.py)."""
    assert E.rules_versions == (1, 2, 3)
    assert E.setup(2, None, 1).rules_version == 3
    assert E.setup(2, None, 1, 2).rules_version == 2
    assert E.setup(2, None, 1, 1).rules_version == 1


def test_NY_C3_v2_land_grab_after_the_build_with_a_released_worker() -> None:
    state = last_worker_on_rb()
    state, events = E.apply(state, 0, Ny1901Build("B1", 0, 3, 1))   # covers rB
    assert events[0].public["workers_released"] == ["rB"] and state.free_workers(0) == 1
    assert state.phase == st.BUILT_BOTH
    assert legal(state) == [CONSTRUCTION_BOOM, LAND_GRAB, END_TURN]   # ending the turn last
    state, events = E.apply(state, 0, LAND_GRAB)
    assert [e.kind for e in events] == ["land_grab"] and state.phase == st.LATE_GRAB
    actions = legal(state)
    assert actions and all(a.type == "acquire" for a in actions) and sizes(actions) == {2}
    refused(state, END_TURN, R.WRONG_STEP)                            # C4: the grab first
    state, _ = E.apply(state, 0, Ny1901Acquire("bA"))                 # the released worker
    assert state.free_workers(0) == 0 and state.cards[0] & st.CARD_GRAB


def test_NY_C3_v2_all_workers_out_the_build_releases_one_for_a_land_grab() -> None:
    state = give(blank(players=2), 0, "gC", "gD", "gE", "gG")         # all 4 workers out
    state.market = list(MARKET)
    state, _ = E.apply(state, 0, Ny1901Build("B1", 0, 0, 11))         # covers gG
    assert state.free_workers(0) == 1 and legal(state) == [CONSTRUCTION_BOOM, LAND_GRAB,
                                                            END_TURN]
    state, _ = E.apply(state, 0, LAND_GRAB)
    state, _ = E.apply(state, 0, Ny1901Acquire("rB"))
    assert state.lots[0] >> BOARD.lot_index["rB"] & 1 and state.free_workers(0) == 0


def test_NY_C3_v2_land_grab_after_the_build_no_three_square_lot() -> None:
    # in the grab: 2-square lots only
    state = last_worker_on_rb()
    state, _ = E.apply(state, 0, Ny1901Build("B1", 0, 3, 1))
    state, _ = E.apply(state, 0, LAND_GRAB)
    assert Ny1901Acquire("bD") not in legal(state)
    refused(state, Ny1901Acquire("bD"), R.LAND_GRAB_NO_THREE)         # blue 3-square
    # after a 3-square first acquisition: no grab after the build either
    state = give(blank(players=2), 0, "gC", "gD")
    state.market = [kind("red", 3), kind("blue", 2), kind("blue", 3), kind("green", 3)]
    state, _ = E.apply(state, 0, Ny1901Acquire("rA"))
    state, _ = E.apply(state, 0, Ny1901Build("B1", 0, 3, 8))          # covers gD
    assert state.free_workers(0) == 2 and state.future
    assert state.phase == st.BUILT and legal(state) == [CONSTRUCTION_BOOM, END_TURN]
    refused(state, LAND_GRAB, R.LAND_GRAB_NO_THREE)


def test_NY_C3_v2_land_grab_after_the_build_no_second_build() -> None:
    state = last_worker_on_rb()
    points = state.points[0]
    state.cards[0] |= st.CARD_BOOM                                    # boom spent earlier
    state, _ = E.apply(state, 0, Ny1901Build("B1", 0, 3, 1))
    assert state.phase == st.BUILT_GRAB and legal(state) == [LAND_GRAB, END_TURN]
    refused(state, CONSTRUCTION_BOOM, R.CARD_USED)
    refused(state, Ny1901Build("B3", 0, 0, 8), R.WRONG_STEP)          # one build a turn
    state, _ = E.apply(state, 0, LAND_GRAB)
    refused(state, Ny1901Build("B3", 0, 0, 8), R.WRONG_STEP)
    state, events = E.apply(state, 0, Ny1901Acquire("bA"))
    assert state.seat == 1 and state.phase == st.START                # the turn is over
    assert [e.kind for e in events][:2] == ["acquire", "market_refill"]
    assert state.points[0] == points + TILE_POINTS["B1"] and len(state.buildings[0]) == 1


def test_NY_C3_v2_construction_boom_still_gives_the_second_build_around_a_late_grab() -> None:
    # the grab first, then the boom: its build may use the grabbed lot
    state = last_worker_on_rb()
    state, _ = E.apply(state, 0, Ny1901Build("B1", 0, 3, 1))
    state, _ = E.apply(state, 0, LAND_GRAB)
    state, _ = E.apply(state, 0, Ny1901Acquire("bA"))
    assert state.phase == st.BUILT and legal(state) == [CONSTRUCTION_BOOM, END_TURN]
    state, _ = E.apply(state, 0, CONSTRUCTION_BOOM)
    assert of_type(legal(state), "build")
    state, _ = E.apply(state, 0, of_type(legal(state), "build")[0])
    assert state.seat == 1                                            # both cards spent
    # the boom first: a land grab may follow the second build too
    state = last_worker_on_rb()
    state, _ = E.apply(state, 0, Ny1901Build("B1", 0, 3, 1))
    state, _ = E.apply(state, 0, CONSTRUCTION_BOOM)
    state, _ = E.apply(state, 0, Ny1901Build("B3", 0, 0, 8))          # covers gC
    assert state.free_workers(0) == 2 and legal(state) == [LAND_GRAB, END_TURN]
    refused(state, CONSTRUCTION_BOOM, R.CARD_USED)
    state, _ = E.apply(state, 0, LAND_GRAB)
    state, _ = E.apply(state, 0, Ny1901Acquire("bA"))
    assert state.seat == 1 and len(state.buildings[0]) == 2


def test_NY_C3_v2_no_land_grab_in_a_demolish_and_rebuild_turn() -> None:
    state = give(blank(players=2), 0, "gC", "gD", "gE")
    state.market = list(MARKET)
    put(state, 0, "B3", 0, 0, 8)
    state.points[0] = 10
    state, _ = E.apply(state, 0, Ny1901Rebuild("S2", 0, 0, 8))
    assert state.free_workers(0) == 2 and legal(state) == [CONSTRUCTION_BOOM, END_TURN]
    refused(state, LAND_GRAB, R.WRONG_STEP)                           # option 2: no grab
    state, _ = E.apply(state, 0, CONSTRUCTION_BOOM)
    state, _ = E.apply(state, 0, of_type(legal(state), "build")[0])
    assert state.seat == 1 and not state.cards[0] & st.CARD_GRAB


def test_NY_C3_v2_land_grab_after_the_build_needs_a_future_market() -> None:
    state = last_worker_on_rb()
    state.future = []
    state, _ = E.apply(state, 0, Ny1901Build("B1", 0, 3, 1))
    assert state.phase == st.BUILT and legal(state) == [CONSTRUCTION_BOOM, END_TURN]
    refused(state, LAND_GRAB, R.LAND_GRAB_UNAVAILABLE)


def test_NY_C1_v2_no_boom_after_the_end_triggering_build_but_a_land_grab() -> None:
    state = give(blank(players=2), 0, "gC", "gD", "gE")
    state.phase, state.market = st.ACQUIRED, list(MARKET)
    use_tiles(state, 0, *(t[0] for t in SUPPLY_TILES[5:18]))          # 5 unbuilt
    state.points[0] = 40
    state, events = E.apply(state, 0, Ny1901Build("B3", 0, 0, 8))     # 4 unbuilt: the end
    assert any(e.kind == "end_triggered" for e in events)
    assert legal(state) == [LAND_GRAB, END_TURN]
    refused(state, CONSTRUCTION_BOOM, R.BOOM_AFTER_END)
    state, _ = E.apply(state, 0, LAND_GRAB)
    state, _ = E.apply(state, 0, Ny1901Acquire("rB"))
    assert state.seat == 1 and state.trigger == 0 and state.left == 1  # E2: one last turn
    state, _ = E.apply(state, 1, of_type(legal(state), "acquire")[0])
    state, _ = E.apply(state, 1, END_TURN)
    assert state.phase == st.OVER


def test_ruling_C1_v2_boom_refused_without_a_second_build_the_grab_still_offered() -> None:
    state = give(blank(players=2), 0, "gC")
    state.phase, state.market = st.ACQUIRED, list(MARKET)
    state, _ = E.apply(state, 0, Ny1901Build("B3", 0, 0, 8))         # gC full: nothing left
    assert legal(state) == [LAND_GRAB, END_TURN]
    refused(state, CONSTRUCTION_BOOM, R.NOTHING_TO_BUILD)
    state, _ = E.apply(state, 0, END_TURN)
    assert state.seat == 1 and state.cards[0] == 0


def test_NY_C3_v2_the_new_steps_survive_dumps_and_show_in_the_view() -> None:
    state = last_worker_on_rb()
    seen = []
    for action in (Ny1901Build("B1", 0, 3, 1), LAND_GRAB):
        state, _ = E.apply(state, 0, action)
        copy = E.loads(E.dumps(state))
        assert E.dumps(copy) == E.dumps(state) and copy.rules_version == 2
        assert copy.flags == state.flags and legal(copy) == legal(state)
        seen.append(E.view(state, 0).step)
    assert seen == ["built_boom_or_land_grab", "late_land_grab"]


# ------------------------------------------------------------------------------ version 1
def test_NY_C3_v1_unchanged_no_land_grab_after_the_build() -> None:
    state = last_worker_on_rb(version=1)
    state, _ = E.apply(state, 0, Ny1901Build("B1", 0, 3, 1))
    assert state.free_workers(0) == 1 and state.future
    assert state.phase == st.BUILT and legal(state) == [CONSTRUCTION_BOOM, END_TURN]
    refused(state, LAND_GRAB, R.WRONG_STEP)
    assert not state.flags & st.OPTION1_BUILT                         # v1 flags byte unchanged
    state = last_worker_on_rb(version=1)
    state.cards[0] |= st.CARD_BOOM
    state, _ = E.apply(state, 0, Ny1901Build("B1", 0, 3, 1))
    assert state.seat == 1                                            # the turn ended at once
    state = give(blank(players=2, rules_version=1), 0, "gC", "gD", "gE", "gG")
    state.market = list(MARKET)
    state, _ = E.apply(state, 0, Ny1901Build("B1", 0, 0, 11))
    assert legal(state) == [CONSTRUCTION_BOOM, END_TURN]
