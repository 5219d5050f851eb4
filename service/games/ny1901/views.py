"""Pydantic view models: what a seat (or a spectator) sees.

Everything in New York 1901 is public except the order of the future market and the RNG
state, which never appear here (only the future market's size does).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class Ny1901Card(_Frozen):
    district: str
    size: int


class Ny1901Square(_Frozen):
    x: int
    y: int


class Ny1901LotView(_Frozen):
    name: str
    district: str
    size: int
    squares: list[Ny1901Square]
    in_play: bool
    """False for the pink district in a two-player game (NY-S4)."""
    owner: int | None
    worker: bool
    """The owner's worker stands on it (an owned lot without any of the owner's buildings)."""


class Ny1901BuildingView(_Frozen):
    owner: int
    tile: str
    level: Literal["start", "bronze", "silver", "gold"]
    legendary: bool
    points: int
    rotation: int
    x: int
    y: int
    squares: list[Ny1901Square]


class Ny1901SeatView(_Frozen):
    seat: int
    character: str
    character_district: str
    score: int
    """Points scored so far (buildings plus Gold Prestige); final bonuses come at the end."""
    technology: Literal["bronze", "silver", "gold"]
    free_workers: int
    workers_on_board: int
    tiles_left: list[str]
    unbuilt_tiles: int
    used_action_cards: list[str]
    unused_action_cards: list[str]
    legendary: str | None


class Ny1901StreetView(_Frozen):
    id: str
    name: str
    squares: list[Ny1901Square]


class Ny1901View(_Frozen):
    game: Literal["ny1901"] = "ny1901"
    rules_version: int
    viewer: int | None
    players: int
    expert: bool
    challenge: str | None
    streets: list[Ny1901StreetView]
    current_seat: int | None
    step: str
    open_market: list[Ny1901Card]
    future_market_size: int
    seats: list[Ny1901SeatView]
    lots: list[Ny1901LotView]
    buildings: list[Ny1901BuildingView]
    legendary_available: list[str]
    end_triggered_by: int | None
    last_turns_left: int | None
    game_over: bool
    board_rows: list[str]
    """The board's ASCII map (``..`` street, ``**`` park, ``##`` blocked, else lot names)."""
