"""The events of New York 1901 as a seat (or a spectator) sees them: data, not rules.

Everything New York 1901 reports is public: every seat and every spectator sees the same
events. Rule ids (NY-...) are the rulebook's, as in ``rules.py``, the code that emits the
events; ``tests/test_event_models.py`` holds it to these models.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..events import EventData, EventPart, event_union, sometimes
from .actions import TileId

District = Literal["red", "blue", "yellow", "green", "pink"]
"""The district colours (``data.DISTRICTS``)."""

DemolishedTile = Literal[TileId, "start"]
"""A tile a rebuild can demolish: a supply tile or a start property."""


class Ny1901MarketCard(EventPart):
    """A lot card of the open or future market: a district colour and a lot size."""

    district: District = Field(description="The district colour of the lots the card buys.")
    size: Literal[2, 3] = Field(description="The size, in squares, of the lots it buys.")


_SEAT = "The seat that acted."
_LOT = "The lot's name on the board (as in the view's lots)."


class Ny1901AcquireData(EventData):
    """A seat acquired a lot with the open-market card of its colour and size, and placed a
    worker on it (NY-A1; the second acquisition of a Land Grab too)."""

    kind = "acquire"
    seat: int = Field(description=_SEAT)
    lot: str = Field(description=_LOT)
    card: Ny1901MarketCard = Field(description="The open-market card it took.")


class _TilePlaced(EventData):
    """The fields a build and a rebuild share (not an event kind of its own)."""

    seat: int = Field(description=_SEAT)
    tile: TileId = Field(description="The tile built (a supply tile or a legendary one).")
    rotation: int = Field(description="Clockwise quarter turns of the tile as drawn.")
    x: int = Field(description="Column of the top-left corner of the rotated tile's box.")
    y: int = Field(description="Row of the top-left corner of the rotated tile's box.")
    points: int = Field(description="The points the tile scores.")
    gold_prestige: int | None = sometimes(
        "Points of the Gold Prestige challenge (NY-X3): 1 per opponent building next to the "
        "new gold one. Present only when the build scored some."
    )
    workers_released: list[str] | None = sometimes(
        "Lots whose worker went back to the seat because the new building covers them. "
        "Present only when some did."
    )


class Ny1901BuildData(_TilePlaced):
    """A seat built a skyscraper on empty squares of its own land (NY-A2; the second build
    of a Construction Boom too)."""

    kind = "build"


class Ny1901RebuildData(_TilePlaced):
    """A seat demolished its own buildings and built a higher-level tile in their place, a
    whole turn's option (NY-A4, NY-A5)."""

    kind = "rebuild"
    demolished: list[DemolishedTile] = Field(
        description="The tiles of the demolished buildings (start: a start property)."
    )
    workers_placed: list[str] = Field(
        description="Lots that got a worker back because the rebuild left them without a "
        "building (NY-A5); may be empty."
    )


class Ny1901EndTurnData(EventData):
    """A seat ended its turn: after its build, or skipping the optional build."""

    kind = "end_turn"
    seat: int = Field(description=_SEAT)


class Ny1901LandGrabData(EventData):
    """A seat played its Land Grab card: one more acquisition this turn, 2-square lots only
    (NY-C3)."""

    kind = "land_grab"
    seat: int = Field(description=_SEAT)


class Ny1901ConstructionBoomData(EventData):
    """A seat played its Construction Boom card: a second build this turn (NY-C1)."""

    kind = "construction_boom"
    seat: int = Field(description=_SEAT)


class Ny1901MarketShiftData(EventData):
    """A seat played its Market Shift card: the open market went under the future market and
    the top cards of the future market were revealed in its place (NY-C2)."""

    kind = "market_shift"
    seat: int = Field(description=_SEAT)
    removed: list[Ny1901MarketCard] = Field(
        description="The open market before the shift (now shuffled under the future market)."
    )
    revealed: list[Ny1901MarketCard] = Field(description="The new open market.")


class Ny1901ReturnLotData(EventData):
    """A stuck seat (no free worker, nothing to build) gave back a staffed lot; its card went
    under the future market and the turn ended (NY-A8)."""

    kind = "return_lot"
    seat: int = Field(description=_SEAT)
    lot: str = Field(description=_LOT)
    card: Ny1901MarketCard = Field(description="The lot's card, now under the future market.")


class Ny1901MarketRefillData(EventData):
    """At the end of a turn the open market was refilled from the future market (NY-A9)."""

    kind = "market_refill"
    revealed: list[Ny1901MarketCard] = Field(
        description="The cards added to the open market, in the order they were drawn."
    )


class Ny1901EndTriggeredData(EventData):
    """The end of the game was triggered: the other seats play one more turn each (NY-E1,
    NY-E2)."""

    kind = "end_triggered"
    seat: int = Field(description="The seat whose turn triggered the end.")
    reason: Literal["tiles", "market"] = Field(
        description="tiles: the seat has few enough unbuilt supply tiles left; market: the "
        "open market could not be refilled."
    )


class Ny1901GameOverData(EventData):
    """The last turn was played: the match is finished and its result (final scoring) is in
    the match state."""

    kind = "game_over"


Ny1901Event = event_union(
    "Ny1901",
    "New York 1901",
    __name__,
    [
        Ny1901AcquireData,
        Ny1901BuildData,
        Ny1901RebuildData,
        Ny1901EndTurnData,
        Ny1901LandGrabData,
        Ny1901ConstructionBoomData,
        Ny1901MarketShiftData,
        Ny1901ReturnLotData,
        Ny1901MarketRefillData,
        Ny1901EndTriggeredData,
        Ny1901GameOverData,
    ],
)
"""Every event of New York 1901, discriminated by ``kind`` (the engine's ``Events``)."""
