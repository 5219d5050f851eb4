"""Rules version 3: the redrawn board (``boards/v3.json``, docs/ny1901-board.md) and the rules
that bite on it -- a skyscraper covering two districts (NY-A3) counted in both by the
challenge (NY-F3, NY-X1 Gold Tycoon), and a placement on own lot squares refused by NY-A6
alone. Versions 1 and 2 keep the first drawing (``data.py``) for their whole life."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from service.games.base import IllegalAction
from service.games.ny1901 import Ny1901Engine, Ny1901Options, load_board, load_board_file, scoring
from service.games.ny1901 import rules as R
from service.games.ny1901 import state as st
from service.games.ny1901.actions import Ny1901Build
from service.games.ny1901.board import (
    BOARDS,
    Board,
    _connected,
    default_board,
    redrawn_board,
    shipped_board,
    spread,
)
from service.games.ny1901.data import DISTRICTS, PINK, SHAPES, STREET_CARDS
from service.games.ny1901.shapes import TILE_INDEX, TILES, rotate

from .helpers import E, blank, give, legal, of_type

BOARD = redrawn_board()
W, H = BOARD.width, BOARD.height
ALL = range(W * H)


def squares(mask: int) -> set[int]:
    return {s for s in ALL if mask >> s & 1}


def district_of(square: int, board: Board = BOARD) -> int:
    return board.lots[board.square_lot[square]].district


def footprints() -> Iterator[tuple[str, int, int, int, int]]:
    """(shape, rotation, x, y, mask) of every shape in each distinct rotation at every grid
    position where it fits on the grid (brute force, no placement tables)."""
    for name, cells in SHAPES.items():
        seen: set[tuple[tuple[int, int], ...]] = set()
        for turns in range(4):
            turned = rotate(cells, turns)
            if turned in seen:
                continue
            seen.add(turned)
            for y in range(H):
                for x in range(W):
                    if all(x + cx < W and y + cy < H for cx, cy in turned):
                        mask = sum(1 << ((y + cy) * W + x + cx) for cx, cy in turned)
                        yield name, turns, x, y, mask


def along_open_square(mask: int, board: Board = BOARD) -> bool:
    """NY-A6 by hand: a side of the footprint on a street or park square."""
    open_squares = board.street_mask | board.park_mask
    return any(board.neighbors[s] & open_squares for s in squares(mask))


def blocks(board: Board = BOARD) -> list[set[int]]:
    """Blocks: maximal side-connected regions of lot and blocked squares."""
    solid = squares(board.lot_mask | board.blocked_mask)
    out: list[set[int]] = []
    while solid:
        start = solid.pop()
        block, todo = {start}, [start]
        while todo:
            for other in squares(board.neighbors[todo.pop()]) & solid:
                solid.discard(other)
                block.add(other)
                todo.append(other)
        out.append(block)
    return out


def mixed_blocks(board: Board = BOARD) -> list[set[int]]:
    return [b for b in blocks(board)
            if len({district_of(s, board) for s in b if board.square_lot[s] >= 0}) >= 2]


def two_district_dominoes(board: Board = BOARD) -> list[tuple[int, int, int]]:
    """Legal-anywhere placements of the 2-square tile (on lots, NY-A6 met) whose squares lie
    in two districts."""
    return [(turns, x, y) for name, turns, x, y, mask in footprints()
            if name == "domino" and not mask & ~board.lot_mask
            and along_open_square(mask, board)
            and len({district_of(s, board) for s in squares(mask)}) == 2]


def refused_by_a6_alone(board: Board = BOARD) -> list[tuple[str, int, int, int]]:
    """Placements of any tile whose every square is a lot square but no side of which is on a
    street or park: NY-A6 is the only rule that can refuse them."""
    return [(name, turns, x, y) for name, turns, x, y, mask in footprints()
            if not mask & ~board.lot_mask and not along_open_square(mask, board)]


# ------------------------------------------------------------------ the published facts
def test_the_redrawn_board_is_a_shipped_file_loaded_as_any_board_file() -> None:
    path = BOARDS / "v3.json"
    assert load_board_file(path).rows == BOARD.rows
    assert load_board(json.loads(path.read_text())).rows == BOARD.rows
    again = load_board(BOARD.to_json())
    assert [lot.mask for lot in again.lots] == [lot.mask for lot in BOARD.lots]
    assert (W, H) == (21, 16)


def test_65_lots_13_per_district_8_of_two_and_5_of_three_squares_each_connected() -> None:
    assert len(BOARD.lots) == 65
    for district in range(5):
        sizes = sorted(lot.size for lot in BOARD.lots if lot.district == district)
        assert sizes == [2] * 8 + [3] * 5, DISTRICTS[district]
    for lot in BOARD.lots:
        assert _connected(set(lot.squares), BOARD.neighbors), lot.name
        assert lot.mask & BOARD.access_mask, f"{lot.name}: no square along a street or park"


def test_three_square_lots_are_spread_over_the_bonus_streets() -> None:
    for street_id in STREET_CARDS:
        along = BOARD.street(street_id).along
        threes = {lot.district for lot in BOARD.lots if lot.size == 3 and lot.mask & along}
        assert len(threes) >= 2, street_id


def test_the_same_streets_and_parks_and_each_bonus_street_borders_three_districts() -> None:
    first = default_board()
    assert [s.id for s in BOARD.streets] == [s.id for s in first.streets]
    assert [(s.id, s.bonus) for s in BOARD.streets] == [(s.id, s.bonus) for s in first.streets]
    assert [p.name for p in BOARD.parks] == [p.name for p in first.parks]
    assert BOARD.park_mask == sum(p.mask for p in BOARD.parks)
    for street in BOARD.streets:
        assert _connected(squares(street.mask), BOARD.neighbors), street.id
        assert not street.mask & ~BOARD.street_mask
    expected = {"broadway": 5, "pine_thames": 4, "wall_street": 3, "cedar_street": 3,
                "nassau_broad": 3}
    for street_id in STREET_CARDS:
        along = BOARD.street(street_id).along
        assert len({district_of(s) for s in squares(along)}) == expected[street_id], street_id


def test_start_lots_are_two_square_lots_of_their_colour_along_a_street() -> None:
    assert [BOARD.lots[i].name for i in BOARD.start_lots] == ["rG", "bB", "yI", "gG", "pB"]
    along_streets = spread(BOARD.street_mask, BOARD.neighbors)
    for district, index in enumerate(BOARD.start_lots):
        lot = BOARD.lots[index]
        assert lot.district == district and lot.size == 2
        assert lot.mask & along_streets


def _district_contiguous(mask: int) -> bool:
    """Blocks of a district touch across single streets (as on the first drawing)."""
    grown = mask | (spread(mask, BOARD.neighbors) & BOARD.street_mask)
    return bool(mask) and _connected(squares(grown), BOARD.neighbors)


def test_each_district_is_contiguous_pink_is_the_south_east_and_without_it_the_rest_is_too(
        ) -> None:
    for district in range(5):
        assert _district_contiguous(BOARD.district_masks[district]), DISTRICTS[district]
    rest = sum(m for d, m in enumerate(BOARD.district_masks) if d != PINK)
    assert _district_contiguous(rest)
    pink = [BOARD.xy(s) for s in squares(BOARD.district_masks[PINK])]
    assert min(x for x, _ in pink) > W // 2 and min(y for _, y in pink) > 5


def test_the_geography_of_lower_manhattan() -> None:
    """North at the top, the Hudson west, the East River east: the cross streets run from
    Fulton (north) to State (south), Greenwich west of Broadway west of Nassau & Broad; the
    parks where they are on the ground."""
    def rows_of(street_id: str) -> set[int]:
        return {BOARD.xy(s)[1] for s in squares(BOARD.street(street_id).mask)}

    def columns_of(street_id: str) -> set[int]:
        return {BOARD.xy(s)[0] for s in squares(BOARD.street(street_id).mask)}

    north_to_south = ["fulton_street", "cedar_street", "pine_thames", "wall_street",
                      "beaver_street", "state_street"]
    ys = [rows_of(s) for s in north_to_south]
    assert all(len(y) == 1 for y in ys) and [min(y) for y in ys] == sorted(min(y) for y in ys)
    assert ys[0] == {0} and ys[-1] == {H - 1}
    west_to_east = [columns_of(s) for s in ("greenwich_street", "broadway", "nassau_broad")]
    assert all(len(x) == 1 for x in west_to_east)
    assert [min(x) for x in west_to_east] == sorted(min(x) for x in west_to_east)
    broadway = min(west_to_east[1])
    beaver = sorted(columns_of("beaver_street"))
    assert beaver[0] == broadway  # Beaver Street runs east from Broadway

    def park(name: str) -> set[tuple[int, int]]:
        mask = next(p.mask for p in BOARD.parks if p.name == name)
        return {BOARD.xy(s) for s in squares(mask)}

    assert max(x for x, _ in park("St. Paul's Churchyard")) == broadway - 1   # Broadway west
    assert min(x for x, _ in park("City Hall Park")) == broadway + 1          # Broadway east
    assert {y for _, y in park("City Hall Park")} <= {1, 2}                   # at Fulton
    wall = min(rows_of("wall_street"))
    assert {(broadway - 1, wall - 1)} <= park("Trinity Churchyard")           # Broadway & Wall
    assert (0, H - 2) in park("Battery Park")                                 # the south-west
    assert min(x for x, _ in park("Bowling Green")) == broadway + 1           # Broadway's foot
    assert min(y for _, y in park("Hanover Square")) > wall                   # south of Wall,
    assert min(x for x, _ in park("Hanover Square")) > min(west_to_east[2])   # east of Broad


# ------------------------------------------------------------------ the rules that bite
def test_NY_A3_F3_at_least_4_blocks_hold_two_districts_and_12_dominoes_span_two() -> None:
    """The issue's counts: >= 4 blocks with lots of two districts, >= 12 placements of the
    2-square tile spanning two districts (measured: 5 and 17)."""
    assert len(mixed_blocks()) >= 4
    assert len(two_district_dominoes()) >= 12
    # the engine's placement table lists them all (they are legal placements)
    domino = TILES[TILE_INDEX["B1"]].shape
    for turns, x, y in two_district_dominoes():
        assert E.geometry_for(3).find(domino, turns, x, y) is not None


def test_NY_A6_at_least_20_placements_on_lot_squares_only_NY_A6_refuses() -> None:
    """Measured: 103 (every shape), 24 of them dominoes."""
    refused = refused_by_a6_alone()
    assert len(refused) >= 20
    geometry = E.geometry_for(3)
    shape_index = {name: i for i, name in enumerate(SHAPES)}
    for name, turns, x, y in refused:
        assert geometry.find(shape_index[name], turns, x, y) is None


def test_the_first_drawing_had_neither() -> None:
    """Why the board changed (issue #13): on the first drawing every block is single-coloured
    and every placement on lots touches a street or park."""
    first = default_board()
    assert first is shipped_board(1) is shipped_board(2) and BOARD is shipped_board(3)
    assert (len(mixed_blocks(first)), len(two_district_dominoes(first)),
            len(refused_by_a6_alone(first))) == (0, 0, 0)
    assert (len(mixed_blocks()), len(two_district_dominoes()),
            len(refused_by_a6_alone())) == (5, 17, 103)


def v3_state(*lots: str, points: int = 0, challenge: str = "none") -> st.State:
    state = give(blank(players=2, challenge=challenge, rules_version=3), 0, *lots)
    assert state.rules_version == 3
    state.points[0] = points
    state.phase = st.ACQUIRED  # the seat has acquired: its optional build comes next
    return state


def test_NY_A6_a_domino_on_own_free_lot_squares_is_refused_only_for_want_of_a_street() -> None:
    """rA is (0,1), (0,2), (1,2) in the north-west block: (0,1) is on Fulton Street, (0,2)
    and (1,2) have no side on a street or park. The domino on (0,2)-(1,2) lies on the seat's
    own empty lot, with an unused tile, at the build step: only NY-A6 refuses it."""
    state = v3_state("rA")
    board = E.board_for(3)
    rA = board.lots[board.lot_index["rA"]]
    assert [board.xy(s) for s in rA.squares] == [(0, 1), (0, 2), (1, 2)]
    blind = Ny1901Build("B1", 0, 0, 2)
    builds = of_type(legal(state), "build")
    assert blind not in builds
    assert Ny1901Build("B1", 1, 0, 1) in builds   # the same tile upright touches Fulton
    assert Ny1901Build("B4", 0, 0, 1) in builds   # and the L covers the whole lot
    before = E.dumps(state)
    with pytest.raises(IllegalAction) as caught:
        E.apply(state, 0, blind)
    assert caught.value.code == R.BAD_PLACEMENT and "NY-A6" in str(caught.value)
    assert "no side of it is along a street or park" in str(caught.value)
    assert E.dumps(state) == before
    # every other condition holds: own empty land, the tile unused, this step builds
    footprint = E.geometry_for(3).footprint(TILES[TILE_INDEX["B1"]].shape, 0, 0, 2)
    assert footprint is not None and footprint & ~(state.land[0] & ~state.built[0]) == 0
    assert E.rules_for(3).tile_refusal(state, 0, TILE_INDEX["B1"]) is None


def test_NY_X1_F3_a_gold_skyscraper_in_two_districts_counts_for_both() -> None:
    """Gold Tycoon (3 points per district with at least 2 gold skyscrapers): G3 on rG + yB +
    yC and G1 on rF + yA each reach into red and yellow, so both districts hold two gold
    skyscrapers: 6 points, from two buildings played through the engine on a v3 match."""
    state = v3_state("rF", "rG", "yA", "yB", "yC", points=18, challenge="gold_tycoon")
    square_g3 = Ny1901Build("G3", 0, 8, 2)      # (8,2) (9,2) red, (8,3) (9,3) yellow
    upright_g1 = Ny1901Build("G1", 1, 6, 2)     # (6,2) red, (6,3) (6,4) yellow
    assert square_g3 in legal(state)
    state, events = E.apply(state, 0, square_g3)
    assert events[0].kind == "build"
    assert scoring.challenge_points(state, E.board_for(3))[0] == 0  # one gold per district
    state.seat, state.phase, state.flags = 0, st.ACQUIRED, 0        # seat 0 builds again
    assert upright_g1 in legal(state)
    state, _ = E.apply(state, 0, upright_g1)
    board = E.board_for(3)
    for _, _, mask in state.buildings[0]:
        assert {DISTRICTS[district_of(s)] for s in squares(mask)} == {"red", "yellow"}
    view = E.view(state, None)
    assert {(b.tile, len(b.squares)) for b in view.buildings} == {("G3", 4), ("G1", 3)}
    assert scoring.challenge_points(state, board)[0] == 6
    state.phase = st.OVER
    result = E.result(state)
    assert result is not None
    lines = {line.rule: line.points for line in result.seats[0].breakdown}
    assert lines["challenge:gold_tycoon"] == 6


# ------------------------------------------------------------------ versions keep their board
def test_versions_1_and_2_keep_the_first_drawing_and_new_matches_get_the_redrawn_one() -> None:
    assert E.rules_versions[-1] == 3 and E.setup(3, None, 1).rules_version == 3
    first = default_board()
    assert E.board_for(1) is first and E.board_for(2) is first and E.board_for(3) is BOARD
    assert E.geometry_for(1) is E.geometry_for(2) is not E.geometry_for(3)
    for version, board in ((1, first), (2, first), (3, BOARD)):
        state = E.setup(4, None, 9, version)
        assert E.view(state, None).board_rows == list(board.rows)
        for seat, district in enumerate(state.characters):
            assert state.buildings[seat][0][2] == board.lots[board.start_lots[district]].mask
        blob = E.dumps(state)
        again = E.loads(blob)
        assert again.rules_version == version and E.dumps(again) == blob
        assert again.buildings == state.buildings and again.land == state.land


def test_a_stored_state_is_decoded_on_its_own_versions_board() -> None:
    """The rules version is read before the geometry: the same building bytes mean another
    placement on the other board, so a v3 state decoded with v2's tables would differ."""
    state = v3_state("rF", "rG", "yA", "yB", "yC", points=18)
    state, _ = E.apply(state, 0, Ny1901Build("G3", 0, 8, 2))
    blob = E.dumps(state)
    assert st.rules_version_of(blob) == 3
    again = E.loads(blob)
    assert again.buildings == state.buildings
    try:
        wrong = st.loads(blob, E.geometry_for(2))
    except st.DecodeError:
        pass
    else:
        assert wrong.buildings != state.buildings
    with pytest.raises(st.DecodeError):
        E.loads(blob[:-1] + bytes((9,)))   # a rules version this engine does not play


def test_a_custom_board_is_played_under_every_rules_version() -> None:
    engine = Ny1901Engine(board=default_board())
    assert all(engine.board_for(v) is default_board() for v in engine.rules_versions)
    state = engine.setup(2, Ny1901Options(), 3)
    assert state.rules_version == 3
    assert engine.view(state, 0).board_rows == list(default_board().rows)


def test_board_v3_rows_differ_from_the_first_drawing() -> None:
    assert isinstance(BOARD, Board) and BOARD.rows != default_board().rows
