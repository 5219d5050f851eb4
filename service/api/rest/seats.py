"""``POST /v1/matches/{id}/seats/{seat}/bot``: a seat handed to a bot."""

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
