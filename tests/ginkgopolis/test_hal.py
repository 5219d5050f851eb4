"""GK-H: the solo game against Hal."""

from __future__ import annotations

import pytest

from service.games.base import IllegalAction
from service.games.ginkgopolis import GkOptions
from service.games.ginkgopolis.actions import GkChooseCard, GkNewHand
from service.games.ginkgopolis.city import pos
from service.games.ginkgopolis.state import CHOOSE, OVER

from .helpers import E, T, U, blank, give, put

HAL = 1


def solo(**kw: object) -> object:
    s = blank(1)
    s.hands[0] = [T("red-1"), T("red-2"), U("A")]
    s.supply_tiles = [T("blue-20"), T("blue-19"), T("blue-18"), T("yellow-10")]
    s.deck = [U("L"), U("K"), U("J"), U("I"), U("H"), U("G")]
    return s


def test_GK_H1_solo_setup() -> None:
    s = E.setup(1, None, 42)
    assert s.res_screen == [6] and len(s.tiles[0]) == 6 and s.vp == [6, 0]
    assert s.front == [[], []] and s.nh == [0]
    assert s.res_supply == [19, 25]  # Hal: the whole supply of his colour
    assert len(s.hands[0]) == 3 and len(s.discard) == 7  # set up as for 2 players
    assert len(s.supply_tiles) == 51 - 6 - 6 and len(s.box) == 6
    assert E.active_seats(s) == frozenset({0}) and s.first == 0
    assert GkNewHand() not in E.legal_actions(s, 0)


def test_GK_H2_choice_gives_hal_a_card_and_discards_the_third() -> None:
    s = E.setup(1, None, 7)
    legal = E.legal_actions(s, 0)
    tiles = len(s.tiles[0])
    assert len(legal) == 6 * (1 + tiles) == len(set(legal))
    assert all(a.hal_card is not None and a.hal_card != a.card for a in legal)
    with pytest.raises(IllegalAction):
        E.apply(s, 0, GkChooseCard(legal[0].card))  # Hal must get a card


def test_GK_H2_hal_urbanizes_scoring_1_vp_per_adjacent_floor() -> None:
    s = solo()
    put(s, -1, -1, ["blue-8", "blue-9"], owner=0)
    s.tokens[0] = pos(0, -1)
    s, _events = E.apply(s, 0, GkChooseCard(T("red-1"), None, U("A")))
    a = pos(0, -1)
    assert s.stacks[a] == (T("yellow-10"),) and s.owner[a] == HAL and a in s.markers
    assert s.vp[HAL] == 1 + 2  # red 1 below (1 floor) + the blue corner (2 floors)
    assert s.res_supply[HAL] == 24 and s.res_screen[0] == 1  # seat 0 exploited red 1
    assert s.tokens[0] == pos(0, -2)
    assert T("red-2") in s.discard and U("A") in s.discard  # the third card, Hal's card
    assert s.phase == CHOOSE and len(s.hands[0]) == 3 and s.turn == 2
    assert s.tiles == [[]]  # Hal gains no items


def test_GK_H2_hal_builds_up_keeps_the_card_and_pays() -> None:
    s = solo()
    key = put(s, 5, 5, ["red-4", "yellow-12"], owner=0)
    s.hands[0] = [T("red-1"), T("yellow-12"), U("A")]
    s.front[HAL] = [T("red-7")]  # an in-play bonus card: ignored for Hal
    s.vp[HAL] = 1
    s, _ = E.apply(s, 0, GkChooseCard(T("red-1"), None, T("yellow-12")))
    # Hal's tile is yellow 10 on yellow 12: 2 VP to pay, he has 1; no colour fee.
    assert s.stacks[key][-1] == T("yellow-10") and s.owner[key] == HAL
    assert s.vp[HAL] == 0 and s.front[HAL] == [T("red-7"), T("yellow-12")]
    assert s.res_supply[HAL] == 25 - 3 and s.in_city[HAL] == 3
    assert s.vp[0] == 2 and s.res_screen[0] == 2 + 1  # got 2 back, +2 VP; red 1 exploit


def test_GK_H2_building_on_hals_building_scores_for_hal() -> None:
    s = solo()
    key = put(s, 5, 5, ["yellow-12"], owner=HAL)
    s.hands[0] = [T("yellow-12"), T("red-2"), U("A")]
    give(s, 0, resources=3, tiles=["yellow-13"])
    assert s.res_supply[HAL] == 24
    s, _ = E.apply(s, 0, GkChooseCard(T("yellow-12"), T("yellow-13"), U("A")))
    assert s.owner[key] == 0 and s.stacks[key][-1] == T("yellow-13")
    assert s.res_screen[0] == 3 - 2 and s.vp[0] == 0  # no VP paid: 13 > 12, same colour
    # Hal: his resource back (+1 VP), then he urbanizes at A next to red 1 (+1 VP).
    assert s.vp[HAL] == 1 + 1 and s.res_supply[HAL] == 25 - 1


def test_GK_H3_game_ends_when_hal_cannot_pay() -> None:
    s = solo()
    s.res_supply[HAL] = 0
    s, events = E.apply(s, 0, GkChooseCard(T("red-1"), None, U("A")))
    assert s.phase == OVER
    assert any(e.kind == "hal_cannot_play" for e in events)
    result = E.result(s)
    assert result is not None and [r.seat for r in result.seats] == [0]
    assert [o.name for o in result.opponents] == ["Hal"]


def test_GK_H3_game_ends_the_turn_the_supply_runs_out() -> None:
    s = solo()
    s.supply_tiles = [T("blue-20")]
    s, _ = E.apply(s, 0, GkChooseCard(T("red-1"), None, U("A")))
    assert s.phase == OVER and s.runs == 1  # Hal took the last tile; no GK-E1 in solo


def test_GK_H3_hal_scores_like_a_player() -> None:
    s = solo()
    put(s, 5, 5, ["yellow-12"], owner=HAL)
    put(s, 6, 5, ["yellow-13"], owner=HAL)
    s.front[HAL] = [T("red-20")]
    s.vp[HAL] = 3
    s.phase = OVER
    lines = dict(E.hal_breakdown(s) and [(line.rule, line.points) for line in E.hal_breakdown(s)])
    assert lines == {"vp_in_play": 3, "card:red-20": 9, "district:yellow-12": 4}
    result = E.result(s)
    assert result is not None
    (hal,) = result.opponents
    assert (hal.name, hal.score) == ("Hal", 16)
    assert [(line.rule, line.points) for line in hal.breakdown] == list(lines.items())
    # Seat 0 has 6 VP (GK-H1) and nothing else: Hal's 16 beat it, so no seat wins.
    assert result.seats[0].score < 16
    assert (result.seats[0].rank, hal.rank, result.winners) == (2, 1, [])


def test_GK_H3_seat_0_beats_hal_with_more_vp_and_equal_totals_share_the_victory() -> None:
    """GK-H3 + GK-F3: the solo player is ranked against Hal; a tie is a shared victory."""
    s = solo()
    s.phase = OVER
    mine = E.result(s)
    assert mine is not None
    me, hal_score = mine.seats[0].score, mine.opponents[0].score
    s.vp[HAL] += me - hal_score  # level Hal with seat 0
    tied = E.result(s)
    assert tied is not None
    assert (tied.seats[0].rank, tied.opponents[0].rank, tied.winners) == (1, 1, [0])
    s.vp[HAL] -= 1
    won = E.result(s)
    assert won is not None
    assert (won.seats[0].rank, won.opponents[0].rank, won.winners) == (1, 2, [0])


@pytest.mark.parametrize(("extra", "used"), [(T("red-2"), True), (U("L"), False)])
def test_GK_H4_expert_hal_draws_another_card_for_an_urbanization_card(
    extra: int, used: bool
) -> None:
    s = solo()
    s.flags |= 2  # expert
    s.hands[0] = [T("red-1"), T("blue-1"), U("A")]
    s.deck = [U("K"), extra]
    s, events = E.apply(s, 0, GkChooseCard(T("blue-1"), None, U("A")))
    assert any(e.kind == "hal_extra_card" and e.public["used"] == used for e in events)
    if used:  # a building card: he builds up on red 2
        assert s.owner[pos(1, 0)] == HAL and T("red-2") in s.front[HAL]
    else:  # token L's space earns no more than A's: he urbanizes at A
        assert s.owner[pos(0, -1)] == HAL


def test_GK_H4_expert_option_is_the_hal_expert_flag() -> None:
    assert E.setup(1, GkOptions(hal_expert=True), 1).expert
    assert not E.setup(1, None, 1).expert
