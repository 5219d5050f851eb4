"""The lobby's tables (``service.tables.service.TableService``): a match created
(``createMatch``), its open seats taken and left (``joinMatch``, ``leaveMatch``), started
or cancelled by its creator (``startMatch``, ``cancelMatch``), played again
(``rematchMatch``); the lobby of waiting public matches (``listLobby``) and the live ones
(``listMatches``)."""

from __future__ import annotations

import re
from typing import Any

from starlette.requests import Request

from service.errors import ApiError
from service.matches.models import (
    CreateMatchRequest,
    CreateMatchResponse,
    InputModel,
    MatchState,
)
from service.tables.models import (
    LIST_DEFAULT,
    LIST_MAX,
    JoinRequest,
    LivePage,
    LobbyPage,
    StartRequest,
)

from ..rate_limits import creation_quota, limits_of
from ..rest.http import query_count, query_once
from . import codes
from .base import (
    APP_SECURITY,
    CREATE_SECURITY,
    MATCH_ID,
    NO_STORE,
    PLAYER_SECURITY,
    PRIVATE,
    Call,
    Context,
    Operation,
    Param,
    Reply,
    Security,
    mutation,
    query,
)
from .matches import (
    ACT,
    GET_LEGAL_MOVES,
    GET_LOG,
    GET_MATCH,
    STREAM_EVENTS,
    links_same_match,
)

CREATE_MATCH = "createMatch"
"""Linked to from ``createPlayer``."""
GAME_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
OWNER = [*PLAYER_SECURITY, *APP_SECURITY]
"""The match's creator: a player, or the app whose key created it."""


def game_param(request: Request, name: str) -> str | None:
    game = query_once(request, name)
    if game is not None and GAME_ID.fullmatch(game) is None:
        raise ApiError.of("malformed", "game must be a game id.")
    return game


def players_param(request: Request, name: str) -> int | None:
    players = query_count(request, name)
    if players is not None and not 1 <= players <= 16:
        raise ApiError.of("malformed", "players must be 1 to 16.")
    return players


def live_only(request: Request, name: str) -> None:
    """``status=active&visibility=public``: the one list of matches served here."""
    if query_once(request, "status") != "active" or query_once(request, "visibility") != \
            "public":
        raise ApiError.of(
            "malformed", "Only the live public matches are listed: give status=active and "
            "visibility=public (a player's own matches: GET /v1/me/matches).",
        )


LIST_PARAMS = (
    Param("game", "query", {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"},
          "Only matches of this game (a game id; an unknown one lists nothing).",
          parse=game_param),
    Param("players", "query", {"type": "integer", "minimum": 1, "maximum": 16},
          "Only matches of this many seats.", parse=players_param),
    Param("cursor", "query", {"type": "string", "maxLength": 200},
          "`nextCursor` of the previous page.", parse=query_once),
    Param("limit", "query", {"type": "integer", "minimum": 1, "maximum": LIST_MAX,
                             "default": LIST_DEFAULT},
          "The most items in the page.", parse=query_count),
)
"""Filters and paging of the lobby and the live list."""


def _filters(context: Context) -> dict[str, Any]:
    return {name: context.query[name] for name in ("game", "players", "cursor", "limit")}


async def create_match(context: Context) -> Any:
    """A match, counted against its creator's quotas before it is written."""
    request = context.request
    quota = creation_quota(limits_of(request.app), context.caller, request.scope)
    return await context.state.table_service.create_match(context.caller, context.body,
                                                          before_write=quota)


async def join_match(context: Context) -> Any:
    return await context.state.table_service.join(context.caller, context.path["match_id"],
                                                   context.body)


async def leave_match(context: Context) -> Any:
    return await context.state.table_service.leave(context.caller, context.path["match_id"])


async def start_match(context: Context) -> Any:
    return await context.state.table_service.start(context.caller, context.path["match_id"],
                                                    context.body)


async def cancel_match(context: Context) -> Any:
    return await context.state.table_service.cancel(context.caller,
                                                     context.path["match_id"])


async def rematch_match(context: Context) -> Any:
    return await context.state.rematch.rematch(context.caller, context.path["match_id"])


def _links_from_create() -> dict[str, Any]:
    """Where a new match leads (a function: ``players`` is declared after this module)."""
    from .players import LIST_MY_MATCHES

    # The seat token is a credential (a security scheme), not a parameter a link could
    # carry: clients and the stateful tests bring the token of the created match themselves.
    params = {"path.matchId": "$response.body#/matchId"}
    links: dict[str, Any] = {
        name: {"operationId": op, "parameters": params}
        for name, op in [
            ("GetMatch", GET_MATCH), ("GetLegalMoves", GET_LEGAL_MOVES),
            ("Act", ACT), ("GetLog", GET_LOG), ("StreamEvents", STREAM_EVENTS),
        ]
    }
    # A match seating the caller (a player) is in its "my matches" from now on.
    links["ListMyMatches"] = {"operationId": LIST_MY_MATCHES}
    # A match created with open seats waits for players: they join it, its creator may
    # start it early or cancel it.
    for name, op in [("JoinMatch", "joinMatch"), ("StartMatch", "startMatch"),
                     ("CancelMatch", "cancelMatch")]:
        links[name] = {"operationId": op, "parameters": params}
    return links


LISTS = ("its entries carry typed `MatchOptions`; its `limit` is published optional "
         "(`Int = null`), REST's has a default")
TABLE_RESULT = "TableResult"
"""The GraphQL union of the changes to a table (shared with ``acceptInvitation``)."""


def _table_change(id: str, action: str, summary: str, description: str,
                  codes: tuple[str, ...], call: Call, text: str, *,
                  body: type[InputModel] | None = None,
                  security: Security = PLAYER_SECURITY, graphql: str | None = None
                  ) -> Operation:
    """``POST /v1/matches/{matchId}/<action>``: a change to a waiting (or finished) match,
    answered with the match after it, as the caller sees it; ``text``: the GraphQL field's
    description."""
    return Operation(
        id=id, method="POST", path=f"/v1/matches/{{matchId}}/{action}",
        tag="lobby", summary=summary, description=description, codes=codes, budget="act",
        security=security, graphql=mutation(graphql, description=text, result=TABLE_RESULT),
        params=(MATCH_ID,), body=body, body_required=False,
        reply=Reply(MatchState, "The match after the change, as the caller sees it.",
                    links=links_same_match(GET_MATCH, GET_LEGAL_MOVES, ACT, STREAM_EVENTS)),
        call=call, headers=NO_STORE,
    )


CREATE_MATCH_ARGS = (
    "typed `gameOptions`, the untyped `options` it deprecates, seats and time "
    "controls as input types, the `create` charge and the creation quota"
)


OPERATIONS = (
    Operation(
        id=CREATE_MATCH, method="POST", path="/v1/matches", tag="matches",
        summary="Create a match.",
        description="Returns one secret bearer token per anonymous human seat, shown only "
        "once (the `seatToken` credential of the other operations). With `seats`, send "
        "`Authorization: Bearer` with the app's key (`appKey`: it seats any of its players "
        "and users) or a player credential (`playerToken`, `playerJwt`: the player itself, "
        "and bots); those seats get no token: the player's own credential acts for them. "
        "Without `seats` no credential is needed.",
        codes=(*codes.BODY, *codes.CREDENTIALS, "unknown_game", "bad_player_count",
               "bad_options", "bad_bots", "player_not_found", "quota_exceeded",
               "seed_not_allowed", "bad_time_control", "bad_timeout_policy",
               "too_many_waiting_tables"),
        budget="create", security=CREATE_SECURITY, graphql=mutation(hand_written=CREATE_MATCH_ARGS),
        body=CreateMatchRequest, status=201,
        reply=Reply(CreateMatchResponse, "Created.", headers={
            "Location": {"description": "The match URL.", "required": True,
                         "schema": {"type": "string"}}}, links=_links_from_create),
        call=create_match, order=("body", "credential"), headers=NO_STORE,
        location=lambda created: f"/v1/matches/{created.match_id}",
    ),
    Operation(
        id="listMatches", method="GET", path="/v1/matches", tag="lobby",
        summary="Live public matches of the caller's app, to spectate.",
        description="Only `status=active&visibility=public` is listed (a player's own "
        "matches: GET /v1/me/matches). Newest first; finished ones drop out.",
        codes=(*codes.CREDENTIALS, "malformed"), budget="read", security=OWNER,
        graphql=query("liveMatches", hand_written=LISTS),
        params=(Param("status", "query", {"type": "string", "enum": ["active"]}, "`active`.",
                      required=True, parse=live_only),
                Param("visibility", "query", {"type": "string", "enum": ["public"]},
                      "`public`.", required=True),
                *LIST_PARAMS),
        reply=Reply(LivePage, "A page of live matches.", links={
            "GetMatch": {"operationId": GET_MATCH,
                         "parameters": {"path.matchId": "$response.body#/items/0/matchId"}}}),
        call=lambda c: c.state.table_service.live(c.caller, **_filters(c)), headers=PRIVATE,
    ),
    Operation(
        id="listLobby", method="GET", path="/v1/lobby", tag="lobby",
        summary="Waiting public matches of the caller's app.",
        description="Newest first, filtered by game and seat count; each entry shows who "
        "sits where, the open seats, the options, its age and whether its seed was chosen -- "
        "never a seed or a hand. Matches that filled, started, were cancelled or expired "
        "drop out.",
        codes=(*codes.CREDENTIALS, "malformed"), budget="read", security=OWNER,
        graphql=query("lobby", hand_written=LISTS), params=LIST_PARAMS,
        reply=Reply(LobbyPage, "A page of the lobby.", links={
            "JoinMatch": {"operationId": "joinMatch",
                          "parameters": {"path.matchId": "$response.body#/items/0/matchId"}}}),
        call=lambda c: c.state.table_service.lobby(c.caller, **_filters(c)), headers=PRIVATE,
    ),
    _table_change(
        "joinMatch", "join", "Take an open seat of a waiting match.",
        "The calling player takes `seat` (omitted: the lowest open one). The join that takes "
        "the last open seat starts the match (its seed drawn, `status: active`). A version "
        "of its own in the log and on the event stream. 409 `seat_taken` (taken, or the "
        "match filled), `already_seated`, `match_started`, `match_cancelled`; a private "
        "match without an invitation: 404 as for a missing match. See docs/lobby.md.",
        (*codes.BODY, *codes.READ, "forbidden", "seat_taken", "already_seated",
         "match_started", "match_cancelled", "invite_not_found", "invite_expired",
         "invite_used_up", "invite_revoked"),
        join_match,
        "Take an open seat of a waiting match (`seat`; omitted: the lowest open one) as the "
        "calling player (a player token or an app's JWT). The last open seat taken starts "
        "the match (`status: active`). Refusals: Conflict (`seat_taken`, `already_seated`, "
        "`match_started`, `match_cancelled`); a private match is NotFound to outsiders. "
        "REST: POST /v1/matches/{id}/join.", body=JoinRequest),
    _table_change(
        "leaveMatch", "leave", "Leave a waiting match.",
        "The caller's seat is open again; the creator leaving cancels the match "
        "(`cancelReason: creator_left`). A started match is not left this way (409 "
        "`match_started`).",
        (*codes.READ, "forbidden", "match_started", "match_cancelled"), leave_match,
        "Leave a waiting match: the caller's seat is open again; its creator leaving cancels "
        "it (`cancelReason: creator_left`). REST: POST /v1/matches/{id}/leave."),
    _table_change(
        "startMatch", "start", "Start a waiting match now (its creator).",
        "Every open seat goes to a bot (`bot`, default greedy) and the game is set up. Only "
        "the creator (or, for a match an app key created, that key).",
        (*codes.BODY, *codes.READ, "forbidden", "match_started", "match_cancelled",
         "bad_bots"),
        start_match,
        "Start a waiting match now (its creator, or the app's key for a match an app "
        "created): a bot of `bot` takes every open seat (default `greedy`; `random` where the "
        "game has no other). REST: POST /v1/matches/{id}/start.",
        body=StartRequest, security=OWNER),
    _table_change(
        "cancelMatch", "cancel", "Cancel a waiting match (its creator).",
        "`status: cancelled`, `cancelReason: creator`; every seated player gets "
        "`match_cancelled` in its feed.",
        (*codes.READ, "forbidden", "match_started", "match_cancelled"), cancel_match,
        "Cancel a waiting match (its creator, or the app's key for a match an app created): "
        "`status: cancelled`, `cancelReason: creator`. REST: POST /v1/matches/{id}/cancel.",
        security=OWNER),
    _table_change(
        "rematchMatch", "rematch", "A finished match's rematch.",
        "A waiting match with the same game, options, visibility, name and labels; the seat "
        "order rotated (the former seat 1 moves first), bots re-seated, the caller seated, "
        "every other human seat kept for its former player (`rematch_offered` in its feed; "
        "it joins). Linked both ways (`rematchOf`, `rematch`); a second call, by anyone, "
        "answers the same rematch. 409 `match_not_finished` before the end.",
        (*codes.READ, "forbidden", "match_not_finished"), rematch_match,
        "The rematch of a finished match (a player of it, or its app's key): a waiting match "
        "with the same game, options, visibility, name and labels, the seat order rotated "
        "(the former seat 1 moves first), bots re-seated, the caller seated and every other "
        "human seat kept for its former player (`RematchOfferedEvent` in its feed; it takes "
        "the seat with joinMatch). Linked both ways (`rematchOf`, `rematch`); a second "
        "call, by anyone, answers the same rematch. Before the end: Conflict "
        "`match_not_finished`. REST: POST /v1/matches/{id}/rematch.", security=OWNER,
        graphql="rematch"),
)
