"""Ginkgopolis facts: tiles, cards, characters, resource counts (frozen data only).

Identifiers are small integers so that the state stays compact:

- tiles and building cards share ids ``0..59``: ``colour * 20 + number - 1``
  (colour 0 red, 1 blue, 2 yellow; numbers 1..20);
- urbanization cards ``60..71`` (letters A..L);
- characters ``72..98``: ``72 + (set - 1) * 3 + colour``.

Rule ids (GK-...) refer to ``shared/rules/ginkgopolis.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

RED: Final = 0
BLUE: Final = 1
YELLOW: Final = 2
COLOURS: Final = ("red", "blue", "yellow")
ColourName = Literal["red", "blue", "yellow"]

# Actions, in the order of a turn's card/tile decision (GK-T2).
EXPLOIT: Final = 0
URBANIZE: Final = 1
BUILD_UP: Final = 2
ACTION_NAMES: Final = ("exploit", "urbanize", "build_up")

NUMBERS: Final = 20
N_TILES: Final = 60
URB_BASE: Final = 60
N_URB: Final = 12
CHAR_BASE: Final = 72
N_CHARS: Final = 27
N_CARDS: Final = CHAR_BASE + N_CHARS
LETTERS: Final = "ABCDEFGHIJKL"

# GK-S1: the starting 3x3 square occupies x, y in 0..2 (x to the right, y downwards); the
# tokens A..L sit on the 12 edge-adjacent spaces, clockwise from the top-left.
# fmt: off
TOKEN_START: Final[tuple[tuple[int, int], ...]] = (
    (0, -1), (1, -1), (2, -1),  # A B C above the top row, left to right
    (3, 0), (3, 1), (3, 2),  # D E F right of the right column, top to bottom
    (2, 3), (1, 3), (0, 3),  # G H I below the bottom row, right to left
    (-1, 2), (-1, 1), (-1, 0),  # J K L left of the left column, bottom to top
)
# fmt: on

# GK-S (components): resources per player colour by player count; the solo game is set up
# as for two players (GK-H1), and Hal's supply is the whole stock of his colour.
RESOURCES_PER_PLAYER: Final = {1: 25, 2: 25, 3: 20, 4: 18, 5: 16}
NEW_HAND_TOKENS: Final = 2
HAND_SIZE: Final = 4
SOLO_HAND_SIZE: Final = 3
SOLO_START: Final = (6, 6, 6)  # resources, tiles, VP (GK-H1)
TILES_REMOVED_SMALL: Final = 6  # GK-S2, 2-3 players (and solo)
CARDS_DISCARDED_SMALL: Final = 7  # GK-S3 / GK-T4, 2-3 players (and solo)
CONSTRUCTION_MARKERS: Final = 15


def tile_id(colour: int, number: int) -> int:
    return colour * NUMBERS + number - 1


def colour_of(tile: int) -> int:
    return tile // NUMBERS


def number_of(tile: int) -> int:
    return tile % NUMBERS + 1


def is_building_card(card: int) -> bool:
    return 0 <= card < N_TILES


def is_urbanization_card(card: int) -> bool:
    return URB_BASE <= card < URB_BASE + N_URB


def is_character(card: int) -> bool:
    return CHAR_BASE <= card < N_CARDS


@dataclass(frozen=True, slots=True)
class Bonus:
    """An in-play bonus (GK-B1): items gained each time its owner performs ``action``."""

    action: int
    resources: int = 0
    tiles: int = 0
    vp: int = 0


@dataclass(frozen=True, slots=True)
class Character:
    id: int
    set: int
    colour: int
    start_resources: int
    start_vp: int
    start_tiles: int
    bonus: Bonus
    reconstructed: bool


def _colour_item(colour: int, action: int) -> Bonus:
    """One item of a colour's kind: red a resource, blue a tile, yellow a VP."""
    if colour == RED:
        return Bonus(action, resources=1)
    if colour == BLUE:
        return Bonus(action, tiles=1)
    return Bonus(action, vp=1)


def _building_bonus(colour: int, number: int) -> Bonus | None:
    """GK-B1: cards 1-9 give an item on exploit (1,4,7), urbanize (2,5,8), build up (3,6,9)."""
    if number > 9:
        return None
    action = (number - 1) % 3
    if number <= 6:
        return _colour_item(colour, action)
    if colour == RED:
        return Bonus(action, resources=1, vp=1)
    if colour == BLUE:
        return Bonus(action, tiles=1, vp=1)
    return Bonus(action, vp=2)


BUILDING_BONUS: Final[tuple[Bonus | None, ...]] = tuple(
    _building_bonus(t // NUMBERS, t % NUMBERS + 1) for t in range(N_TILES)
)

# GK-S4 / card data: (start resources, start VP, start tiles, bonus action) per colour.
_SETS: Final = (
    # set: red, yellow, blue  -- (resources, vp, tiles, action)
    ((1, 1, 1, URBANIZE), (2, 1, 1, BUILD_UP), (1, 0, 0, BUILD_UP)),  # 1
    ((0, 0, 1, BUILD_UP), (2, 1, 1, BUILD_UP), (2, 1, 0, EXPLOIT)),  # 2
    ((1, 1, 1, EXPLOIT), (2, 2, 1, URBANIZE), (2, 1, 0, URBANIZE)),  # 3
    ((1, 1, 1, URBANIZE), (2, 2, 1, URBANIZE), (1, 0, 0, BUILD_UP)),  # 4
    ((1, 1, 1, EXPLOIT), (2, 2, 1, EXPLOIT), (1, 0, 0, BUILD_UP)),  # 5
    ((1, 1, 1, URBANIZE), (2, 2, 1, EXPLOIT), (2, 1, 0, EXPLOIT)),  # 6
    # Sets 7-9 are not public: RECONSTRUCTED so that every colour has 3 exploit, 3 urbanize
    # and 3 build-up bonuses over the 27 characters, with starting items in the same ranges.
    ((1, 1, 1, EXPLOIT), (2, 1, 1, URBANIZE), (2, 1, 0, URBANIZE)),  # 7 (reconstructed)
    ((0, 0, 1, BUILD_UP), (2, 2, 1, EXPLOIT), (1, 0, 0, URBANIZE)),  # 8 (reconstructed)
    ((1, 1, 1, BUILD_UP), (2, 1, 1, BUILD_UP), (2, 1, 0, EXPLOIT)),  # 9 (reconstructed)
)
RECONSTRUCTED_SETS: Final = frozenset({7, 8, 9})


def _characters() -> tuple[Character, ...]:
    out = []
    for set_index, (red, yellow, blue) in enumerate(_SETS):
        set_number = set_index + 1
        for colour, (res, vp, tiles, action) in ((RED, red), (BLUE, blue), (YELLOW, yellow)):
            out.append(
                Character(
                    id=CHAR_BASE + set_index * 3 + colour,
                    set=set_number,
                    colour=colour,
                    start_resources=res,
                    start_vp=vp,
                    start_tiles=tiles,
                    bonus=_colour_item(colour, action),
                    reconstructed=set_number in RECONSTRUCTED_SETS,
                )
            )
    out.sort(key=lambda c: c.id)
    return tuple(out)


CHARACTERS: Final[tuple[Character, ...]] = _characters()
CHARACTER_SETS: Final = 9


def bonus_of(card: int) -> Bonus | None:
    """The in-play bonus of a card in front of a screen (characters, building cards 1-9)."""
    if card < N_TILES:
        return BUILDING_BONUS[card]
    if card >= CHAR_BASE:
        return CHARACTERS[card - CHAR_BASE].bonus
    return None


def card_colour(card: int) -> int | None:
    """The colour of a building card or character; None for urbanization cards."""
    if card < N_TILES:
        return card // NUMBERS
    if card >= CHAR_BASE:
        return CHARACTERS[card - CHAR_BASE].colour
    return None


# GK-B2: end-of-game cards 10-20. For 11 and 12, the "other" colours per card colour.
END_OTHER_COLOURS: Final = {
    RED: (YELLOW, BLUE),  # red 11: yellow, red 12: blue
    BLUE: (RED, YELLOW),  # blue 11: red, blue 12: yellow
    YELLOW: (RED, BLUE),  # yellow 11: red, yellow 12: blue
}
# GK-B2: what the end-of-game cards score (``scoring.end_card_points``).
FIRST_END_CARD: Final = 10
"""Building cards from this number on score at the end (the lower ones give bonuses)."""
END_VP_PER_RESOURCE: Final = 1  # 10-13: per resource of yours on buildings of one colour
END_LOW_FLOORS: Final = 2  # 14: per building of yours of at most this many floors ...
END_LOW_VP: Final = 1  # ... this many VP
END_HIGH_FLOORS: Final = 3  # 15: per building of yours of at least this many floors ...
END_HIGH_VP: Final = 3  # ... this many VP
END_BONUS_ACTIONS: Final = {16: EXPLOIT, 17: URBANIZE, 18: BUILD_UP}
END_BONUS_VP: Final = 2  # 16-18: per card in front of the screen with that action's bonus
END_COLOUR_VP: Final = 2  # 19: per card of the card's colour in front of the screen
END_FLAT_VP: Final = 9  # 20
DISTRICT_MIN_BUILDINGS: Final = 2
"""GK-F2: a district is this many or more edge-connected buildings of one colour."""


def end_card_scored_colour(card: int) -> int | None:
    """For cards 10-13: the building colour whose resources score (1 VP each)."""
    colour, number = card // NUMBERS, card % NUMBERS + 1
    if number in (10, 13):
        return colour
    if number == 11:
        return END_OTHER_COLOURS[colour][0]
    if number == 12:
        return END_OTHER_COLOURS[colour][1]
    return None


def tile_label(tile: int) -> str:
    return f"{COLOURS[tile // NUMBERS]}-{tile % NUMBERS + 1}"


def card_label(card: int) -> str:
    if card < N_TILES:
        return tile_label(card)
    if card < CHAR_BASE:
        return f"urbanization-{LETTERS[card - URB_BASE]}"
    char = CHARACTERS[card - CHAR_BASE]
    return f"character-{char.set}-{COLOURS[char.colour]}"


START_TILES: Final = tuple(tile_id(c, n) for c in (RED, BLUE, YELLOW) for n in (1, 2, 3))
URBANIZATION_CARDS: Final = tuple(range(URB_BASE, URB_BASE + N_URB))
