"""Views (what a seat sees), events and the text rendering."""

from __future__ import annotations

from service.games.ny1901 import ENGINE as E
from service.games.ny1901 import Ny1901Options
from service.games.ny1901.actions import END_TURN, Ny1901Build


def test_view_shows_the_public_state() -> None:
    state = E.setup(3, Ny1901Options(challenge="bronze_baron",
                                     streets=["broadway", "wall_street", "cedar_street"]), 9)
    view = E.view(state, 1)
    assert view.viewer == 1 and view.players == 3 and view.current_seat == 0
    assert view.challenge == "bronze_baron"
    assert [s.id for s in view.streets] == ["broadway", "wall_street", "cedar_street"]
    assert len(view.open_market) == 4 and view.future_market_size == len(state.future)
    assert [s.free_workers for s in view.seats] == [4, 4, 4]
    assert all(len(s.tiles_left) == 18 and s.unbuilt_tiles == 18 for s in view.seats)
    assert all(s.used_action_cards == [] and len(s.unused_action_cards) == 3 for s in view.seats)
    assert {b.tile for b in view.buildings} == {"start"} and len(view.buildings) == 3
    owned = [lot for lot in view.lots if lot.owner is not None]
    assert len(owned) == 3 and not any(lot.worker for lot in owned)
    assert view.legendary_available == ["park_row", "singer", "metropolitan_life", "woolworth"]
    assert view.end_triggered_by is None and not view.game_over
    assert "future" not in view.model_dump_json().replace("future_market_size", "")


def test_views_follow_the_game_and_events_are_public() -> None:
    state = E.setup(2, None, 4)
    acquire = next(a for a in E.legal_actions(state, 0) if a.type == "acquire")
    state, events = E.apply(state, 0, acquire)
    assert events[0].for_seat(None)["lot"] == acquire.lot
    view = E.view(state, None)
    lot = next(lot for lot in view.lots if lot.name == acquire.lot)
    assert lot.owner == 0 and lot.worker and view.seats[0].free_workers == 3
    build = next((a for a in E.legal_actions(state, 0) if isinstance(a, Ny1901Build)), END_TURN)
    state, events = E.apply(state, 0, build)
    if isinstance(build, Ny1901Build):
        assert E.view(state, 0).seats[0].score > 0


def test_render_draws_the_board_and_the_players() -> None:
    state = E.setup(4, None, 2)
    text = E.render(state)
    lines = text.splitlines()
    assert lines[1].split()[1:] == [".."] * 21
    assert "open market:" in text and "seat 3: score 0" in text
    assert "to move: seat 0 (start)" in text
    assert sum(line.count("s") for line in lines[1:17]) >= 8   # 4 starting properties x 2
