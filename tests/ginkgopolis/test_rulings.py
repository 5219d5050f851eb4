"""Skyline rulings for Ginkgopolis (docs/rulings.md), one test each."""

from __future__ import annotations

from service.games.ginkgopolis.actions import GkChooseCard, GkReturnTiles
from service.games.ginkgopolis.city import (
    keeps_order,
    perimeter_key,
    pos,
    restore_order,
    token_destinations,
)
from service.games.ginkgopolis.data import TOKEN_START
from service.games.ginkgopolis.state import RETURN

from .helpers import E, T, U, blank, give, put


def test_ruling_T2_perimeter_order_is_clockwise_from_straight_up() -> None:
    start = [pos(x, y) for x, y in TOKEN_START]
    assert keeps_order(start)
    ordered = sorted(range(12), key=lambda i: perimeter_key(start[i]))
    assert ordered == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0]  # B (straight up) first
    swapped = list(start)
    swapped[0], swapped[1] = swapped[1], swapped[0]
    assert not keeps_order(swapped)
    assert keeps_order(restore_order(swapped))


def test_ruling_T2_no_empty_neighbour_token_goes_where_the_order_is_kept() -> None:
    """GK-T2: the new tile at A has no empty edge neighbour; A may go to any empty edge space
    of the city that keeps A..L clockwise without moving other tokens."""
    s = blank(2)
    put(s, -1, -1, ["blue-8"], owner=1)
    put(s, 0, -2, ["blue-9"], owner=1)
    a = s.tokens[0]
    put(s, 0, -1, ["red-4"], owner=0)
    destinations, relabel = token_destinations(s.stacks, s.tokens, 0, a)
    assert destinations and not relabel
    for space in destinations:
        trial = list(s.tokens)
        trial[0] = space
        assert keeps_order(trial)
        assert space not in s.stacks and space not in s.tokens


def test_ruling_E1_a_tile_committed_with_an_unresolved_card_cannot_be_returned() -> None:
    s = blank(2)
    put(s, 4, 1, ["yellow-11", "blue-8"], owner=1)
    s.supply_tiles = [T("red-20")]
    give(s, 1, resources=2, tiles=["red-5", "red-6"])
    s.hands[0] = [T("blue-8"), T("red-1"), T("red-2"), T("red-3")]
    s.hands[1] = [T("blue-1"), T("blue-2"), T("blue-3"), U("A")]
    s, _ = E.apply(s, 0, GkChooseCard(T("blue-8")))
    s, _ = E.apply(s, 1, GkChooseCard(U("A"), T("red-5")))
    assert s.phase == RETURN
    assert E.legal_actions(s, 1) == [GkReturnTiles(()), GkReturnTiles((T("red-6"),))]


def test_ruling_H2_the_third_card_is_discarded_at_the_reveal() -> None:
    s = blank(1)
    s.hands[0] = [T("red-1"), T("red-2"), U("A")]
    s.supply_tiles = [T("blue-20"), T("yellow-10")]
    s.deck = [U("L"), U("K"), U("J")]
    chosen, _ = E.apply(s, 0, GkChooseCard(T("red-1"), None, U("A")))
    assert T("red-2") in chosen.discard
    assert s.discard == []
