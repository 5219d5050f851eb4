"""Players: guests (``createPlayer``), the caller itself (``getMe``, ``deleteMe``), its
matches (``listMyMatches``), its event feed (``streamPlayerEvents``: its own handler) and
the feed's tickets (``createFeedTicket``), and an app's server-to-server view of its users
(``listAppPlayerMatches``, ``getAppPlayer``, ``deleteAppPlayer``)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from service.errors import ApiError
from service.matches.models import MAX_SEED, StreamTicket
from service.players.models import (
    MY_MATCHES_DEFAULT,
    MY_MATCHES_MAX,
    CreatePlayerRequest,
    DeletedPlayer,
    MyMatchesPage,
    PlayerCreated,
    PlayerOut,
)

from ..rest.feed import player_events
from ..rest.http import query_count, query_once
from . import codes
from .base import (
    APP_SECURITY,
    NO_STORE,
    PLAYER_SECURITY,
    PRIVATE,
    PUBLIC,
    UNCHARGED,
    Context,
    GraphQL,
    Operation,
    Param,
    Reply,
    mutation,
    query,
    rest_only,
)
from .tables import CREATE_MATCH

LIST_MY_MATCHES = "listMyMatches"
"""Linked to from ``createMatch``."""


def turn_param(request: Request, name: str) -> bool:
    """``turn=mine``: only the matches where the player's seat may act now."""
    turn = query_once(request, name)
    if turn not in (None, "mine"):
        raise ApiError.of("malformed", "turn must be mine.")
    return turn == "mine"


def player_param(request: Request, name: str) -> str:
    player = query_once(request, name)
    if not player:
        raise ApiError.of("malformed", "Name the player: ?player=<player id>.")
    return player


PAGE_PARAMS = (
    Param("status", "query",
          {"type": "string", "enum": ["waiting", "active", "finished", "cancelled"]},
          "Only the matches of this status (`waiting`: open seats; `cancelled`: never "
          "started).", parse=query_once),
    Param("turn", "query", {"type": "string", "enum": ["mine"]},
          "`mine`: only matches where the player's seat may act now.", parse=turn_param),
    Param("cursor", "query", {"type": "string", "maxLength": 200},
          "`nextCursor` of the previous page.", parse=query_once),
    Param("limit", "query", {"type": "integer", "minimum": 1, "maximum": MY_MATCHES_MAX,
                             "default": MY_MATCHES_DEFAULT},
          "The most items in the page.", parse=query_count),
)
"""A page of a player's matches."""
SUB = Param("sub", "path", {"type": "string", "minLength": 1, "maxLength": 255},
            "The app's own user id (the `sub` of its JWTs).")


def _page(context: Context) -> dict[str, Any]:
    query = context.query
    return {"status": query["status"], "mine": query["turn"], "cursor": query["cursor"],
            "limit": query["limit"]}


async def delete_me(context: Context) -> Any:
    return await context.state.player_service.delete_me(context.caller)


async def delete_app_player(context: Context) -> Any:
    return await context.state.player_service.delete_app_player(context.caller,
                                                                 context.path["sub"])


FEED_DESCRIPTION = (
    "One connection for all the player's matches. Each event: `id: <seq>` (the feed's "
    "number), `event: <kind>` (`your_turn` when one of the player's seats becomes active, "
    "`match_started`, `match_finished` with the result, `seat_changed`, `timed_out` when a "
    "seat's time ran out; an open list: ignore kinds you do not know), `data: <JSON>` "
    "(`PlayerFeedEvent`). Events come in version order per match, each once, even when a "
    "replica dies. Resume with `Last-Event-ID` (or `?after=`): the feed keeps at least the "
    "last 1,000 events or 7 days; from further back, or from an id it never gave, the "
    "stream starts with `event: reset` (`data: {\"kind\": \"reset\", \"last\": <seq>}`): "
    "re-read `listMyMatches`, then carry on. Without either, the stream starts with what "
    "comes next. Browsers pass a feed ticket (`createFeedTicket`) as `?ticket=` instead of "
    "the credential."
)

FILTERS = "its `status` filter is a GraphQL enum of its own (`MatchStatusFilter`)"
PLAYER_UNION = ("forbidden", "player_not_found")
"""The player fields' unions list ``Forbidden`` and ``NotFound`` (``PLAYER_FAILURES``)."""

GUEST_CHARGES = (
    "charged to `create` and the address's `guests` budget once its arguments are "
    "checked; its union lists BadRequest and Unavailable only"
)


OPERATIONS = (
    Operation(
        id="createPlayer", method="POST", path="/v1/players", tag="players",
        summary="A guest player: a name, a token.",
        description="Returns the player's secret token (`skp_…`), shown only once: the "
        "`playerToken` credential. `appId` names the app the guest plays in (omitted: the "
        "default app); an app that takes no guests answers 403 `guests_disabled`.",
        codes=(*codes.BODY, "bad_name", "unknown_app", "guests_disabled", "busy",
               "store_unavailable", "store_full"),
        budget="create", security=PUBLIC,
        graphql=mutation(hand_written=GUEST_CHARGES), body=CreatePlayerRequest,
        status=201,
        reply=Reply(PlayerCreated, "Created.", links={
            "GetMe": {"operationId": "getMe"},
            "ListMyMatches": {"operationId": LIST_MY_MATCHES},
            "SeatThePlayer": {
                "operationId": CREATE_MATCH,
                "description": "A New York 1901 match with the player in seat 0 (authorized "
                "by the player's own token) and a bot in seat 1.",
                "requestBody": {"game": "ny1901",
                                "seats": [{"player": "$response.body#/id"},
                                          {"bot": "random"}]},
            }}),
        call=lambda c: c.state.player_service.create_guest(c.body), headers=NO_STORE,
    ),
    Operation(
        id="getMe", method="GET", path="/v1/me", tag="players",
        summary="The calling player.", codes=codes.PLAYER, budget="read",
        security=PLAYER_SECURITY,
        graphql=query("me", description="The calling player (needs a player token or an "
                      "app's JWT).", result_description="The calling player.",
                      also=PLAYER_UNION),
        reply=Reply(PlayerOut, "The player."),
        call=lambda c: c.state.player_service.me(c.caller),
        headers=PRIVATE,
    ),
    Operation(
        id="deleteMe", method="DELETE", path="/v1/me", tag="players",
        summary="A guest leaves for good.",
        description="Revokes the player's token and gives it a neutral name everywhere, in "
        "every match it sits in (each a version of its own, a `seat_renamed` log entry); the "
        "matches keep their moves. An app's user is deleted by its app (403 `forbidden` "
        "here).",
        codes=(*codes.PLAYER, "forbidden"), budget="act", security=PLAYER_SECURITY,
        graphql=mutation(hand_written=UNCHARGED),
        reply=Reply(DeletedPlayer, "Deleted."), call=delete_me,
        headers=NO_STORE,
    ),
    Operation(
        id=LIST_MY_MATCHES, method="GET", path="/v1/me/matches", tag="players",
        summary="The calling player's matches.",
        description="Newest created first, a page at a time: follow `nextCursor` until it is "
        "null.",
        codes=(*codes.PLAYER, "malformed"), budget="read", security=PLAYER_SECURITY,
        graphql=query("myMatches", hand_written=FILTERS), params=PAGE_PARAMS,
        reply=Reply(MyMatchesPage, "A page."),
        call=lambda c: c.state.player_service.my_matches(c.caller, **_page(c)),
        headers=PRIVATE,
    ),
    Operation(
        id="streamPlayerEvents", method="GET", path="/v1/me/events", tag="players",
        summary="Server-Sent Events: everything that concerns the player, across all its "
        "matches.",
        description=FEED_DESCRIPTION,
        codes=(*codes.PLAYER, "malformed", "ticket_invalid", "too_many_streams",
               "replica_full"),
        budget="stream", security=PLAYER_SECURITY,
        graphql=GraphQL("subscription", "playerEvents"),
        params=(
            Param("after", "query", {"type": "integer", "minimum": 0, "maximum": MAX_SEED}),
            Param("Last-Event-ID", "header", {"type": "string", "pattern": r"^[0-9]{0,15}$"}),
            Param("ticket", "query", {"type": "string", "maxLength": 256},
                  "A feed ticket (`createFeedTicket`) instead of the player's credential, "
                  "for clients that cannot send it (EventSource). Not with the credential as "
                  "well (400 `malformed`)."),
        ),
        reply=Reply(None, "An event stream; its schema is that of one event.",
                    content={"text/event-stream": {"schema": {
                        "$ref": "#/components/schemas/PlayerStreamEvent"}}}),
        handler=player_events,
    ),
    Operation(
        id="createFeedTicket", method="POST", path="/v1/me/stream-tickets", tag="players",
        summary="A short-lived ticket to open the player's event feed.",
        description="For a browser's EventSource, which cannot send the player's credential: "
        "open `streamPlayerEvents` with `?ticket=<ticket>`. A ticket names the player, works "
        "until `expiresAt` (a minute by default) and dies with the player. Fetch one per "
        "(re)connection. No body.",
        codes=codes.PLAYER, budget="act", security=PLAYER_SECURITY,
        graphql=rest_only("only an EventSource needs it: GraphQL subscriptions carry the "
                          "credential in connection_init"),
        reply=Reply(StreamTicket, "The ticket."),
        call=lambda c: c.state.player_service.issue_feed_ticket(c.caller),
        headers=NO_STORE,
    ),
    Operation(
        id="listAppPlayerMatches", method="GET", path="/v1/apps/me/matches", tag="apps",
        summary="One of the app's players' matches (server to server).",
        codes=(*codes.APP, "malformed", "player_not_found"), budget="read",
        security=APP_SECURITY, graphql=query("appPlayerMatches", hand_written=FILTERS),
        params=(Param("player", "query", {"type": "string", "minLength": 1, "maxLength": 64},
                      "The player's id.", required=True, parse=player_param),
                *PAGE_PARAMS),
        reply=Reply(MyMatchesPage, "A page."),
        call=lambda c: c.state.player_service.app_matches(c.caller, c.query["player"], **_page(c)),
        headers=PRIVATE,
    ),
    Operation(
        id="getAppPlayer", method="GET", path="/v1/apps/me/players/{sub}", tag="apps",
        summary="The player of one of the app's users, by its user id.",
        description="404 `player_not_found` for a user that never signed in (nor was seated) "
        "and for one of another app alike.",
        codes=(*codes.APP, "player_not_found"), budget="read", security=APP_SECURITY,
        graphql=query("appPlayer", description="The player of one of the app's users, by "
                      "its user id (needs the app's key).", result="MeResult",
                      result_description="The calling player.", args={"sub": "user"},
                      strings=("sub",), also=PLAYER_UNION),
        params=(SUB,), reply=Reply(PlayerOut, "The player."),
        call=lambda c: c.state.player_service.app_player(c.caller, c.path["sub"]), headers=PRIVATE,
    ),
    Operation(
        id="deleteAppPlayer", method="DELETE", path="/v1/apps/me/players/{sub}", tag="apps",
        summary="One of the app's users leaves for good.",
        description="Like `deleteMe`: its JWTs are refused from now on "
        "(`credential_revoked`) and its name becomes a neutral one everywhere.",
        codes=(*codes.APP, "player_not_found"), budget="act", security=APP_SECURITY,
        graphql=mutation(hand_written=UNCHARGED),
        params=(SUB,), reply=Reply(DeletedPlayer, "Deleted."),
        call=delete_app_player, headers=NO_STORE,
    ),
)
