"""The first drawing's invariants (ny1901-board.md; the board of rules versions 1 and 2) and
the validated board format. The redrawn board of version 3: ``test_board_v3.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from service.games.ny1901 import (
    BoardError,
    Ny1901Engine,
    default_board,
    load_board,
    load_board_file,
)
from service.games.ny1901.board import _connected, default_document, spread
from service.games.ny1901.data import DISTRICTS, PINK, STREET_CARDS

BOARD = default_board()


def test_65_lots_13_per_district_8_of_two_and_5_of_three_squares() -> None:
    assert len(BOARD.lots) == 65
    for district in range(5):
        sizes = sorted(lot.size for lot in BOARD.lots if lot.district == district)
        assert sizes == [2] * 8 + [3] * 5, DISTRICTS[district]


def test_every_lot_is_connected() -> None:
    for lot in BOARD.lots:
        assert _connected(set(lot.squares), BOARD.neighbors), lot.name


def test_every_lot_lies_along_a_street_or_park_and_five_squares_do_not() -> None:
    """NY-A6 geography: exactly the five listed lot squares have neither a street nor a park."""
    open_squares = BOARD.street_mask | BOARD.park_mask
    blind = []
    for lot in BOARD.lots:
        along = [s for s in lot.squares if BOARD.neighbors[s] & open_squares]
        assert along, lot.name
        blind += [BOARD.xy(s) for s in lot.squares if s not in along]
    assert sorted(blind) == sorted([(0, 2), (0, 4), (3, 2), (3, 4), (17, 11)])


def test_bonus_streets_border_at_least_three_districts() -> None:
    expected = {"broadway": 5, "pine_thames": 4, "wall_street": 3, "cedar_street": 3,
                "nassau_broad": 3}
    for street_id in STREET_CARDS:
        street = BOARD.street(street_id)
        districts = {BOARD.lots[BOARD.square_lot[s]].district
                     for s in range(BOARD.width * BOARD.height) if street.along >> s & 1}
        assert len(districts) == expected[street_id], street_id


def test_named_streets_are_connected_and_on_street_squares() -> None:
    for street in BOARD.streets:
        squares = {s for s in range(BOARD.width * BOARD.height) if street.mask >> s & 1}
        assert _connected(squares, BOARD.neighbors), street.id
        assert street.mask & ~BOARD.street_mask == 0


def test_start_lots_are_two_square_lots_of_their_colour_along_a_street() -> None:
    names = [BOARD.lots[i].name for i in BOARD.start_lots]
    assert names == ["rL", "bJ", "yG", "gF", "pA"]
    for district, index in enumerate(BOARD.start_lots):
        lot = BOARD.lots[index]
        assert lot.district == district and lot.size == 2
        assert lot.mask & BOARD.access_mask


def _district_contiguous(mask: int) -> bool:
    """Blocks of a district touch across single streets: join squares two apart across a
    street square."""
    squares = {s for s in range(BOARD.width * BOARD.height) if mask >> s & 1}
    grown = mask | (spread(mask, BOARD.neighbors) & BOARD.street_mask)
    grown_squares = {s for s in range(BOARD.width * BOARD.height) if grown >> s & 1}
    return bool(squares) and _connected(grown_squares, BOARD.neighbors)


def test_each_district_is_contiguous_and_without_pink_the_rest_is_too() -> None:
    for district in range(5):
        assert _district_contiguous(BOARD.district_masks[district]), DISTRICTS[district]
    rest = sum(m for d, m in enumerate(BOARD.district_masks) if d != PINK)
    assert _district_contiguous(rest)


def test_streets_parks_and_blocked_squares_match_the_map() -> None:
    assert BOARD.street(
        "wall_street").mask == sum(1 << (9 * 21 + x) for x in range(21))
    assert len(BOARD.parks) == 6
    assert BOARD.park_mask == sum(p.mask for p in BOARD.parks)
    assert BOARD.lot_mask & (BOARD.street_mask | BOARD.park_mask | BOARD.blocked_mask) == 0


def test_board_document_round_trips_through_json_file(tmp_path: Path) -> None:
    path = tmp_path / "board.json"
    path.write_text(json.dumps(BOARD.to_json()))
    again = load_board_file(path)
    assert again.rows == BOARD.rows
    assert [lot.mask for lot in again.lots] == [lot.mask for lot in BOARD.lots]
    assert [s.mask for s in again.streets] == [s.mask for s in BOARD.streets]


def test_a_custom_board_plays_without_code_changes(tmp_path: Path) -> None:
    """Swap two lot names in the map: a different, valid board; an engine plays on it."""
    doc = default_document()
    doc["rows"] = [row.replace("rA", "rX").replace("rB", "rA").replace("rX", "rB")
                   for row in doc["rows"]]
    path = tmp_path / "custom.json"
    path.write_text(json.dumps(doc))
    engine = Ny1901Engine(board=load_board_file(path))
    assert engine.board.lots[engine.board.lot_index["rA"]].size == 2
    state = engine.setup(3, None, 5)
    for _ in range(30):
        state, _ = engine.apply(state, state.seat, engine.legal_actions(state, state.seat)[0])
    assert engine.loads(engine.dumps(state)).seat == state.seat


def _broken(change: dict[str, object]) -> dict[str, object]:
    doc = default_document()
    doc.update(change)
    return doc


@pytest.mark.parametrize(("change", "message"), [
    ({"width": 20}, "row 0 has 21 squares, expected 20"),
    ({"rows": default_document()["rows"][:-1]}, "'rows' must be a list of 16 strings"),
    ({"rows": [r.replace("rA rA rA", "rA rA xx") for r in default_document()["rows"]]},
     "unknown token 'xx'"),
    ({"rows": [r.replace("rA rA rA", "rA rB rB") for r in default_document()["rows"]]},
     "lot rA has 1 squares, expected 2 or 3"),
    ({"rows": [r.replace("gC gC gC", "## ## ##") for r in default_document()["rows"]]},
     "district green has 12 lots, expected 13"),
    ({"start_lots": {**default_document()["start_lots"], "red": "bA"}},
     "start lot of red: bA lies in another district"),
    ({"start_lots": {**default_document()["start_lots"], "red": "rA"}},
     "start lot of red: rA is not a 2-square lot"),
    ({"streets": default_document()["streets"][1:]}, "the bonus streets must be exactly"),
    ({"parks": [{"name": "Nowhere", "rects": [[0, 0, 1, 0]]}]}, "park Nowhere: square"),
    ({"extra": 1}, "unknown board keys"),
])
def test_bad_boards_are_refused_with_a_message_naming_the_problem(
        change: dict[str, object], message: str) -> None:
    with pytest.raises(BoardError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_board(_broken(change))


def test_a_split_lot_and_a_lot_away_from_streets_are_refused() -> None:
    rows = list(default_document()["rows"])
    rows[1] = rows[1].replace("rB rB", "rB rZ", 1)
    rows[2] = rows[2].replace("rD rD", "rZ rB", 1)
    with pytest.raises(BoardError, match=r"not connected|has 1 squares|lots, expected"):
        load_board(_broken({"rows": rows}))


def test_unreadable_board_files_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text("{nope")
    with pytest.raises(BoardError, match="not valid JSON"):
        load_board_file(path)
    with pytest.raises(BoardError, match="cannot read"):
        load_board_file(tmp_path / "missing.json")
