"""The growing city's geometry: stable integer coordinates and the tokens' perimeter order.

A space is ``(x, y)`` with x to the right and y downwards; the starting 3x3 square is at
x, y in 0..2 forever, and the city may grow in any direction (negative coordinates included).
Internally a space is one integer key, ``(x + 128) * 256 + (y + 128)``, so that the four
edge neighbours are ``key - 1`` (up), ``key + 256`` (right), ``key + 1`` (down) and
``key - 256`` (left). Sixty tiles can never leave the -128..127 window.

GK-T2 "keep the tokens' alphabetical order clockwise around the city" (Skyline rulings, see
docs/rulings.md) has two readings, chosen by the match's rules version:

- Rules versions 1 and 2, the angle order (``perimeter_key``, ``keeps_order``,
  ``restore_order``, ``token_destinations``): spaces are ordered clockwise by their exact
  angle around the centre of the starting square, (1, 1), starting straight up; ties (same
  ray) by distance. It misreads notches, where the edge turns back on itself.
- From rules version 3, the walk (``boundary_walk``, ``reads_in_order``,
  ``walk_placements``): the empty spaces met when walking clockwise around the city's
  outline, the city on the right hand. Where two buildings touch only at a corner the walk
  stays beside the same empty space, so the outline is the city's silhouette. The walk is a
  cycle; a space may be met more than once (the mouth of a notch one space wide), and a
  token there may be read at any of its meetings. Empty spaces edge-adjacent to the city
  that the walk never meets are enclosed holes: not along the edge, never offered as a
  destination elsewhere, and a token in one is left out when the order is read.

When other tokens must move, version 3 re-letters the walk's tokens over the spaces they hold
plus one free space (``_relettered``); from rules version 4 every layout that moves the
fewest other tokens is offered (``fewest_moves``), free spaces of the walk included.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from fractions import Fraction
from itertools import combinations, pairwise, product
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


# --------------------------------------------------------------------------- rules version 3

Placement = tuple[int, tuple[tuple[int, int], ...]]
"""Where a moved token goes: ``(its space, ((letter, space), ...))``, the second part the
other tokens that move with it (by letter; empty unless the order needs them to move)."""


def boundary_walk(city: Collection[int]) -> list[int]:
    """The empty spaces met walking clockwise around the city's outline, the city on the
    right hand, from above its top-left building (GK-T2, rules version 3).

    The walker stands on an empty space beside a wall (a building edge-adjacent to it) and
    looks along the wall: if the space ahead is a building it turns left (the same space, a
    new wall); if the space ahead is empty and the wall goes on beyond it, it steps ahead;
    otherwise it goes round the wall's corner onto the space diagonally ahead. At a corner
    where two buildings touch only diagonally it thus stays beside the same empty space.
    The city is edge-connected, so this meets every space of the outer edge; spaces met
    twice in a row are listed once, and the list is a cycle (its last space is followed by
    its first).
    """
    start = min(city, key=lambda k: (k % STRIDE, k))  # the top row's leftmost building
    dirs = NEIGHBOURS
    e, k = start + UP, 2  # above it, the wall below
    e0 = e
    walk = [e]
    last = e
    for _ in range(4 * len(city) + 1):  # one step per building edge at most, then home
        ahead = e + dirs[k - 1]  # facing along the wall: the wall's direction turned left
        if ahead in city:
            k = (k - 1) % 4
        else:
            beyond = ahead + dirs[k]
            if beyond in city:
                e = ahead
            else:
                e = beyond
                k = (k + 1) % 4
        if e == e0 and k == 2:
            break
        if e != last:
            walk.append(e)
            last = e
    else:
        raise AssertionError("the walk around the city did not come home")
    if len(walk) > 1 and walk[-1] == walk[0]:
        walk.pop()
    return walk


def walk_index(walk: Sequence[int]) -> dict[int, list[int]]:
    """Each space of the walk: its positions in it (increasing)."""
    occ: dict[int, list[int]] = {}
    for i, space in enumerate(walk):
        occ.setdefault(space, []).append(i)
    return occ


def reads_in_order(occ: dict[int, list[int]], size: int, tokens: Sequence[int]) -> bool:
    """Do the tokens on the walk (``occ``, ``walk_index`` of a walk of ``size`` spaces) read
    A..L clockwise as a cycle, each read at one of its space's meetings? Tokens off the
    walk (in an enclosed hole) are left out."""
    letters = [letter for letter, space in enumerate(tokens) if space in occ]
    if len(letters) <= 2:
        return True
    rest = [occ[tokens[letter]] for letter in letters[1:]]
    for start in occ[tokens[letters[0]]]:
        last = 0
        for meetings in rest:
            nxt = size
            for i in meetings:
                offset = (i - start) % size
                if last < offset < nxt:
                    nxt = offset
            if nxt == size:
                break
            last = nxt
        else:
            return True
    return False


def walk_placements(
    city: Collection[int], tokens: Sequence[int], letter: int, new_tile: int,
    every_layout: bool = False,
) -> list[Placement]:
    """Where the token ``letter`` may move after its space received ``new_tile`` (GK-T2,
    rules versions 3 and 4), in the order listed to the player.

    Normally: the empty spaces edge-adjacent to the new tile (in ``perimeter_key`` order),
    the others staying. If there is none: the free spaces of the walk (``boundary_walk``, in
    walk order) where the tokens then read in order. If there is none either, other tokens
    must move: the set of spaces the walk's tokens hold becomes theirs (less the new tile)
    plus one free space of the walk, re-lettered so that they read in order, and only the
    re-letterings that move the fewest other tokens are offered (ordered by the moved
    token's space along the walk, then by the others' moves). Tokens in enclosed holes never
    move with another.

    ``every_layout`` (rules version 4): when other tokens must move, every layout that
    moves the fewest of them is offered (``fewest_moves``): the moved tokens may also take
    free spaces of the walk, not only the spaces already held plus one.
    """
    occupied = set(tokens)
    occupied.discard(tokens[letter])
    near = [n for n in neighbours(new_tile) if n not in city and n not in occupied]
    if near:
        return [(n, ()) for n in sorted(near, key=perimeter_key)]
    walk = boundary_walk(city)
    occ = walk_index(walk)
    size = len(walk)
    free = [space for space in occ if space not in occupied]  # walk order, first meetings
    trial = list(tokens)
    keeping: list[Placement] = []
    for space in free:
        trial[letter] = space
        if reads_in_order(occ, size, trial):
            keeping.append((space, ()))
    if keeping or not free:  # (never no free space: the walk has 12 spaces or more)
        return keeping
    if every_layout:
        return fewest_moves(walk, occ, tokens, letter, free)
    return _relettered(occ, size, tokens, letter, free)


def _relettered(
    occ: dict[int, list[int]], size: int, tokens: Sequence[int], letter: int, free: list[int]
) -> list[Placement]:
    """The re-letterings of ``walk_placements`` that move the fewest other tokens."""
    movers = [i for i, space in enumerate(tokens) if i != letter and space in occ]
    letters = sorted([*movers, letter])
    n = len(letters)
    held = [tokens[i] for i in movers]
    best = n + 1
    found: set[tuple[int, ...]] = set()
    for space in free:
        spaces = [*held, space]
        choices = [occ[s] for s in spaces]
        orders: set[tuple[int, ...]] = set()
        for meetings in _meeting_choices(choices):
            ranked = sorted(range(n), key=lambda j: meetings[j])
            orders.add(tuple(spaces[j] for j in ranked))
        for order in orders:
            for shift in range(n):
                moved = 0
                for i, who in enumerate(letters):
                    if who != letter and order[(shift + i) % n] != tokens[who]:
                        moved += 1
                if moved > best:
                    continue
                layout = tuple(order[(shift + i) % n] for i in range(n))
                if moved < best:
                    best = moved
                    found = set()
                found.add(layout)
    first_meeting = {space: meetings[0] for space, meetings in occ.items()}
    out: list[tuple[int, Placement]] = []
    for layout in found:
        new = dict(zip(letters, layout, strict=True))
        others = tuple((who, new[who]) for who in letters if who != letter
                       and new[who] != tokens[who])
        out.append((first_meeting[new[letter]], (new[letter], others)))
    out.sort()
    return [placement for _, placement in out]


def _meeting_choices(choices: list[list[int]]) -> list[list[int]]:
    """Every way of picking one meeting per space (spaces met once have one way)."""
    picks: list[list[int]] = [[]]
    for meetings in choices:
        if len(meetings) == 1:
            for pick in picks:
                pick.append(meetings[0])
        else:
            picks = [[*pick, m] for pick in picks for m in meetings]
    return picks


# --------------------------------------------------------------------------- rules version 4

Layout = tuple[tuple[int, int], ...]
"""Moving tokens and their new spaces, ``((letter, space), ...)`` by letter."""


def fewest_moves(
    walk: Sequence[int], occ: dict[int, list[int]], tokens: Sequence[int], letter: int,
    free: list[int],
) -> list[Placement]:
    """Rules version 4 (GK-T2), when no free space of the walk keeps the order: every
    layout that moves the fewest other tokens. The token ``letter`` and the k others that
    move go to free spaces of the walk or to spaces the moving ones leave, so that the
    tokens on the walk read in order (``reads_in_order``); tokens in enclosed holes stay.

    For k = 1, 2, ... each set of k other tokens is tried: the tokens that stay must read
    in order by themselves, at some choice of their meetings; each moving token then lies
    in the stretch of the walk between the two staying tokens whose letters enclose its
    own, the moving tokens of one stretch in letter order. Listed by the moved token's
    space along the walk, then by the others' moves (by letter, their spaces along the
    walk)."""
    size = len(walk)
    others = [i for i, space in enumerate(tokens) if i != letter and space in occ]
    free_set = set(free)
    for k in range(1, len(others) + 1):
        found: set[Layout] = set()
        for moving in combinations(others, k):
            staying = [i for i in others if i not in moving]
            movers = sorted([*moving, letter])
            open_spaces = free_set.union(tokens[i] for i in moving)
            if not staying:  # nobody stays: the first mover anchors the cycle anywhere
                for at, space in enumerate(walk):
                    if space in open_spaces:
                        _fill_gaps(walk, [movers[0]], [at], movers[1:], open_spaces,
                                   ((movers[0], space),), found)
                continue
            for picks in product(*(occ[tokens[i]] for i in staying)):
                first = picks[0]
                offsets = [(p - first) % size for p in picks]
                if all(a < b for a, b in pairwise(offsets)):
                    _fill_gaps(walk, staying, list(picks), movers, open_spaces, (), found)
        if found:
            return _listed(occ, tokens, letter, found)
    return []


def _fill_gaps(
    walk: Sequence[int], anchors: list[int], picks: list[int], movers: list[int],
    open_spaces: set[int], placed: Layout, found: set[Layout],
) -> None:
    """``anchors`` (letters, increasing) read in order at walk positions ``picks``: add to
    ``found`` every way of placing ``movers`` on ``open_spaces`` in the stretches between
    them, each stretch's movers in letter order, no space taken twice."""
    size = len(walk)
    n = len(anchors)
    per_gap: list[list[Layout]] = []
    for j in range(n):
        low, high = anchors[j], anchors[(j + 1) % n]
        if j + 1 < n:
            inside = [m for m in movers if low < m < high]
        else:  # the stretch after the last anchor wraps round to the first
            inside = [m for m in movers if m > low] + [m for m in movers if m < high]
        if not inside:
            continue
        span = (picks[(j + 1) % n] - picks[j]) % size or size
        spots = [walk[(picks[j] + d) % size] for d in range(1, span)]
        spots = [space for space in spots if space in open_spaces]
        per_gap.append([tuple(zip(inside, chosen, strict=True))
                        for chosen in combinations(spots, len(inside))])
    for choice in product(*per_gap):
        layout = dict(placed)
        for part in choice:
            layout.update(part)
        if len(set(layout.values())) == len(layout):  # a space met twice is taken once
            found.add(tuple(sorted(layout.items())))


def _listed(
    occ: dict[int, list[int]], tokens: Sequence[int], letter: int, found: set[Layout]
) -> list[Placement]:
    out: list[tuple[tuple[int, tuple[tuple[int, int], ...]], Placement]] = []
    for layout in found:
        moved = dict(layout)
        others = tuple((who, where) for who, where in layout
                       if who != letter and where != tokens[who])
        rank = tuple((who, occ[where][0]) for who, where in others)
        out.append(((occ[moved[letter]][0], rank), (moved[letter], others)))
    out.sort()
    return [placement for _, placement in out]


def bounds(keys: Iterable[int]) -> tuple[int, int, int, int]:
    """(min x, min y, max x, max y) of some spaces."""
    xs, ys = [], []
    for key in keys:
        x, y = xy(key)
        xs.append(x)
        ys.append(y)
    return min(xs), min(ys), max(xs), max(ys)
