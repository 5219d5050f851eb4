"""Subscription ``playerEvents``: the player's event feed (REST's ``GET /v1/me/events``), one
typed member per kind, in the same order and with the same numbers (``seq``). The event types
are generated from the feed's models (``service.players.models``)."""

import json
from collections.abc import AsyncGenerator
from dataclasses import replace
from typing import Any

import strawberry
from pydantic import BaseModel

from service.errors import ApiError
from service.matches.watch import Revoked
from service.players import models
from service.players.feed import FeedItem, FeedReset

from .context import Info
from .convert import Codec, Converter, Shape
from .results import PLAYER_FAILURES, result_union
from .types.failures import failure_for
from .types.wire import STRING, WIRE

_EVENT = Shape(ids=("match_id",), omit=("kind",), implements=(models.FeedEventBase,))
WIRE.shape(models.FeedEventBase, Shape(
    name="PlayerEvent", description="An event of the player feed.", interface=True,
    ids=("match_id",),
))
WIRE.shape(models.RematchOfferedEvent, replace(_EVENT, ids=("match_id", "rematch_of")))
WIRE.shape(models.InvitedEvent, Shape(
    ids=("match_id", "invitation_id"), omit=("kind",), renamed={"seat": "invited_seat"},
    notes={"seat": "The seat the invitation is to; null: any open one (REST's `seat`: named "
           "apart from PlayerEvent's `seat`, which is the player's own and never null)."},
))
WIRE.shape(models.FeedResetEvent, Shape(omit=("kind",)))
_KINDS: dict[str, type[BaseModel]] = {
    "your_turn": models.YourTurnEvent, "match_started": models.MatchStartedEvent,
    "seat_changed": models.SeatChangedEvent, "timed_out": models.TimedOutEvent,
    "timeout_soon": models.TimeoutSoonEvent, "player_joined": models.PlayerJoinedEvent,
    "player_left": models.PlayerLeftEvent, "match_cancelled": models.MatchCancelledEvent,
    "rematch_offered": models.RematchOfferedEvent, "invited": models.InvitedEvent,
}
# ``change`` and ``policy`` are open lists: a ``String``, not an enum.
WIRE.shape(models.SeatChangedEvent, replace(_EVENT, fields={"change": STRING}))
WIRE.shape(models.TimedOutEvent, replace(_EVENT, fields={"policy": STRING}))
for _model in _KINDS.values():
    if _model not in (models.RematchOfferedEvent, models.InvitedEvent,
                      models.SeatChangedEvent, models.TimedOutEvent):
        WIRE.shape(_model, _EVENT)
_CODECS: dict[str, Codec] = {kind: WIRE.output(model) for kind, model in _KINDS.items()}
FEED_RESET = WIRE.output(models.FeedResetEvent)


def build_feed_subscription(converter: Converter) -> Any:
    """``playerEvents``; built per schema (``converter``: the schema's), as
    ``MatchFinishedEvent.result`` is the schema's ``Result``."""
    converter.shape(models.MatchFinishedEvent, _EVENT)
    codecs = {**_CODECS, "match_finished": converter.output(models.MatchFinishedEvent)}
    update = result_union(
        "PlayerEventUpdate", codecs["your_turn"].annotation, (
            *(codecs[kind].annotation for kind in (
                "match_started", "match_finished", "seat_changed", "timed_out",
                "timeout_soon", "player_joined", "player_left", "match_cancelled", "invited",
                "rematch_offered")),
            FEED_RESET.annotation, *PLAYER_FAILURES),
        "A feed event, or why the stream ended.",
    )
    models_by_kind: dict[str, type[BaseModel]] = {
        **_KINDS, "match_finished": models.MatchFinishedEvent}

    def convert(item: FeedItem) -> object:
        raw = json.loads(item.data)
        model = models_by_kind.get(raw["kind"])
        if model is None:
            return None  # a kind this build does not know: skipped
        return codecs[raw["kind"]].convert(model.model_validate({**raw, "seq": item.seq}))

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
                            yield FEED_RESET.convert(models.FeedResetEvent(last=event.last))
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
