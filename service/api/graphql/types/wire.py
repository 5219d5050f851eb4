"""The GraphQL types of the service layer's wire models, generated once (``convert.py``).

The pydantic models REST answers with (``service.matches.models``, ``service.players.models``,
``service.webhooks.models``) are the single source of these types and their descriptions; the
``SHAPES`` below say only what a model cannot: the GraphQL names published before the types
were generated, which strings are ``ID``s, and the few fields GraphQL shapes differently.
These types do not depend on the hosted games, so they are made once, at import; each
schema's converter reuses them (``Converter(base=WIRE)``).
"""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.scalars import JSON

from service.matches import models as matches
from service.matches.board import BoardPicture
from service.players import models as players
from service.webhooks import models as webhooks

from ..convert import Codec, Converter, Shape


@strawberry.type(description="One app-defined label of a match (GraphQL has no maps).")
class Label:
    """Hand-written: the wire's labels are a JSON object, which GraphQL cannot type."""

    key: str
    value: str


def labels_of(labels: dict[str, str]) -> list[Label]:
    """A match's labels as a list, sorted by key (the same labels, the same list)."""
    return [Label(key=key, value=labels[key]) for key in sorted(labels)]


LABELS = Codec(list[Label], labels_of)
STRING = Codec(str, lambda value: value)
"""A ``Literal`` published as an open list (a ``String``) rather than as an enum."""

SEAT_STATUS = players.MyMatch.model_fields["seat_status"].annotation
"""The ``Literal`` of a seat's status (``service.matches.records.SeatStatus``)."""

MATCH_STATUS_VALUES = matches.MatchState.model_fields["status"].annotation
"""The ``Literal`` of a match's status."""

SHAPES: dict[Any, Shape] = {
    matches.Visibility: Shape(name="Visibility", description=matches.VISIBILITY_DESCRIPTION),
    matches.BotKind: Shape(name="BotKind", description="A built-in computer player."),
    SEAT_STATUS: Shape(
        name="SeatStatus", description=players.SEAT_STATUS_DESCRIPTION, upper_case=True
    ),
    players.PlayerOut: Shape(
        name="Player", description="A player: its id, display name and app.", ids=("id",)
    ),
    players.PlayerCreated: Shape(description="A new guest player and its secret token.",
                                 ids=("id",)),
    players.DeletedPlayer: Shape(name="PlayerDeleted", description="A player who left for good.",
                                 ids=("id",)),
    players.MyMatch: Shape(
        description="One of the player's matches.", ids=("match_id",),
        fields={"status": STRING, "labels": LABELS},
        notes={"created_at": "RFC 3339, UTC.", "labels": "The match's labels, sorted by key."},
    ),
    players.MyMatchesPage: Shape(description="A page of the player's matches."),
    matches.SeatToken: Shape(description="The secret token of one human seat. Shown only once."),
    matches.StreamTicket: Shape(),
    matches.SeatClockState: Shape(name="SeatClock"),
    matches.CorrespondenceSettings: Shape(
        name="CorrespondenceTimeControl", input_name="CorrespondenceInput",
        description="A deadline per move.",
    ),
    matches.LiveSettings: Shape(
        name="LiveTimeControl", input_name="LiveInput",
        description="A chess-style clock per seat.",
    ),
    MATCH_STATUS_VALUES: Shape(
        name="MatchStatus",
        description="`waiting`: open seats, no game yet; `active`: being played; `finished`; "
        "`cancelled`: it never started. More may be added: treat an unknown one as not "
        "playable.",
    ),
    matches.GameInfo: Shape(
        name="Game", description="A game this build hosts.",
        fields={"options_schema": Codec(JSON, lambda schema: schema)},
    ),
    matches.CreateMatchResponse: Shape(
        name="MatchCreated", description="A new match and one token per human seat.",
        ids=("match_id",),
    ),

    BoardPicture: Shape(
        name="BoardSvg", description="A board picture (SVG) of one version.",
        ids=("match_id",), notes={"version": "The match version drawn.",
                                  "svg": "The SVG document (image/svg+xml)."},
    ),

    webhooks.Webhook: Shape(ids=("id",), notes={"created_at": "RFC 3339, UTC."}),
    webhooks.WebhookList: Shape(description="The app's webhook endpoints, oldest first."),
    webhooks.WebhookSecret: Shape(
        description="An endpoint's new signing secret (shown once).", ids=("id",)
    ),
    webhooks.PingQueued: Shape(description="A queued ping.", ids=("webhook_id",)),
    webhooks.DeliveriesPage: Shape(
        name="WebhookDeliveriesPage",
        description="A page of an endpoint's delivery log, newest first.",
    ),
}

WIRE = Converter(shapes=SHAPES)

SEAT_HOLDER = WIRE.output(matches.SeatHolder)
SEAT_TOKEN = WIRE.output(matches.SeatToken)
PLAYER = WIRE.output(players.PlayerOut)
PLAYER_CREATED = WIRE.output(players.PlayerCreated)
PLAYER_DELETED = WIRE.output(players.DeletedPlayer)
MY_MATCHES_PAGE = WIRE.output(players.MyMatchesPage)
STREAM_TICKET = WIRE.output(matches.StreamTicket)
MATCH_CLOCK = WIRE.output(matches.MatchClock)
VISIBILITY = WIRE.output(matches.Visibility)
MATCH_STATUS = WIRE.output(MATCH_STATUS_VALUES)
GAME = WIRE.output(matches.GameInfo)
MATCH_CREATED = WIRE.output(matches.CreateMatchResponse)
CORRESPONDENCE = WIRE.output(matches.CorrespondenceSettings)
LIVE = WIRE.output(matches.LiveSettings)
CORRESPONDENCE_INPUT = WIRE.input(matches.CorrespondenceSettings)
LIVE_INPUT = WIRE.input(matches.LiveSettings)
BOT_KIND = WIRE.output(matches.BotKind)
WEBHOOK = WIRE.output(webhooks.Webhook)
WEBHOOK_LIST = WIRE.output(webhooks.WebhookList)
WEBHOOK_SECRET = WIRE.output(webhooks.WebhookSecret)
PING_QUEUED = WIRE.output(webhooks.PingQueued)
WEBHOOK_DELIVERIES = WIRE.output(webhooks.DeliveriesPage)
PICTURE = WIRE.output(BoardPicture)
