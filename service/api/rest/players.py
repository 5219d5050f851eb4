"""Players: guests (``POST /v1/players``), the caller itself (``/v1/me``), its matches
(``/v1/me/matches``), an app's server-to-server view of its users (``/v1/apps/me/...``) and a
seat's token renewed (``POST /v1/matches/{id}/seats/{seat}/token``)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from service.errors import ApiError
from service.players.models import CreatePlayerRequest

from .http import NO_STORE, PRIVATE, players_of, query_count, query_once, read_body, token_of


def _filters(request: Request) -> dict[str, object]:
    turn = query_once(request, "turn")
    if turn not in (None, "mine"):
        raise ApiError.of("malformed", "turn must be mine.")
    return {
        "status": query_once(request, "status"),
        "mine": turn == "mine",
        "cursor": query_once(request, "cursor"),
        "limit": query_count(request, "limit"),
    }


async def create_player(request: Request) -> Response:
    body = await read_body(request, CreatePlayerRequest)
    created = await players_of(request).create_guest(body)
    return JSONResponse(created.to_json(), status_code=201, headers=NO_STORE)


async def me(request: Request) -> Response:
    """``/v1/me``: GET the player, DELETE it (one route, so that 405 names both methods)."""
    return await (delete_me(request) if request.method == "DELETE" else get_me(request))


async def app_player(request: Request) -> Response:
    """``/v1/apps/me/players/{sub}``: GET or DELETE one of the app's users."""
    if request.method == "DELETE":
        return await delete_app_player(request)
    return await get_app_player(request)


async def get_me(request: Request) -> Response:
    me = await players_of(request).me(await token_of(request))
    return JSONResponse(me.to_json(), headers=PRIVATE)


async def delete_me(request: Request) -> Response:
    gone = await players_of(request).delete_me(await token_of(request))
    return JSONResponse(gone.to_json(), headers=NO_STORE)


async def my_matches(request: Request) -> Response:
    caller = await token_of(request)
    page = await players_of(request).my_matches(caller, **_filters(request))  # type: ignore[arg-type]
    return JSONResponse(page.to_json(), headers=PRIVATE)


async def app_matches(request: Request) -> Response:
    caller = await token_of(request)
    player = query_once(request, "player")
    if not player:
        raise ApiError.of("malformed", "Name the player: ?player=<player id>.")
    page = await players_of(request).app_matches(caller, player, **_filters(request))  # type: ignore[arg-type]
    return JSONResponse(page.to_json(), headers=PRIVATE)


async def get_app_player(request: Request) -> Response:
    caller = await token_of(request)
    found = await players_of(request).app_player(caller, request.path_params["sub"])
    return JSONResponse(found.to_json(), headers=PRIVATE)


async def delete_app_player(request: Request) -> Response:
    caller = await token_of(request)
    gone = await players_of(request).delete_app_player(caller, request.path_params["sub"])
    return JSONResponse(gone.to_json(), headers=NO_STORE)


async def renew_seat_token(request: Request) -> Response:
    caller = await token_of(request)
    seat = int(request.path_params["seat"])
    token = await players_of(request).renew_seat_token(
        caller, request.path_params["match_id"], seat)
    return JSONResponse(token.to_json(), headers=NO_STORE)
