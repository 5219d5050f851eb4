"""A lean ``text/event-stream`` response: what one open event stream costs a replica.

A replica holds thousands of streams (issue 15), so each one is kept to two tasks and no
per-event bookkeeping: the request's own task sends the events as the iterator yields them;
one *guard* task waits for the client to go away, sends a keep-alive comment when the stream
has been quiet for ``ping_seconds``, ends a stream whose client stopped reading for
``send_timeout`` seconds (noticed at the guard's next wake-up: within one more ping
interval), and ends the stream at its ``max_seconds`` deadline. (sse-starlette's
``EventSourceResponse`` runs four tasks, a lock and a cancel scope per event for the same
job; measured in ``docs/performance.md``, "Live streams at scale". Its ``ServerSentEvent``
still encodes every event: ``encode``.)

The guard ends the stream by cancelling the sending task; the iterator is closed either way,
and ``on_close`` runs once, whatever ends the stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from sse_starlette import ServerSentEvent
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

MEDIA_TYPE = "text/event-stream; charset=utf-8"
PING = ServerSentEvent(comment="ping").encode()

Cut = Literal["disconnected", "stalled", "deadline"]


def encode(*, data: str | None = None, event: str | None = None, id: str | None = None,
           retry: int | None = None, comment: str | None = None) -> bytes:
    """One event in the wire format (multi-line data as several ``data:`` lines)."""
    return ServerSentEvent(data=data, event=event, id=id, retry=retry, comment=comment).encode()


@dataclass(slots=True)
class _Pulse:
    """What the guard needs to know about the sending task, and how it ends it."""

    sender: asyncio.Task[None]
    last_sent: float
    sending_since: float | None = None
    cut: Cut | None = None
    done: bool = False
    """The events are all sent: nothing left to cut (the last message is on its way)."""

    def end(self, reason: Cut) -> None:
        if not self.done:
            self.cut, self.done = reason, True
            self.sender.cancel()


@functools.cache
def _headers(given: tuple[tuple[str, str], ...]) -> tuple[tuple[bytes, bytes], ...]:
    merged = {k.lower(): v for k, v in given}
    merged.setdefault("cache-control", "no-store")
    merged.update({"content-type": MEDIA_TYPE, "connection": "keep-alive",
                   "x-accel-buffering": "no"})
    return tuple((k.encode("latin-1"), v.encode("latin-1")) for k, v in merged.items())


class EventStream(Response):
    """An ASGI response sending ``chunks`` (encoded events) as they come (module doc)."""

    def __init__(
        self, chunks: AsyncIterator[bytes], *, headers: Mapping[str, str] | None = None,
        ping_seconds: float = 15, send_timeout: float = 30, max_seconds: float | None = None,
        on_close: Callable[[], None] | None = None,
    ) -> None:
        self.status_code = 200
        self.background = None
        self.chunks = chunks
        self.ping_seconds = ping_seconds
        self.send_timeout = send_timeout
        self.max_seconds = max_seconds
        self.on_close = on_close
        self.header_pairs = _headers(tuple(sorted((headers or {}).items())))
        """Shared by every stream with the same headers; each start message gets a list of
        its own (middleware appends to it)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        guard: asyncio.Task[None] | None = None
        try:
            await send({"type": "http.response.start", "status": 200,
                        "headers": list(self.header_pairs)})
            if scope.get("method") != "HEAD":
                loop = asyncio.get_running_loop()
                sender = asyncio.current_task()
                assert sender is not None
                deadline = (None if self.max_seconds is None
                            else loop.time() + self.max_seconds)
                pulse = _Pulse(sender, last_sent=loop.time())
                guard = loop.create_task(self._guard(receive, send, pulse, deadline))
                try:
                    async for chunk in self.chunks:
                        pulse.sending_since = loop.time()
                        await send({"type": "http.response.body", "body": chunk,
                                    "more_body": True})
                        pulse.last_sent, pulse.sending_since = loop.time(), None
                        del chunk  # an idle stream keeps no copy of its last event
                    pulse.done = True  # from here on the guard only waits to be stopped
                except asyncio.CancelledError:
                    if pulse.cut is None:
                        raise  # cancelled from outside (the server is stopping)
                    sender.uncancel()
                    if pulse.cut != "deadline":
                        return  # nobody is reading: nothing more to send
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            if guard is not None:
                guard.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await guard
            aclose = getattr(self.chunks, "aclose", None)
            if aclose is not None:
                await aclose()
            if self.on_close is not None:
                self.on_close()

    async def _guard(self, receive: Receive, send: Send, pulse: _Pulse,
                     deadline: float | None) -> None:
        """Wait for the client's disconnect; meanwhile ping, and cut a stalled or expired
        stream (module doc)."""
        loop = asyncio.get_running_loop()
        cut = pulse.end
        while True:
            now = loop.time()
            if deadline is not None and now >= deadline:
                return cut("deadline")
            if pulse.done:
                wake = now + self.ping_seconds  # the last message is on its way: no ping
            elif pulse.sending_since is not None:
                if now - pulse.sending_since >= self.send_timeout:
                    return cut("stalled")
                wake = pulse.sending_since + self.send_timeout
            elif now - pulse.last_sent >= self.ping_seconds:
                try:
                    async with asyncio.timeout(self.send_timeout):
                        await send({"type": "http.response.body", "body": PING,
                                    "more_body": True})
                except TimeoutError:
                    return cut("stalled")
                pulse.last_sent = loop.time()
                continue
            else:
                wake = pulse.last_sent + self.ping_seconds
            if deadline is not None:
                wake = min(wake, deadline)
            message: Message | None = None
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout_at(wake):
                    message = await receive()
            if message is not None and message["type"] == "http.disconnect":
                return cut("disconnected")
