"""Wire models of the player layer (camelCase JSON, like the match service's): they feed
OpenAPI and the GraphQL types."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from service.matches.models import InputModel, MatchState, SeatHolder, Visibility, WireModel
from service.matches.outcome import MatchOutcome
from service.matches.records import SeatStatus

MY_MATCHES_MAX = 100
"""The most items one page of "my matches" holds (``limit``'s maximum)."""
MY_MATCHES_DEFAULT = 20

SEAT_STATUS_DESCRIPTION = (
    "How the player holds (or left) its seat: `playing` (the seat is the player's), `away` "
    "(a bot holds it for the player, after a hand-over or a timeout under the `bot` policy; "
    "the player may take it back), `resigned` (the player resigned), `forfeited` (its time "
    "ran out under the `forfeit` policy). A player's matches list every match it ever held a "
    "seat in."
)


class CreatePlayerRequest(InputModel):
    name: str = Field(
        description="The display name others see: 1 to 32 characters once NFC-normalized and "
        "trimmed, no control or format characters.",
        max_length=64,
    )
    app_id: str | None = Field(
        default=None, max_length=64,
        description="The public id of the app the guest plays in; omitted: the default app.",
    )


class PlayerCreated(WireModel):
    id: str = Field(description="The player's id: random, opaque, shown to the player's app.")
    token: str = Field(
        description="The player's secret token (`skp_…`): send it as `Authorization: Bearer` "
        "in every match the player sits in. Shown only once; the server keeps a hash."
    )
    name: str
    app_id: str


class PlayerOut(WireModel):
    id: str
    name: str
    app_id: str
    user: str | None = Field(
        default=None, description="The app's own user id (the JWT `sub`) for an app's user; "
        "null for a guest.",
    )


class MyMatch(WireModel):
    match_id: str
    game: str
    status: Literal["waiting", "active", "finished", "cancelled"] = Field(
        description="As the match state's `status` (an open list)."
    )
    seat: int = Field(description="The player's seat in the match.")
    seat_status: SeatStatus = Field(default="playing", description=SEAT_STATUS_DESCRIPTION)
    players: list[SeatHolder] = Field(description="Who sits in each seat.")
    active_seats: list[int] = Field(description="Seats that may act now (whose turn it is).")
    your_turn: bool = Field(description="Whether the player's seat may act now (never for a "
                            "seat the player no longer holds).")
    version: int
    created_at: datetime
    updated_at: datetime = Field(description="RFC 3339, UTC: the match's last write.")
    url: str | None = Field(
        description="The match in the app's own client (the app's matchUrlTemplate); null "
        "when the app has none."
    )
    seed_chosen: bool = Field(
        default=True, description=MatchState.model_fields["seed_chosen"].description
    )
    visibility: Visibility = Field(default="unlisted",
                                   description=MatchState.model_fields["visibility"].description)
    name: str | None = Field(default=None, description="The match's name, if any.")
    labels: dict[str, str] = Field(default_factory=dict, description="The match's labels.")


class MyMatchesPage(WireModel):
    items: list[MyMatch] = Field(
        description="Newest created first. A page filtered by status or turn may hold fewer "
        "than `limit` items (even none) while more follow: only a null `nextCursor` ends "
        "the list."
    )
    next_cursor: str | None = Field(
        description="Pass as `cursor` for the next page; null at the end. Stable under "
        "concurrent writes: paging never repeats or skips a match."
    )


class DeletedPlayer(WireModel):
    id: str
    name: str = Field(description="The neutral name the player now has everywhere.")
    matches_renamed: int = Field(description="Matches whose seat got the neutral name.")


# -- the player's event feed (GET /v1/me/events, GraphQL playerEvents) ---------------------


class FeedEventBase(WireModel):
    seq: int = Field(description="The event's number in the player's feed (its SSE `id`): "
                     "resume after it with `Last-Event-ID`.")
    match_id: str
    version: int = Field(description="The match version the event comes from.")
    game: str
    seat: int = Field(description="The player's seat in that match.")


class YourTurnEvent(FeedEventBase):
    """One of the player's seats became active: it may act now (sent once when the seat
    becomes active, not for every step while it stays active)."""

    kind: Literal["your_turn"] = "your_turn"


class MatchStartedEvent(FeedEventBase):
    """A match the player sits in was created, or a match it joined started (its game set
    up)."""

    kind: Literal["match_started"] = "match_started"


class MatchFinishedEvent(FeedEventBase):
    """A match the player held a seat in is over: told to every player who held a seat once
    the game began, also when a bot holds it for the player (a hand-over, a timeout under
    the `bot` policy) or the player resigned or forfeited it (`seat`: that seat)."""

    kind: Literal["match_finished"] = "match_finished"
    result: MatchOutcome = Field(description="Final scores (what everyone may see) and "
                                 "how the match ended.")


class SeatChangedEvent(FeedEventBase):
    """The player's seat changed hands or credentials: handed to a bot, its token renewed
    (recovery or rotation), renamed (the player left for good), taken by a bot when its time
    ran out or it resigned, or taken back from its bot."""

    kind: Literal["seat_changed"] = "seat_changed"
    change: Literal["to_bot", "token_renewed", "renamed", "timed_out", "resigned",
                    "reclaimed"] = Field(
        description="What happened (an open list: tolerate new values)."
    )


class TimedOutEvent(FeedEventBase):
    """The player's seat ran out of time: a bot plays it now (`policy: bot`; the player may
    take it back with POST /v1/matches/{matchId}/seats/{seat}/reclaim), or it forfeited
    (`policy: forfeit`: out of the match, ranked last)."""

    kind: Literal["timed_out"] = "timed_out"
    policy: Literal["bot", "forfeit"] = Field(
        description="The match's timeout policy that applied (an open list)."
    )


class TimeoutSoonEvent(FeedEventBase):
    """The player's seat must act before its deadline, which is near (a tenth of the time
    per move, or of a live clock's base time, at most an hour, before it); once per turn."""

    kind: Literal["timeout_soon"] = "timeout_soon"
    deadline: str = Field(description="When the seat's time runs out (RFC 3339, UTC).")


class PlayerJoinedEvent(FeedEventBase):
    """Another player took an open seat of a waiting match the player sits in."""

    kind: Literal["player_joined"] = "player_joined"
    player_seat: int = Field(description="The seat the other player took.")
    player_name: str = Field(description="The other player's display name.")


class PlayerLeftEvent(FeedEventBase):
    """Another player left a waiting match the player sits in: its seat is open again."""

    kind: Literal["player_left"] = "player_left"
    player_seat: int = Field(description="The seat that is open again.")


class MatchCancelledEvent(FeedEventBase):
    """A waiting match the player sat in was cancelled before it started."""

    kind: Literal["match_cancelled"] = "match_cancelled"
    reason: str = Field(description="`creator` (its creator cancelled it), `creator_left`, "
                        "`expired` (untouched for the waiting time); an open list.")


class InvitedEvent(WireModel):
    """The player was invited to a waiting match: accept with POST
    /v1/me/invitations/{invitationId}/accept (or see GET /v1/me/invitations)."""

    seq: int = Field(description=FeedEventBase.model_fields["seq"].description)
    kind: Literal["invited"] = "invited"
    match_id: str
    version: int = Field(description="The match version the event comes from.")
    game: str
    seat: int | None = Field(description="The seat the invitation is to; null: any open one.")
    invitation_id: str
    by: str | None = Field(description="The inviting player's display name (null: the app).")


class RematchOfferedEvent(WireModel):
    """A rematch of a match the player played keeps a seat for it: take it with POST
    /v1/matches/{matchId}/join."""

    seq: int = Field(description=FeedEventBase.model_fields["seq"].description)
    kind: Literal["rematch_offered"] = "rematch_offered"
    match_id: str = Field(description="The rematch.")
    version: int = Field(description="The match version the event comes from.")
    game: str
    seat: int = Field(description="The seat kept for the player.")
    rematch_of: str = Field(description="The finished match.")


class FeedResetEvent(WireModel):
    """The reader resumed from before what the feed keeps (or from an id it never gave): it
    missed events. Re-read the player's matches, then carry on with the events that follow."""

    kind: Literal["reset"] = "reset"
    last: int = Field(description="The newest event number now (the reset's own SSE id).")


FeedEvent = (
    YourTurnEvent | MatchStartedEvent | MatchFinishedEvent | SeatChangedEvent
    | TimedOutEvent | TimeoutSoonEvent | PlayerJoinedEvent | PlayerLeftEvent
    | MatchCancelledEvent | InvitedEvent | RematchOfferedEvent | FeedResetEvent
)
"""An event of the player feed; `kind` names it (an open list: ignore kinds you do not
know)."""
FEED_KINDS = ("your_turn", "match_started", "match_finished", "seat_changed", "timed_out",
              "timeout_soon", "player_joined", "player_left", "match_cancelled", "invited",
              "rematch_offered")
