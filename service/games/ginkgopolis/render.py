"""A text rendering of the city, for debugging and docs.

One cell per space, 7 characters wide, rows from top to bottom::

    R12^2a*   red 12, 2 floors, owned by seat a (b, c...; H for Hal), * = construction site
    B03^1.    blue 3, 1 floor, unowned (a starting building)
    [ C ]     urbanization token C
    .         empty

A header line gives the x coordinate of each column and each row starts with its y.
"""

from __future__ import annotations

from .city import bounds, xy
from .data import NUMBERS
from .state import GkState

_COLOUR_LETTER = "RBY"
_OWNER_LETTER = "abcde"


def cell_text(s: GkState, key: int) -> str:
    stack = s.stacks[key]
    top = stack[-1]
    owner = s.owner[key]
    if owner < 0:
        who = "."
    elif s.solo and owner == s.hal:
        who = "H"
    else:
        who = _OWNER_LETTER[owner]
    marker = "*" if key in s.markers else " "
    return f"{_COLOUR_LETTER[top // NUMBERS]}{top % NUMBERS + 1:02d}^{len(stack)}{who}{marker}"


def render_city(s: GkState) -> str:
    token_at = {key: letter for letter, key in enumerate(s.tokens) if key not in s.stacks}
    spaces = list(s.stacks) + list(token_at)
    min_x, min_y, max_x, max_y = bounds(spaces)
    lines = ["    " + "".join(f"{x:^8d}" for x in range(min_x, max_x + 1)).rstrip()]
    by_xy = {xy(k): k for k in spaces}
    for y in range(min_y, max_y + 1):
        cells = []
        for x in range(min_x, max_x + 1):
            key = by_xy.get((x, y))
            if key is None:
                cells.append("   .   ")
            elif key in s.stacks:
                cells.append(cell_text(s, key))
            else:
                cells.append(f" [ {'ABCDEFGHIJKL'[token_at[key]]} ] ")
        lines.append(f"{y:>3d} " + " ".join(cells).rstrip())
    return "\n".join(lines)
