"""Wire actions of Ginkgopolis: small frozen values, tagged by ``type``.

Card ids: building cards 0..59 (``colour * 20 + number - 1``, colours red, blue, yellow),
urbanization cards 60..71 (A..L), characters 72..98. Tile ids equal building card ids.
Coordinates are the city's stable integer coordinates (``city.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Final, Literal, get_args

from pydantic import ConfigDict, Field

from ..base import WireInt

_CONFIG = ConfigDict(extra="forbid")


@dataclass(frozen=True, slots=True)
class GkChooseCard:
    """GK-T1: commit (hidden) one card of the hand, alone or with one tile from behind the
    screen. In the solo game `hal_card` is the card given face down to Hal (GK-H2); the
    third card goes to the discard pile."""

    __pydantic_config__ = _CONFIG
    card: WireInt
    tile: WireInt | None = None
    hal_card: WireInt | None = None
    type: Literal["choose_card"] = "choose_card"


@dataclass(frozen=True, slots=True)
class GkNewHand:
    """GK-T1: announce a New Hand: spend a token, discard the hand and draw 4; then choose
    again from the new hand (rules version 1: sealed with the card choices; version 2: public
    and carried out at once)."""

    __pydantic_config__ = _CONFIG
    type: Literal["new_hand"] = "new_hand"


@dataclass(frozen=True, slots=True)
class GkTakeItem:
    """GK-T2 exploit with an urbanization card alone: take a resource or a tile."""

    __pydantic_config__ = _CONFIG
    item: Literal["resource", "tile"]
    type: Literal["take_item"] = "take_item"


Letter = Literal["A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K", "L"]
TOKEN_LETTERS: Final[tuple[Letter, ...]] = get_args(Letter)


@dataclass(frozen=True, slots=True)
class GkTokenAt:
    """An urbanization token and the space it moves to."""

    __pydantic_config__ = _CONFIG
    letter: Letter
    x: WireInt
    y: WireInt


@dataclass(frozen=True, slots=True)
class GkPlaceToken:
    """GK-T2 urbanize: where the moved urbanization token goes. `others`: the other tokens
    that move with it to keep the alphabetical order around the city (rules version 3 and
    later, only when no free space keeps it; by letter), each to its new space. Version 4
    offers every order-keeping layout that moves the fewest other tokens."""

    __pydantic_config__ = _CONFIG
    x: WireInt
    y: WireInt
    others: Annotated[tuple[GkTokenAt, ...], Field(exclude_if=lambda v: not v)] = ()
    type: Literal["place_token"] = "place_token"


@dataclass(frozen=True, slots=True)
class GkDraftCharacter:
    """GK-S4 draft: keep (hidden) one character of the pack in hand; pass the rest left."""

    __pydantic_config__ = _CONFIG
    character: WireInt
    type: Literal["draft_character"] = "draft_character"


@dataclass(frozen=True, slots=True)
class GkReturnTiles:
    """GK-E1: the tiles (sorted ids, possibly none) put back when the supply first runs
    out; committed hidden, revealed together, 1 VP each."""

    __pydantic_config__ = _CONFIG
    tiles: tuple[WireInt, ...] = ()
    type: Literal["return_tiles"] = "return_tiles"


GkAction = Annotated[
    GkChooseCard | GkNewHand | GkTakeItem | GkPlaceToken | GkDraftCharacter | GkReturnTiles,
    Field(discriminator="type"),
]
