"""The REST API (DESIGN.md, "API surface"): Starlette routes over ``MatchService``.

Each handler parses the request, calls one service method and renders the answer; every
refusal is an ``ApiError`` rendered as ``application/problem+json``. No rule is decided here.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any, TypeVar

from pydantic import BaseModel
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from .auth import bearer_token
from .errors import ApiError
from .models import ActRequest, CreateMatchRequest, HandSeatRequest, MatchState
from .service import MatchService, validate_wire

M = TypeVar("M", bound=BaseModel)

PROBLEM_JSON = "application/problem+json"
SSE_PING_SECONDS = 15
_ETAG = re.compile(r'^\s*(?:W/)?"(\d{1,18})"\s*$')


def problem_response(error: ApiError) -> JSONResponse:
    headers = {}
    retry_after = error.extra.get("retryAfter")
    if retry_after is not None:
        headers["Retry-After"] = str(retry_after)
    return JSONResponse(
        error.to_json(), status_code=error.status, headers=headers, media_type=PROBLEM_JSON
    )


def _service(request: Request) -> MatchService:
    service: MatchService = request.app.state.match_service
    return service


def _token(request: Request) -> str | None:
    return bearer_token(request.headers.get("authorization"))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


async def read_body(request: Request, model: type[M]) -> M:
    """The request body as ``model``; 415 for a non-JSON type, 400 for anything malformed."""
    content_type = request.headers.get("content-type", "application/json")
    media = content_type.split(";")[0].strip().lower()
    if media != "application/json" and not media.endswith("+json"):
        raise ApiError.of("unsupported_media_type", "Send the body as application/json.")
    raw = await request.body()
    try:
        data = json.loads(raw, parse_constant=_reject_constant)
    except (ValueError, UnicodeDecodeError) as error:
        raise ApiError.of("malformed", f"The body is not valid JSON: {error}") from None
    if not isinstance(data, dict):
        raise ApiError.of("malformed", "The body must be a JSON object.")
    value, errors = validate_wire(
        model.model_validate, lambda raw: model.model_validate_json(raw, strict=True), data
    )
    if value is None:
        first = errors[0]
        where = ".".join(first["loc"]) or "body"
        raise ApiError.of("malformed", f"{where}: {first['msg']}", errors=errors)
    return value


def _non_negative_int(value: str | None, name: str) -> int:
    if value is None or value == "":
        return 0
    if not value.isdigit() or len(value) > 18:
        raise ApiError.of("malformed", f"{name} must be a non-negative integer.")
    return int(value)


def _query_count(request: Request, name: str) -> int | None:
    """A non-negative integer query parameter given at most once; None when absent."""
    values = request.query_params.getlist(name)
    if not values:
        return None
    if len(values) > 1:
        raise ApiError.of("malformed", f"Give {name} once.")
    return _non_negative_int(values[0] or "x", name)


def parse_if_match(header: str | None) -> int | None:
    """The version pinned by ``If-Match``; None when absent or ``*``.

    An entity tag we never issue can never match: -1 (answered with 412).
    """
    if header is None or header.strip() == "*":
        return None
    for candidate in header.split(","):
        found = _ETAG.match(candidate)
        if found:
            return int(found.group(1))
    return -1


def _etag_matches(header: str | None, version: int) -> bool:
    if header is None:
        return False
    if header.strip() == "*":
        return True
    return any(
        (found := _ETAG.match(tag)) is not None and int(found.group(1)) == version
        for tag in header.split(",")
    )


def _etag(version: int) -> str:
    return f'"{version}"'


# Per-seat answers: caches must key them on the token, and revalidate.
PRIVATE = {"Vary": "Authorization", "Cache-Control": "private, no-cache"}


async def list_games(request: Request) -> Response:
    games = await _service(request).catalogue()
    return JSONResponse([g.to_json() for g in games])


async def create_match(request: Request) -> Response:
    body = await read_body(request, CreateMatchRequest)
    created = await _service(request).create_match(body)
    location = f"/v1/matches/{created.match_id}"
    headers = {"Location": location, "Cache-Control": "no-store"}
    return JSONResponse(created.to_json(), status_code=201, headers=headers)


async def get_match(request: Request) -> Response:
    match_id = request.path_params["match_id"]
    state = await _service(request).get_state(match_id, _token(request))
    headers = {"ETag": _etag(state.version), **PRIVATE}
    if _etag_matches(request.headers.get("if-none-match"), state.version):
        return Response(status_code=304, headers=headers)
    return JSONResponse(state.to_json(), headers=headers)


async def legal_moves(request: Request) -> Response:
    match_id = request.path_params["match_id"]
    moves = await _service(request).legal_moves(match_id, _token(request))
    return JSONResponse(moves.to_json(), headers={"ETag": _etag(moves.version), **PRIVATE})


async def act(request: Request) -> Response:
    match_id = request.path_params["match_id"]
    token = _token(request)
    if token is None:
        raise ApiError.of("unauthorized", "Acting needs a seat token (Authorization: Bearer).")
    body = await read_body(request, ActRequest)
    result = await _service(request).act(
        match_id,
        token,
        body.action,
        body.expected_version,
        request.headers.get("idempotency-key"),
        if_match=parse_if_match(request.headers.get("if-match")),
    )
    headers = {"ETag": _etag(result.state.version), "Cache-Control": "no-store"}
    # The hot path: pydantic's own JSON encoder gives the same bytes as JSONResponse(
    # to_json()) at a quarter of the CPU (the answer carries the caller's whole view).
    return Response(result.model_dump_json(by_alias=True), headers=headers,
                    media_type="application/json")


async def hand_seat_to_bot(request: Request) -> Response:
    """The seat's player leaves; a bot (played by the worker) takes the seat over."""
    match_id = request.path_params["match_id"]
    token = _token(request)
    if token is None:
        raise ApiError.of("unauthorized", "Handing a seat over needs its token.")
    try:
        seat = int(request.path_params["seat"])
    except ValueError:
        raise ApiError.of("not_found", "No such seat.") from None
    body = await read_body(request, HandSeatRequest)
    state = await _service(request).hand_seat_to_bot(match_id, token, body.kind, seat)
    headers = {"ETag": _etag(state.version), "Cache-Control": "no-store"}
    return JSONResponse(state.to_json(), headers=headers)


async def match_log(request: Request) -> Response:
    match_id = request.path_params["match_id"]
    after = _query_count(request, "after") or 0
    page = await _service(request).log(match_id, _token(request), after)
    return JSONResponse(page.to_json(), headers=PRIVATE)


async def match_events(request: Request) -> Response:
    """SSE: one ``state`` event per version (``id`` = version), in order, without gaps.

    Without ``after`` or ``Last-Event-ID`` the stream starts with the current state; with
    them (a reconnecting EventSource sends ``Last-Event-ID``) it replays every version after
    that one. The stream ends after the final state."""
    match_id = request.path_params["match_id"]
    token = _token(request)
    service = _service(request)
    last_event_id = request.headers.get("last-event-id")
    after: int | None = None
    if last_event_id:
        after = _non_negative_int(last_event_id, "Last-Event-ID")
    else:
        after = _query_count(request, "after")
    current = await service.get_state(match_id, token)  # 404/401 before the stream starts
    if after is not None and after > current.version:
        # An id from the future (another match, or writes lost in a store failover): start
        # afresh with the current state rather than wait for a version that may never come.
        after = None
    if current.status == "finished" and after is not None and after >= current.version:
        # Nothing will ever follow; 204 also tells an EventSource to stop reconnecting.
        return Response(status_code=204)

    def event(state: MatchState) -> ServerSentEvent:
        data = json.dumps(state.to_json(), separators=(",", ":"))
        return ServerSentEvent(data=data, event="state", id=str(state.version))

    async def stream() -> AsyncIterator[ServerSentEvent]:
        if after is None:  # a fresh subscriber starts with the current state
            yield event(current)
            if current.status == "finished":
                return
        try:
            async for state in service.watch(match_id, token, current.version if after is None
                                             else after):
                yield event(state)
                if state.status == "finished":
                    return
        except ApiError as error:
            # The store went away mid-stream (the headers are sent: no problem document
            # now). End the stream cleanly with a reconnection delay; the EventSource comes
            # back with Last-Event-ID and loses nothing (503 + Retry-After until the store
            # answers again).
            retry_after = int(error.extra.get("retryAfter") or 1)
            yield ServerSentEvent(comment=error.code, retry=retry_after * 1000)

    return EventSourceResponse(
        stream(), ping=SSE_PING_SECONDS, send_timeout=30, headers={"Cache-Control": "no-store"}
    )


async def healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


async def readyz(request: Request) -> Response:
    if await _service(request).ready():
        return JSONResponse({"status": "ready"})
    return problem_response(
        ApiError.of("store_unavailable", "The match store does not answer.", retryAfter=1)
    )


async def metrics(request: Request) -> Response:
    text = _service(request).metrics.render()
    return PlainTextResponse(text, media_type="text/plain; version=0.0.4; charset=utf-8")


async def openapi(request: Request) -> Response:
    return JSONResponse(request.app.state.openapi)


def rest_routes() -> list[Route]:
    return [
        Route("/v1/games", list_games, methods=["GET"], name="list_games"),
        Route("/v1/matches", create_match, methods=["POST"], name="create_match"),
        Route("/v1/matches/{match_id}", get_match, methods=["GET"], name="get_match"),
        Route(
            "/v1/matches/{match_id}/legal-moves", legal_moves, methods=["GET"], name="legal_moves"
        ),
        Route("/v1/matches/{match_id}/actions", act, methods=["POST"], name="act"),
        Route(
            "/v1/matches/{match_id}/seats/{seat:int}/bot", hand_seat_to_bot, methods=["POST"],
            name="hand_seat_to_bot",
        ),
        Route("/v1/matches/{match_id}/log", match_log, methods=["GET"], name="match_log"),
        Route("/v1/matches/{match_id}/events", match_events, methods=["GET"], name="events"),
        Route("/healthz", healthz, methods=["GET"], name="healthz"),
        Route("/readyz", readyz, methods=["GET"], name="readyz"),
        Route("/metrics", metrics, methods=["GET"], name="metrics"),
        Route("/openapi.json", openapi, methods=["GET"], name="openapi"),
    ]
