"""``GET /v1/me/events``: the player's event feed as Server-Sent Events (``streamPlayerEvents``
in ``service.api.operations.players``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, AsyncIterator

from starlette.requests import Request
from starlette.responses import Response

from service.errors import ApiError
from service.i18n import T
from service.identity import checked
from service.identity.callers import Credential
from service.live import LiveHub, Shutdown
from service.matches.watch import Revoked
from service.players.feed import FeedItem, FeedReset

from ..rate_limits import budgets_on, stream_client
from .http import non_negative_int, players_of, query_count, service_of, token_of
from .match_stream import SEND_TIMEOUT_SECONDS, SSE_PING_SECONDS
from .sse import EventStream, encode
from .stream_credentials import TICKET_PARAM, claim_ticket


async def player_events(request: Request) -> Response:
    players = players_of(request)
    holder = checked.watch()  # what the checks below prove, for the stream cap
    tickets = request.query_params.getlist(TICKET_PARAM)
    credential: Credential = None
    if tickets:
        if "authorization" in request.headers:
            raise ApiError.of("malformed", "Send the player credential or a feed ticket, "
                              "not both.")
        if len(tickets) > 1:
            raise ApiError.of("malformed", T("Give {name} once.", name=TICKET_PARAM))
        player = await players.player_of_feed_ticket(tickets[0])
        await claim_ticket(request, tickets[0])  # single-use (limits.ticket_claims)
        expires_at = None
    else:
        credential = await token_of(request)
        player = await players.feed_owner(credential)
        expires_at = players.expiry_of(credential)
    after = query_count(request, "after")
    last_event_id = request.headers.get("last-event-id")
    if last_event_id:
        after = non_negative_int(last_event_id, "Last-Event-ID")
    hub = service_of(request).hub
    feed_key = f"player:{player}"
    own = (not budgets_on(request.scope)
           or checked.own_client(credential, holder, seat_key=feed_key) is not None)
    # A player's feed streams count as the player's own (whichever way it authenticated)
    # unless it is a guest: then as its address's.
    lease = hub.admit(LiveHub.client_key(token=feed_key) if own
                      else stream_client(request.scope, None, None))
    settings = getattr(request.app.state, "settings", None)
    max_seconds: float | None = getattr(settings, "sse_max_seconds", None)
    return EventStream(
        _encoded(players.follow_feed(player, after, expires_at), hub),
        ping_seconds=SSE_PING_SECONDS, send_timeout=SEND_TIMEOUT_SECONDS,
        max_seconds=max_seconds, on_close=lease.release,
    )


async def _until_stopping(
    events: AsyncGenerator[FeedItem | FeedReset, None], hub: LiveHub
) -> AsyncIterator[FeedItem | FeedReset]:
    """``events`` until the replica stops (then ``Shutdown``), like the match streams. Each
    step runs as a task of its own, so it is cancelled and awaited here on any exit (the
    stream's deadline cancels the request): ``events`` is never left running."""
    stopping = asyncio.ensure_future(hub.stopped())
    step: asyncio.Future[FeedItem | FeedReset] | None = None
    try:
        while True:
            step = asyncio.ensure_future(events.__anext__())
            done, _ = await asyncio.wait({step, stopping},
                                         return_when=asyncio.FIRST_COMPLETED)
            if step not in done:
                raise Shutdown
            try:
                item = step.result()
            except StopAsyncIteration:
                return
            step = None
            yield item
    finally:
        stopping.cancel()
        if step is not None and not step.done():
            step.cancel()
            await asyncio.wait({step})


async def _encoded(
    events: AsyncGenerator[FeedItem | FeedReset, None], hub: LiveHub
) -> AsyncIterator[bytes]:
    try:
        async for event in _until_stopping(events, hub):
            if isinstance(event, FeedReset):
                yield encode(data=f'{{"kind":"reset","last":{event.last}}}', event="reset",
                             id=str(event.last))
            else:
                yield encode(data=event.data, event=event.kind, id=str(event.seq))
    except Revoked as revoked:
        # The player left for good: the feed ends without the event at hand.
        yield encode(event="revoked", data=json.dumps({"code": revoked.error.code},
                                                     separators=(",", ":")))
    except Shutdown:
        # This replica is stopping: reconnect (elsewhere) after a jittered pause.
        yield encode(comment="shutdown", retry=LiveHub.reconnect_delay_ms())
    except ApiError as error:
        retry_after = int(error.extra.get("retryAfter") or 1)
        yield encode(comment=error.code, retry=retry_after * 1000)
    finally:
        await events.aclose()
