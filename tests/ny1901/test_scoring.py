"""Final scoring (NY-F1..F5, NY-X1, X2, X4, X5) with the rulebook's worked examples."""

from __future__ import annotations

import json
from pathlib import Path

from service.games.base import Result
from service.games.ny1901 import Ny1901Engine, Ny1901Options, load_board_file
from service.games.ny1901 import state as st
from service.games.ny1901.board import default_document
from service.games.ny1901.scoring import result
from service.games.ny1901.shapes import TILE_INDEX, TILES

from .helpers import BOARD, GEO, blank, give, put


def finish(state: st.State) -> Result:
    state.phase = st.OVER
    return result(state, BOARD)


def points(res: Result, seat: int, rule: str) -> int:
    return sum(line.points for line in res.seats[seat].breakdown if line.rule == rule)


def wall_street_example() -> st.State:
    """Brown (seat 0) has 4 buildings along Wall Street including 1 legendary, green 1,
    yellow 1, blue 3."""
    state = blank(players=4, streets=("wall_street", "broadway", "cedar_street"))
    give(state, 0, "gE", "gG", "gH", "gC", "gD", "yF")
    put(state, 0, "woolworth", 0, 1, 10)
    put(state, 0, "B3", 0, 0, 8)
    put(state, 0, "B1", 0, 3, 8)
    put(state, 0, "B2", 0, 6, 8)
    give(state, 1, "pB")
    put(state, 1, "B3", 0, 12, 10)
    give(state, 2, "yM")
    put(state, 2, "B3", 0, 16, 8)
    give(state, 3, "gI", "pG", "pH")
    put(state, 3, "B3", 0, 6, 10)
    put(state, 3, "B1", 0, 16, 10)
    put(state, 3, "B2", 0, 18, 10)
    return state


def test_NY_F2_wall_street_majority_example_brown_gets_5() -> None:
    res = finish(wall_street_example())
    assert [points(res, seat, "street:wall_street") for seat in range(4)] == [5, 0, 0, 0]


def test_NY_F2_a_tie_gives_nobody_the_bonus_and_a_building_counts_for_every_street() -> None:
    state = wall_street_example()
    give(state, 3, "gF")
    put(state, 3, "S1", 1, 4, 10)      # blue now has 4 too
    res = finish(state)
    assert [points(res, seat, "street:wall_street") for seat in range(4)] == [0, 0, 0, 0]
    # gF (4,10)-(4,11) also borders Greenwich Street (x=5), not a bonus street here
    state = blank(players=2, streets=("broadway", "wall_street", "pine_thames"))
    give(state, 0, "gJ")
    put(state, 0, "B1", 1, 9, 10)      # (9,10)-(9,11): Broadway (x=10) and Wall Street (y=9)
    res = finish(state)
    assert points(res, 0, "street:broadway") == 5 and points(res, 0, "street:wall_street") == 5


def test_NY_F2_starting_property_counts_as_a_building() -> None:
    state = blank(players=2, streets=("broadway", "wall_street", "pine_thames"))
    give(state, 1, "pA")
    put(state, 1, "start", 1, 11, 10)  # along Broadway and Wall Street
    res = finish(state)
    assert points(res, 1, "street:broadway") == 5


def test_NY_F1_F4_buildings_and_unused_action_cards_and_score_is_the_sum() -> None:
    """NY-F1 building points, NY-F4 one point per unused action card; no challenge line in
    the learning game."""
    state = blank(players=2, challenge="none")
    state.points = [17, 9]
    state.cards = [st.CARD_BOOM, 0]
    res = finish(state)
    assert points(res, 0, "buildings") == 17 and points(res, 0, "unused_action_cards") == 2
    assert points(res, 1, "unused_action_cards") == 3
    for seat in res.seats:
        assert seat.score == sum(line.points for line in seat.breakdown)
    assert not any(line.rule.startswith("challenge:") for line in res.seats[0].breakdown)


def fake(state: st.State, seat: int, *tiles: str) -> st.State:
    """Buildings whose location does not matter for the rule under test."""
    for tile in tiles:
        index = TILE_INDEX[tile]
        placement = next(p for p in GEO.placements if p.shape == TILES[index].shape)
        state.buildings[seat] = [*state.buildings[seat], (index, placement.id, placement.mask)]
        if TILES[index].legendary >= 0:
            state.legend[TILES[index].legendary] = seat
    return state


def test_NY_X1_gold_tycoon_three_points_per_district_with_two_golds() -> None:
    state = blank(players=2, challenge="gold_tycoon")
    give(state, 0, "gI", "gK", "yA", "yC")
    put(state, 0, "G1", 0, 6, 10)
    put(state, 0, "G1", 0, 6, 11)      # two golds in green
    put(state, 0, "G1", 0, 6, 4)       # one gold in yellow
    put(state, 0, "B3", 0, 6, 5)       # bronze does not count
    res = finish(state)
    assert points(res, 0, "challenge:gold_tycoon") == 3
    assert points(res, 1, "challenge:gold_tycoon") == 0


def test_NY_F3_a_building_in_two_districts_counts_in_both(tmp_path: Path) -> None:
    """The shipped board's blocks are single-coloured, so swap yD and gB: a gold 2x2 on gB
    and yF lies in green and yellow and counts for both (Gold Tycoon)."""
    doc = default_document()
    doc["rows"] = [row.replace("gB gB .. yD yD", "yD yD .. gB gB") for row in doc["rows"]]
    path = tmp_path / "board.json"
    path.write_text(json.dumps(doc))
    engine = Ny1901Engine(board=load_board_file(path))
    board, geo = engine.board, engine.geometry
    state = engine.setup(2, Ny1901Options(expert=True, challenge="gold_tycoon"), 3)
    for name in ("gB", "yF", "gI", "yA", "yC"):
        state.lots[0] |= 1 << board.lot_index[name]
    for tile, rotation, x, y in (("G3", 0, 6, 7), ("G1", 0, 6, 10), ("G2", 0, 6, 4)):
        index = TILE_INDEX[tile]
        placement = geo.find(TILES[index].shape, rotation, x, y)
        assert placement is not None
        state.buildings[0].append((index, placement.id, placement.mask))
    st.refresh(state, geo)
    res = finish_on(engine, state)
    # green: G3 + G1; yellow: G3 + G2 -> 2 districts
    assert points(res, 0, "challenge:gold_tycoon") == 6


def finish_on(engine: Ny1901Engine, state: st.State) -> Result:
    state.phase = st.OVER
    res = engine.result(state)
    assert res is not None
    return res


def test_NY_X2_master_architect_irregular_skyscrapers() -> None:
    for tiles, expected in ((("B4", "B6"), 0), (("B4", "B6", "S4"), 3),
                            (("B4", "B6", "S4", "singer"), 6),
                            (("B4", "B6", "S4", "S6", "G5"), 10),
                            (("B4", "B6", "S4", "S6", "G5", "G4", "B1", "G6"), 10)):
        state = fake(blank(players=2, challenge="master_architect"), 0, *tiles)
        fake(state, 0, "start")  # the starting property is no skyscraper
        assert points(finish(state), 0, "challenge:master_architect") == expected, tiles


def test_NY_X4_bronze_baron() -> None:
    for count, expected in ((3, 0), (4, 5), (5, 10), (6, 15)):
        state = fake(blank(players=2, challenge="bronze_baron"), 1,
                     *["B1", "B2", "B3", "B4", "B5", "B6"][:count], "S1", "start")
        assert points(finish(state), 1, "challenge:bronze_baron") == expected


def test_NY_X5_generation_king_strict_majority_per_level() -> None:
    state = blank(players=3, challenge="generation_king")
    fake(state, 0, "B1", "B2", "S1", "G1")
    fake(state, 1, "B1", "S1", "S2", "woolworth")
    fake(state, 2, "B1", "G1")
    res = finish(state)
    # bronze: seat 0 (2) strictly most; silver: seat 1 (2); gold: all 1 -> nobody
    assert [points(res, s, "challenge:generation_king") for s in range(3)] == [5, 5, 0]
    state = blank(players=2, challenge="generation_king")
    fake(state, 0, "B1", "start")
    fake(state, 1, "start")
    res = finish(state)
    # nobody has silver or gold: nobody scores those levels
    assert [points(res, s, "challenge:generation_king") for s in range(2)] == [5, 0]


def test_NY_F5_ties_broken_by_tallest_legendary_then_gold_count_else_shared() -> None:
    state = blank(players=4, challenge="none")
    state.points = [30, 30, 30, 20]
    fake(state, 0, "park_row")               # 391 ft
    fake(state, 1, "singer")                 # 612 ft: wins the tie
    fake(state, 2, "G1", "G2", "G3")         # no legendary: behind both
    res = finish(state)
    assert [s.rank for s in res.seats] == [2, 1, 3, 4] and res.winners == [1]

    state = blank(players=3, challenge="none")
    state.points = [30, 30, 30]
    fake(state, 0, "G1")
    fake(state, 1, "G1", "G2")
    fake(state, 2, "G1", "G2")
    res = finish(state)
    assert [s.rank for s in res.seats] == [3, 1, 1] and res.winners == [1, 2]  # shared


