"""Wire action types: small frozen, hashable values with a ``type`` tag.

A turn is a sequence of these steps (NY-A): ``market_shift`` (start of turn), ``acquire``
(a lot; its card follows from the lot's colour and size), ``land_grab`` then a second
``acquire``, ``build`` (tile + rotation + anchor), ``rebuild`` (demolish and rebuild: the
demolished buildings follow from the footprint, NY-A5 workers are placed automatically),
``construction_boom`` then a second ``build``, ``end_turn`` (skip the optional build or stop
after it) and ``return_lot`` (the stuck rule, NY-A8).

The anchor ``(x, y)`` is the top-left corner of the rotated tile's bounding box; ``rotation``
counts clockwise quarter turns of the tile as drawn in ``data.SHAPES``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from ..base import WireInt

TileId = Literal[
    "B1", "B2", "B3", "B4", "B5", "B6",
    "S1", "S2", "S3", "S4", "S5", "S6",
    "G1", "G2", "G3", "G4", "G5", "G6",
    "park_row", "singer", "metropolitan_life", "woolworth",
]


@dataclass(frozen=True, slots=True)
class Ny1901MarketShift:
    """NY-C2: swap the open market for the top 4 of the future market (start of turn)."""

    __pydantic_config__ = ConfigDict(extra="forbid")
    type: Literal["market_shift"] = "market_shift"


@dataclass(frozen=True, slots=True)
class Ny1901Acquire:
    """NY-A1: take the open-market card of this lot's colour and size, staff the lot."""

    __pydantic_config__ = ConfigDict(extra="forbid")
    lot: str
    type: Literal["acquire"] = "acquire"


@dataclass(frozen=True, slots=True)
class Ny1901LandGrab:
    """NY-C3: one more acquisition this turn (2-square lots only); from rules version 2
    also after the turn's build."""

    __pydantic_config__ = ConfigDict(extra="forbid")
    type: Literal["land_grab"] = "land_grab"


@dataclass(frozen=True, slots=True)
class Ny1901Build:
    """NY-A2: place a tile on empty squares of your own land."""

    __pydantic_config__ = ConfigDict(extra="forbid")
    tile: TileId
    rotation: WireInt
    x: WireInt
    y: WireInt
    type: Literal["build"] = "build"


@dataclass(frozen=True, slots=True)
class Ny1901Rebuild:
    """NY-A4/A5: demolish the buildings the footprint overlaps and build the tile there."""

    __pydantic_config__ = ConfigDict(extra="forbid")
    tile: TileId
    rotation: WireInt
    x: WireInt
    y: WireInt
    type: Literal["rebuild"] = "rebuild"


@dataclass(frozen=True, slots=True)
class Ny1901ConstructionBoom:
    """NY-C1: after the first build of the turn, build a second skyscraper."""

    __pydantic_config__ = ConfigDict(extra="forbid")
    type: Literal["construction_boom"] = "construction_boom"


@dataclass(frozen=True, slots=True)
class Ny1901EndTurn:
    """Skip the optional build, or finish the turn after it."""

    __pydantic_config__ = ConfigDict(extra="forbid")
    type: Literal["end_turn"] = "end_turn"


@dataclass(frozen=True, slots=True)
class Ny1901ReturnLot:
    """NY-A8: stuck — give back a staffed lot (its card goes under the future market)."""

    __pydantic_config__ = ConfigDict(extra="forbid")
    lot: str
    type: Literal["return_lot"] = "return_lot"


Ny1901Action = Annotated[
    Ny1901MarketShift
    | Ny1901Acquire
    | Ny1901LandGrab
    | Ny1901Build
    | Ny1901Rebuild
    | Ny1901ConstructionBoom
    | Ny1901EndTurn
    | Ny1901ReturnLot,
    Field(discriminator="type"),
]

MARKET_SHIFT = Ny1901MarketShift()
LAND_GRAB = Ny1901LandGrab()
CONSTRUCTION_BOOM = Ny1901ConstructionBoom()
END_TURN = Ny1901EndTurn()
