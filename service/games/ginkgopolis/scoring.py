"""Final scoring (GK-F1..F3, GK-B2) and the districts (GK-F2)."""

from __future__ import annotations

from .city import neighbours
from .data import (
    COLOURS,
    DISTRICT_MIN_BUILDINGS,
    END_BONUS_ACTIONS,
    END_BONUS_VP,
    END_COLOUR_VP,
    END_FLAT_VP,
    END_HIGH_FLOORS,
    END_HIGH_VP,
    END_LOW_FLOORS,
    END_LOW_VP,
    END_VP_PER_RESOURCE,
    FIRST_END_CARD,
    NUMBERS,
    bonus_of,
    card_colour,
    card_label,
    end_card_scored_colour,
)
from .state import GkState

NEW_HAND_VP = 2


def districts(s: GkState) -> list[list[int]]:
    """GK-F2: edge-connected groups of 2+ buildings of one colour, ordered by first space."""
    seen: set[int] = set()
    out: list[list[int]] = []
    for start in sorted(s.stacks):
        if start in seen:
            continue
        colour = s.stacks[start][-1] // NUMBERS
        group = [start]
        seen.add(start)
        stack = [start]
        while stack:
            key = stack.pop()
            for n in neighbours(key):
                if n in s.stacks and n not in seen and s.stacks[n][-1] // NUMBERS == colour:
                    seen.add(n)
                    group.append(n)
                    stack.append(n)
        if len(group) >= DISTRICT_MIN_BUILDINGS:
            out.append(sorted(group))
    return out


def district_name(s: GkState, group: list[int]) -> str:
    """``blue-5``: the district's colour and its lowest building number."""
    tops = [s.stacks[k][-1] for k in group]
    return card_label(min(tops))


def district_points(s: GkState, group: list[int]) -> dict[int, int]:
    """GK-F2: first place scores every resource in the district, second its own resources;
    ties broken by the tallest building, then by the tallest building's highest number; a
    lone player scores both places."""
    count: dict[int, int] = {}
    tallest: dict[int, tuple[int, int]] = {}
    for key in group:
        owner = s.owner[key]
        if owner < 0:
            continue
        height = len(s.stacks[key])
        count[owner] = count.get(owner, 0) + height
        rank = (height, s.stacks[key][-1] % NUMBERS + 1)
        if rank > tallest.get(owner, (0, 0)):
            tallest[owner] = rank
    if not count:
        return {}
    ranked = sorted(count, key=lambda o: (count[o], *tallest[o]), reverse=True)
    total = sum(count.values())
    points = {ranked[0]: total}
    if len(ranked) == 1:
        points[ranked[0]] += count[ranked[0]]
    else:
        points[ranked[1]] = count[ranked[1]]
    return points


def end_card_points(s: GkState, owner: int, card: int) -> int:
    """GK-B2: what one end-of-game card (10-20) in front of ``owner`` scores."""
    colour, number = card // NUMBERS, card % NUMBERS + 1
    owned = [k for k, o in s.owner.items() if o == owner]
    scored_colour = end_card_scored_colour(card)
    if scored_colour is not None:
        return END_VP_PER_RESOURCE * sum(
            len(s.stacks[k]) for k in owned if s.stacks[k][-1] // NUMBERS == scored_colour
        )
    if number == 14:
        return END_LOW_VP * sum(1 for k in owned if len(s.stacks[k]) <= END_LOW_FLOORS)
    if number == 15:
        return END_HIGH_VP * sum(1 for k in owned if len(s.stacks[k]) >= END_HIGH_FLOORS)
    if number in END_BONUS_ACTIONS:
        action = END_BONUS_ACTIONS[number]
        return END_BONUS_VP * sum(
            1 for c in s.front[owner] if (b := bonus_of(c)) is not None and b.action == action
        )
    if number == 19:
        return END_COLOUR_VP * sum(1 for c in s.front[owner] if card_colour(c) == colour)
    if number == 20:
        return END_FLAT_VP
    return 0


def breakdown(s: GkState, owner: int) -> list[tuple[str, int]]:
    """GK-F1 lines for one owner (a seat, or Hal in the solo game)."""
    lines: list[tuple[str, int]] = [("vp_in_play", s.vp[owner])]
    for card in sorted(s.front[owner]):
        if card < 60 and card % NUMBERS + 1 >= FIRST_END_CARD:
            lines.append((f"card:{card_label(card)}", end_card_points(s, owner, card)))
    if owner < s.players and not s.solo:
        lines.append(("new_hand_tokens", NEW_HAND_VP * s.nh[owner]))
    for group in districts(s):
        points = district_points(s, group).get(owner, 0)
        if points:
            lines.append((f"district:{district_name(s, group)}", points))
    return lines


def colour_name(colour: int) -> str:
    return COLOURS[colour]
