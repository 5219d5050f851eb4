"""``GET /v1/matches/{id}/events``: Server-Sent Events, one per version."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator

from starlette.requests import Request
from starlette.responses import Response

from service.errors import ApiError
from service.i18n import T
from service.identity import checked
from service.live import LiveHub, Shutdown
from service.matches.seat_tickets import ticket_seat_key
from service.matches.watch import DEFAULT_SNAPSHOT_EVERY, LiveEvent, Mode, Revoked

from ..rate_limits import stream_client
from .http import non_negative_int, query_count, service_of
from .sse import EventStream, encode
from .stream_credentials import stream_seat

SSE_PING_SECONDS = 15
SEND_TIMEOUT_SECONDS = 30
"""A stream whose client reads nothing for this long is ended."""
MAX_SNAPSHOT_EVERY = 10_000
MODES = ("full", "patch")


def _mode(request: Request) -> Mode:
    raw = request.query_params.get("mode", "full")
    if raw == "patch":
        return "patch"
    if raw == "full":
        return "full"
    raise ApiError.of("malformed", T("mode must be full or patch."))


def _snapshot_every(request: Request) -> int:
    every = query_count(request, "snapshotEvery")
    if every is None:
        return DEFAULT_SNAPSHOT_EVERY
    if not 1 <= every <= MAX_SNAPSHOT_EVERY:
        raise ApiError.of(
            "malformed", T("snapshotEvery must be from 1 to {limit}.", limit=MAX_SNAPSHOT_EVERY)
        )
    return every


async def match_events(request: Request) -> Response:
    """SSE: one event per version (``id`` = version), in order, without gaps.

    Without ``after`` or ``Last-Event-ID`` the stream starts with the current state; with
    them (a reconnecting EventSource sends ``Last-Event-ID``) it sends every version after
    that one -- or, more than the resume window behind, one ``snapshot`` of the current
    state. ``mode=patch`` sends JSON Patches between snapshots (docs/events.md). The stream
    ends after the final state, or once it has been open for the server's
    ``sse_max_seconds`` (the client reconnects with ``Last-Event-ID``), or with a ``revoked``
    event when the seat's credential stops reading it (checked at every version)."""
    match_id = request.path_params["match_id"]
    holder = checked.watch()  # what the checks below prove, for the stream cap
    token, ticket_seat = await stream_seat(request)
    service = service_of(request)
    last_event_id = request.headers.get("last-event-id")
    after = query_count(request, "after")  # validated even when Last-Event-ID wins
    if last_event_id:
        after = non_negative_int(last_event_id, "Last-Event-ID")
    mode = _mode(request)
    snapshot_every = _snapshot_every(request)
    version, finished = await service.head(match_id, token)  # 404/401 before the stream
    if after is not None and after > version:
        # An id from the future (another match, or writes lost in a store failover): start
        # afresh with the current state rather than wait for a version that may never come.
        after = None
    if finished and after is not None and after >= version:
        # Nothing will ever follow; 204 also tells an EventSource to stop reconnecting.
        return Response(status_code=204)
    seat_key = ticket_seat_key(match_id, ticket_seat) if ticket_seat is not None else None
    lease = service.hub.admit(stream_client(request.scope, token, holder, seat_key=seat_key))

    settings = getattr(request.app.state, "settings", None)
    max_seconds: float | None = getattr(settings, "sse_max_seconds", None)

    updates = service.follow(
        match_id, token=token, seat=ticket_seat, after=after, mode=mode,
        snapshot_every=snapshot_every, client=lease.client,
    )
    return EventStream(
        _encoded(updates), ping_seconds=SSE_PING_SECONDS, send_timeout=SEND_TIMEOUT_SECONDS,
        max_seconds=max_seconds, on_close=lease.release,
    )


async def _encoded(updates: AsyncGenerator[LiveEvent, None]) -> AsyncIterator[bytes]:
    """The stream's events in the wire format, and how it ends (a module-level generator:
    an open stream holds no closure)."""
    try:
        async for update in updates:
            yield encode(data=update.data, event=update.kind, id=str(update.version))
            if update.finished:
                return
    except Revoked as revoked:
        # The credential no longer reads the seat (handed to a bot, token renewed, player
        # gone): nothing of the version at hand is sent; the stream ends with the reason.
        yield encode(event="revoked", data=json.dumps({"code": revoked.error.code},
                                                     separators=(",", ":")))
    except Shutdown:
        # This replica is stopping: reconnect (elsewhere) after a jittered pause, so that a
        # rolling deploy does not bring every stream to the next replica at once.
        yield encode(comment="shutdown", retry=LiveHub.reconnect_delay_ms())
    except ApiError as error:
        # The store went away mid-stream (the headers are sent: no problem document now).
        # End the stream cleanly with a reconnection delay; the EventSource comes back with
        # Last-Event-ID and loses nothing (503 + Retry-After until the store answers again).
        retry_after = int(error.extra.get("retryAfter") or 1)
        yield encode(comment=error.code, retry=retry_after * 1000)
    finally:
        await updates.aclose()
