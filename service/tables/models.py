"""Wire models of the lobby's tables (matches that wait for players) and of its lists: the
lobby (waiting public matches) and the live matches (active public ones)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import Field

from service.matches.models import BotKind, InputModel, SeatHolder, WireModel

LIST_MAX = 100
LIST_DEFAULT = 20


class JoinRequest(InputModel):
    seat: int | None = Field(
        default=None, ge=0, le=15,
        description="The open seat to take; omitted: the lowest open seat.",
    )
    invite: str | None = Field(
        default=None, min_length=1, max_length=128,
        description="An invitation code for this match (needed for a private match).",
    )


class StartRequest(InputModel):
    bot: BotKind | None = Field(
        default=None,
        description="The bot that takes every open seat (default `greedy`; `random` where "
        "the game has no other).",
    )


class LobbyEntry(WireModel):
    """A waiting public match, as everyone may see it: no seed, no hands, no tokens."""

    match_id: str
    game: str
    version: int
    rules_version: int = Field(description="The rules version it will be played under.")
    players: int = Field(description="The number of seats.")
    seats: list[SeatHolder] = Field(
        description="Who sits in each seat (a player's display name, a bot, or open)."
    )
    open_seats: list[int] = Field(description="The seats a player may still take.")
    options: dict[str, Any] | None = Field(
        description="The game's options it was created with (null: every default)."
    )
    name: str | None = Field(description="The match's name, if any.")
    labels: dict[str, str] = Field(description="The app-defined labels given at creation.")
    seed_chosen: bool = Field(
        description="True when its creator chose the seed (allowed on this server): the "
        "creator then knows every draw. False: the server draws it when the match starts."
    )
    created_at: datetime
    age_seconds: int = Field(description="Seconds since the match was created.")


class LiveEntry(WireModel):
    """An active public match, to spectate."""

    match_id: str
    game: str
    version: int
    rules_version: int
    players: int = Field(description="The number of seats.")
    seats: list[SeatHolder] = Field(description="Who sits in each seat.")
    active_seats: list[int] = Field(description="Seats that may act now.")
    options: dict[str, Any] | None
    name: str | None
    labels: dict[str, str]
    seed_chosen: bool
    created_at: datetime
    updated_at: datetime = Field(description="RFC 3339, UTC: the match's last write.")


class LobbyPage(WireModel):
    items: list[LobbyEntry] = Field(
        description="Newest created first. A page may hold fewer than `limit` items while "
        "more follow: only a null `nextCursor` ends the list."
    )
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page.")


class LivePage(WireModel):
    items: list[LiveEntry] = Field(
        description="Newest created first. A page may hold fewer than `limit` items while "
        "more follow: only a null `nextCursor` ends the list."
    )
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page.")
