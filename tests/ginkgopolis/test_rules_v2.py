"""Rules version 2 of Ginkgopolis (``GinkgopolisEngine.rules_versions``): GK-T4 immediate
deck rebuild, GK-H2 the solo player moves Hal's token, GK-T1 New Hand public and immediate.
Each fix has scenarios under version 2 and one showing that version 1 keeps its behaviour
(the golden corpus, ``tests/golden``, holds that bit for bit)."""

from __future__ import annotations

from service.games.base import Event
from service.games.ginkgopolis.actions import GkChooseCard, GkNewHand, GkPlaceToken
from service.games.ginkgopolis.city import pos
from service.games.ginkgopolis.rules import draw_card
from service.games.ginkgopolis.state import (
    CHOOSE,
    OVER,
    PLACE_TOKEN,
    RESOLVE,
    GkState,
    dumps,
    loads,
)

from .helpers import E, T, U, blank, give, kinds, put

HAL = 1


def at(players: int, version: int) -> GkState:
    s = blank(players)
    s.rules_version = version
    return s


def test_rules_versions_1_and_2_are_kept_byte_for_byte() -> None:
    assert E.rules_versions[:2] == (1, 2)  # new matches get the newest (test_rules_v3.py)
    old = E.setup(2, None, 1, 1)
    assert old.rules_version == 1 and E.dumps(old)[0] == 1  # format 1, byte for byte
    new = E.setup(2, None, 1, 2)
    assert E.dumps(new)[0] == 2 and E.loads(E.dumps(new)).rules_version == 2
    assert E.view(new, 0).rules_version == 2


# ----------------------------------------------------------------------------- GK-T4


def two_player_round(version: int) -> tuple[GkState, list[Event]]:
    """Seat 0 builds up on red 1 (a construction site), seat 1 exploits yellow 1; the end of
    the round's two draws take the deck's last two cards."""
    s = at(2, version)
    give(s, 0, resources=5, tiles=["red-4"])
    s.hands[0] = [T("red-1"), T("red-2"), T("red-3"), T("blue-1")]
    s.hands[1] = [T("blue-2"), T("blue-3"), T("yellow-1"), T("yellow-2")]
    s.deck = [U("A"), U("B")]
    s.discard = [U(letter) for letter in "CDEFGHIJ"]
    s, _ = E.apply(s, 0, GkChooseCard(T("red-1"), T("red-4")))
    s, events = E.apply(s, 1, GkChooseCard(T("yellow-1")))
    return s, events


def test_GK_T4_v2_the_deck_is_rebuilt_at_the_draw_that_empties_it() -> None:
    s, events = two_player_round(2)
    assert s.phase == CHOOSE and s.turn == 2
    rebuilt = [e for e in events if e.kind == "deck_rebuilt"]
    assert len(rebuilt) == 1 and kinds(events)[-1] == "cards_drawn"
    # This round's construction site (red 4 on red 1) and the discards of the round
    # (yellow 1) go into the new deck: 8 + 1 + 1 cards, the top 7 discarded again (2 players).
    assert rebuilt[0].public == {"added": ["red-4"], "discarded": rebuilt[0].public["discarded"],
                                 "deck": 3}
    assert len(s.deck) == 3 and len(s.discard) == 7 and s.markers == set()
    assert {*s.deck, *s.discard} == {*(U(x) for x in "CDEFGHIJ"), T("red-4"), T("yellow-1")}


def test_GK_T4_v1_unchanged_the_deck_is_rebuilt_lazily_at_the_next_draw() -> None:
    s, events = two_player_round(1)
    assert s.phase == CHOOSE and s.turn == 2 and "deck_rebuilt" not in kinds(events)
    assert s.deck == [] and s.markers == {pos(0, 0)}  # red 1's space, until the next draw
    events = []
    draw_card(s, events)
    assert kinds(events) == ["deck_rebuilt"] and s.markers == set()


def test_GK_T4_v2_a_new_hand_that_empties_the_deck_rebuilds_it_at_once() -> None:
    s = at(2, 2)
    s.nh = [2, 2]
    s.hands[0] = [T("red-1"), T("red-2"), T("red-3"), U("A")]
    s.hands[1] = [T("blue-1"), T("blue-2"), T("blue-3"), U("B")]
    s.deck = [U("C"), U("D"), U("E"), U("F")]
    s, events = E.apply(s, 0, GkNewHand())
    assert sorted(s.hands[0]) == [U("C"), U("D"), U("E"), U("F")]
    # The discarded hand is all the rebuild has: 4 cards, 3 discarded again (keeps one).
    assert kinds(events) == ["new_hand_announced", "hand_discarded", "deck_rebuilt",
                             "cards_drawn"]
    assert len(s.deck) == 1 and len(s.discard) == 3


def test_GK_T4_v2_expert_hals_extra_card_that_empties_the_deck_rebuilds_it() -> None:
    s = at(1, 2)
    s.flags |= 2  # expert
    s.hands[0] = [T("red-1"), T("blue-1"), U("A")]
    s.supply_tiles = [T("blue-20"), T("blue-19"), T("yellow-10")]
    s.deck = [U("L")]  # Hal's extra card is the last one
    s, events = E.apply(s, 0, GkChooseCard(T("blue-1"), None, U("A")))
    names = kinds(events)
    assert names.index("deck_rebuilt") < names.index("hal_extra_card")
    # At once: seat 0's third card (red 1) and its exploited blue 1 (2 cards, 1 discarded
    # again); Hal's card A and the extra L are not in the deck yet.
    rebuilt = events[names.index("deck_rebuilt")].public
    assert (rebuilt["added"], len(rebuilt["discarded"]), rebuilt["deck"]) == ([], 1, 1)
    assert {U("A"), U("L")} <= set(s.discard) and len(s.deck) == 1


def test_GK_T4_v2_an_empty_rebuild_is_tried_again_at_the_next_draw() -> None:
    s = at(4, 2)
    s.deck = [U("A")]
    events: list = []
    assert draw_card(s, events) == U("A") and events == [] and s.deck == []
    s.discard = [U("B"), U("C")]  # discarded later: the next draw rebuilds first
    assert draw_card(s, events) in (U("B"), U("C"))
    assert kinds(events) == ["deck_rebuilt"] and len(s.deck) == 1 and not s.discard


# ----------------------------------------------------------------------------- GK-H2


def hal_urbanizes(version: int) -> GkState:
    s = at(1, version)
    s.hands[0] = [T("red-1"), T("red-2"), U("A")]
    s.supply_tiles = [T("blue-20"), T("blue-19"), T("yellow-10")]
    s.deck = [U("L"), U("K"), U("J"), U("I")]
    s, _ = E.apply(s, 0, GkChooseCard(T("red-1"), None, U("A")))  # Hal urbanizes at A
    return s


def test_GK_H2_v2_the_solo_player_places_hals_urbanization_token() -> None:
    s = hal_urbanizes(2)
    a = pos(0, -1)
    assert s.owner[a] == HAL and s.phase == RESOLVE and s.pending == PLACE_TOKEN
    assert E.active_seats(s) == {0}
    legal = E.legal_actions(s, 0)
    assert legal == [GkPlaceToken(-1, -1), GkPlaceToken(0, -2)]  # perimeter order
    pending = E.view(s, 0).pending
    assert pending is not None and (pending.seat, pending.kind, pending.token) == (
        0, "place_token", "A")
    assert E.view(s, None).pending == pending and loads(dumps(s)).pending == PLACE_TOKEN
    s, events = E.apply(s, 0, GkPlaceToken(0, -2))  # not the first space
    assert s.tokens[0] == pos(0, -2)
    assert kinds(events)[0] == "token_moved" and events[0].public["at"] == [0, -2]
    assert s.phase == CHOOSE and s.turn == 2 and len(s.hands[0]) == 3  # the round ended


def test_GK_H2_v1_unchanged_hals_token_goes_to_the_first_space_by_itself() -> None:
    s = hal_urbanizes(1)
    assert s.phase == CHOOSE and s.turn == 2 and s.tokens[0] == pos(-1, -1)


def test_GK_H2_v2_a_single_legal_space_is_taken_without_asking() -> None:
    s = at(1, 2)
    put(s, -1, -1, ["blue-8"], owner=0)  # A's space (0, -1) keeps one free neighbour
    s.hands[0] = [T("red-1"), T("red-2"), U("A")]
    s.supply_tiles = [T("blue-20"), T("yellow-10")]
    s.deck = [U("L"), U("K"), U("J")]
    s, _ = E.apply(s, 0, GkChooseCard(T("red-1"), None, U("A")))
    assert s.phase == CHOOSE and s.turn == 2 and s.tokens[0] == pos(0, -2)


def test_GK_H2_v2_seat_0_places_its_own_token_then_hals_and_the_game_ends_after() -> None:
    s = at(1, 2)
    give(s, 0, resources=1, tiles=["red-4"])
    s.hands[0] = [U("G"), T("red-2"), U("A")]
    s.supply_tiles = [T("yellow-10")]  # Hal's tile is the last: the game ends (GK-H3)
    s.deck = [U("L"), U("K"), U("J")]
    s, _ = E.apply(s, 0, GkChooseCard(U("G"), T("red-4"), U("A")))
    assert s.pending == PLACE_TOKEN and s.pending_arg == 6  # seat 0's own token G first
    s, _ = E.apply(s, 0, E.legal_actions(s, 0)[-1])
    assert s.pending == PLACE_TOKEN and s.pending_arg == 0 and s.hal_card < 0  # now Hal's
    s, events = E.apply(s, 0, E.legal_actions(s, 0)[-1])
    assert s.phase == OVER and kinds(events)[-1] == "game_over"


# ----------------------------------------------------------------------------- GK-T1


def new_hand_table(version: int) -> GkState:
    s = at(3, version)
    s.first = 1
    s.nh = [2, 2, 2]
    s.hands[0] = [T("red-1"), T("red-2"), T("red-3"), U("A")]
    s.hands[1] = [T("blue-1"), T("blue-2"), T("blue-3"), U("B")]
    s.hands[2] = [T("yellow-1"), T("yellow-2"), T("yellow-3"), U("C")]
    s.deck = [U("L"), U("K"), U("J"), U("I"), U("H"), U("G"), U("F"), U("E")]  # top = end
    return s


def test_GK_T1_v2_a_new_hand_is_carried_out_when_stored_and_is_public() -> None:
    s = new_hand_table(2)
    s, _ = E.apply(s, 2, GkChooseCard(T("yellow-1")))  # seat 2 has chosen already
    s, events = E.apply(s, 0, GkNewHand())
    assert [e.for_seat(None) for e in events[:2]] == [
        {"kind": "new_hand_announced", "seat": 0},
        {"kind": "hand_discarded", "seat": 0,
         "cards": ["red-1", "red-2", "red-3", "urbanization-A"]},
    ]
    drawn = events[2]
    assert drawn.kind == "cards_drawn" and drawn.for_seat(1) == {
        "kind": "cards_drawn", "seat": 0, "count": 4}
    assert sorted(s.hands[0]) == [U("E"), U("F"), U("G"), U("H")]
    assert s.nh == [1, 2, 2] and s.choice[0] is None and s.phase == CHOOSE
    assert E.active_seats(s) == {0, 1} and s.choice[2] == (T("yellow-1"), -1, -1)
    view = E.view(s, 1)
    assert view.seats[0].new_hand_tokens == 1 and not view.seats[0].committed
    assert [c.label for c in view.discard][-4:] == ["red-1", "red-2", "red-3",
                                                    "urbanization-A"]
    # The seat chooses from its new hand; its second token is still offered, listed last.
    legal = E.legal_actions(s, 0)
    assert {a.card for a in legal if isinstance(a, GkChooseCard)} == set(s.hands[0])
    assert legal[-1] == GkNewHand() and legal.count(GkNewHand()) == 1


def test_GK_T1_v2_the_log_order_is_the_announcement_order() -> None:
    """Seat 0 announces before seat 1, the first player: seat 0 draws first (version 1
    draws in seat order from the first player once every seat has committed)."""
    s = new_hand_table(2)
    s, _ = E.apply(s, 0, GkNewHand())
    s, _ = E.apply(s, 1, GkNewHand())
    assert sorted(s.hands[0]) == [U("E"), U("F"), U("G"), U("H")]
    assert sorted(s.hands[1]) == [U("I"), U("J"), U("K"), U("L")]
    s, _ = E.apply(s, 0, GkNewHand())  # the second token: the deck's discards come back
    assert s.nh == [0, 1, 2] and GkNewHand() not in E.legal_actions(s, 0)


def test_GK_T1_v1_unchanged_a_new_hand_is_sealed_until_every_seat_has_chosen() -> None:
    s = new_hand_table(1)
    s, events = E.apply(s, 0, GkNewHand())
    assert kinds(events) == ["choice_committed"] and s.nh == [2, 2, 2]
    assert E.view(s, 1).seats[0].committed and s.hands[0][-1] == U("A")
    s, _ = E.apply(s, 1, GkNewHand())
    s, events = E.apply(s, 2, GkChooseCard(T("yellow-1")))
    assert kinds(events)[:2] == ["choice_committed", "new_hands_announced"]
    assert events[1].public == {"seats": [1, 0]}  # seat order from the first player
    assert sorted(s.hands[1]) == [U("E"), U("F"), U("G"), U("H")]
    assert sorted(s.hands[0]) == [U("I"), U("J"), U("K"), U("L")]
    assert s.nh == [1, 1, 2] and E.active_seats(s) == {0, 1}
