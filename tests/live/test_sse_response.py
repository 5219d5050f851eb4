"""Issue 15: the lean event-stream response (``service/api/rest/sse.py``) keeps a stream
alive, notices a client that left or stopped reading, ends at its deadline, and always
closes its iterator and releases what the stream held -- driven as an ASGI app."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from service.api.rest.sse import PING, EventStream, encode

Message = dict[str, Any]


class Client:
    """An ASGI peer: records what the app sends; ``leave()`` disconnects; ``stall()``
    makes body sends block (a client that stopped reading)."""

    def __init__(self) -> None:
        self.sent: list[Message] = []
        self.left = asyncio.Event()
        self.stalled = False
        self._requested = False

    async def receive(self) -> Message:
        if not self._requested:
            self._requested = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await self.left.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        if self.stalled and message["type"] == "http.response.body":
            await asyncio.Event().wait()
        self.sent.append(message)

    def leave(self) -> None:
        self.left.set()

    def stall(self) -> None:
        self.stalled = True

    @property
    def bodies(self) -> list[bytes]:
        return [m["body"] for m in self.sent if m["type"] == "http.response.body"]

    @property
    def complete(self) -> bool:
        last = self.sent[-1] if self.sent else {}
        return last.get("type") == "http.response.body" and not last.get("more_body")


class Source:
    """The events to send: ``put`` one; records whether the iterator was closed."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.closed = False
        self.iterated = False

    def put(self, chunk: bytes | None) -> None:
        self.queue.put_nowait(chunk)

    async def chunks(self) -> AsyncIterator[bytes]:
        self.iterated = True
        try:
            while (chunk := await self.queue.get()) is not None:
                yield chunk
        finally:
            self.closed = True


def _response(source: Source, closes: list[int], **options: Any) -> EventStream:
    return EventStream(source.chunks(), on_close=lambda: closes.append(1), **options)


SCOPE = {"type": "http", "method": "GET"}


async def _soon(condition: Callable[[], bool], task: asyncio.Task[None]) -> None:
    """Until ``condition()`` holds (at most 10 s); the response failing meanwhile fails the
    test with its error."""
    async with asyncio.timeout(10):
        while not condition():
            if task.done():
                task.result()
            await asyncio.sleep(0.01)


async def _streaming_one_event() -> tuple[Client, Source, list[int], asyncio.Task[None]]:
    """A stream (with default options) that has sent one event and is waiting for more."""
    client, source, closes = Client(), Source(), []
    task = asyncio.create_task(_response(source, closes)(SCOPE, client.receive, client.send))
    source.put(b"id: 1\r\ndata: x\r\n\r\n")
    await _soon(lambda: bool(client.bodies), task)
    return client, source, closes, task


async def test_events_are_sent_in_order_and_the_stream_ends_with_the_iterator() -> None:
    client, source, closes = Client(), Source(), []
    for n in (1, 2):
        source.put(encode(data=f'{{"v":{n}}}', event="state", id=str(n)))
    source.put(None)
    await _response(source, closes)(SCOPE, client.receive, client.send)
    start = client.sent[0]
    assert start["status"] == 200
    headers = dict(start["headers"])
    assert headers[b"content-type"] == b"text/event-stream; charset=utf-8"
    assert headers[b"cache-control"] == b"no-store"
    assert client.bodies == [b'id: 1\r\nevent: state\r\ndata: {"v":1}\r\n\r\n',
                             b'id: 2\r\nevent: state\r\ndata: {"v":2}\r\n\r\n', b""]
    assert client.complete and source.closed and closes == [1]


async def test_a_quiet_stream_is_pinged_and_the_next_event_still_follows() -> None:
    client, source, closes = Client(), Source(), []
    task = asyncio.create_task(
        _response(source, closes, ping_seconds=0.05)(SCOPE, client.receive, client.send)
    )
    await _soon(lambda: PING in client.bodies, task)
    source.put(b"id: 1\r\ndata: x\r\n\r\n")
    source.put(None)
    await task
    assert client.bodies[0] == PING and b"id: 1\r\ndata: x\r\n\r\n" in client.bodies
    assert client.complete and closes == [1]


async def test_a_client_that_leaves_ends_the_stream_and_releases_it() -> None:
    client, source, closes, task = await _streaming_one_event()
    client.leave()
    await asyncio.wait_for(task, 10)  # returns: no event ever came, the client left
    assert source.closed and closes == [1] and not client.complete


async def test_a_client_that_stops_reading_is_cut_after_the_send_timeout() -> None:
    client, source, closes = Client(), Source(), []
    task = asyncio.create_task(
        _response(source, closes, ping_seconds=0.05, send_timeout=0.1)(
            SCOPE, client.receive, client.send
        )
    )
    await asyncio.sleep(0)
    client.stall()
    source.put(b"id: 1\r\ndata: x\r\n\r\n")
    await asyncio.wait_for(task, 10)
    assert source.closed and closes == [1] and client.bodies == []


async def test_a_ping_to_a_client_that_stopped_reading_is_cut_too() -> None:
    client, source, closes = Client(), Source(), []
    client.stall()
    options = {"ping_seconds": 0.02, "send_timeout": 0.1}
    await asyncio.wait_for(
        _response(source, closes, **options)(SCOPE, client.receive, client.send), 10
    )
    assert source.closed and closes == [1]


async def test_a_stream_ends_cleanly_at_its_deadline() -> None:
    client, source, closes = Client(), Source(), []
    source.put(b"id: 1\r\ndata: x\r\n\r\n")
    await asyncio.wait_for(
        _response(source, closes, max_seconds=0.1)(SCOPE, client.receive, client.send), 10
    )
    assert client.bodies == [b"id: 1\r\ndata: x\r\n\r\n", b""]
    assert client.complete and source.closed and closes == [1]


async def test_head_sends_the_headers_and_no_event() -> None:
    client, source, closes = Client(), Source(), []
    source.put(b"id: 1\r\ndata: x\r\n\r\n")
    head = {"type": "http", "method": "HEAD"}
    await _response(source, closes)(head, client.receive, client.send)
    assert client.bodies == [b""] and not source.iterated and closes == [1]


async def test_a_cancellation_from_outside_propagates_and_still_releases() -> None:
    _, source, closes, task = await _streaming_one_event()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert source.closed and closes == [1]


def test_multi_line_data_becomes_several_data_lines() -> None:
    assert encode(data="a\nb", event="e", id="3") == (
        b"id: 3\r\nevent: e\r\ndata: a\r\ndata: b\r\n\r\n"
    )
    assert encode(comment="shutdown", retry=1500) == b": shutdown\r\nretry: 1500\r\n\r\n"


class SlowFinish(Client):
    """A client whose last message takes a while to go out; anything sent after it is an
    error, as uvicorn has it ("response already completed")."""

    async def send(self, message: Message) -> None:
        if self.complete:
            raise RuntimeError("Unexpected ASGI message after response completed")
        self.sent.append(message)
        if message["type"] == "http.response.body" and not message.get("more_body"):
            await asyncio.sleep(0.2)


async def test_nothing_follows_the_last_message_however_slowly_it_leaves() -> None:
    client, source, closes = SlowFinish(), Source(), []
    source.put(b"id: 1\r\ndata: x\r\n\r\n")
    source.put(None)
    await _response(source, closes, ping_seconds=0.01)(SCOPE, client.receive, client.send)
    assert client.bodies[-1] == b"" and client.complete and closes == [1]
