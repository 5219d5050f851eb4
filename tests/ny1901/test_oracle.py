"""An independent oracle for the move generator: brute force over every tile, rotation and
grid position (no precomputed tables), compared with ``legal_actions`` in sampled positions
of random games; plus perft-style pinned move counts."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service.games.ny1901 import ENGINE as E
from service.games.ny1901 import data, shapes
from service.games.ny1901 import state as st
from service.games.ny1901.shapes import LEGENDARY_TILES, SUPPLY, TILES
from tests.conformance import play_random_game

BOARD = E.board  # the random games below are new matches: the newest version's board
W, H = BOARD.width, BOARD.height


def footprint(cells: list[tuple[int, int]], x: int, y: int) -> int | None:
    mask = 0
    for cx, cy in cells:
        if not (0 <= x + cx < W and 0 <= y + cy < H):
            return None
        mask |= 1 << ((y + cy) * W + x + cx)
    return mask


def turned(shape: str, turns: int) -> list[tuple[int, int]]:
    cells = list(data.SHAPES[shape])
    for _ in range(turns):
        cells = [(-y, x) for x, y in cells]  # clockwise with y pointing south
    mx, my = min(x for x, _ in cells), min(y for _, y in cells)
    return [(x - mx, y - my) for x, y in cells]


def touches_open_square(mask: int) -> bool:
    open_squares = BOARD.street_mask | BOARD.park_mask
    for square in range(W * H):
        if mask >> square & 1:
            x, y = square % W, square // W
            for nx, ny in ((x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)):
                if 0 <= nx < W and 0 <= ny < H and open_squares >> (ny * W + nx) & 1:
                    return True
    return False


def available_tiles(state: st.State) -> list[shapes.Tile]:
    """The tiles the seat to move may place: unused supply tiles up to the level its score
    allows (NY-T1), and the unclaimed legendary ones at gold (NY-T3)."""
    seat = state.seat
    score = state.score(seat)
    silver, gold = data.EXPERT_THRESHOLDS if state.expert else data.THRESHOLDS
    top = 3 if score >= gold else 2 if score >= silver else 1
    tiles = [t for t in TILES[:SUPPLY] if not state.used[seat] >> t.index & 1 and t.level <= top]
    if top == 3 and seat not in state.legend:
        tiles += [TILES[t] for k, t in enumerate(LEGENDARY_TILES) if state.legend[k] < 0]
    return tiles


def placements(tile: shapes.Tile) -> Iterator[int]:
    """Every on-board footprint of ``tile``: each rotation at each grid position."""
    shape = list(data.SHAPES)[tile.shape]
    for turns in range(4):
        cells = turned(shape, turns)
        for y in range(H):
            for x in range(W):
                mask = footprint(cells, x, y)
                if mask is not None:
                    yield mask


def brute_force_builds(state: st.State) -> set[tuple[int, int, int, int]]:
    """(level, points, legendary, footprint) of every plain build, by brute force (NY-A2,
    A6, A7, T1, T3); identical tiles and symmetric rotations collapse in the set."""
    seat = state.seat
    free = state.land[seat] & ~state.built[seat]
    out = set()
    for tile in available_tiles(state):
        for mask in placements(tile):
            if mask & free == mask and touches_open_square(mask):
                out.add((tile.level, tile.points, tile.legendary, mask))
    return out


def brute_force_rebuilds(state: st.State) -> set[tuple[int, int, int, int]]:
    """Every demolish-and-rebuild (NY-A4, A5, T2) by brute force."""
    seat = state.seat
    land = state.land[seat]
    owned = [lot.mask for i, lot in enumerate(BOARD.lots) if state.lots[seat] >> i & 1]
    out = set()
    for tile in available_tiles(state):
        for mask in placements(tile):
            if mask & land != mask or not touches_open_square(mask):
                continue
            hit = [(TILES[t].level, m) for t, _, m in state.buildings[seat] if m & mask]
            if not hit or any(level >= tile.level for level, _ in hit):
                continue
            after = mask
            for _tile, _, m in state.buildings[seat]:
                if not m & mask:
                    after |= m
            if sum(1 for lot in owned if not lot & after) > data.WORKERS:
                continue
            out.add((tile.level, tile.points, tile.legendary, mask))
    return out


def listed_builds(state: st.State, kind: str = "build") -> set[tuple[int, int, int, int]]:
    out = set()
    for action in E.legal_actions(state, state.seat):
        if action.type != kind:
            continue
        tile = next(t for t in TILES if t.id == action.tile)
        mask = footprint(turned(list(data.SHAPES)[tile.shape], action.rotation),
                         action.x, action.y)
        assert mask is not None
        out.add((tile.level, tile.points, tile.legendary, mask))
    return out


def test_NY_A2_A6_A7_generator_matches_brute_force() -> None:
    compared = 0
    for seed in range(16):
        playout = play_random_game(E, 2 + seed % 3, 500 + seed, refusal_probes=0)
        for blob in playout.states:
            state = E.loads(blob)
            if state.phase not in (st.ACQUIRED, st.BUILD, st.BOOM):
                continue
            assert listed_builds(state) == brute_force_builds(state)
            compared += 1
            if compared % 40 == 0:
                break
    assert compared >= 100


def test_NY_A4_A5_T2_rebuild_generator_matches_brute_force() -> None:
    compared = with_rebuilds = 0
    for seed in range(12):
        playout = play_random_game(E, 2 + seed % 3, 700 + seed, refusal_probes=0)
        for blob in playout.states[::3]:
            state = E.loads(blob)
            if state.phase != st.START or E.rules.is_stuck(state, state.seat):
                continue
            expected = brute_force_rebuilds(state)
            assert listed_builds(state, "rebuild") == expected
            compared += 1
            with_rebuilds += bool(expected)
    assert compared >= 100 and with_rebuilds >= 30


PERFT = {1: Path(__file__).with_name("perft.txt"), 2: Path(__file__).with_name("perft_v2.txt"),
         3: Path(__file__).with_name("perft_v3.txt")}


def at_version(version: int) -> Any:
    """The engine with new matches set up under rules ``version`` (the same board and memo)."""
    engine = copy.copy(E)
    engine.rules_versions = (*E.rules_versions[:E.rules_versions.index(version)], version)
    return engine


def perft_lines(version: int) -> list[str]:
    """``players seed step count dumps-length`` for fixed positions of seeded random games
    under rules ``version``."""
    engine = at_version(version)
    lines = []
    for players, seed in ((2, 1), (3, 2), (4, 3), (4, 4)):
        playout = play_random_game(engine, players, seed, refusal_probes=0)
        for step in range(0, len(playout.states) - 1, 25):
            state = engine.loads(playout.states[step])
            assert state.rules_version == version
            lines.append(f"{players} {seed} {step} "
                         f"{len(engine.legal_actions(state, state.seat))} "
                         f"{len(playout.states[step])}")
    return lines


@pytest.mark.parametrize("version", [1, 2, 3], ids=lambda v: f"v{v}")
def test_perft_move_counts_are_pinned(version: int) -> None:
    """Regression oracle (python-chess style): move counts in fixed positions, per rules
    version. Version 1's file never changes (its matches are stored); regenerate a newer
    version's file deliberately when its rules change."""
    expected = [line for line in PERFT[version].read_text().splitlines()
                if line and line[0] != "#"]
    assert perft_lines(version) == expected
