"""Independent rule oracles for Ginkgopolis (``shared/rules/ginkgopolis.md``).

- A brute-force legal-move generator: every candidate action shape (each card id alone, with
  each tile id, with each card for Hal; New Hand; each item; each space around the city for
  the moved urbanization token, under rules version 3 with the re-letterings of the other
  tokens along a walk around the city traced edge by edge; each character of the draft;
  each subset of tiles to put back) filtered by rule checks written from the rules text,
  compared as a set with ``legal_actions`` for every seat at every position of seeded random
  games (1-5 players, intro and draft characters, Hal's expert level).
- A from-the-rulebook final scorer (GK-F1..F3, GK-B2 end cards, GK-F2 districts, GK-H3 Hal),
  compared with ``result`` at the end of seeded random games.

Both read the state only to learn where things are (hands, screens, the city, the phase);
neither calls the engine's rules, flow, city or scoring code.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Iterator
from functools import cache
from itertools import combinations, product
from types import SimpleNamespace
from typing import Any

import pytest

from service.games.base import Result
from service.games.ginkgopolis import ENGINE as E
from service.games.ginkgopolis import GkOptions
from service.games.ginkgopolis.actions import (
    GkChooseCard,
    GkDraftCharacter,
    GkNewHand,
    GkPlaceToken,
    GkReturnTiles,
    GkTakeItem,
    GkTokenAt,
)
from service.games.ginkgopolis.data import ACTION_NAMES, CHARACTERS
from service.games.ginkgopolis.state import GkState
from tests.support.divergence import RulesDivergence, per_version

from .helpers import T, U, blank, put

# ----------------------------------------------------------------------------- the ids
# Card and tile ids (``data.py`` docstring): tiles / building cards 0..59 = colour * 20 +
# number - 1 (red, blue, yellow), urbanization cards 60..71 (A..L), characters 72..98
# (72 + (set - 1) * 3 + colour). A space (x, y) is the key (x + 128) * 256 + (y + 128).
COLOURS = ("red", "blue", "yellow")
RED, BLUE, YELLOW = 0, 1, 2
N_CARDS = 99
FIRST_URBANIZATION, FIRST_CHARACTER = 60, 72
EXPLOIT, URBANIZE, BUILD_UP = "exploit", "urbanize", "build_up"
# Phase numbers and pending decisions of the state (``state.py``).
DRAFT, CHOOSE, RESOLVE, RETURN, OVER = 0, 1, 2, 3, 4
TAKE_ITEM, PLACE_TOKEN = 1, 2
NEW_HAND_SLOT = -2


def colour(card: int) -> int:
    return card // 20


def number(card: int) -> int:
    return card % 20 + 1


def label(card: int) -> str:
    return f"{COLOURS[colour(card)]}-{number(card)}"


def space(key: int) -> tuple[int, int]:
    return key // 256 - 128, key % 256 - 128


def key_of(x: int, y: int) -> int:
    return (x + 128) * 256 + y + 128


# GK-B1 and the character table of the rules (sets 1-6 as published; 7-9 are Skyline's
# reconstruction, known only from the data module: read below).
PUBLISHED_CHARACTER_BONUS = {  # set: (red, yellow, blue)
    1: (URBANIZE, BUILD_UP, BUILD_UP),
    2: (BUILD_UP, BUILD_UP, EXPLOIT),
    3: (EXPLOIT, URBANIZE, URBANIZE),
    4: (URBANIZE, URBANIZE, BUILD_UP),
    5: (EXPLOIT, EXPLOIT, BUILD_UP),
    6: (URBANIZE, EXPLOIT, EXPLOIT),
}


def character_bonus(card: int) -> str:
    index = card - FIRST_CHARACTER
    card_set, card_colour = index // 3 + 1, index % 3
    if card_set in PUBLISHED_CHARACTER_BONUS:
        red, yellow, blue = PUBLISHED_CHARACTER_BONUS[card_set]
        return {RED: red, YELLOW: yellow, BLUE: blue}[card_colour]
    return ACTION_NAMES[CHARACTERS[index].bonus.action]


def card_colour(card: int) -> int:
    """Building cards: their colour; characters: theirs (72 + (set - 1) * 3 + colour)."""
    return colour(card) if card < FIRST_URBANIZATION else (card - FIRST_CHARACTER) % 3


def bonus_action(card: int) -> str | None:
    """GK-B1: the action a card in front of a screen gives a bonus for."""
    if card >= FIRST_CHARACTER:
        return character_bonus(card)
    if card < FIRST_URBANIZATION and number(card) <= 9:
        return (EXPLOIT, URBANIZE, BUILD_UP)[(number(card) - 1) % 3]
    return None


# ----------------------------------------------------------------------------- the moves
def clockwise(key: int) -> tuple[float, int]:
    """GK-T2 perimeter order (Skyline ruling): the clockwise angle around the centre of the
    starting square (1, 1), from straight up; on one ray the nearer space first."""
    x, y = space(key)
    right, up = x - 1, 1 - y
    angle = math.atan2(right, up) % (2 * math.pi)  # 0 straight up, growing clockwise
    return round(angle, 9), right * right + up * up


def in_alphabetical_order(tokens: list[int]) -> bool:
    """Reading the tokens clockwise around the city, each letter is followed by the next
    one (L by A)."""
    ring = sorted(range(len(tokens)), key=lambda letter: clockwise(tokens[letter]))
    return all(
        ring[(i + 1) % len(ring)] == (ring[i] + 1) % len(ring) for i in range(len(ring))
    )


def beside(key: int) -> list[int]:
    x, y = space(key)
    return [key_of(x, y - 1), key_of(x + 1, y), key_of(x, y + 1), key_of(x - 1, y)]


def token_spaces(s: GkState, letter: int) -> set[tuple[int, int]]:
    """GK-T2: the moved token goes to an empty space (no building, no token) sharing an edge
    with the new tile; if there is none, to an empty space along the city's edge that keeps
    the tokens' alphabetical order clockwise; failing that (Skyline ruling), to any empty
    space along the edge (the others are then moved)."""
    new_tile = s.tokens[letter]
    others = {t for i, t in enumerate(s.tokens) if i != letter}
    xs = [space(k)[0] for k in s.stacks]
    ys = [space(k)[1] for k in s.stacks]
    candidates = [key_of(x, y) for x in range(min(xs) - 2, max(xs) + 3)
                  for y in range(min(ys) - 2, max(ys) + 3)]
    empty = [k for k in candidates if k not in s.stacks and k not in others]
    near = [k for k in empty if new_tile in beside(k)]
    if near:
        return {space(k) for k in near}
    along = [k for k in empty if any(n in s.stacks for n in beside(k))]
    keeping = [
        k for k in along
        if in_alphabetical_order([k if i == letter else t for i, t in enumerate(s.tokens)])
    ]
    return {space(k) for k in (keeping or along)}


LETTERS = "ABCDEFGHIJKL"


def outside(s: GkState) -> set[int]:
    """The empty spaces that reach far from the city stepping edge to edge through empty
    spaces (GK-T2 version 3 ruling: the rest, enclosed by the city, are holes)."""
    xs = [space(k)[0] for k in s.stacks]
    ys = [space(k)[1] for k in s.stacks]
    box = {key_of(x, y) for x in range(min(xs) - 1, max(xs) + 2)
           for y in range(min(ys) - 1, max(ys) + 2)}
    start = key_of(min(xs) - 1, min(ys) - 1)
    seen, todo = {start}, [start]
    while todo:
        for n in beside(todo.pop()):
            if n in box and n not in s.stacks and n not in seen:
                seen.add(n)
                todo.append(n)
    return seen


def edge_walk(s: GkState) -> list[int]:
    """GK-T2 version 3: the empty spaces met walking clockwise around the city, as a cycle.

    Built from the unit edges between a building and an outside space, each directed so
    that the building is on the walker's right (y grows downwards), chained end to start; at
    a corner where two buildings touch diagonally the walk goes on beside the same space."""
    out = outside(s)
    edges: dict[tuple[int, int], list[tuple[tuple[int, int], int]]] = {}
    for e in out:
        x, y = space(e)
        for (dx, dy), segment in (((0, -1), ((x + 1, y), (x, y))),
                                  ((1, 0), ((x + 1, y + 1), (x + 1, y))),
                                  ((0, 1), ((x, y + 1), (x + 1, y + 1))),
                                  ((-1, 0), ((x, y), (x, y + 1)))):
            if key_of(x + dx, y + dy) in s.stacks:
                edges.setdefault(segment[0], []).append((segment[1], e))
    top = min(s.stacks, key=lambda k: (space(k)[1], space(k)[0]))
    x, y = space(top)
    vertex, cell = (x + 1, y), key_of(x, y - 1)  # the top edge of the top-left building
    first = ((x, y), cell)
    met: list[int] = []
    at = first
    while True:
        if not met or met[-1] != at[1]:
            met.append(at[1])
        choices = edges[vertex]
        same = [c for c in choices if c[1] == at[1]]
        end, cell = (same or choices)[0]
        at, vertex = (vertex, cell), end
        if at == first:
            break
    if len(met) > 1 and met[0] == met[-1]:
        met.pop()
    return met


def reads_around(walk: list[int], tokens: list[int]) -> bool:
    """The tokens on the walk read A..L clockwise as a cycle, each token read at one of the
    meetings of its space (any choice of them)."""
    spots = {k: [i for i, w in enumerate(walk) if w == k] for k in set(walk)}
    on = [letter for letter, k in enumerate(tokens) if k in spots]
    for pick in product(*(spots[tokens[letter]] for letter in on)):
        ring = [letter for _, letter in sorted(zip(pick, on, strict=True))]
        start = ring.index(on[0]) if ring else 0
        if ring[start:] + ring[:start] == on:
            return True
    return False


def walk_moves(s: GkState, letter: int) -> set[Any]:
    """GK-T2 under rules version 3 (Skyline ruling): the token goes to an empty space beside
    the new tile; if there is none, to a free space of the walk where the tokens read in
    order; if there is none either, the tokens on the walk are re-lettered over their spaces
    plus one free space of the walk, moving as few other tokens as possible: every such
    re-lettering is a move. From rules version 4 the last step is ``fewest_layouts``."""
    if s.rules_version >= 4:
        return fewest_layouts(s.stacks, s.tokens, letter)
    new_tile = s.tokens[letter]
    others = {t for i, t in enumerate(s.tokens) if i != letter}
    near = [k for k in beside(new_tile) if k not in s.stacks and k not in others]
    if near:
        return {GkPlaceToken(*space(k)) for k in near}
    walk = edge_walk(s)
    free = [k for k in set(walk) if k not in others]
    keeping = [k for k in free
               if reads_around(walk, [k if i == letter else t for i, t in enumerate(s.tokens)])]
    if keeping:
        return {GkPlaceToken(*space(k)) for k in keeping}
    on = [i for i, t in enumerate(s.tokens) if t in walk or i == letter]
    best: dict[int, set[Any]] = {}
    for extra in free:
        spaces = [s.tokens[i] for i in on if i != letter] + [extra]
        spots = [[i for i, w in enumerate(walk) if w == k] for k in spaces]
        for pick in product(*spots):
            ring = [k for _, k in sorted(zip(pick, spaces, strict=True))]
            for turn in range(len(ring)):
                layout = dict(zip(on, ring[turn:] + ring[:turn], strict=True))
                moved = tuple(GkTokenAt(LETTERS[i], *space(layout[i]))
                              for i in on if i != letter and layout[i] != s.tokens[i])
                best.setdefault(len(moved), set()).add(
                    GkPlaceToken(*space(layout[letter]), moved))
    return best[min(best)]


def fewest_layouts(city: Any, tokens: list[int], letter: int) -> set[Any]:
    """GK-T2 under rules version 4, by brute force: the token ``letter`` stands on its new
    building (in ``city``). It goes to an empty space beside it; lacking one, the tokens on
    the walk take every layout that reads in order and moves the fewest other tokens: for
    k = 0, 1, 2, ... every set of k other tokens on the walk, and every way of putting the
    token and those k, each on a space it did not hold, among the free spaces of the walk
    and the spaces the k leave (tokens in holes stay where they are)."""
    new_tile = tokens[letter]
    others = {t for i, t in enumerate(tokens) if i != letter}
    near = [k for k in beside(new_tile) if k not in city and k not in others]
    if near:
        return {GkPlaceToken(*space(k)) for k in near}
    walk = edge_walk(SimpleNamespace(stacks=city))  # type: ignore[arg-type]
    spots: dict[int, list[int]] = {}
    for i, k in enumerate(walk):
        spots.setdefault(k, []).append(i)
    on = [i for i, t in enumerate(tokens) if i != letter and t in spots]
    free = [k for k in spots if k not in others]

    def reads(layout: list[int]) -> bool:
        letters = [i for i in range(len(layout)) if layout[i] in spots]
        if len(letters) <= 2:
            return True
        for pick in product(*(spots[layout[i]] for i in letters)):
            ring = [i for _, i in sorted(zip(pick, letters, strict=True))]
            start = ring.index(letters[0])
            if ring[start:] + ring[:start] == letters:
                return True
        return False

    def place(layout: list[int], movers: list[int], room: list[int], found: set[Any]) -> None:
        """Put ``movers`` one by one on spaces of ``room``; a partial layout whose placed
        tokens do not read in order cannot be completed (the order of some tokens is the
        order of all, less the others), so it is dropped at once."""
        if not movers:
            moving = [i for i in on if layout[i] != tokens[i]]
            found.add(GkPlaceToken(*space(layout[letter]), tuple(
                GkTokenAt(LETTERS[i], *space(layout[i])) for i in moving)))
            return
        who, rest = movers[0], movers[1:]
        for k_ in room:
            if k_ == tokens[who] or k_ in layout:
                continue  # a token of the k stays: counted with fewer; or a space taken
            layout[who] = k_
            if reads(layout):
                place(layout, rest, room, found)
            layout[who] = -1

    for k in range(len(on) + 1):
        found: set[Any] = set()
        for moving in combinations(on, k):
            layout = [t if i not in moving and i != letter else -1
                      for i, t in enumerate(tokens)]
            if reads(layout):  # the tokens that stay must read in order by themselves
                place(layout, [letter, *moving], free + [tokens[i] for i in moving], found)
        if found:
            return found
    return set()


def resolving_seat(s: GkState) -> int:
    """GK-T2: choices resolve from the first player clockwise; ``res_pos`` have started."""
    return 0 if s.players == 1 else (s.first + s.res_pos - 1) % s.players


RETURN_PARTS = [(c, low) for c in (RED, BLUE, YELLOW) for low in (1, 11)]
"""GK-E1 ruling: the returns are committed in parts: red 1-10, red 11-20, blue ..."""


def rulebook_moves(s: GkState, seat: int) -> set[Any]:
    """Every action of ``seat`` the rules allow now, by brute force over action shapes."""
    out: set[Any] = set()
    solo = s.players == 1
    if s.phase == DRAFT:  # GK-S4: keep one character of the pack in hand
        if s.choice[seat] is None:
            out |= {GkDraftCharacter(c) for c in range(FIRST_CHARACTER, N_CARDS)
                    if c in s.draft_packs[seat]}
    elif s.phase == CHOOSE and s.choice[seat] is None:  # GK-T1 (GK-H2 solo)
        hand, screen = s.hands[seat], s.tiles[seat]
        for card in range(N_CARDS):
            if card not in hand:
                continue
            tiles = [None, *(t for t in range(60) if t in screen)]
            hal_cards = [h for h in range(N_CARDS) if h in hand and h != card] if solo else [None]
            out |= {GkChooseCard(card, tile, hal) for tile in tiles for hal in hal_cards}
        if not solo and s.nh[seat] > 0:  # New Hand: a token left (none in the solo game)
            out.add(GkNewHand())
    elif s.phase == RESOLVE and s.pending and seat == resolving_seat(s):
        if s.pending == TAKE_ITEM:  # GK-T2 exploit: an urbanization card alone
            if s.res_supply[seat] > 0:
                out.add(GkTakeItem("resource"))
            if s.supply_tiles:
                out.add(GkTakeItem("tile"))
        elif s.pending == PLACE_TOKEN:  # GK-T2 urbanize: where the token goes
            if s.rules_version >= 3:
                out |= walk_moves(s, s.pending_arg)
            else:
                out |= {GkPlaceToken(x, y) for x, y in token_spaces(s, s.pending_arg)}
    elif s.phase == RETURN and s.ret_part[seat] < len(RETURN_PARTS):  # GK-E1
        part_colour, low = RETURN_PARTS[s.ret_part[seat]]
        choice = s.choice[seat]  # a tile committed with a card not yet resolved stays on it
        committed = choice[1] if choice is not None else None
        part = [t for t in range(60) if t in s.tiles[seat] and t != committed
                and colour(t) == part_colour and low <= number(t) < low + 10]
        for size in range(len(part) + 1):
            out |= {GkReturnTiles(tuple(c)) for c in combinations(part, size)}
    return out


# ----------------------------------------------------------------------------- the score
def districts(s: GkState) -> list[list[int]]:
    """GK-F2: groups of 2+ edge-connected buildings whose top tiles share a colour."""
    left = set(s.stacks)
    out = []
    while left:
        start = min(left)
        group, todo = {start}, [start]
        while todo:
            for n in beside(todo.pop()):
                if n in left and n not in group and colour(s.stacks[n][-1]) == colour(
                        s.stacks[start][-1]):
                    group.add(n)
                    todo.append(n)
        left -= group
        if len(group) >= 2:
            out.append(sorted(group))
    return out


def district_points(s: GkState, group: list[int]) -> dict[int, int]:
    """GK-F2: most resources scores all resources in the district, second its own; ties go
    to the tallest building, then its number; a lone player scores both places."""
    mine: dict[int, int] = {}
    for k in group:
        if s.owner[k] >= 0:
            mine[s.owner[k]] = mine.get(s.owner[k], 0) + len(s.stacks[k])

    def standing(owner: int) -> tuple[int, int, int]:
        tallest = max(len(s.stacks[k]) for k in group if s.owner[k] == owner)
        best_number = max(number(s.stacks[k][-1]) for k in group
                          if s.owner[k] == owner and len(s.stacks[k]) == tallest)
        return mine[owner], tallest, best_number

    places = sorted(mine, key=standing, reverse=True)
    points: dict[int, int] = {}
    if places:
        points[places[0]] = sum(mine.values())
        second = places[1] if len(places) > 1 else places[0]
        points[second] = points.get(second, 0) + mine[second]
    return points


def end_card(s: GkState, owner: int, card: int) -> int:
    """GK-B2 for one card 10-20 in front of ``owner``."""
    mine = [k for k in s.stacks if s.owner[k] == owner]
    x, n = colour(card), number(card)
    others = {RED: (YELLOW, BLUE), BLUE: (RED, YELLOW), YELLOW: (RED, BLUE)}[x]
    scored = {10: x, 13: x, 11: others[0], 12: others[1]}
    if n in scored:
        return sum(len(s.stacks[k]) for k in mine if colour(s.stacks[k][-1]) == scored[n])
    if n == 14:
        return sum(1 for k in mine if len(s.stacks[k]) in (1, 2))
    if n == 15:
        return 3 * sum(1 for k in mine if len(s.stacks[k]) >= 3)
    if n in (16, 17, 18):
        wanted = {16: EXPLOIT, 17: URBANIZE, 18: BUILD_UP}[n]
        return 2 * sum(1 for c in s.front[owner] if bonus_action(c) == wanted)
    if n == 19:
        return 2 * sum(1 for c in s.front[owner] if card_colour(c) == x)
    assert n == 20
    return 9


def rulebook_lines(s: GkState, owner: int) -> dict[str, int]:
    """GK-F1: VP of play + end cards + 2 per unused New Hand token + districts; Hal (owner 1
    of a solo game) scores like a player without New Hand tokens (GK-H3)."""
    lines = {"vp_in_play": s.vp[owner]}
    for card in s.front[owner]:
        if card < FIRST_URBANIZATION and number(card) >= 10:
            lines[f"card:{label(card)}"] = end_card(s, owner, card)
    if s.players > 1:
        lines["new_hand_tokens"] = 2 * s.nh[owner]
    for group in districts(s):
        points = district_points(s, group).get(owner, 0)
        if points:
            lowest = min(s.stacks[k][-1] for k in group)
            lines[f"district:{label(lowest)}"] = points
    return lines


def lines_of(breakdown: list[Any]) -> dict[str, int]:
    out: dict[str, int] = {}
    for line in breakdown:
        assert line.rule not in out, f"{line.rule} listed twice"
        out[line.rule] = line.points
    return out


def compare_result(s: GkState, result: Result) -> None:
    """The engine's result against the rulebook: lines, totals, GK-F3 ranks and winners."""
    owners = 2 if s.players == 1 else s.players
    lines = [rulebook_lines(s, owner) for owner in range(owners)]
    totals = [sum(owner_lines.values()) for owner_lines in lines]
    ranks = [1 + sum(1 for t in totals if t > total) for total in totals]
    assert [lines_of(seat.breakdown) for seat in result.seats] == lines[: s.players]
    assert [(seat.score, seat.rank) for seat in result.seats] == list(
        zip(totals, ranks, strict=False))[: s.players]
    assert result.winners == [seat for seat in range(s.players) if ranks[seat] == 1]
    if s.players == 1:
        (hal,) = result.opponents
        assert (hal.name, lines_of(hal.breakdown), hal.score, hal.rank) == (
            "Hal", lines[1], totals[1], ranks[1])
    else:
        assert result.opponents == []


# ----------------------------------------------------------------------------- random games
def configurations() -> Iterator[tuple[int, int, GkOptions]]:
    """(players, seed, options): 1-5 players, intro and draft characters, Hal's levels."""
    for seed in range(100):
        players = 1 + seed % 5
        if players == 1:
            options = GkOptions(hal_expert=seed % 2 == 1)
        else:
            options = GkOptions(characters="draft" if seed % 2 else "intro")
        yield players, 4200 + seed, options


VERSIONS = E.rules_versions
"""Every rules version the engine plays: the oracles are checked under each (a version's
departures from today's rules text are marked where they are tested)."""


def playout(players: int, seed: int, options: GkOptions, version: int
            ) -> Iterator[tuple[GkState, int, Any]]:
    """(position, seat to act, its action) of one seeded random game under rules version
    ``version``; the last position (the end) comes with seat -1."""
    chooser = random.Random(seed)
    s = E.setup(players, options, seed, version)
    while E.result(s) is None:
        seat = chooser.choice(sorted(E.active_seats(s)))
        legal = sorted(E.legal_actions(s, seat), key=repr)  # whatever the engine's order
        # Play tiles more often than a uniform choice would, so that cities grow.
        with_tile = [a for a in legal if getattr(a, "tile", None) is not None]
        action = chooser.choice(with_tile if with_tile and chooser.random() < 0.5 else legal)
        yield s, seat, action
        s, _ = E.apply(s, seat, action)
    yield s, -1, None


@cache
def recorded(version: int) -> list[tuple[int, int, GkOptions, list[tuple[GkState, int, Any]]]]:
    """The games of ``configurations()`` under one rules version, played once per session:
    (players, seed, options, steps)."""
    return [(players, seed, options, list(playout(players, seed, options, version)))
            for players, seed, options in configurations()]


@pytest.mark.parametrize("version", VERSIONS)
def test_GK_T1_T2_S4_E1_H2_legal_moves_match_the_brute_force_generator(version: int) -> None:
    """At every position of the random games, for every seat: the engine's moves are the
    brute-force set, listed once each. Under version 1 a seat waiting on a New Hand
    announcement is skipped: that version keeps it sealed, the rules carry it out at once
    (GK-T1, below); from version 2 no New Hand is ever sealed. From version 3 the token's
    spaces follow the walk around the city (``walk_moves``)."""
    seen: Counter[str] = Counter()
    for players, seed, _, steps in recorded(version):
        for s, _, _ in steps:
            for seat in range(players):
                choice = s.choice[seat]
                if s.phase == CHOOSE and choice is not None and choice[0] == NEW_HAND_SLOT:
                    assert version == 1, "a sealed New Hand under rules version 2"
                    seen["sealed_new_hand"] += 1
                    continue
                listed = E.legal_actions(s, seat)
                assert len(set(listed)) == len(listed), "a move listed twice"
                expected = rulebook_moves(s, seat)
                assert set(listed) == expected, (players, seed, seat, s.phase, s.pending)
                if expected:
                    seen[f"{s.phase}:{s.pending}:{players == 1}"] += 1
                    if players == 1 and s.pending == PLACE_TOKEN and s.hal_card < 0:
                        seen["hal_token"] += 1  # GK-H2: seat 0 moves Hal's token
                    if any(getattr(a, "others", ()) for a in listed):
                        seen["relettering"] += 1  # GK-T2 version 3: others must move
    assert seen[f"{DRAFT}:0:False"] >= 50 and seen[f"{RETURN}:0:False"] >= 100
    assert seen[f"{CHOOSE}:0:False"] >= 500 and seen[f"{CHOOSE}:0:True"] >= 100
    assert seen[f"{RESOLVE}:{TAKE_ITEM}:False"] >= 50
    assert seen[f"{RESOLVE}:{PLACE_TOKEN}:False"] >= 100
    assert seen[f"{RESOLVE}:{PLACE_TOKEN}:True"] >= 20
    if version == 1:
        assert seen["sealed_new_hand"] >= 20 and seen["hal_token"] == 0
    else:
        assert seen["sealed_new_hand"] == 0 and seen["hal_token"] >= 20
    # GK-T2: only version 3 ever asks which other tokens move (1 and 2 re-letter by themselves)
    assert (seen["relettering"] >= 10) == (version >= 3)


def rounds_begun(steps: list[tuple[GkState, int, Any]]) -> Iterator[GkState]:
    """The positions at which a round's card choice begins (GK-T1)."""
    turn = 0
    for s, _, _ in steps:
        if s.phase == CHOOSE and s.turn != turn:
            turn = s.turn
            yield s


def test_GK_T4_v2_no_round_of_the_random_games_begins_with_an_empty_deck() -> None:
    """GK-T4: the deck is rebuilt at the draw that takes its last card, so a round only ever
    begins with an empty deck when there was nothing to rebuild it from. Version 1 (rebuilt
    lazily, at the next draw) leaves the deck empty at the start of many rounds."""
    def empty_starts(version: int) -> tuple[int, int]:
        rounds = empty = 0
        for players, _, _, steps in recorded(version):
            for s in rounds_begun(steps):
                rounds += 1
                if not s.deck:
                    assert version == 1 or not (s.discard or s.markers), (players, s.turn)
                    empty += 1
        return rounds, empty

    rounds, empty = empty_starts(2)
    assert rounds >= 1000 and empty == 0
    rounds, empty = empty_starts(1)
    assert rounds >= 1000 and empty >= 50


@pytest.mark.parametrize("version", VERSIONS)
def test_GK_F1_F2_F3_B2_H3_final_result_matches_the_rulebook_scorer(version: int) -> None:
    seen: Counter[str] = Counter()
    for players, _, _, steps in recorded(version):
        s = steps[-1][0]
        result = E.result(s)
        assert result is not None
        compare_result(s, result)
        for owner in range(2 if players == 1 else players):
            for rule, points in rulebook_lines(s, owner).items():
                seen[rule.split(":")[0]] += bool(points)
    assert seen["district"] >= 50 and seen["card"] >= 20 and seen["new_hand_tokens"] >= 20


@pytest.mark.parametrize("version", VERSIONS)
def test_GK_S4_draft_packs_pass_left_and_the_kept_characters_are_revealed(version: int) -> None:
    """Deal 4 characters each; keep 1, pass the rest to the left (you receive your
    right-hand neighbour's pack, seat - 1, who gets the hands the same way in GK-T3) until
    each has 3; they go in front of the screens."""
    drafts = 0
    for players, _, options, steps in recorded(version):
        if options.characters != "draft":
            continue
        kept: list[list[int]] = [[] for _ in range(players)]
        packs: list[list[int]] = []
        for s, seat, action in steps:
            if s.phase == DRAFT and all(c is None for c in s.choice):
                if not packs:
                    dealt = [c for pack in s.draft_packs for c in pack]
                    assert all(len(p) == 4 for p in s.draft_packs) and len(set(dealt)) == len(
                        dealt)
                else:
                    for me in range(players):
                        right = (me - 1) % players
                        assert sorted(s.draft_packs[me]) == sorted(
                            set(packs[right]) - {kept[right][-1]})
                packs = [list(pack) for pack in s.draft_packs]
            if action is not None and action.type == "draft_character":
                kept[seat].append(action.character)
            if s.phase != DRAFT:
                assert [sorted(s.front[me]) for me in range(players)] == [
                    sorted(k) for k in kept] and all(len(k) == 3 for k in kept)
                drafts += 1
                break
    assert drafts >= 30


# ----------------------------------------------------------------------------- scenarios
def finish(s: GkState) -> Result:
    s.phase = OVER
    result = E.result(s)
    assert result is not None
    compare_result(s, result)
    return result


def test_GK_F2_corner_neighbours_and_covered_colours_do_not_join_a_district() -> None:
    """Red 4 and red 5 touch at a corner only; red 8 and red 11 are separated by a building
    whose covered tile is red but whose top is blue: no district anywhere."""
    s = blank(3, start_city=False)
    put(s, 0, 0, ["red-4"], owner=0)
    put(s, 1, 1, ["red-5"], owner=1)
    put(s, 3, 0, ["red-8"], owner=0)
    put(s, 4, 0, ["red-10", "blue-9"], owner=1)
    put(s, 5, 0, ["red-11"], owner=2)
    result = finish(s)
    assert not any(line.rule.startswith("district") for r in result.seats for line in r.breakdown)
    # Red 12 joins red 4 (edge) and red 5 (edge): one district, 1 resource each; the tie goes
    # to the tallest building (all 1 floor), then to the highest number: red 12, then red 5.
    put(s, 1, 0, ["red-12"], owner=2)
    result = finish(s)
    assert [lines_of(r.breakdown).get("district:red-4", 0) for r in result.seats] == [0, 1, 3]


def test_GK_F2_ties_tallest_building_first_a_lone_owner_scores_both_unowned_count_nothing() -> None:
    s = blank(3, start_city=False)
    put(s, 0, 0, ["yellow-1", "yellow-2"], owner=0)
    put(s, 1, 0, ["yellow-3", "yellow-4"], owner=0)                 # 4 resources, tallest 2
    put(s, 2, 0, ["yellow-5", "yellow-6", "yellow-7"], owner=1)
    put(s, 2, 1, ["yellow-8"], owner=1)                             # 4 resources, tallest 3
    put(s, 0, 1, ["yellow-9"], owner=-1)                           # unowned: no resources
    put(s, 5, 5, ["blue-4"], owner=2)
    put(s, 5, 6, ["blue-5", "blue-6"], owner=2)                     # seat 2 alone: 3 + 3
    put(s, 6, 5, ["blue-1"], owner=-1)
    result = finish(s)
    points = [lines_of(r.breakdown) for r in result.seats]
    assert [p.get("district:yellow-2", 0) for p in points] == [4, 8, 0]
    assert [p.get("district:blue-1", 0) for p in points] == [0, 0, 6]


def test_GK_B2_end_cards_count_characters_and_themselves() -> None:
    s = blank(2, start_city=False)
    put(s, 0, 0, ["red-4"], owner=0)                                    # 1 floor, red
    put(s, 1, 0, ["blue-4", "blue-5"], owner=0)                         # 2 floors, blue
    put(s, 2, 0, ["yellow-4", "yellow-5", "yellow-6"], owner=0)         # 3 floors, yellow
    put(s, 5, 5, ["red-7", "red-8", "red-9", "blue-13"], owner=0)       # 4 floors, blue
    put(s, 7, 7, ["yellow-8", "yellow-9"], owner=1)                     # the opponent's
    characters = [FIRST_CHARACTER, FIRST_CHARACTER + 1, FIRST_CHARACTER + 2]  # set 1
    cards = ["red-1", "red-2", "blue-3", "red-10", "blue-11", "yellow-12", "red-13",
             "red-14", "red-15", "yellow-16", "blue-17", "yellow-18", "red-19", "blue-19",
             "yellow-20"]
    s.front[0] = sorted([*characters, *(T(c) for c in cards)])
    s.nh = [1, 0]
    s.vp = [7, 0]
    lines = lines_of(finish(s).seats[0].breakdown)
    assert lines == {
        "vp_in_play": 7,
        "card:red-10": 1,        # resources on red buildings
        "card:blue-11": 1,       # blue 11: red buildings
        "card:yellow-12": 2 + 4,  # yellow 12: blue buildings
        "card:red-13": 1,
        "card:red-14": 2,        # 1 or 2 floors: red 4, blue 5
        "card:red-15": 2 * 3,    # 3+ floors: yellow 6, blue 13
        "card:yellow-16": 2 * 1,  # exploit: red 1
        "card:blue-17": 2 * 2,   # urbanize: the red character (set 1), red 2
        "card:yellow-18": 2 * 3,  # build up: the yellow and blue characters, blue 3
        "card:red-19": 2 * 8,    # red: the character, red 1, 2, 10, 13, 14, 15, 19
        "card:blue-19": 2 * 5,   # blue: the character, blue 3, 11, 17, 19
        "card:yellow-20": 9,
        "new_hand_tokens": 2,
    }


def test_GK_H3_hal_scores_districts_and_cards_and_is_ranked_with_the_seat() -> None:
    s = blank(1, start_city=False)
    put(s, 0, 0, ["yellow-12"], owner=1)
    put(s, 1, 0, ["yellow-13", "yellow-14"], owner=1)     # Hal first: all 4 resources
    put(s, 0, 1, ["yellow-15"], owner=0)                  # seat 0 second: its 1
    put(s, 5, 5, ["blue-4"], owner=1)
    put(s, 5, 6, ["blue-5", "blue-6"], owner=1)           # Hal alone: 3 + 3
    s.front[1] = [T("red-14"), T("red-5")]                # "=" cards count, bonuses not
    s.vp = [11, 2]
    result = finish(s)
    (hal,) = result.opponents
    assert lines_of(hal.breakdown) == {"vp_in_play": 2, "card:red-14": 4,
                                       "district:yellow-12": 4, "district:blue-4": 6}
    assert lines_of(result.seats[0].breakdown) == {"vp_in_play": 11, "district:yellow-12": 1}
    assert (result.seats[0].score, hal.score) == (12, 16)
    assert (result.seats[0].rank, hal.rank, result.winners) == (2, 1, [])
    s.vp[0] += 4
    result = finish(s)
    assert (result.seats[0].rank, result.opponents[0].rank, result.winners) == (1, 1, [0])


# ----------------------------------------------------------------------------- divergences


@pytest.mark.parametrize("version", per_version(
    "GK-T1: the engine seals a New Hand with the card choice and carries it out only when "
    "every seat has committed; the rules' revised ruling: public and immediate, the seat "
    "then chooses from its new hand", newest=VERSIONS[-1]))
def test_GK_T1_a_new_hand_is_carried_out_at_once_and_the_seat_chooses_again(
        version: int) -> None:
    s = E.setup(2, None, 5, version)
    old = list(s.hands[0])
    assert s.nh[0] == 2 and GkNewHand() in rulebook_moves(s, 0)
    s, events = E.apply(s, 0, GkNewHand())
    announced = (s.nh[0], sorted(set(old) & set(s.discard)), 0 in E.active_seats(s))
    if announced != (1, sorted(old), True):
        raise RulesDivergence(f"(tokens, hand discarded, seat 0 chooses) = {announced}")
    assert set(E.legal_actions(s, 0)) == rulebook_moves(s, 0)
    assert not set(s.hands[0]) & set(old) and len(s.hands[0]) == 4
    # Public at once: the spectator and the other seat learn it from the event.
    assert {"kind": "new_hand_announced", "seat": 0} in [e.for_seat(None) for e in events]


@pytest.mark.parametrize("version", per_version(
    "GK-H2: the engine moves Hal's token itself, to the first legal space in perimeter "
    "order; the rules: the solo player chooses where it goes when more than one space is "
    "legal", newest=VERSIONS[-1]))
def test_GK_H2_the_solo_player_chooses_where_hals_token_moves(version: int) -> None:
    s = blank(1)
    s.rules_version = version
    s.hands[0] = [T("red-1"), T("red-2"), U("A")]
    s.supply_tiles = [T("blue-20"), T("blue-19"), T("yellow-10")]
    s.deck = [U("L"), U("K"), U("J"), U("I")]
    a = key_of(0, -1)
    s, _ = E.apply(s, 0, GkChooseCard(T("red-1"), None, U("A")))  # Hal urbanizes at A
    assert s.stacks[a] == (T("yellow-10"),) and s.owner[a] == 1
    placed = s.clone()
    placed.tokens[0] = a  # where the token stood before it moved
    spaces = token_spaces(placed, 0)
    assert spaces == {(0, -2), (-1, -1)}  # B's space (1, -1) is taken, red 1 is below
    expected = {GkPlaceToken(x, y) for x, y in spaces}
    if set(E.legal_actions(s, 0)) != expected:
        raise RulesDivergence(f"token A moved to {space(s.tokens[0])} without a choice")
    assert E.active_seats(s) == {0} and rulebook_moves(s, 0) == expected


@pytest.mark.parametrize("version", per_version(
    "GK-T4: the engine rebuilds the deck lazily, at the next draw from an empty deck; the "
    "rules: immediately, at the draw that takes the last card (markers placed and cards "
    "discarded in between then land in different decks)", newest=VERSIONS[-1]))
def test_GK_T4_the_deck_is_rebuilt_at_the_draw_that_takes_the_last_card(version: int) -> None:
    s = blank(2)
    s.rules_version = version
    s.hands[0] = [T("red-1"), T("red-2"), T("red-3"), T("blue-1")]
    s.hands[1] = [T("blue-2"), T("blue-3"), T("yellow-1"), T("yellow-2")]
    s.deck = [U("A"), U("B")]  # exactly the two cards the next turn's draws take
    s.discard = [U(letter) for letter in "CDEFGHIJKL"]
    s, _ = E.apply(s, 0, GkChooseCard(T("red-1")))
    s, _ = E.apply(s, 1, GkChooseCard(T("yellow-1")))
    assert s.phase == CHOOSE and s.turn == 2 and all(len(hand) == 4 for hand in s.hands)
    if not s.deck:
        raise RulesDivergence(f"the deck is empty with {len(s.discard)} cards to rebuild it")
    # The 10 old discards and this turn's two played cards, less the top 7 discarded again.
    assert len(s.deck) == 12 - 7 and len(s.discard) == 7
