"""Wire models of quick match (camelCase JSON, like the match service's): they feed OpenAPI
and the GraphQL types."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from service.matches.models import InputModel, PlayerCount, WireModel

FILL_MAX_SECONDS = 3600
"""The longest ``fillWithBotsAfterSeconds`` a ticket may ask for."""
WAIT_MAX_SECONDS = 60
"""The longest long-poll (``GET /v1/queue/{ticket}?wait=``)."""

FillSeconds = Annotated[int, Field(ge=0, le=FILL_MAX_SECONDS)]
TicketStatus = Literal["waiting", "matched", "expired", "left"]


class EnqueueRequest(InputModel):
    game: str = Field(description="A game id from GET /v1/games.", max_length=64)
    players: PlayerCount = Field(
        description="The number of seats of the match wanted, within the game's "
        "minPlayers..maxPlayers (else 422 bad_player_count)."
    )
    options: dict[str, Any] | None = Field(
        default=None,
        description="The game's options (see optionsSchema; unknown ones: 422 bad_options); "
        "omitted: the defaults. Players are matched on the options after defaults: leaving "
        "one out and giving its default is the same queue.",
    )
    fill_with_bots_after_seconds: FillSeconds | None = Field(
        default=None,
        description="Accept bots: once this ticket has waited this long (the server's "
        "clock) and too few players are queued, the match is formed with the waiting "
        "players who accept bots and greedy bots in the remaining seats. Omitted: wait for "
        "players only.",
    )


class QueueTicket(WireModel):
    """A quick-match ticket as its holder sees it."""

    ticket: str = Field(
        description="The ticket's id: `GET /v1/queue/{ticket}` polls it, `DELETE` leaves. "
        "Only the player that queued may use it (others get 404 ticket_not_found)."
    )
    status: TicketStatus = Field(
        description="`waiting` in the queue; `matched`: a match was created with the player "
        "in `seat` of `matchId` (the player's feed also has its `match_started`); "
        "`expired`: not polled for too long, out of the queue; `left`: the player left."
    )
    game: str
    players: int = Field(description="The number of seats of the match wanted.")
    match_id: str | None = Field(default=None, description="The match, once matched.")
    seat: int | None = Field(default=None, description="The player's seat, once matched.")
    poll_within_seconds: int = Field(
        description="While waiting: poll at least this often, or the ticket expires."
    )
