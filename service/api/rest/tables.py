"""The lobby's tables: ``POST /v1/matches/{id}/join|leave|start|cancel``, the lobby
(``GET /v1/lobby``) and the live public matches (``GET /v1/matches?status=active&
visibility=public``), all through ``service.lobby.tables.TableService``."""

from __future__ import annotations

import re
from typing import TypeVar

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from service.errors import ApiError
from service.lobby.rematch import Rematch
from service.lobby.table_models import JoinRequest, StartRequest
from service.lobby.tables import TableService
from service.matches.models import InputModel

from .http import NO_STORE, PRIVATE, query_count, query_once, read_body, token_of
from .matches import create_match

GAME_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
M = TypeVar("M", bound=InputModel)


def tables_of(request: Request) -> TableService:
    tables: TableService = request.app.state.table_service
    return tables


async def _optional_body(request: Request, model: type[M]) -> M:
    """The body as ``model``; an empty body is ``{}`` (every field optional)."""
    if not await request.body():
        return model.model_validate({})
    return await read_body(request, model)


async def join_match(request: Request) -> Response:
    caller = await token_of(request)
    body = await _optional_body(request, JoinRequest)
    state = await tables_of(request).join(caller, request.path_params["match_id"], body)
    return JSONResponse(state.to_json(), headers=NO_STORE)


async def leave_match(request: Request) -> Response:
    caller = await token_of(request)
    state = await tables_of(request).leave(caller, request.path_params["match_id"])
    return JSONResponse(state.to_json(), headers=NO_STORE)


async def start_match(request: Request) -> Response:
    caller = await token_of(request)
    body = await _optional_body(request, StartRequest)
    state = await tables_of(request).start(caller, request.path_params["match_id"], body)
    return JSONResponse(state.to_json(), headers=NO_STORE)


async def cancel_match(request: Request) -> Response:
    caller = await token_of(request)
    state = await tables_of(request).cancel(caller, request.path_params["match_id"])
    return JSONResponse(state.to_json(), headers=NO_STORE)


async def rematch_match(request: Request) -> Response:
    caller = await token_of(request)
    rematch: Rematch = request.app.state.rematch
    state = await rematch.rematch(caller, request.path_params["match_id"])
    return JSONResponse(state.to_json(), headers=NO_STORE)


def _filters(request: Request) -> dict[str, object]:
    game = query_once(request, "game")
    if game is not None and GAME_ID.fullmatch(game) is None:
        raise ApiError.of("malformed", "game must be a game id.")
    players = query_count(request, "players")
    if players is not None and not 1 <= players <= 16:
        raise ApiError.of("malformed", "players must be 1 to 16.")
    return {"game": game, "players": players, "cursor": query_once(request, "cursor"),
            "limit": query_count(request, "limit")}


async def lobby(request: Request) -> Response:
    caller = await token_of(request)
    page = await tables_of(request).lobby(caller, **_filters(request))  # type: ignore[arg-type]
    return JSONResponse(page.to_json(), headers=PRIVATE)


async def live_matches(request: Request) -> Response:
    caller = await token_of(request)
    status, visibility = query_once(request, "status"), query_once(request, "visibility")
    if status != "active" or visibility != "public":
        raise ApiError.of(
            "malformed", "Only the live public matches are listed: give status=active and "
            "visibility=public (a player's own matches: GET /v1/me/matches).",
        )
    page = await tables_of(request).live(caller, **_filters(request))  # type: ignore[arg-type]
    return JSONResponse(page.to_json(), headers=PRIVATE)


async def matches_root(request: Request) -> Response:
    """``/v1/matches``: POST creates a match, GET lists the live public ones (one route, so
    that 405 names both methods)."""
    if request.method == "GET":
        return await live_matches(request)
    return await create_match(request)
