"""Views per seat (no leaks), the text rendering and the serialization."""

from __future__ import annotations

import pytest

from service.games.base import dump_action, parse_action
from service.games.ginkgopolis.actions import GkChooseCard, GkReturnTiles
from service.games.ginkgopolis.render import render_city
from service.games.ginkgopolis.state import dumps, loads
from tests.conformance import play_random_game

from .helpers import E, T, blank, put


def test_view_hides_other_screens_and_hands() -> None:
    s = E.setup(3, None, 21)
    view = E.view(s, 1)
    assert view.me is not None and view.me.seat == 1
    assert len(view.me.hand) == 4 and view.me.resources == s.res_screen[1]
    spectator = E.view(s, None)
    assert spectator.me is None
    dumped = spectator.model_dump_json()
    assert dumped.count('"hand_count":4') == 3
    # Changing seat 0's hidden hand, tiles, resources and VP changes no other view.
    t = s.clone()
    t.hands[0][:2], t.deck[:2] = t.deck[:2], t.hands[0][:2]  # other cards, same counts
    t.res_screen[0] += 3  # taken from the supply: neither count shows to others
    t.res_supply[0] -= 3
    t.vp[0] += 5
    t.tiles[0] = [*t.tiles[0], t.supply_tiles[0]]
    t.supply_tiles = t.supply_tiles[1:]
    for seat in (None, 1, 2):
        a, b = E.view(s, seat).model_dump(), E.view(t, seat).model_dump()
        a.pop("tile_supply_count"), b.pop("tile_supply_count")
        assert a == b


def test_render_city_shows_tiles_heights_owners_markers_and_tokens() -> None:
    s = blank(2)
    key = put(s, 0, -1, ["blue-7", "red-12"], owner=1)
    s.markers.add(key)
    s.tokens[0] = s.tokens[0] - 1  # token A up one row
    text = render_city(s)
    assert "R12^2b*" in text and "R01^1." in text and "[ A ]" in text and "[ L ]" in text
    assert text.splitlines()[0].split()[0] == "-1"  # x of the first column
    assert E.view(s, None).text == text


def test_serialization_round_trips_and_is_compact() -> None:
    playout = play_random_game(E, 5, 3)
    for blob in playout.states:
        assert dumps(loads(blob)) == blob
    assert max(len(b) for b in playout.states) < 2048
    with pytest.raises(ValueError):
        loads(b"\x09garbage")
    with pytest.raises(ValueError):
        loads(playout.states[-1][:41])


def test_actions_survive_the_wire() -> None:
    for action in (GkChooseCard(3, 17), GkChooseCard(60, None, 61), GkReturnTiles((4, 9))):
        assert parse_action(E, dump_action(E, action)) == action
    with pytest.raises(ValueError):
        parse_action(E, {"type": "choose_card", "card": True})
    with pytest.raises(ValueError):
        parse_action(E, {"type": "choose_card", "card": 1, "extra": 2})


def test_state_ids_are_tile_ids() -> None:
    assert T("red-1") == 0 and T("blue-1") == 20 and T("yellow-20") == 59


def test_GK_S1_unowned_starting_buildings_are_nobody_s_not_hal_s() -> None:
    """GK-S1: the nine starting buildings have no owner; only the solo game has a Hal."""
    for players in (2, 3):
        view = E.view(E.setup(players, None, 4), 0)
        assert len(view.city) == 9
        assert all(b.owner is None and not b.hal for b in view.city)
