"""The growing city's geometry: stable integer coordinates and the tokens' perimeter order.

A space is ``(x, y)`` with x to the right and y downwards; the starting 3x3 square is at
x, y in 0..2 forever, and the city may grow in any direction (negative coordinates included).
Internally a space is one integer key, ``(x + 128) * 256 + (y + 128)``, so that the four
edge neighbours are ``key - 1`` (up), ``key + 256`` (right), ``key + 1`` (down) and
``key - 256`` (left). Sixty tiles can never leave the -128..127 window.

Perimeter order (used by GK-T2 "keep the tokens' alphabetical order clockwise"): spaces are
ordered clockwise by their exact angle around the centre of the starting square, (1, 1),
starting straight up; ties (same ray) by distance. Skyline ruling, see docs/rulings.md.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from fractions import Fraction
from typing import Final

OFFSET: Final = 128
STRIDE: Final = 256
UP: Final = -1
DOWN: Final = 1
RIGHT: Final = STRIDE
LEFT: Final = -STRIDE
NEIGHBOURS: Final = (UP, RIGHT, DOWN, LEFT)
CENTRE: Final = (1, 1)


def pos(x: int, y: int) -> int:
    return (x + OFFSET) * STRIDE + (y + OFFSET)


def xy(key: int) -> tuple[int, int]:
    return key // STRIDE - OFFSET, key % STRIDE - OFFSET


def neighbours(key: int) -> tuple[int, int, int, int]:
    return (key - 1, key + STRIDE, key + 1, key - STRIDE)


def perimeter_key(key: int) -> tuple[int, Fraction, int]:
    """Clockwise angle (exact) around the starting square's centre, from straight up."""
    x, y = xy(key)
    dx, up = x - CENTRE[0], CENTRE[1] - y
    if dx >= 0 and up > 0:
        quadrant, slope = 0, Fraction(dx, up)
    elif dx > 0 and up <= 0:
        quadrant, slope = 1, Fraction(-up, dx)
    elif dx <= 0 and up < 0:
        quadrant, slope = 2, Fraction(-dx, -up)
    else:
        quadrant, slope = 3, Fraction(up, -dx)
    return quadrant, slope, dx * dx + up * up


def edge_spaces(city: Collection[int]) -> set[int]:
    """Empty spaces edge-adjacent to at least one building."""
    out: set[int] = set()
    for key in city:
        for n in (key - 1, key + STRIDE, key + 1, key - STRIDE):
            if n not in city:
                out.add(n)
    return out


def keeps_order(tokens: Sequence[int]) -> bool:
    """Do the tokens (index = letter) read A..L clockwise (as a cycle) around the city?"""
    ordered = sorted(range(len(tokens)), key=lambda i: perimeter_key(tokens[i]))
    start = ordered.index(0)
    n = len(ordered)
    return all(ordered[(start + i) % n] == i for i in range(n))


def restore_order(tokens: Sequence[int]) -> list[int]:
    """Re-letter the token spaces so that they read A..L clockwise, moving as few as possible.

    Used only when no empty space keeps the order (the rulebook lets players move other
    tokens then).
    """
    spaces = sorted(tokens, key=perimeter_key)
    n = len(spaces)
    best: list[int] | None = None
    best_kept = -1
    for rotation in range(n):
        candidate = [spaces[(rotation + letter) % n] for letter in range(n)]
        kept = sum(1 for a, b in zip(candidate, tokens, strict=True) if a == b)
        if kept > best_kept:
            best, best_kept = candidate, kept
    assert best is not None
    return best


def token_destinations(
    city: Collection[int], tokens: Sequence[int], letter: int, new_tile: int
) -> tuple[list[int], bool]:
    """Where the token ``letter`` may move after its space received ``new_tile`` (GK-T2).

    Returns ``(spaces in perimeter order, relabel)``. Normally: the empty spaces
    edge-adjacent to the new tile. If there is none: the empty edge spaces of the city where
    the token keeps the alphabetical order without moving others; if there is none either,
    every empty edge space, and ``relabel`` is True (the other tokens are then re-lettered
    with ``restore_order``).
    """
    occupied = set(tokens)
    occupied.discard(tokens[letter])
    near = [n for n in neighbours(new_tile) if n not in city and n not in occupied]
    if near:
        return sorted(near, key=perimeter_key), False
    free = [s for s in edge_spaces(city) if s not in occupied]
    free.sort(key=perimeter_key)
    keeping = []
    trial = list(tokens)
    for space in free:
        trial[letter] = space
        if keeps_order(trial):
            keeping.append(space)
    if keeping:
        return keeping, False
    return free, True


def bounds(keys: Iterable[int]) -> tuple[int, int, int, int]:
    """(min x, min y, max x, max y) of some spaces."""
    xs, ys = [], []
    for key in keys:
        x, y = xy(key)
        xs.append(x)
        ys.append(y)
    return min(xs), min(ys), max(xs), max(ys)
