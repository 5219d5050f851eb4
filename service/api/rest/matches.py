"""Matches: create one, read the caller's view, its legal moves and the log."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from service.matches.models import LOG_PAGE_MAX, CreateMatchRequest

from ..languages import lang_of, none_match, tagged
from ..rate_limits import creation_quota, limits_of
from .http import PRIVATE, query_count, read_body, service_of, token_of


async def create_match(request: Request) -> Response:
    body = await read_body(request, CreateMatchRequest)
    caller = await token_of(request)
    quota = creation_quota(limits_of(request.app), caller, request.scope)
    tables = request.app.state.table_service
    created = await tables.create_match(caller, body, before_write=quota)
    location = f"/v1/matches/{created.match_id}"
    headers = {"Location": location, "Cache-Control": "no-store"}
    return JSONResponse(created.to_json(), status_code=201, headers=headers)


async def get_match(request: Request) -> Response:
    match_id = request.path_params["match_id"]
    state = await service_of(request).get_state(match_id, await token_of(request))
    # The version, and the language (docs/decisions.md, "ETags and languages").
    tag = tagged(str(state.version), lang_of(request))
    headers = {"ETag": tag, **PRIVATE}
    if none_match(request.headers.get("if-none-match"), tag):
        return Response(status_code=304, headers=headers)
    return JSONResponse(state.to_json(), headers=headers)


async def legal_moves(request: Request) -> Response:
    match_id = request.path_params["match_id"]
    lang = lang_of(request)
    moves = await service_of(request).legal_moves(match_id, await token_of(request), lang)
    tag = tagged(str(moves.version), lang)
    headers = {"ETag": tag, **PRIVATE}
    if none_match(request.headers.get("if-none-match"), tag):
        return Response(status_code=304, headers=headers)
    return JSONResponse(moves.to_json(), headers=headers)


async def match_log(request: Request) -> Response:
    match_id = request.path_params["match_id"]
    after = query_count(request, "after") or 0
    limit = query_count(request, "limit")
    page = await service_of(request).log(
        match_id, await token_of(request), after, lang_of(request),
        limit=LOG_PAGE_MAX if limit is None else limit,
    )
    return JSONResponse(page.to_json(), headers=PRIVATE)
