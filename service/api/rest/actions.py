"""``POST /v1/matches/{id}/actions``: a move (the hot path)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from service.errors import ApiError
from service.matches.models import ActRequest

from ..languages import lang_of, tagged
from .http import parse_if_match, read_body, service_of, token_of


async def act(request: Request) -> Response:
    match_id = request.path_params["match_id"]
    lang = lang_of(request)
    token = await token_of(request)
    if token is None:
        raise ApiError.of("unauthorized", "Acting needs a seat token (Authorization: Bearer).")
    service = service_of(request)
    # The token is checked against the match before the body is read: a caller without a
    # seat here never has its body parsed (docs/security.md, "Hostile bodies").
    loaded = await service.seated(match_id, token)
    body = await read_body(request, ActRequest)
    result = await service.act(
        match_id,
        token,
        body.action,
        body.expected_version,
        request.headers.get("idempotency-key"),
        if_match=parse_if_match(request.headers.get("if-match")),
        lang=lang,
        loaded=loaded,
    )
    headers = {"ETag": tagged(str(result.state.version), lang), "Cache-Control": "no-store"}
    # The hot path: pydantic's own JSON encoder gives the same bytes as JSONResponse(
    # to_json()) at a quarter of the CPU (the answer carries the caller's whole view).
    return Response(result.model_dump_json(by_alias=True), headers=headers,
                    media_type="application/json")
