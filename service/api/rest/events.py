"""``GET /v1/matches/{id}/events``: Server-Sent Events, one per version."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.requests import Request
from starlette.responses import Response

from service.errors import ApiError
from service.matches.models import MatchState

from .http import non_negative_int, query_count, service_of, token_of

SSE_PING_SECONDS = 15

async def match_events(request: Request) -> Response:
    """SSE: one ``state`` event per version (``id`` = version), in order, without gaps.

    Without ``after`` or ``Last-Event-ID`` the stream starts with the current state; with
    them (a reconnecting EventSource sends ``Last-Event-ID``) it replays every version after
    that one. The stream ends after the final state, or once it has been open for the
    server's ``sse_max_seconds`` (the client reconnects with ``Last-Event-ID``)."""
    match_id = request.path_params["match_id"]
    token = token_of(request)
    service = service_of(request)
    last_event_id = request.headers.get("last-event-id")
    after = query_count(request, "after")  # validated even when Last-Event-ID wins
    if last_event_id:
        after = non_negative_int(last_event_id, "Last-Event-ID")
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

    settings = getattr(request.app.state, "settings", None)
    max_seconds: float | None = getattr(settings, "sse_max_seconds", None)
    loop = asyncio.get_running_loop()

    async def stream() -> AsyncIterator[ServerSentEvent]:
        deadline = None if max_seconds is None else loop.time() + max_seconds
        if after is None:  # a fresh subscriber starts with the current state
            yield event(current)
            if current.status == "finished":
                return
        updates = service.watch(match_id, token, current.version if after is None else after)
        try:
            async for state in _until(updates, deadline, loop):
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


async def _until(
    updates: AsyncIterator[MatchState], deadline: float | None,
    loop: asyncio.AbstractEventLoop,
) -> AsyncIterator[MatchState]:
    """``updates`` until ``deadline`` (the loop's clock; None: until they end). The watch is
    closed either way, so its store resources are released at once."""
    try:
        while True:
            remaining = None if deadline is None else deadline - loop.time()
            if remaining is not None and remaining <= 0:
                return
            try:
                state = await asyncio.wait_for(anext(updates), remaining)
            except (StopAsyncIteration, TimeoutError):
                return
            yield state
    finally:
        aclose = getattr(updates, "aclose", None)
        if aclose is not None:
            await aclose()
