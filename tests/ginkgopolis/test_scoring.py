"""GK-B (bonus cards), GK-E (end of game) and GK-F (final scoring)."""

from __future__ import annotations

from service.games.ginkgopolis.actions import GkChooseCard, GkReturnTiles
from service.games.ginkgopolis.data import CHAR_BASE
from service.games.ginkgopolis.flow import RETURN_PARTS
from service.games.ginkgopolis.rules import Gains, apply_bonuses, perform_choice
from service.games.ginkgopolis.scoring import breakdown, district_points, districts, end_card_points
from service.games.ginkgopolis.state import CHOOSE, OVER, RESOLVE, RETURN

from .helpers import E, T, U, blank, give, put


def test_GK_B1_cards_1_to_9_give_items_on_their_action() -> None:
    s = blank(2)
    s.supply_tiles = [T("red-20"), T("red-19"), T("red-18"), T("red-17")]
    s.front[0] = [T(f"{c}-{n}") for c in ("red", "blue", "yellow") for n in (7, 8, 9)]
    for action, expected in ((0, (1, 1, 4)), (1, (1, 1, 4)), (2, (1, 1, 4))):
        gains = Gains()
        apply_bonuses(s, 0, action, gains)
        # red 7-9: 1 resource + 1 VP, blue: 1 tile + 1 VP, yellow: 2 VP
        assert (gains.resources, gains.tiles, gains.vp) == expected
    s = blank(2)
    s.supply_tiles = [T("red-20")]
    s.front[0] = [T("red-1"), T("blue-4"), T("yellow-2"), CHAR_BASE + 3 * 3 + 1]
    gains = Gains()
    apply_bonuses(s, 0, 0, gains)  # exploit: red 1 (resource), blue 4 (tile)
    assert (gains.resources, gains.tiles, gains.vp) == (1, 1, 0)


def test_GK_B1_a_new_bonus_card_counts_from_the_next_action_only() -> None:
    s = blank(2)
    put(s, 4, 1, ["yellow-11", "red-6"], owner=1)
    give(s, 0, resources=4, tiles=["red-9"])
    perform_choice(s, 0, T("red-6"), T("red-9"), [])  # red 6 card: build-up bonus
    assert s.res_screen[0] == 1 and s.front[0] == [T("red-6")]


def test_GK_B2_end_cards_10_to_20() -> None:
    s = blank(2, start_city=False)
    put(s, 0, 0, ["red-4"], owner=0)
    put(s, 1, 0, ["blue-4", "blue-5"], owner=0)
    put(s, 2, 0, ["yellow-4", "yellow-5", "yellow-6"], owner=0)
    put(s, 3, 0, ["yellow-7"], owner=1)
    s.front[0] = [CHAR_BASE + 0, CHAR_BASE + 1, CHAR_BASE + 2, T("red-1"), T("red-5"), T("blue-9")]
    expected = {
        "red-10": 1,
        "red-13": 1,
        "red-11": 3,
        "red-12": 2,  # red X; yellow; blue
        "blue-10": 2,
        "blue-11": 1,
        "blue-12": 3,
        "yellow-10": 3,
        "yellow-11": 1,
        "yellow-12": 2,
        "red-14": 2,
        "red-15": 3,
        "red-16": 2 * 1,  # red 1 exploit
        "red-17": 2 * 2,  # red char (set 1) urbanize, red 5 urbanize
        "red-18": 2 * 3,  # yellow char, blue char (set 1), blue 9 build up
        "red-19": 2 * 3,  # red char, red 1, red 5 -- itself added below
        "blue-19": 2 * 2,  # blue char, blue 9
        "red-20": 9,
    }
    for label, points in expected.items():
        assert end_card_points(s, 0, T(label)) == points, label
    s.front[0].append(T("red-19"))
    assert end_card_points(s, 0, T("red-19")) == 2 * 4  # itself included


def test_GK_F2_district_example_6_7_and_2_points() -> None:
    """Yellow district: Milena alone with 3 resources scores 6. Blue district of 7
    resources: Franta has most and scores 7; Milena and Nela tie on resources and on their
    tallest building, Milena's tallest has the higher number: 2 points, Nela none. The lone
    red 20 is no district."""
    franta, milena, nela = 0, 1, 2
    s = blank(3, start_city=False)
    put(s, 0, 0, ["yellow-3", "yellow-4"], owner=milena)
    put(s, 1, 0, ["yellow-5"], owner=milena)
    put(s, 0, 2, ["blue-4", "blue-6", "blue-10"], owner=franta)
    put(s, 1, 2, ["red-5", "blue-12"], owner=milena)
    put(s, 2, 2, ["red-6", "blue-7"], owner=nela)
    put(s, 6, 6, ["red-20"], owner=nela)
    groups = districts(s)
    assert len(groups) == 2
    points = [district_points(s, g) for g in groups]
    assert {milena: 6} in points
    assert {franta: 7, milena: 2} in points
    lines = dict(breakdown(s, milena))
    assert lines["district:yellow-4"] == 6 and lines["district:blue-7"] == 2
    assert not any(rule.startswith("district") for rule, _ in breakdown(s, nela))


def test_GK_F2_unowned_starting_buildings_count_for_nobody() -> None:
    s = blank(2)
    assert all(district_points(s, g) == {} for g in districts(s))


def test_GK_F1_total_is_vp_cards_new_hand_tokens_and_districts() -> None:
    s = blank(2, start_city=False)
    put(s, 0, 0, ["red-4"], owner=0)
    put(s, 1, 0, ["red-5"], owner=0)
    s.vp[0] = 10
    s.nh = [1, 0]
    s.front[0] = [T("yellow-20")]
    lines = breakdown(s, 0)
    assert lines == [
        ("vp_in_play", 10),
        ("card:yellow-20", 9),
        ("new_hand_tokens", 2),
        ("district:red-4", 4),
    ]


def test_GK_F3_equal_totals_share_the_victory() -> None:
    s = blank(3, start_city=False)
    s.phase = OVER
    s.vp = [5, 7, 7]
    s.nh = [0, 0, 0]
    result = E.result(s)
    assert result is not None
    assert result.winners == [1, 2]
    assert [r.rank for r in result.seats] == [3, 1, 1]
    assert all(r.score == sum(line.points for line in r.breakdown) for r in result.seats)


def _play_choices(s, choices):
    for seat, action in choices:
        s, _ = E.apply(s, seat, action)
    return s


def test_GK_E1_first_exhaustion_secret_returns_for_1_vp_each() -> None:
    s = blank(2)
    put(s, 4, 1, ["yellow-11", "blue-8"], owner=1)
    s.supply_tiles = [T("red-20")]
    give(s, 0, tiles=["red-10", "red-14", "blue-15"])
    give(s, 1, tiles=["yellow-16"])
    s.hands[0] = [T("blue-8"), T("red-1"), T("red-2"), T("red-3")]
    s.hands[1] = [T("blue-1"), T("blue-2"), T("blue-3"), U("A")]
    s = _play_choices(s, [(0, GkChooseCard(T("blue-8"))), (1, GkChooseCard(T("blue-1")))])
    assert s.phase == RETURN and s.runs == 1
    assert E.active_seats(s) == frozenset({0, 1})  # even seat 1, whatever it holds
    # Part 0 is red 1-10: seat 0 may return red 10 or not.
    assert E.legal_actions(s, 0) == [GkReturnTiles(()), GkReturnTiles((T("red-10"),))]
    hidden = E.view(s, 1)
    s, _ = E.apply(s, 0, GkReturnTiles((T("red-10"),)))
    assert E.view(s, 1) == hidden  # nothing shows before seat 0 has committed all parts
    s, _ = E.apply(s, 0, GkReturnTiles((T("red-14"),)))
    for _ in range(len(RETURN_PARTS) - 2):
        s, _ = E.apply(s, 0, GkReturnTiles(()))
    assert E.view(s, 1).seats[0].committed
    for _ in range(len(RETURN_PARTS)):
        s, _events = E.apply(s, 1, GkReturnTiles(()))
    assert s.vp[0] == 2
    # seat 1 then exploited blue 1 and drew one of the two returned tiles
    assert sorted([*s.supply_tiles, *s.tiles[1]]) == [T("red-10"), T("red-14"), T("yellow-16")]
    assert s.e1_done and not s.end
    assert s.phase in (CHOOSE, RESOLVE)


def test_GK_E1_nothing_returned_means_the_supply_ran_out_twice() -> None:
    s = blank(2)
    s.supply_tiles = [T("red-20")]
    s.hands[0] = [T("blue-1"), T("red-1"), T("red-2"), T("red-3")]
    s.hands[1] = [T("blue-2"), T("blue-3"), T("yellow-1"), U("A")]
    s = _play_choices(s, [(0, GkChooseCard(T("blue-1"))), (1, GkChooseCard(T("yellow-1")))])
    for seat in (0, 1):
        for _ in RETURN_PARTS:
            s, _ = E.apply(s, seat, GkReturnTiles(()))
    assert s.phase == OVER and s.runs == 2 and s.vp[1] == 1  # seat 1 still played


def test_GK_E2_all_resources_placed_ends_the_game_after_the_turn() -> None:
    s = blank(2)
    for i in range(8):  # 24 resources of seat 0 in the city
        put(s, 10 + 2 * i, 10, ["yellow-1", "yellow-2", f"yellow-{4 + i}"], owner=0)
    give(s, 0, resources=1, tiles=["red-9"])
    assert s.res_supply[0] == 0 and s.in_city[0] == 24
    s.hands[0] = [U("A"), T("red-1"), T("red-2"), T("red-3")]
    s.hands[1] = [T("blue-2"), T("blue-3"), T("yellow-1"), U("B")]
    s = _play_choices(s, [(0, GkChooseCard(U("A"), T("red-9"))), (1, GkChooseCard(T("yellow-1")))])
    if s.phase == RESOLVE:  # the token's destination
        s, _ = E.apply(s, 0, E.legal_actions(s, 0)[0])
    assert s.end and s.phase == OVER
    assert s.vp[1] == 1  # the turn was finished: seat 1 exploited yellow 1
