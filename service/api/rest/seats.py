"""``POST /v1/matches/{id}/seats/{seat}/bot``: a seat handed to a bot; ``.../resign``: the
seat resigns; ``.../reclaim``: a seat a bot took over taken back (issue 18)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from service.errors import ApiError
from service.matches.models import HandSeatRequest

from ..languages import lang_of, tagged
from .http import read_body, service_of, token_of


async def hand_seat_to_bot(request: Request) -> Response:
    """The seat's player leaves; a bot (played by the worker) takes the seat over."""
    match_id = request.path_params["match_id"]
    token = await token_of(request)
    if token is None:
        raise ApiError.of("unauthorized", "Handing a seat over needs its token.")
    try:
        seat = int(request.path_params["seat"])
    except ValueError:
        raise ApiError.of("not_found", "No such seat.") from None
    service = service_of(request)
    await service.seated(match_id, token)  # the token checked before the body is parsed
    body = await read_body(request, HandSeatRequest)
    state = await service.hand_seat_to_bot(match_id, token, body.kind, seat)
    headers = {"ETag": tagged(str(state.version), lang_of(request)), "Cache-Control": "no-store"}
    return JSONResponse(state.to_json(), headers=headers)


def _seat(request: Request) -> int:
    try:
        return int(request.path_params["seat"])
    except ValueError:
        raise ApiError.of("not_found", "No such seat.") from None


async def resign_seat(request: Request) -> Response:
    """The seat resigns: it is out (ranked last), a random bot plays it on. No body (or
    ``{}``)."""
    match_id = request.path_params["match_id"]
    # No credential: the service's 401 (it words what resigning needs).
    state = await service_of(request).resign(match_id, await token_of(request), _seat(request))
    headers = {"ETag": tagged(str(state.version), lang_of(request)), "Cache-Control": "no-store"}
    return JSONResponse(state.to_json(), headers=headers)


async def reclaim_seat(request: Request) -> Response:
    """A seat a bot took over, taken back by who held it. No body."""
    match_id = request.path_params["match_id"]
    answer = await service_of(request).reclaim_seat(match_id, await token_of(request),
                                                    _seat(request))
    headers = {"ETag": tagged(str(answer.state.version), lang_of(request)),
               "Cache-Control": "no-store"}
    return JSONResponse(answer.to_json(), headers=headers)
