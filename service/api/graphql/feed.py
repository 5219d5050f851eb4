"""Subscription ``playerEvents``: the player's event feed (REST's ``GET /v1/me/events``), one
typed member per kind, in the same order and with the same numbers (``seq``)."""

import json
from collections.abc import AsyncGenerator
from typing import Any

import strawberry

from service.errors import ApiError
from service.matches.watch import Revoked
from service.players.feed import FeedItem, FeedReset

from .context import Info
from .results import PLAYER_FAILURES, result_union
from .types.failures import failure_for
from .types.games import GameTypes


@strawberry.interface(description="An event of the player feed.")
class PlayerEvent:
    seq: int = strawberry.field(description="The event's number in the player's feed.")
    match_id: strawberry.ID
    version: int = strawberry.field(description="The match version it comes from.")
    game: str
    seat: int = strawberry.field(description="The player's seat in that match.")


@strawberry.type(name="YourTurnEvent",
                 description="One of the player's seats became active: it may act now.")
class YourTurn(PlayerEvent):
    pass


@strawberry.type(name="MatchStartedEvent",
                 description="A match the player sits in was created, or a match it joined "
                 "started (its game set up).")
class MatchStarted(PlayerEvent):
    pass


@strawberry.type(name="SeatChangedEvent",
                 description="The player's seat was handed to a bot, its token renewed, "
                 "renamed, taken by a bot at a timeout or a resignation, or taken back "
                 "(`change`: to_bot, token_renewed, renamed, timed_out, resigned, reclaimed; "
                 "an open list).")
class SeatChanged(PlayerEvent):
    change: str


@strawberry.type(name="TimedOutEvent",
                 description="The player's seat ran out of time: a bot plays it now (`policy: "
                 "bot`; take it back with reclaimSeat), or it forfeited (`policy: forfeit`).")
class TimedOut(PlayerEvent):
    policy: str = strawberry.field(description="The timeout policy that applied: `bot` or "
                                   "`forfeit` (an open list).")


@strawberry.type(name="TimeoutSoonEvent",
                 description="The player's seat must act before its deadline, which is near "
                 "(once per turn).")
class TimeoutSoon(PlayerEvent):
    deadline: str = strawberry.field(description="When the seat's time runs out (RFC 3339, "
                                     "UTC).")


@strawberry.type(name="PlayerJoinedEvent",
                 description="Another player took an open seat of a waiting match the player "
                 "sits in.")
class PlayerJoined(PlayerEvent):
    player_seat: int = strawberry.field(description="The seat the other player took.")
    player_name: str = strawberry.field(description="The other player's display name.")


@strawberry.type(name="PlayerLeftEvent",
                 description="Another player left a waiting match the player sits in: its "
                 "seat is open again.")
class PlayerLeft(PlayerEvent):
    player_seat: int = strawberry.field(description="The seat that is open again.")


@strawberry.type(name="MatchCancelledEvent",
                 description="A waiting match the player sat in was cancelled before it "
                 "started.")
class MatchCancelled(PlayerEvent):
    reason: str = strawberry.field(
        description="`creator` (its creator cancelled it), `creator_left`, `expired` "
        "(untouched for the waiting time); an open list."
    )


@strawberry.type(name="RematchOfferedEvent",
                 description="A rematch of a match the player played keeps a seat for it "
                 "(`matchId`: the rematch; `seat`: the seat kept): take it with joinMatch.")
class RematchOffered(PlayerEvent):
    rematch_of: strawberry.ID = strawberry.field(description="The finished match.")


@strawberry.type(name="InvitedEvent",
                 description="The player was invited to a waiting match: accept with "
                 "acceptInvitation(invitationId) (or see myInvitations). Not a PlayerEvent: "
                 "the player has no seat there yet (`seat` is the one it is invited to).")
class Invited:
    seq: int = strawberry.field(description="The event's number in the player's feed.")
    match_id: strawberry.ID
    version: int = strawberry.field(description="The match version it comes from.")
    game: str
    invited_seat: int | None = strawberry.field(
        description="The seat the invitation is to; null: any open one (REST's `seat`: named "
        "apart from PlayerEvent's `seat`, which is the player's own and never null).")
    invitation_id: strawberry.ID
    by: str | None = strawberry.field(
        description="The inviting player's display name (null: the app).")


@strawberry.type(description="The reader resumed from before what the feed keeps: re-read "
                 "myMatches, then carry on.")
class FeedReset_:
    last: int


def build_feed_subscription(games: GameTypes) -> Any:
    result_type = games.result.annotation

    @strawberry.type(name="MatchFinishedEvent",
                     description="A match the player sits in is over.")
    class MatchFinished(PlayerEvent):
        result: result_type  # type: ignore[valid-type]

    reset_type = strawberry.type(FeedReset_, name="FeedResetEvent")
    update = result_union(
        "PlayerEventUpdate", YourTurn, (MatchStarted, MatchFinished, SeatChanged, TimedOut,
                                        TimeoutSoon, PlayerJoined, PlayerLeft, MatchCancelled,
                                        Invited, RematchOffered, reset_type,
                                        *PLAYER_FAILURES),
        "A feed event, or why the stream ended.",
    )

    def convert(item: FeedItem) -> object:
        raw = json.loads(item.data)
        common = {"seq": item.seq, "match_id": strawberry.ID(raw["matchId"]),
                  "version": raw["version"], "game": raw["game"], "seat": raw["seat"]}
        kind = raw["kind"]
        if kind == "your_turn":
            return YourTurn(**common)
        if kind == "match_started":
            return MatchStarted(**common)
        if kind == "seat_changed":
            return SeatChanged(**common, change=raw["change"])
        if kind == "timed_out":
            return TimedOut(**common, policy=raw["policy"])
        if kind == "timeout_soon":
            return TimeoutSoon(**common, deadline=raw["deadline"])
        if kind == "player_joined":
            return PlayerJoined(**common, player_seat=raw["playerSeat"],
                                player_name=raw["playerName"])
        if kind == "player_left":
            return PlayerLeft(**common, player_seat=raw["playerSeat"])
        if kind == "match_cancelled":
            return MatchCancelled(**common, reason=raw["reason"])
        if kind == "rematch_offered":
            return RematchOffered(**common, rematch_of=strawberry.ID(raw["rematchOf"]))
        if kind == "invited":
            invited = {k: v for k, v in common.items() if k != "seat"}
            return Invited(**invited, invited_seat=raw["seat"],
                           invitation_id=strawberry.ID(raw["invitationId"]),
                           by=raw["by"])
        if kind == "match_finished":
            from service.matches.outcome import MatchOutcome

            return MatchFinished(**common,
                                 result=games.result.convert(MatchOutcome.model_validate(
                                     raw["result"])))
        return None  # a kind this build does not know: skipped

    @strawberry.type
    class FeedSubscription:
        @strawberry.subscription(
            description="Everything that concerns the calling player across all its matches "
            "(`your_turn`, `match_started`, `match_finished`, `seat_changed`, `timed_out`, "
            "`timeout_soon`; in a waiting "
            "match `player_joined`, `player_left`, `match_cancelled`; `invited`, "
            "`rematch_offered`), each once, in "
            "version order per match. `after`: resume after that event number (a `FeedReset` "
            "first when it is older than the feed keeps). Authenticate in connection_init "
            "with the player token or the app's JWT."
        )
        async def player_events(
            self, info: Info, after: int | None = None
        ) -> AsyncGenerator[update, None]:  # type: ignore[valid-type]
            ctx = info.context
            try:
                if ctx.players is None:
                    raise ApiError.of("unauthorized", "Players are not served here.")
                credential = ctx.credentials()
                player = await ctx.players.feed_owner(credential)
                events = ctx.players.follow_feed(player, after,
                                                 ctx.players.expiry_of(credential))
                try:
                    async for event in events:
                        if isinstance(event, FeedReset):
                            yield reset_type(last=event.last)
                            continue
                        converted = convert(event)
                        if converted is not None:
                            yield converted
                finally:
                    await events.aclose()
            except Revoked as revoked:  # the player left for good: the problem, then the end
                yield failure_for(revoked.error, PLAYER_FAILURES, ctx.lang)
            except ApiError as error:
                yield failure_for(error, PLAYER_FAILURES, ctx.lang)

    return FeedSubscription
