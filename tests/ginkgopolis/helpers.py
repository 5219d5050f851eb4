"""Build Ginkgopolis positions directly through the state module, for scenario tests."""

from __future__ import annotations

from collections.abc import Iterable

from service.games.base import Event
from service.games.ginkgopolis import ENGINE
from service.games.ginkgopolis.city import pos
from service.games.ginkgopolis.data import (
    COLOURS,
    LETTERS,
    RESOURCES_PER_PLAYER,
    TOKEN_START,
    URB_BASE,
    tile_id,
)
from service.games.ginkgopolis.state import CHOOSE, GkState, empty_state, place_building

E = ENGINE


def T(label: str) -> int:
    """'red-7' -> the tile / building card id."""
    colour, number = label.split("-")
    return tile_id(COLOURS.index(colour), int(number))


def U(letter: str) -> int:
    """'A' -> the urbanization card id."""
    return URB_BASE + LETTERS.index(letter)


def blank(players: int, *, start_city: bool = True) -> GkState:
    """A state in the choice step: the 3x3 of tiles 1-3 (unowned), tokens at their start,
    an empty hand, screen and supply of tiles, full resource supplies."""
    s = empty_state(players)
    s.phase = CHOOSE
    if start_city:
        labels = [f"{c}-{n}" for c in COLOURS for n in (1, 2, 3)]
        for i, label in enumerate(labels):
            place_building(s, pos(i % 3, i // 3), (T(label),), -1)
    s.tokens = [pos(x, y) for x, y in TOKEN_START]
    s.res_supply = [RESOURCES_PER_PLAYER[players]] * s.owners
    return s


def put(s: GkState, x: int, y: int, labels: Iterable[str], owner: int) -> int:
    """Place a building (tiles bottom to top) owned by ``owner`` (-1: nobody); its
    resources come out of the owner's supply."""
    key = pos(x, y)
    stack = tuple(T(label) for label in labels)
    old = s.stacks.get(key)
    if old is not None and s.owner[key] >= 0:
        s.res_supply[s.owner[key]] += len(old)
    place_building(s, key, stack, owner)
    if owner >= 0:
        s.res_supply[owner] -= len(stack)
    return key


def give(
    s: GkState, seat: int, *, resources: int = 0, tiles: Iterable[str] = (), vp: int = 0
) -> None:
    s.res_supply[seat] -= resources
    s.res_screen[seat] += resources
    s.tiles[seat] = sorted([*s.tiles[seat], *(T(t) for t in tiles)])
    s.vp[seat] += vp


def kinds(events: list[Event]) -> list[str]:
    return [e.kind for e in events]
