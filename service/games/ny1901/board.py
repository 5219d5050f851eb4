"""Parse and validate a New York 1901 board into integer bitmasks.

A board is a grid of ``width`` x ``height`` squares; square ``(x, y)`` is bit ``y * width + x``
of every mask. The source is an ASCII map (two characters per square, see ``data.py``) plus
named streets, parks and start lots, either from ``data.py`` (``default_board()``: the first
drawing, rules versions 1 and 2), from a shipped file (``redrawn_board()``: ``boards/v3.json``,
rules version 3 on; ``shipped_board(version)`` picks) or from any JSON file
(``load_board_file``)::

    {"width": 21, "height": 16, "rows": ["rA rA ..", ...],
     "streets": [{"id": "broadway", "name": "Broadway", "bonus": true,
                  "rects": [[10, 0, 10, 15]]}, ...],
     "parks": [{"name": "City Hall Park", "rects": [[11, 1, 12, 2]]}, ...],
     "start_lots": {"red": "rL", "blue": "bJ", ...}}

Every problem is refused with ``BoardError`` naming it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from . import data

STREET_TOKEN = ".."
PARK_TOKEN = "**"
BLOCKED_TOKEN = "##"
_LOT_TOKEN = re.compile(r"^[rbygp][A-Z]$")


class BoardError(ValueError):
    """A board description that cannot be played; the message names the problem."""


@dataclass(frozen=True, slots=True)
class Lot:
    name: str
    district: int
    size: int
    mask: int
    squares: tuple[int, ...]

    @property
    def kind(self) -> int:
        """The lot card kind: district and size (2 or 3) in one small int."""
        return self.district * 2 + (self.size - 2)


@dataclass(frozen=True, slots=True)
class Street:
    id: str
    name: str
    bonus: bool
    mask: int
    along: int
    """Lot squares sharing a side with the street (NY-A6 and NY-F2 use the same test)."""


@dataclass(frozen=True, slots=True)
class Park:
    name: str
    mask: int


@dataclass(frozen=True, slots=True, eq=False)
class Board:
    width: int
    height: int
    rows: tuple[str, ...]
    lots: tuple[Lot, ...]
    lot_index: Mapping[str, int]
    square_lot: tuple[int, ...]
    neighbors: tuple[int, ...]
    street_mask: int
    park_mask: int
    blocked_mask: int
    lot_mask: int
    access_mask: int
    """Lot squares with a side on a street or park square (NY-A6)."""
    district_masks: tuple[int, ...]
    streets: tuple[Street, ...]
    parks: tuple[Park, ...]
    start_lots: tuple[int, ...]
    """Per district (data.DISTRICTS order), the lot index of its character's start lot."""
    kind_lots: tuple[tuple[int, ...], ...]
    """Per card kind (district * 2 + size - 2), the lot indices of that kind."""

    def square(self, x: int, y: int) -> int:
        return y * self.width + x

    def xy(self, square: int) -> tuple[int, int]:
        return square % self.width, square // self.width

    def street(self, street_id: str) -> Street:
        for street in self.streets:
            if street.id == street_id:
                return street
        raise KeyError(street_id)

    def to_json(self) -> dict[str, Any]:
        """The board as the JSON document ``load_board`` reads."""
        width = self.width
        return {
            "width": width,
            "height": self.height,
            "rows": list(self.rows),
            "streets": [
                {"id": s.id, "name": s.name, "bonus": s.bonus,
                 "squares": [[q % width, q // width] for q in _bits(s.mask)]}
                for s in self.streets
            ],
            "parks": [
                {"name": p.name, "squares": [[q % width, q // width] for q in _bits(p.mask)]}
                for p in self.parks
            ],
            "start_lots": {
                data.DISTRICTS[d]: self.lots[i].name for d, i in enumerate(self.start_lots)
            },
        }


def _bits(mask: int) -> Iterable[int]:
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def _squares_of(entry: Mapping[str, Any], what: str, width: int, height: int) -> list[int]:
    squares: list[int] = []
    rects = entry.get("rects", [])
    points = entry.get("squares", [])
    if not isinstance(rects, list) or not isinstance(points, list):
        raise BoardError(f"{what}: 'rects' and 'squares' must be lists")
    for rect in rects:
        if (not isinstance(rect, Sequence) or len(rect) != 4
                or not all(isinstance(v, int) and not isinstance(v, bool) for v in rect)):
            raise BoardError(f"{what}: a rectangle must be [x0, y0, x1, y1], got {rect!r}")
        x0, y0, x1, y1 = rect
        if x0 > x1 or y0 > y1:
            raise BoardError(f"{what}: rectangle {list(rect)} is empty")
        points = [*points, *([x, y] for y in range(y0, y1 + 1) for x in range(x0, x1 + 1))]
    for point in points:
        if (not isinstance(point, Sequence) or len(point) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) for v in point)):
            raise BoardError(f"{what}: a square must be [x, y], got {point!r}")
        x, y = point
        if not (0 <= x < width and 0 <= y < height):
            raise BoardError(f"{what}: square ({x}, {y}) is outside the {width}x{height} grid")
        squares.append(y * width + x)
    if not squares:
        raise BoardError(f"{what}: no squares")
    return squares


def _connected(squares: set[int], neighbors: Sequence[int]) -> bool:
    start = next(iter(squares))
    seen = {start}
    todo = [start]
    while todo:
        square = todo.pop()
        for other in _bits(neighbors[square]):
            if other in squares and other not in seen:
                seen.add(other)
                todo.append(other)
    return seen == squares


def _neighbor_masks(width: int, height: int) -> tuple[int, ...]:
    out = []
    for y in range(height):
        for x in range(width):
            mask = 0
            for nx, ny in ((x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)):
                if 0 <= nx < width and 0 <= ny < height:
                    mask |= 1 << (ny * width + nx)
            out.append(mask)
    return tuple(out)


def spread(mask: int, neighbors: Sequence[int]) -> int:
    """Every square sharing a side with a square of ``mask`` (``mask`` itself excluded)."""
    out = 0
    for square in _bits(mask):
        out |= neighbors[square]
    return out & ~mask


def load_board(doc: Mapping[str, Any]) -> Board:
    """Validate a board document (the JSON shape above) and build its bitmasks."""
    if not isinstance(doc, Mapping):
        raise BoardError("a board must be a JSON object")
    unknown = set(doc) - {"width", "height", "rows", "streets", "parks", "start_lots", "name"}
    if unknown:
        raise BoardError(f"unknown board keys: {sorted(unknown)}")
    width, height = doc.get("width"), doc.get("height")
    if not isinstance(width, int) or not isinstance(height, int) or width < 3 or height < 3:
        raise BoardError("'width' and 'height' must be integers >= 3")
    if width * height > 4096:
        raise BoardError("the board is too large (at most 4096 squares)")
    rows = doc.get("rows")
    if not isinstance(rows, list) or len(rows) != height:
        raise BoardError(f"'rows' must be a list of {height} strings")
    tokens: list[str] = []
    for y, row in enumerate(rows):
        if not isinstance(row, str):
            raise BoardError(f"row {y} is not a string")
        cells = row.split()
        if len(cells) != width:
            raise BoardError(f"row {y} has {len(cells)} squares, expected {width}")
        for x, cell in enumerate(cells):
            if cell not in (STREET_TOKEN, PARK_TOKEN, BLOCKED_TOKEN) and not _LOT_TOKEN.match(cell):
                raise BoardError(f"square ({x}, {y}): unknown token {cell!r}")
        tokens.extend(cells)
    neighbors = _neighbor_masks(width, height)

    street_mask = park_mask = blocked_mask = 0
    lot_squares: dict[str, set[int]] = {}
    for square, token in enumerate(tokens):
        if token == STREET_TOKEN:
            street_mask |= 1 << square
        elif token == PARK_TOKEN:
            park_mask |= 1 << square
        elif token == BLOCKED_TOKEN:
            blocked_mask |= 1 << square
        else:
            lot_squares.setdefault(token, set()).add(square)

    access_mask = 0
    open_mask = street_mask | park_mask
    lots: list[Lot] = []
    for name in sorted(lot_squares, key=lambda n: (data.DISTRICT_LETTERS.index(n[0]), n[1])):
        squares = lot_squares[name]
        if len(squares) not in data.LOT_SIZES:
            raise BoardError(f"lot {name} has {len(squares)} squares, expected 2 or 3")
        if not _connected(squares, neighbors):
            raise BoardError(f"lot {name} is not connected")
        mask = sum(1 << s for s in squares)
        along = sum(1 << s for s in squares if neighbors[s] & open_mask)
        if not along:
            raise BoardError(f"lot {name} has no square along a street or park")
        access_mask |= along
        district = data.DISTRICT_LETTERS.index(name[0])
        lots.append(Lot(name, district, len(squares), mask, tuple(sorted(squares))))
    for district, colour in enumerate(data.DISTRICTS):
        count = sum(1 for lot in lots if lot.district == district)
        if count != data.LOTS_PER_DISTRICT:
            raise BoardError(
                f"district {colour} has {count} lots, expected {data.LOTS_PER_DISTRICT}"
            )
    lot_index = {lot.name: i for i, lot in enumerate(lots)}
    square_lot = [-1] * (width * height)
    for i, lot in enumerate(lots):
        for square in lot.squares:
            square_lot[square] = i
    lot_mask = sum(lot.mask for lot in lots)

    streets: list[Street] = []
    raw_streets = doc.get("streets")
    if not isinstance(raw_streets, list):
        raise BoardError("'streets' must be a list")
    for entry in raw_streets:
        if not isinstance(entry, Mapping):
            raise BoardError("a street must be an object")
        sid, sname, bonus = entry.get("id"), entry.get("name", entry.get("id")), entry.get(
            "bonus", False)
        if not isinstance(sid, str) or not isinstance(sname, str) or not isinstance(bonus, bool):
            raise BoardError(f"street {entry!r}: needs a string 'id', 'name' and bool 'bonus'")
        if any(s.id == sid for s in streets):
            raise BoardError(f"street {sid}: defined twice")
        street_squares = _squares_of(entry, f"street {sid}", width, height)
        for square in street_squares:
            if not street_mask >> square & 1:
                raise BoardError(
                    f"street {sid}: square {square % width, square // width} is not a street"
                )
        if not _connected(set(street_squares), neighbors):
            raise BoardError(f"street {sid} is not connected")
        mask = sum(1 << s for s in set(street_squares))
        streets.append(Street(sid, sname, bonus, mask, spread(mask, neighbors) & lot_mask))
    bonus_ids = {s.id for s in streets if s.bonus}
    if bonus_ids != set(data.STREET_CARDS):
        raise BoardError(
            f"the bonus streets must be exactly {sorted(data.STREET_CARDS)}, "
            f"got {sorted(bonus_ids)}"
        )

    parks: list[Park] = []
    raw_parks = doc.get("parks", [])
    if not isinstance(raw_parks, list):
        raise BoardError("'parks' must be a list")
    for entry in raw_parks:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
            raise BoardError("a park must be an object with a string 'name'")
        pname = entry["name"]
        park_squares = _squares_of(entry, f"park {pname}", width, height)
        for square in park_squares:
            if not park_mask >> square & 1:
                raise BoardError(
                    f"park {pname}: square {square % width, square // width} is not a park"
                )
        parks.append(Park(pname, sum(1 << s for s in set(park_squares))))

    raw_start = doc.get("start_lots")
    if not isinstance(raw_start, Mapping):
        raise BoardError("'start_lots' must be an object: district colour -> lot name")
    start_lots: list[int] = []
    for district, colour in enumerate(data.DISTRICTS):
        start_name = raw_start.get(colour)
        if not isinstance(start_name, str) or start_name not in lot_index:
            raise BoardError(f"start lot of {colour}: {start_name!r} is not a lot of the board")
        lot = lots[lot_index[start_name]]
        if lot.district != district:
            raise BoardError(f"start lot of {colour}: {start_name} lies in another district")
        if lot.size != 2:
            raise BoardError(f"start lot of {colour}: {start_name} is not a 2-square lot")
        start_lots.append(lot_index[start_name])
    if set(raw_start) - set(data.DISTRICTS):
        extra = sorted(set(raw_start) - set(data.DISTRICTS))
        raise BoardError(f"start_lots: unknown districts {extra}")

    kind_lots = tuple(
        tuple(i for i, lot in enumerate(lots) if lot.kind == kind) for kind in range(10)
    )
    return Board(
        width=width, height=height, rows=tuple(rows), lots=tuple(lots), lot_index=lot_index,
        square_lot=tuple(square_lot), neighbors=neighbors, street_mask=street_mask,
        park_mask=park_mask, blocked_mask=blocked_mask, lot_mask=lot_mask,
        access_mask=access_mask,
        district_masks=tuple(
            sum(lot.mask for lot in lots if lot.district == d) for d in range(len(data.DISTRICTS))
        ),
        streets=tuple(streets), parks=tuple(parks), start_lots=tuple(start_lots),
        kind_lots=kind_lots,
    )


def load_board_file(path: str | Path) -> Board:
    """Read and validate a board JSON file; ``BoardError`` names any problem."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise BoardError(f"cannot read board file {path}: {error}") from error
    except json.JSONDecodeError as error:
        raise BoardError(f"board file {path} is not valid JSON: {error}") from error
    return load_board(doc)


def default_document() -> dict[str, Any]:
    """The shipped board (data.py) as a board document."""
    return {
        "width": data.BOARD_WIDTH,
        "height": data.BOARD_HEIGHT,
        "rows": list(data.BOARD_ROWS),
        "streets": [
            {"id": sid, "name": name, "bonus": bonus, "rects": [list(r) for r in rects]}
            for sid, name, bonus, rects in data.STREETS
        ],
        "parks": [{"name": name, "rects": [list(r) for r in rects]} for name, rects in data.PARKS],
        "start_lots": {colour: lot for _, colour, lot in data.CHARACTERS},
    }


@cache
def default_board() -> Board:
    """The first shipped drawing (``data.py``), the board of rules versions 1 and 2
    (validated once). Matches of those versions are played on it for their whole life."""
    return load_board(default_document())


BOARDS = Path(__file__).resolve().parent / "boards"
"""Shipped board files (package data): ``v3.json`` is the redrawn board of rules version 3."""
REDRAWN_FROM = 3
"""The first rules version played on the redrawn board (``boards/v3.json``)."""


@cache
def redrawn_board() -> Board:
    """The redrawn board (``boards/v3.json``, validated once): deeper blocks, some holding
    two districts' lots, and lot squares with no side on a street or park (NY-A3, NY-A6)."""
    return load_board_file(BOARDS / "v3.json")


def shipped_board(rules_version: int) -> Board:
    """The shipped board a match of ``rules_version`` is played on: the first drawing for
    versions 1 and 2, the redrawn board from version 3 on."""
    return default_board() if rules_version < REDRAWN_FROM else redrawn_board()


def shipped_boards() -> tuple[Board, ...]:
    """Every shipped drawing, oldest first (pictures recognise a view's board by its rows)."""
    return default_board(), redrawn_board()
