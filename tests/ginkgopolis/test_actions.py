"""GK-T: a turn (choice, resolution of the three actions, preparation, deck rebuild),
with the rulebook's worked examples as scenario tests."""

from __future__ import annotations

import pytest

from service.games.base import NOT_YOUR_TURN, IllegalAction
from service.games.ginkgopolis.actions import (
    GkChooseCard,
    GkNewHand,
    GkPlaceToken,
    GkTakeItem,
)
from service.games.ginkgopolis.city import pos
from service.games.ginkgopolis.data import CHAR_BASE, RED, YELLOW
from service.games.ginkgopolis.engine import WRONG_STEP
from service.games.ginkgopolis.rules import draw_card, perform_choice
from service.games.ginkgopolis.state import CHOOSE, OVER, PLACE_TOKEN, RESOLVE, TAKE_ITEM

from .helpers import E, T, U, blank, give, kinds, put

# Characters by (set, colour): id = 72 + (set - 1) * 3 + colour (red 0, blue 1, yellow 2).
RED_URBANIZE = CHAR_BASE + 0 * 3 + RED  # set 1 red: +1 resource on urbanize
YELLOW_BUILD = CHAR_BASE + 0 * 3 + YELLOW  # set 1 yellow: +1 VP on build up
RED_BUILD = CHAR_BASE + 1 * 3 + RED  # set 2 red: +1 resource on build up
BLUE_EXPLOIT = CHAR_BASE + 1 * 3 + 1  # set 2 blue: +1 tile on exploit
YELLOW_EXPLOIT = CHAR_BASE + 4 * 3 + YELLOW  # set 5 yellow: +1 VP on exploit


def test_GK_T2_exploit_example_red_7_two_floors() -> None:
    """Franta plays red 7 alone: a 2-floor building gives 2 resources; his two exploit bonus
    cards add 1 tile and 1 VP; the card is discarded."""
    s = blank(2)
    put(s, 3, 0, ["blue-12", "red-7"], owner=1)
    s.front[0] = [BLUE_EXPLOIT, YELLOW_EXPLOIT]
    s.supply_tiles = [T("yellow-20"), T("blue-9")]
    events: list = []
    perform_choice(s, 0, T("red-7"), -1, events)
    assert (s.res_screen[0], s.tiles[0], s.vp[0]) == (2, [T("blue-9")], 1)
    assert s.discard == [T("red-7")]
    assert s.stacks[pos(3, 0)] == (T("blue-12"), T("red-7"))  # the building is untouched


def test_GK_T2_exploit_blue_gives_tiles_yellow_gives_vp() -> None:
    s = blank(2)
    s.supply_tiles = [T("red-20"), T("red-19"), T("red-18")]
    perform_choice(s, 0, T("blue-1"), -1, [])
    perform_choice(s, 0, T("yellow-2"), -1, [])
    assert s.tiles[0] == [T("red-18")] and s.vp[0] == 1


def test_GK_T2_urbanize_example_token_A_red_4() -> None:
    """Milena plays urbanization A with red 4: the tile replaces token A, gets a resource and
    a construction site; the token moves next to it; the 2 adjacent buildings give 1
    resource and 2 tiles; her red urbanize bonus card 1 more resource."""
    s = blank(2)
    put(s, -1, -1, ["blue-8", "blue-9"], owner=1)  # a 2-floor blue corner building
    s.front[0] = [RED_URBANIZE]
    give(s, 0, resources=1, tiles=["red-4"])
    s.supply_tiles = [T("yellow-20"), T("yellow-19"), T("yellow-18")]
    events: list = []
    perform_choice(s, 0, U("A"), T("red-4"), events)
    a = pos(0, -1)
    assert s.stacks[a] == (T("red-4"),) and s.owner[a] == 0 and a in s.markers
    assert s.res_screen[0] == 2  # paid 1, red 1 floor +1, bonus +1
    assert s.tiles[0] == [T("yellow-18"), T("yellow-19")]  # blue 2 floors
    assert s.tokens[0] == pos(0, -2)  # the only empty space next to the new tile
    assert s.discard == [U("A")]
    assert "urbanized" in kinds(events) and "token_moved" in kinds(events)


def test_GK_T2_urbanize_token_choice_is_a_follow_up_step() -> None:
    """Several empty spaces next to the new tile: the seat chooses; each one is listed."""
    s = blank(2)
    give(s, 0, resources=1, tiles=["red-4"])
    give(s, 1, tiles=[])
    s.hands[0] = [U("C"), T("red-1"), T("red-2"), T("red-3")]
    s.hands[1] = [T("blue-1"), T("blue-2"), T("blue-3"), T("yellow-1")]
    s, _ = E.apply(s, 0, GkChooseCard(U("C"), T("red-4")))
    s, _ = E.apply(s, 1, GkChooseCard(T("yellow-1")))
    # token C at (2,-1): free neighbours (2,-2) and the corner (3,-1)
    assert s.phase == RESOLVE and s.pending == PLACE_TOKEN
    assert E.active_seats(s) == frozenset({0})
    assert set(E.legal_actions(s, 0)) == {GkPlaceToken(2, -2), GkPlaceToken(3, -1)}
    with pytest.raises(IllegalAction) as refused:
        E.apply(s, 0, GkPlaceToken(0, -2))
    assert refused.value.code == "not_legal"
    s, _ = E.apply(s, 0, GkPlaceToken(3, -1))
    assert s.tokens[2] == pos(3, -1)
    assert s.phase == CHOOSE and s.turn == 2  # seat 1 resolved, the next turn began


def test_GK_T2_build_up_example_blue_5_covered_by_red_4() -> None:
    """Nela plays blue 5 with red 4 on Franta's 2-floor blue 5: Franta takes back his 2
    resources and scores 2 VP; Nela pays 1 VP (5 > 4) and 1 resource (colour), places 3
    resources and a construction site, gains 1 VP and 1 resource from her two build-up
    bonus cards and keeps the blue 5 card in front of her screen."""
    s = blank(2)
    key = put(s, 4, 1, ["yellow-11", "blue-5"], owner=0)
    s.front[1] = [YELLOW_BUILD, RED_BUILD]
    give(s, 1, resources=4, tiles=["red-4"], vp=1)
    supply_before = s.res_supply[1]
    perform_choice(s, 1, T("blue-5"), T("red-4"), [])
    assert (s.res_screen[0], s.vp[0]) == (2, 2)
    assert s.stacks[key] == (T("yellow-11"), T("blue-5"), T("red-4"))
    assert s.owner[key] == 1 and key in s.markers and s.in_city == [0, 3]
    assert s.vp[1] == 1 - 1 + 1
    assert s.res_screen[1] == 4 - 3 - 1 + 1
    assert s.res_supply[1] == supply_before + 1 - 1  # fee paid in, bonus taken out
    assert s.front[1] == [YELLOW_BUILD, RED_BUILD, T("blue-5")]
    assert s.where[T("red-4")] == key and T("blue-5") not in s.where


def test_GK_T2_build_up_on_own_building_scores_nothing_and_reuses_resources() -> None:
    s = blank(2)
    key = put(s, 4, 1, ["yellow-11", "red-8"], owner=0)
    give(s, 0, resources=1, tiles=["red-9"])
    perform_choice(s, 0, T("red-8"), T("red-9"), [])
    assert s.vp[0] == 0 and s.res_screen[0] == 0 and s.owner[key] == 0
    assert len(s.stacks[key]) == 3 and s.in_city[0] == 3


def test_GK_T2_lacking_resources_or_vp_the_tile_goes_back_and_the_card_exploits() -> None:
    """Nela cannot pay 3 + 1 resources: she keeps her tile and exploits blue 5 instead."""
    s = blank(2)
    put(s, 4, 1, ["yellow-11", "blue-5"], owner=0)
    give(s, 1, resources=3, tiles=["red-4"], vp=1)
    s.supply_tiles = [T("yellow-20"), T("yellow-19")]
    events: list = []
    perform_choice(s, 1, T("blue-5"), T("red-4"), events)
    assert "tile_taken_back" in kinds(events)
    assert s.tiles[1] == sorted([T("red-4"), T("yellow-20"), T("yellow-19")])
    assert s.discard == [T("blue-5")] and s.owner[pos(4, 1)] == 0
    # Not enough VP for the number difference: same fallback.
    s = blank(2)
    put(s, 4, 1, ["yellow-11", "blue-5"], owner=0)
    give(s, 1, resources=9, tiles=["blue-2"], vp=2)
    perform_choice(s, 1, T("blue-5"), T("blue-2"), [])
    assert T("blue-2") in s.tiles[1] and s.res_screen[1] == 9


def test_GK_T2_urbanization_card_alone_take_a_resource_or_a_tile() -> None:
    s = blank(2)
    s.supply_tiles = [T("red-20")]
    s.hands[0] = [U("B"), T("red-1"), T("red-2"), T("red-3")]
    s.hands[1] = [T("blue-1"), T("blue-2"), T("blue-3"), T("yellow-1")]
    s, _ = E.apply(s, 0, GkChooseCard(U("B")))
    s, _ = E.apply(s, 1, GkChooseCard(T("blue-1")))
    assert s.pending == TAKE_ITEM
    assert E.legal_actions(s, 0) == [GkTakeItem("resource"), GkTakeItem("tile")]
    s, _ = E.apply(s, 0, GkTakeItem("tile"))
    assert s.tiles[0] == [T("red-20")] and s.discard[0] == U("B")


def test_GK_T2_urbanize_without_a_resource_falls_back_to_exploit() -> None:
    s = blank(2)
    give(s, 0, tiles=["red-4"])
    s.supply_tiles = []
    perform_choice(s, 0, U("A"), T("red-4"), [])
    assert s.res_screen[0] == 1 and s.tiles[0] == [T("red-4")]  # only a resource was left


def test_GK_T1_choice_is_simultaneous_and_hidden_until_all_have_chosen() -> None:
    s = E.setup(3, None, 11)
    assert E.active_seats(s) == frozenset({0, 1, 2})
    before = [E.view(s, seat) for seat in (None, 1, 2)]
    one, events = E.apply(s, 0, E.legal_actions(s, 0)[0])
    two, _ = E.apply(s, 0, E.legal_actions(s, 0)[-2])
    assert E.active_seats(one) == frozenset({1, 2})
    assert [e.for_seat(1) for e in events] == [{"kind": "choice_committed", "seat": 0}]
    for seat, old in zip((None, 1, 2), before, strict=True):
        assert E.view(one, seat) == E.view(two, seat)
        assert E.view(one, seat).seats[0].committed and not old.seats[0].committed
    assert E.view(one, 0).me.choice is not None
    with pytest.raises(IllegalAction) as refused:
        E.apply(one, 0, E.legal_actions(s, 0)[1])
    assert refused.value.code == NOT_YOUR_TURN
    assert E.legal_actions(one, 0) == []


def test_GK_T1_every_card_alone_or_with_every_tile_is_listed_once() -> None:
    s = E.setup(2, None, 5)
    legal = E.legal_actions(s, 0)
    tiles = s.tiles[0]
    assert len(legal) == 4 * (1 + len(tiles)) + 1
    assert len(set(legal)) == len(legal) and GkNewHand() in legal


def test_GK_T1_new_hands_in_seat_order_from_the_first_player() -> None:
    """Rules version 1 (``blank``): sealed, carried out in seat order at the reveal."""
    s = blank(2)
    s.first = 1
    s.nh = [2, 2]
    s.hands[0] = [T("red-1"), T("red-2"), T("red-3"), U("A")]
    s.hands[1] = [T("blue-1"), T("blue-2"), T("blue-3"), U("B")]
    s.deck = [U("L"), U("K"), U("J"), U("I"), U("H"), U("G"), U("F"), U("E")]  # top = end
    s, _ = E.apply(s, 0, GkNewHand())
    s, events = E.apply(s, 1, GkNewHand())
    assert "new_hands_announced" in kinds(events)
    assert sorted(s.hands[1]) == [U("E"), U("F"), U("G"), U("H")]  # first player draws first
    assert sorted(s.hands[0]) == [U("I"), U("J"), U("K"), U("L")]
    assert s.nh == [1, 1] and E.active_seats(s) == frozenset({0, 1})
    assert len(s.discard) == 8


def test_GK_T3_hands_pass_left_and_the_first_player_card_travels() -> None:
    s = E.setup(3, None, 3)
    hands = [list(h) for h in s.hands]
    picks = {}
    for seat in range(3):
        action = GkChooseCard(sorted(s.hands[seat])[0])
        picks[seat] = action.card
        s, _ = E.apply(s, seat, action)
    while s.phase == RESOLVE:
        seat = next(iter(E.active_seats(s)))
        s, _ = E.apply(s, seat, E.legal_actions(s, seat)[0])
    assert s.first == 1 and s.turn == 2
    for seat in range(3):
        passed = [c for c in hands[(seat - 1) % 3] if c != picks[(seat - 1) % 3]]
        assert s.hands[seat][:3] == passed and len(s.hands[seat]) == 4


def test_GK_T4_deck_rebuild_example_yellow_4_5_9_top_7_discarded_for_2_players() -> None:
    """The deck runs out: yellow 4, 5 and 9 carry construction sites, so their cards join the
    discard pile, which is shuffled into the new deck; with 2 players its top 7 cards are
    discarded again; the markers leave the city."""
    s = blank(2)
    for x, label in ((3, "yellow-4"), (4, "yellow-5"), (5, "yellow-9")):
        key = put(s, x, 1, [label], owner=0)
        s.markers.add(key)
    s.discard = [U(letter) for letter in "ABCDEFGH"]
    events: list = []
    card = draw_card(s, events)
    everything = {*(U(x) for x in "ABCDEFGH"), T("yellow-4"), T("yellow-5"), T("yellow-9")}
    assert card is not None
    assert {card, *s.deck, *s.discard} == everything
    assert len(s.discard) == 7 and len(s.deck) == 11 - 7 - 1
    assert s.markers == set()
    rebuilt = next(e for e in events if e.kind == "deck_rebuilt")
    assert rebuilt.public["added"] == ["yellow-4", "yellow-5", "yellow-9"]
    assert len(rebuilt.public["discarded"]) == 7


def test_GK_T4_no_discard_with_4_players() -> None:
    s = blank(4)
    s.discard = [U(letter) for letter in "ABCDEFGH"]
    draw_card(s, [])
    assert len(s.deck) == 7 and s.discard == []


def test_wrong_step_and_game_over_codes() -> None:
    s = E.setup(2, None, 1)
    with pytest.raises(IllegalAction) as refused:
        E.apply(s, 0, GkTakeItem("tile"))
    assert refused.value.code == WRONG_STEP
    s.phase = OVER
    with pytest.raises(IllegalAction) as refused:
        E.apply(s, 0, E.legal_actions(E.setup(2, None, 1), 0)[0])
    assert refused.value.code == "game_over"
