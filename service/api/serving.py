"""The uvicorn server of ``skyline serve``: it tells the live streams when it starts stopping,
it runs the garbage collector so that thousands of streams do not stall the replica, and its
HTTP protocol times slow clients out.

uvicorn waits for open connections to close before it runs the app's shutdown (for up to
its graceful-shutdown timeout), so an app learns of a SIGTERM too late to say goodbye to its
event streams. This server calls ``on_stopping`` (``LiveHub.shutdown``: every stream ends
with a jittered ``retry:``, issue 15) as soon as the signal arrives, then stops as uvicorn
does.

Garbage collection: a replica holding 5,000 streams tracks about 1.7 million objects, nearly
all of them long-lived (each stream's tasks, coroutines and buffers). CPython's default
thresholds ran a full collection every few seconds while moves were delivered, each one
stopping the replica for about two seconds and finding nothing to free (measured with the
fan-out benchmark, ``docs/performance.md``). ``tune_collector`` freezes what the app holds
once built, keeps the young collections (they free the short-lived cycles of each request)
and leaves full collections to this server: one every ``FULL_COLLECTION_SECONDS``.

Slow clients (issue 20): uvicorn reads a request's headers and body for as long as the client
takes (``timeout_keep_alive`` covers only the gap between requests), so a client trickling a
byte now and then holds a connection, and its buffers, for ever. ``timed_protocol`` gives
uvicorn's httptools protocol two deadlines: the request line and headers within
``header_timeout`` seconds (from the connection's start, or from a kept-alive connection's
next request's first byte), the body within ``body_timeout`` seconds after the headers. Past
either, the client gets ``408 Request Timeout`` (when it has sent part of a request and no
answer has begun) and the connection is closed; the app sees the client gone. Time the server
itself spends not reading (a pipelined request waiting its turn, a handler that has not read
its body yet) is not counted against the client. docs/decisions.md, docs/security.md.

Header size (issue 31): httptools has no limit on a request's line and headers (its parser
buffers a header's value until it ends), so 30 MB of one header were read and held. The
protocol counts the bytes of a request's line and headers as they arrive, before they reach
the parser, and past ``max_header_bytes`` answers ``431 Request Header Fields Too Large``
and closes the connection: at most one read of the socket (up to 256 KiB) past the limit is
ever held. WebSocket messages are capped by uvicorn's ``ws_max_size`` (``skyline serve``
sets it to the body cap).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import socket
from collections.abc import Callable
from types import FrameType
from typing import Any

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from service.settings import default_of

from .request_ids import SCOPE_KEY, new_request_id

DEFAULT_HEADER_TIMEOUT: float = default_of("header_timeout")
"""Seconds a client has to send a request's line and headers (``--header-timeout``)."""
DEFAULT_BODY_TIMEOUT: float = default_of("body_timeout")
"""Seconds a client has to send a request's body once its headers are in
(``--body-timeout``): 64 KiB, the largest body, at about 2 KB/s."""
DEFAULT_MAX_HEADER_BYTES: int = default_of("max_header_bytes")
"""The most a request's line and headers may take (``--max-header-bytes``): the body cap;
nginx in front lets through at most 4 lines of 8 KiB (deploy/nginx.conf). All three are
declared once, in ``service.settings``."""
_HEADERS_END = (b"\r\n\r\n", b"\n\n")

YOUNG_THRESHOLD = 20_000
"""New tracked objects between young collections (CPython's default: 700)."""
MIDDLE_THRESHOLD = 5
"""Young collections between middle ones: what a middle collection walks stays small."""
OLD_THRESHOLD = 1_000_000
"""Middle collections between automatic full ones: in effect never; see below."""
FULL_COLLECTION_SECONDS = 600.0


def tune_collector() -> None:
    """Freeze what exists (the app once built: modules, boards, catalogues) and set the
    thresholds above (module doc)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, MIDDLE_THRESHOLD, OLD_THRESHOLD)


async def collect_periodically(seconds: float = FULL_COLLECTION_SECONDS) -> None:
    """A full collection every ``seconds``: what cycles reached the old generation are
    freed, at a pace the server chooses."""
    while True:
        await asyncio.sleep(seconds)
        gc.collect()


class StreamAwareServer(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, on_stopping: Callable[[], None]) -> None:
        super().__init__(config)
        self.on_stopping = on_stopping
        self._loop: asyncio.AbstractEventLoop | None = None

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        collector = self._loop.create_task(collect_periodically())
        try:
            await super().serve(sockets)
        finally:
            collector.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await collector

    def notify_stopping(self) -> None:
        """Run ``on_stopping`` on the server's loop (safe from a signal handler or another
        thread)."""
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self.on_stopping)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.notify_stopping()
        super().handle_exit(sig, frame)


class TimedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a header-read and a body-read deadline (module doc).
    ``timed_protocol`` makes one with the configured seconds (None: no deadline)."""

    header_timeout: float | None = DEFAULT_HEADER_TIMEOUT
    body_timeout: float | None = DEFAULT_BODY_TIMEOUT
    max_header_bytes: int | None = DEFAULT_MAX_HEADER_BYTES

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None
        self._body_timer: asyncio.TimerHandle | None = None
        self._request_begun = False
        self._in_headers = True
        """Reading a request's line and headers (until the parser says they ended)."""
        self._header_bytes = 0
        self._tail = b""
        """The last bytes of the previous read: the end of the headers may span two."""

    def data_received(self, data: bytes) -> None:
        if self._in_headers and self.max_header_bytes is not None:
            self._header_bytes += self._header_part(data)
            if self._header_bytes > self.max_header_bytes:
                self._headers_too_large()
                return
        super().data_received(data)

    def _header_part(self, data: bytes) -> int:
        """How many bytes of ``data`` belong to the headers being read: up to their end,
        if it is in ``data`` (what follows is a body), else all."""
        before = len(self._tail)
        joined = self._tail + data
        self._tail = joined[-3:]
        ends = [i + len(m) for m in _HEADERS_END if (i := joined.find(m)) >= 0]
        return len(data) if not ends else max(0, min(ends) - before)

    def _headers_too_large(self) -> None:
        if self.transport.is_closing():
            return
        client = f"{self.client[0]}:{self.client[1]}" if self.client else "unknown"
        request_id = new_request_id()
        self.logger.info("%s: request line and headers over %d bytes: 431, connection "
                         "closed [request_id=%s]", client, self.max_header_bytes, request_id)
        self._cancel_timers()
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:
            # An answer to the request before is still being written (pipelining): no
            # answer can be put between its bytes.
            cycle.disconnected = True
            cycle.message_event.set()
            self.transport.close()
            return
        self._write_refusal(431, "Request Header Fields Too Large",
                            f"The request's line and headers take more than "
                            f"{self.max_header_bytes} bytes.", request_id=request_id)

    # Timers.
    def _arm_header_timer(self) -> None:
        if self.header_timeout is not None and self._header_timer is None:
            self._header_timer = self.loop.call_later(self.header_timeout, self._headers_late)

    def _arm_body_timer(self) -> None:
        if self.body_timeout is not None and self._body_timer is None:
            self._body_timer = self.loop.call_later(self.body_timeout, self._body_late)

    def _cancel_timers(self, *, header: bool = True, body: bool = True) -> None:
        if header and self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        if body and self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None

    # Protocol and parser callbacks.
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_header_timer()  # a connection that sends nothing is timed out too

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_timers()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._request_begun = True
        self._arm_header_timer()  # kept: a first request's deadline runs from the connection

    def on_headers_complete(self) -> None:
        self._cancel_timers(header=True, body=False)
        self._request_begun = False
        self._in_headers = False
        upgrading = self.parser.should_upgrade() and self._should_upgrade()
        super().on_headers_complete()
        if not upgrading:
            self._arm_body_timer()

    def on_message_complete(self) -> None:
        self._cancel_timers(header=False, body=True)
        self._in_headers, self._header_bytes, self._tail = True, 0, b""
        super().on_message_complete()

    def send_400_response(self, msg: str) -> None:
        # uvicorn's answer to what is no HTTP request, with a request id like every answer.
        self._write_refusal(400, "Bad Request", msg)

    # Deadlines passed.
    def _headers_late(self) -> None:
        self._header_timer = None
        if self.flow.read_paused:  # this server stopped reading (pipelining): not the client
            self._arm_header_timer()
            return
        self._time_out("headers", self.header_timeout, answer=self._request_begun)

    def _body_late(self) -> None:
        self._body_timer = None
        if self.flow.read_paused:  # the app has not read what came (or pipelining)
            self._arm_body_timer()
            return
        cycle = self.cycle
        answer = cycle is not None and not cycle.response_started
        self._time_out("body", self.body_timeout, answer=answer)

    def _time_out(self, part: str, seconds: float | None, *, answer: bool) -> None:
        if self.transport.is_closing():
            return
        cycle = self.cycle
        request_id = None
        if part == "body" and cycle is not None:
            request_id = cycle.scope.get(SCOPE_KEY)
        request_id = request_id if isinstance(request_id, str) else new_request_id()
        client = f"{self.client[0]}:{self.client[1]}" if self.client else "unknown"
        self.logger.info(
            "%s: request %s not received within %s s: %s [request_id=%s]", client, part,
            seconds, "408, connection closed" if answer else "connection closed", request_id,
        )
        if part == "body" and cycle is not None:
            # The app learns the client is gone (its receive() answers http.disconnect) and
            # whatever it sends now is dropped.
            cycle.disconnected = True
            cycle.message_event.set()
        if answer:
            self._write_refusal(408, "Request Timeout",
                                f"The request's {part} took more than {seconds} s.",
                                request_id=request_id)
        else:
            self.transport.close()

    def _write_refusal(self, status: int, phrase: str, text: str,
                       request_id: str | None = None) -> None:
        """A plain-text answer written by the protocol itself, then the connection closed."""
        body = text.encode("ascii", "replace")
        lines = [f"HTTP/1.1 {status} {phrase}".encode()]
        lines += [name + b": " + value for name, value in self.server_state.default_headers]
        lines += [
            b"content-type: text/plain; charset=utf-8",
            b"content-length: " + str(len(body)).encode(),
            b"connection: close",
            b"x-request-id: " + (request_id or new_request_id()).encode(),
        ]
        self.transport.write(b"\r\n".join(lines) + b"\r\n\r\n" + body)
        self.transport.close()


def timed_protocol(header_timeout: float | None, body_timeout: float | None,
                   max_header_bytes: int | None = DEFAULT_MAX_HEADER_BYTES,
                   ) -> type[TimedHttpToolsProtocol]:
    """The protocol class for ``uvicorn.Config(http=...)`` with these deadlines (seconds;
    None or 0: none) and this cap on a request's line and headers (bytes; None or 0: none)."""
    return type("TimedHttpToolsProtocol", (TimedHttpToolsProtocol,), {
        "header_timeout": header_timeout or None,
        "body_timeout": body_timeout or None,
        "max_header_bytes": max_header_bytes or None,
    })
