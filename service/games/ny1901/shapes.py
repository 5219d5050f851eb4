"""Tiles, polyomino rotations and per-board placement tables.

A placement is a shape in one rotation at one anchor (the top-left corner of the rotated
shape's bounding box). ``Geometry`` keeps, for one board, every placement that lies on lot
squares only and touches a street or park (NY-A6), as a bitmask, indexed by its lowest square
so that a move generator can visit each candidate exactly once.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import data
from .board import Board

SHAPE_NAMES: tuple[str, ...] = tuple(data.SHAPES)
SHAPE_INDEX = {name: i for i, name in enumerate(SHAPE_NAMES)}


def rotate(cells: tuple[tuple[int, int], ...], turns: int) -> tuple[tuple[int, int], ...]:
    """``cells`` turned clockwise ``turns`` times (y grows southwards), normalised to (0, 0)
    and sorted. No mirror images: tiles are printed on one side (NY-A7)."""
    out = list(cells)
    for _ in range(turns % 4):
        out = [(-y, x) for x, y in out]
    min_x = min(x for x, _ in out)
    min_y = min(y for _, y in out)
    return tuple(sorted((x - min_x, y - min_y) for x, y in out))


def canonical_rotations(shape: str) -> tuple[int, ...]:
    """The rotations of a shape that give distinct footprints (symmetric ones listed once)."""
    seen: set[tuple[tuple[int, int], ...]] = set()
    keep = []
    for turns in range(4):
        cells = rotate(data.SHAPES[shape], turns)
        if cells not in seen:
            seen.add(cells)
            keep.append(turns)
    return tuple(keep)


@dataclass(frozen=True, slots=True)
class Tile:
    index: int
    id: str
    level: int
    shape: int
    points: int
    irregular: bool
    legendary: int = -1
    """0..3 for the legendary skyscrapers, else -1."""
    height: int = 0


def _make_tiles() -> tuple[Tile, ...]:
    tiles = [
        Tile(i, tid, level, SHAPE_INDEX[shape], points, shape in data.IRREGULAR_SHAPES)
        for i, (tid, level, shape, points) in enumerate(data.SUPPLY_TILES)
    ]
    sid, level, shape, points = data.START_PROPERTY
    tiles.append(Tile(len(tiles), sid, level, SHAPE_INDEX[shape], points, False))
    for k, (lid, _name, shape, points, height) in enumerate(data.LEGENDARY):
        tiles.append(Tile(len(tiles), lid, data.GOLD, SHAPE_INDEX[shape], points,
                          shape in data.IRREGULAR_SHAPES, k, height))
    return tuple(tiles)


TILES = _make_tiles()
TILE_INDEX = {tile.id: tile.index for tile in TILES}
SUPPLY = len(data.SUPPLY_TILES)
START_TILE = SUPPLY
LEGENDARY_TILES = tuple(range(SUPPLY + 1, SUPPLY + 1 + len(data.LEGENDARY)))


def _twins() -> tuple[int, ...]:
    """For each supply tile, the first tile identical to it (same level, shape, points).

    Identical tiles are one move: only the first unused one of a group is ever listed."""
    first: dict[tuple[int, int, int], int] = {}
    out = []
    for tile in TILES[:SUPPLY]:
        out.append(first.setdefault((tile.level, tile.shape, tile.points), tile.index))
    return tuple(out)


TWIN_OF = _twins()
CANONICAL_ROTATIONS = tuple(canonical_rotations(name) for name in SHAPE_NAMES)


@dataclass(frozen=True, slots=True)
class Placement:
    id: int
    shape: int
    rotation: int
    x: int
    y: int
    mask: int


class Geometry:
    """Placement tables of one board (built once per board)."""

    def __init__(self, board: Board) -> None:
        self.board = board
        width, height = board.width, board.height
        placements: list[Placement] = []
        by_key: dict[tuple[int, int, int, int], int] = {}
        by_low: list[list[tuple[int, int, int]]] = [[] for _ in range(width * height)]
        for shape_index, name in enumerate(SHAPE_NAMES):
            for turns in CANONICAL_ROTATIONS[shape_index]:
                cells = rotate(data.SHAPES[name], turns)
                span_x = max(x for x, _ in cells)
                span_y = max(y for _, y in cells)
                for ay in range(height - span_y):
                    for ax in range(width - span_x):
                        mask = 0
                        for cx, cy in cells:
                            mask |= 1 << ((ay + cy) * width + ax + cx)
                        if mask & ~board.lot_mask or not mask & board.access_mask:
                            continue
                        pid = len(placements)
                        placements.append(Placement(pid, shape_index, turns, ax, ay, mask))
                        by_key[shape_index, turns, ax, ay] = pid
                        low = (mask & -mask).bit_length() - 1
                        by_low[low].append((shape_index, mask, pid))
        self.placements = tuple(placements)
        self.by_key = by_key
        self.by_low = tuple(tuple(entries) for entries in by_low)
        self.codes = tuple(
            tuple(bytes((tile,)) + pid.to_bytes(2, "little") for pid in range(len(placements)))
            for tile in range(len(TILES))
        )
        """The serialized form of a building: tile index byte + placement id (2 bytes)."""

    def find(self, shape: int, rotation: int, x: int, y: int) -> Placement | None:
        """The legal-on-this-board placement, or None (off the lots, no street, or a
        rotation that repeats a lower one)."""
        pid = self.by_key.get((shape, rotation, x, y))
        return None if pid is None else self.placements[pid]

    def footprint(self, shape: int, rotation: int, x: int, y: int) -> int | None:
        """The squares of ``shape`` turned ``rotation`` times at ``(x, y)``, wherever they
        lie (None: off the grid). For explaining a refusal; moves use ``find``."""
        width, height = self.board.width, self.board.height
        mask = 0
        for cx, cy in rotate(data.SHAPES[SHAPE_NAMES[shape]], rotation):
            if not (0 <= x + cx < width and 0 <= y + cy < height):
                return None
            mask |= 1 << ((y + cy) * width + x + cx)
        return mask

    def placement_of(self, shape: int, mask: int) -> Placement:
        """The placement of ``shape`` covering exactly ``mask``."""
        low = (mask & -mask).bit_length() - 1
        for shape_index, placed, pid in self.by_low[low]:
            if shape_index == shape and placed == mask:
                return self.placements[pid]
        raise ValueError("no such placement")
