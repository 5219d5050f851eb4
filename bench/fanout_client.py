"""Watcher processes of ``bench.fanout``: many live viewers of matches in one process, each
checking that it gets every version in order.

    .venv/bin/python -m bench.fanout_client SPEC.json

``bench.fanout`` starts one such process per share of the watchers (``--client-procs``) and
drives it through stdin/stdout; it is not meant to be run by hand. It imports nothing of the
service (a light process: only the standard library, ``websockets`` for GraphQL and, to check
patch streams at the end, ``jsonpatch``).

Watchers
--------
- ``sse``: ``GET /v1/matches/{id}/events`` on a raw asyncio stream (no HTTP library): the
  request written by hand, the response head parsed, chunked transfer decoded, the body
  decompressed when the answer is ``Content-Encoding`` ``gzip``, ``deflate``, ``br`` or
  ``zstd`` (with the ``brotli`` / ``zstandard`` modules), then parsed as Server-Sent Events
  (any line ending).
  ``mode: patch`` adds ``?mode=patch`` (events ``snapshot`` and ``patch``), ``full`` takes
  the ``state`` events. A stream the server ends while the watcher still wants more is
  resumed with ``after=<last version>`` (as an ``EventSource`` resumes); ``204`` then means the
  match is finished and fully seen. With ``reconnect: false`` a clean end is the end (or a
  failure when the watcher wanted a version ``until`` it has not seen).
- ``graphql``: ``subscription matchUpdated`` over ``graphql-transport-ws`` with the
  ``websockets`` library (client pings off; permessage-deflate offered as a browser does
  unless the spec says ``ws_compression: false``).

Checks
------
Every watcher keeps the last version it saw: a ``state``/``patch``/GraphQL update must be
exactly the next version (else a *violation*; duplicates and versions going back are
violations too), a ``snapshot`` may restate the last version or jump ahead (a jump is counted
as ``snapshot_skips``: the view is whole again, but versions were not delivered one by one).
Versions come from the SSE ``id`` (or the data's ``version`` when there is no id). With
``keep_streams``, an SSE watcher keeps what it received and, at the end, replays it with
``jsonpatch``: each patch applied to the previous view (its ``baseVersion`` must be that
view's version), a snapshot or state replacing the view (compared with it when it restates
the same version), and the digest of the view at every version reported (``bench.fanout``
compares them with the match state it read over REST after each move). Watchers that
received identical bytes are checked once (the check is deterministic; ``watchers`` says how
many each result stands for).

Protocol
--------
SPEC (JSON): ``host``, ``port``, ``source_hosts`` (local addresses to connect from, in
turn; default: the system's choice), ``connect_concurrency`` (connections being set up at once,
counted until their first event), ``connect_timeout``, ``record_arrivals`` (keep the arrival
time of every version), ``keep_streams``, ``ws_compression``, ``reconnect``, ``groups``: a list of
``{"phase", "kind": "sse"|"graphql", "match", "count", "mode": "full"|"patch",
"encoding": "identity"|"gzip"|"br", "after": int|null, "until": int|null, "token": str|null}``
(``until``: close once that version is seen).

stdin, one JSON object a line: ``{"cmd": "connect", "phase": P}``, ``{"cmd": "expect",
"targets": {match: version}}`` (answered by ``{"caught_up": seq}`` once every live watcher of
those matches has those versions), ``{"cmd": "stop"}``. stdout, one JSON object a line:
``{"status": ...}`` every second, ``{"phase_done": P, ...}`` once every watcher of the phase has
its first event or has failed (or is done), ``{"caught_up": seq}``, and last ``{"final": ...}``.
Times are ``time.monotonic()`` (CLOCK_MONOTONIC: one clock for all processes of the machine).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import resource
import sys
import time
import zlib
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any, Protocol

MAX_EXAMPLES = 8
STATUS_EVERY = 1.0
CAUGHT_UP_POLL = 0.02
GRAPHQL_QUERY = (
    "subscription($id: ID!, $after: Int) { matchUpdated(matchId: $id, after: $after) "
    "{ __typename ... on MatchState { version status } } }"
)


def raise_open_files() -> int:
    """Raise this process's soft open-file limit to its hard limit; the new soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def digest(document: Any) -> str:
    """A short digest of a JSON document (canonical: keys sorted, no spaces)."""
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# -- Server-Sent Events -------------------------------------------------------------------------


class SseParser:
    """Incremental ``text/event-stream`` parser (bytes in; ``sink(event, id, data)`` per event).

    Lines end in CRLF, LF or CR (a CR at the end of a chunk waits for the next one); comment
    lines (``: ping``) are counted and skipped; an event is dispatched at a blank line when it
    has data, as the SSE specification says."""

    __slots__ = ("_buf", "_data", "_event", "_id", "_sink", "comments", "last_comment", "retry")

    def __init__(self, sink: Callable[[bytes, bytes | None, bytes], None]) -> None:
        self._sink = sink
        self._buf = b""
        self._data: list[bytes] = []
        self._event = b""
        self._id: bytes | None = None
        self.comments: Counter[str] = Counter()
        self.last_comment = ""
        self.retry: int | None = None  # the last ``retry:`` field (ms)

    def feed(self, chunk: bytes) -> None:
        buf = self._buf + chunk if self._buf else chunk
        hold = b""
        if buf.endswith(b"\r"):
            buf, hold = buf[:-1], b"\r"
        if b"\r" in buf:
            buf = buf.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        lines = buf.split(b"\n")
        self._buf = lines.pop() + hold
        for line in lines:
            if not line:
                if self._data:
                    data = self._data[0] if len(self._data) == 1 else b"\n".join(self._data)
                    self._sink(self._event or b"message", self._id, data)
                self._data = []
                self._event = b""
                continue
            if line[0] == 58:  # b":" -- a comment: ": ping ...", ": store_unavailable"
                words = line[1:].split(None, 1)
                self.last_comment = words[0].decode("utf-8", "replace")[:40] if words else ""
                self.comments[self.last_comment] += 1
                continue
            name, _, value = line.partition(b":")
            if value[:1] == b" ":
                value = value[1:]
            if name == b"data":
                self._data.append(value)
            elif name == b"event":
                self._event = value
            elif name == b"id":
                self._id = value
            elif name == b"retry" and value.isdigit():
                self.retry = int(value)


class Decoder(Protocol):
    def decompress(self, data: bytes, /) -> bytes: ...


class _Brotli:
    """brotli's ``Decompressor`` says ``process`` for ``decompress``."""

    def __init__(self, decompressor: Any) -> None:
        self._decompressor = decompressor

    def decompress(self, data: bytes, /) -> bytes:
        out: bytes = self._decompressor.process(data)
        return out


def decoder_for(encoding: str) -> Decoder | None:
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return None
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return zlib.decompressobj()
    if encoding == "zstd":
        import zstandard  # type: ignore[import-untyped,import-not-found,unused-ignore]

        zstd: Decoder = zstandard.ZstdDecompressor().decompressobj()
        return zstd
    if encoding == "br":
        import brotli  # type: ignore[import-untyped,import-not-found,unused-ignore]

        return _Brotli(brotli.Decompressor())
    raise ValueError(f"unknown Content-Encoding {encoding!r}")


# -- one watcher ---------------------------------------------------------------------------------


class Watcher:
    """One live viewer (SSE connection or GraphQL subscription) and what it received."""

    __slots__ = (
        "after",
        "arrivals",
        "body_bytes",
        "connected",
        "connected_at",
        "content_encoding",
        "done",
        "done_at",
        "encoding",
        "events",
        "failed",
        "gate",
        "group_key",
        "index",
        "kept",
        "kind",
        "last",
        "match",
        "mode",
        "phase",
        "proc",
        "reconnects",
        "resumed_from",
        "retry_ms",
        "snapshot_skips",
        "started_at",
        "streaming",
        "timed_out",
        "token",
        "until",
        "violations",
        "wire_bytes",
    )

    def __init__(self, proc: ClientProc, index: int, group: dict[str, Any]) -> None:
        self.proc = proc
        self.index = index
        self.phase: str = group["phase"]
        self.kind: str = group["kind"]
        self.match: str = group["match"]
        self.mode: str = group.get("mode") or "full"
        self.encoding: str = group.get("encoding") or "identity"
        self.after: int | None = group.get("after")
        self.until: int | None = group.get("until")
        self.token: str | None = group.get("token")
        self.group_key = f"{self.kind}/{self.mode}/{self.encoding}"
        self.last: int | None = self.after
        self.resumed_from: int | None = self.after
        self.events = 0
        self.violations = 0
        self.snapshot_skips = 0
        self.reconnects = 0
        self.body_bytes = 0
        self.wire_bytes = 0
        self.content_encoding = ""
        self.connected = False  # had its first event (at some time)
        self.streaming = False  # holds an open 200 stream / subscription now
        self.retry_ms: int | None = None  # the server's last ``retry:``
        self.done = False
        self.timed_out = False
        self.failed: str | None = None
        self.started_at = 0.0
        self.connected_at = 0.0
        self.done_at = 0.0
        self.arrivals: list[tuple[int, float]] | None = [] if proc.record_arrivals else None
        keep = proc.keep_streams
        self.kept: list[tuple[bytes, int, bytes]] | None = (
            [] if keep and self.kind == "sse" else None
        )
        self.gate: Gate | None = None

    @property
    def settled(self) -> bool:
        return self.connected or self.done or self.failed is not None

    @property
    def holding(self) -> bool:
        """Connected now: had its first event and its stream is still open (a stream the
        server ended is not connected while the watcher resumes)."""
        return self.connected and self.streaming and not self.done and self.failed is None

    @property
    def live(self) -> bool:
        return self.connected and not self.done and self.failed is None

    def fail(self, reason: str, detail: str = "") -> None:
        if self.failed is None and not self.done:
            self.failed = reason
            self.proc.failures[reason] += 1
            if detail and len(self.proc.failure_examples) < MAX_EXAMPLES:
                self.proc.failure_examples.append(f"{self.kind} {self.match}: {detail}")
        self._open_gate()

    def finish(self) -> None:
        if not self.done:
            self.done = True
            self.done_at = time.monotonic()
        self._open_gate()

    def _open_gate(self) -> None:
        if self.gate is not None:
            self.gate.open()

    def seen(self, kind: str, version: int) -> None:
        """A version arrived (``kind``: state, patch, snapshot or graphql)."""
        now = time.monotonic()
        self.events += 1
        proc = self.proc
        proc.events += 1
        last = self.last
        if last is not None:
            if kind == "snapshot":
                if version < last:
                    self._violation(f"snapshot {version} after {last}")
                elif version > last + 1:
                    self.snapshot_skips += version - last - 1
            elif version != last + 1:
                self._violation(f"{kind} {version} after {last}")
        if last is None or version > last:
            self.last = version
            if self.arrivals is not None:
                self.arrivals.append((version, now))
        if not self.connected:
            self.connected = True
            self.connected_at = now
            self._open_gate()
        if self.until is not None and self.last is not None and self.last >= self.until:
            self.finish()

    def _violation(self, what: str) -> None:
        self.violations += 1
        self.proc.violations += 1
        if len(self.proc.violation_examples) < MAX_EXAMPLES:
            self.proc.violation_examples.append(f"{self.kind}/{self.mode} {self.match}: {what}")

    # SSE events from the parser
    def sse_event(self, event: bytes, event_id: bytes | None, data: bytes) -> None:
        kind = event.decode("ascii", "replace")
        self.proc.event_kinds[kind] += 1
        if kind not in ("state", "patch", "snapshot"):
            return
        if self.mode == "patch" and kind == "state" and not self.proc.warned_state:
            self.proc.warned_state = True
            self.proc.notes.append("patch mode asked, server sent state events")
        try:
            version = int(event_id) if event_id else int(json.loads(data)["version"])
        except (ValueError, KeyError, TypeError):
            self._violation(f"{kind} without a readable version")
            return
        if self.kept is not None:
            self.kept.append((event, version, self.proc.intern(data)))
        self.seen(kind, version)


class Gate:
    """Holds one slot of the connection semaphore until the watcher's first event."""

    __slots__ = ("_open", "_sem")

    def __init__(self, sem: asyncio.Semaphore) -> None:
        self._sem = sem
        self._open = False

    def open(self) -> None:
        if not self._open:
            self._open = True
            self._sem.release()


# -- sessions -------------------------------------------------------------------------------------


async def _connect_gate(watcher: Watcher) -> Gate:
    proc = watcher.proc
    await proc.sem.acquire()
    gate = Gate(proc.sem)
    watcher.gate = gate
    return gate


def _arm_timeout(watcher: Watcher) -> asyncio.TimerHandle:
    """Cancel the watcher's task if its first event has not come after connect_timeout."""
    task = asyncio.current_task()
    assert task is not None

    def expire() -> None:
        if not watcher.settled:
            watcher.timed_out = True
            task.cancel()

    return asyncio.get_running_loop().call_later(watcher.proc.connect_timeout, expire)


async def sse_session(watcher: Watcher) -> None:
    """One SSE watcher: connect, read, resume after a clean end, until done or stopped."""
    proc = watcher.proc
    watcher.started_at = time.monotonic()
    while not watcher.done and watcher.failed is None and not proc.stopping:
        gate = await _connect_gate(watcher)
        timer = _arm_timeout(watcher)
        try:
            ended = await _sse_once(watcher)
        except asyncio.CancelledError:
            if watcher.timed_out:
                watcher.fail("timeout", "no first event in time")
                return
            raise
        except (OSError, asyncio.IncompleteReadError) as exc:
            if not proc.stopping:
                watcher.fail("connection", f"{type(exc).__name__}: {exc}")
            return
        except Exception as exc:  # a protocol error, or a bug here: counted, never silent
            if not proc.stopping:
                watcher.fail("protocol", f"{type(exc).__name__}: {exc}")
            return
        finally:
            timer.cancel()
            gate.open()
        if not ended or watcher.done or watcher.failed is not None or proc.stopping:
            return
        if not proc.reconnect:
            if watcher.until is None:
                watcher.finish()  # followed to the end (e.g. the match finished)
            else:
                watcher.fail("ended", f"stream ended at {watcher.last}, before {watcher.until}")
            return
        watcher.reconnects += 1
        proc.reconnects += 1
        watcher.resumed_from = watcher.last
        # As an EventSource does: wait the server's ``retry:`` (capped) before resuming.
        if watcher.retry_ms:
            await asyncio.sleep(min(watcher.retry_ms, 30_000) / 1000)


async def _sse_once(watcher: Watcher) -> bool:
    """One connection; True when the server ended the stream cleanly."""
    proc = watcher.proc
    query = []
    if watcher.mode == "patch":
        query.append("mode=patch")
    if watcher.resumed_from is not None:
        query.append(f"after={watcher.resumed_from}")
    path = f"/v1/matches/{watcher.match}/events" + ("?" + "&".join(query) if query else "")
    lines = [
        f"GET {path} HTTP/1.1", f"Host: {proc.host}:{proc.port}", "Accept: text/event-stream",
        f"Accept-Encoding: {watcher.encoding}", "Cache-Control: no-cache",
    ]
    if watcher.token:
        lines.append(f"Authorization: Bearer {watcher.token}")
    request = ("\r\n".join(lines) + "\r\n\r\n").encode()
    parser: SseParser | None = None
    reader, writer = await asyncio.open_connection(proc.host, proc.port, limit=1 << 22,
                                                   local_addr=proc.local_addr(watcher))
    proc.open_sockets += 1
    try:
        writer.write(request)
        head = await reader.readuntil(b"\r\n\r\n")
        watcher.wire_bytes += len(request) + len(head)
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        status = int(status_line.split(" ", 2)[1])
        proc.statuses[str(status)] += 1
        headers: dict[str, str] = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            if name:
                headers[name.strip().lower()] = value.strip()
        if status == 204:  # finished and fully seen
            watcher.finish()
            return False
        if status != 200:
            body = b""
            length = headers.get("content-length")
            if length is not None and int(length) < 1 << 16:
                body = await asyncio.wait_for(reader.readexactly(int(length)), 5)
            watcher.fail(f"http {status}", f"{status} {body[:200].decode('utf-8', 'replace')}")
            return False
        watcher.content_encoding = headers.get("content-encoding", "identity")
        watcher.streaming = True
        if watcher.connected:
            # A resumed stream: nothing may come until the next version, so its connection
            # slot is given back at the response head (the first connection's at its first
            # event).
            watcher._open_gate()
        decoder = decoder_for(watcher.content_encoding)
        parser = SseParser(watcher.sse_event)
        chunked = "chunked" in headers.get("transfer-encoding", "").lower()
        while not watcher.done:
            if chunked:
                size_line = await reader.readuntil(b"\r\n")
                size = int(size_line.split(b";", 1)[0], 16)
                if size == 0:
                    watcher.wire_bytes += len(size_line)
                    _ended(watcher, parser)
                    return True
                chunk = await reader.readexactly(size + 2)
                watcher.wire_bytes += len(size_line) + size + 2
                chunk = chunk[:-2]
            else:
                chunk = await reader.read(1 << 16)
                if not chunk:
                    _ended(watcher, parser)
                    return True
                watcher.wire_bytes += len(chunk)
            watcher.body_bytes += len(chunk)
            if decoder is not None:
                chunk = decoder.decompress(chunk)
            parser.feed(chunk)
        return False
    finally:
        watcher.streaming = False
        proc.open_sockets -= 1
        writer.transport.abort()
        if parser is not None:
            proc.comments.update(parser.comments)
            watcher.retry_ms = parser.retry


def _ended(watcher: Watcher, parser: SseParser) -> None:
    """The server ended the stream: say why, by its last comment (``: store_unavailable``)."""
    watcher.proc.ends[parser.last_comment or "(no comment)"] += 1


async def graphql_session(watcher: Watcher) -> None:
    """One GraphQL subscription on its own WebSocket, until done, failed or stopped."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed, InvalidStatus
    from websockets.typing import Subprotocol

    proc = watcher.proc
    watcher.started_at = time.monotonic()
    gate = await _connect_gate(watcher)
    timer = _arm_timeout(watcher)
    url = f"ws://{proc.host}:{proc.port}/graphql"
    try:
        try:
            ws = await connect(
                url, subprotocols=[Subprotocol("graphql-transport-ws")], ping_interval=None,
                compression="deflate" if proc.ws_compression else None, max_size=1 << 24,
                open_timeout=proc.connect_timeout, close_timeout=2,
                local_addr=proc.local_addr(watcher),
            )
        except InvalidStatus as exc:
            status = exc.response.status_code
            proc.statuses[str(status)] += 1
            watcher.fail(f"http {status}", f"upgrade refused: {status}")
            return
        proc.statuses["101"] += 1
        proc.open_sockets += 1
        watcher.streaming = True
        try:
            payload = {"authorization": f"Bearer {watcher.token}"} if watcher.token else {}
            await ws.send(json.dumps({"type": "connection_init", "payload": payload}))
            ack = json.loads(await ws.recv())
            if ack.get("type") != "connection_ack":
                watcher.fail("graphql", f"no connection_ack: {str(ack)[:200]}")
                return
            variables: dict[str, Any] = {"id": watcher.match}
            if watcher.after is not None:
                variables["after"] = watcher.after
            await ws.send(json.dumps({"id": "1", "type": "subscribe", "payload": {
                "query": GRAPHQL_QUERY, "variables": variables}}))
            async for raw in ws:
                watcher.body_bytes += len(raw)
                message = json.loads(raw)
                kind = message.get("type")
                if kind == "next":
                    body: dict[str, Any] = message.get("payload") or {}
                    update = (body.get("data") or {}).get("matchUpdated")
                    if body.get("errors") or not update:
                        watcher.fail("graphql", f"errors: {str(body)[:200]}")
                        return
                    if update.get("__typename") != "MatchState":
                        watcher.fail("graphql", f"failure member {update.get('__typename')}")
                        return
                    proc.event_kinds["graphql"] += 1
                    watcher.seen("graphql", int(update["version"]))
                    if watcher.done:
                        return
                elif kind == "ping":
                    await ws.send('{"type":"pong"}')
                elif kind == "complete":
                    watcher.finish()
                    return
                elif kind == "error":
                    watcher.fail("graphql", f"error: {str(message)[:200]}")
                    return
            if not proc.stopping:
                watcher.fail("closed", f"closed by the server: {ws.close_code}")
        except ConnectionClosed as exc:
            if not proc.stopping:
                code = exc.rcvd.code if exc.rcvd is not None else None
                watcher.fail(f"closed {code}", f"closed: {exc}")
        finally:
            watcher.streaming = False
            proc.open_sockets -= 1
            if proc.stopping:
                ws.transport.abort()
            else:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(ws.close(), 2)
    except asyncio.CancelledError:
        if watcher.timed_out:
            watcher.fail("timeout", "no first event in time")
            return
        raise
    except (OSError, TimeoutError) as exc:
        if not proc.stopping:
            watcher.fail("connection", f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # WebSocketException, bad JSON, or a bug here: counted
        if not proc.stopping:
            watcher.fail("protocol", f"{type(exc).__name__}: {exc}")
    finally:
        timer.cancel()
        gate.open()


# -- the process ----------------------------------------------------------------------------------


class ClientProc:
    def __init__(self, spec: dict[str, Any]) -> None:
        self.host: str = spec.get("host", "127.0.0.1")
        self.port: int = int(spec["port"])
        self.connect_timeout: float = float(spec.get("connect_timeout", 60))
        self.record_arrivals: bool = bool(spec.get("record_arrivals"))
        self.keep_streams: bool = bool(spec.get("keep_streams"))
        self.ws_compression: bool = bool(spec.get("ws_compression", True))
        self.reconnect: bool = bool(spec.get("reconnect", True))
        self.per_watcher: bool = bool(spec.get("per_watcher"))
        self.source_hosts: list[str] = list(spec.get("source_hosts") or [])
        self.sem = asyncio.Semaphore(int(spec.get("connect_concurrency", 64)))
        self.stopping = False
        self.events = 0
        self.violations = 0
        self.reconnects = 0
        self.open_sockets = 0
        self.warned_state = False
        self.notes: list[str] = []
        self.statuses: Counter[str] = Counter()
        self.failures: Counter[str] = Counter()
        self.event_kinds: Counter[str] = Counter()
        self.comments: Counter[str] = Counter()
        self.ends: Counter[str] = Counter()
        self.failure_examples: list[str] = []
        self.violation_examples: list[str] = []
        self._interned: dict[bytes, bytes] = {}
        self.watchers: list[Watcher] = []
        self.by_phase: dict[str, list[Watcher]] = defaultdict(list)
        self.by_match: dict[str, list[Watcher]] = defaultdict(list)
        for group in spec["groups"]:
            for _ in range(int(group.get("count", 1))):
                watcher = Watcher(self, len(self.watchers), group)
                self.watchers.append(watcher)
                self.by_phase[watcher.phase].append(watcher)
                self.by_match[watcher.match].append(watcher)
        self.tasks: list[asyncio.Task[None]] = []
        self.targets: dict[str, int] = {}
        self.expect_seq = 0
        self.cpu0 = time.process_time()
        self.at_stop: dict[str, Any] | None = None

    def local_addr(self, watcher: Watcher) -> tuple[str, int] | None:
        """The address a watcher connects from (spread over ``source_hosts``)."""
        if not self.source_hosts:
            return None
        return (self.source_hosts[watcher.index % len(self.source_hosts)], 0)

    def intern(self, data: bytes) -> bytes:
        return self._interned.setdefault(data, data)

    def emit(self, message: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
        sys.stdout.flush()

    def status(self) -> dict[str, Any]:
        return {
            "watchers": len(self.watchers),
            "started": sum(1 for w in self.watchers if w.started_at),
            "connected": sum(1 for w in self.watchers if w.holding),
            "ever_connected": sum(1 for w in self.watchers if w.connected),
            "resuming": sum(1 for w in self.watchers if w.live and not w.streaming),
            "live": sum(1 for w in self.watchers if w.live),
            "failed": sum(1 for w in self.watchers if w.failed is not None),
            "done": sum(1 for w in self.watchers if w.done),
            "open_sockets": self.open_sockets,
            "events": self.events,
            "violations": self.violations,
            "cpu_s": time.process_time() - self.cpu0,
        }

    def connect(self, phase: str) -> None:
        watchers = self.by_phase.get(phase, [])
        for watcher in watchers:
            session = sse_session if watcher.kind == "sse" else graphql_session
            self.tasks.append(asyncio.create_task(session(watcher)))
        self.tasks.append(asyncio.create_task(self._phase_done(phase, watchers)))

    async def _phase_done(self, phase: str, watchers: list[Watcher]) -> None:
        start = time.monotonic()
        while not all(w.settled for w in watchers):
            await asyncio.sleep(0.05)
        times = sorted(w.connected_at - w.started_at for w in watchers if w.connected)
        self.emit({"phase_done": phase, "watchers": len(watchers),
                   "connected": sum(1 for w in watchers if w.holding),
                   "ever_connected": sum(1 for w in watchers if w.connected),
                   "failed": sum(1 for w in watchers if w.failed is not None),
                   "done": sum(1 for w in watchers if w.done),
                   "seconds": time.monotonic() - start,
                   "first_event_p50_s": _quantile(times, 0.5),
                   "first_event_max_s": times[-1] if times else None,
                   "done_max_s": max((w.done_at - w.started_at for w in watchers if w.done),
                                     default=None)})

    def expect(self, targets: dict[str, int]) -> None:
        self.targets = dict(targets)
        self.expect_seq += 1
        self.tasks.append(asyncio.create_task(self._caught_up(self.expect_seq)))

    async def _caught_up(self, seq: int) -> None:
        watched = [w for m in self.targets for w in self.by_match.get(m, [])]
        targets = self.targets
        while seq == self.expect_seq:
            if all(not w.live or (w.last is not None and w.last >= targets[w.match])
                   for w in watched):
                self.emit({"caught_up": seq, "t": time.monotonic()})
                return
            await asyncio.sleep(CAUGHT_UP_POLL)

    async def status_loop(self) -> None:
        while True:
            await asyncio.sleep(STATUS_EVERY)
            self.emit({"status": self.status()})

    async def stop(self) -> dict[str, Any]:
        self.at_stop = self.status()  # who holds a stream, before the streams are closed
        self.stopping = True
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        return self.final()

    def final(self) -> dict[str, Any]:
        behind = [w for w in self.watchers if w.match in self.targets and w.failed is None
                  and (w.until is None or w.until >= self.targets[w.match])
                  and (w.last is None or w.last < self.targets[w.match])]
        groups: dict[str, dict[str, Any]] = {}
        for w in self.watchers:
            g = groups.setdefault(w.group_key, {"watchers": 0, "connected": 0, "failed": 0,
                                                "events": 0, "violations": 0,
                                                "body_bytes": 0, "wire_bytes": 0,
                                                "content_encodings": Counter()})
            g["watchers"] += 1
            g["connected"] += w.connected
            g["failed"] += w.failed is not None
            g["events"] += w.events
            g["violations"] += w.violations
            g["body_bytes"] += w.body_bytes
            g["wire_bytes"] += w.wire_bytes
            if w.content_encoding:
                g["content_encodings"][w.content_encoding] += 1
        arrivals: dict[str, dict[str, list[float]]] = {}
        if self.record_arrivals:
            for w in self.watchers:
                if w.failed is not None:
                    continue  # counted in failures; its partial stream says nothing more
                per = arrivals.setdefault(w.match, {})
                for version, at in w.arrivals or ():
                    per.setdefault(str(version), []).append(at)
        result: dict[str, Any] = {
            **(self.at_stop or self.status()),
            "cpu_s": time.process_time() - self.cpu0,
            "statuses": dict(self.statuses),
            "failures": dict(self.failures),
            "failure_examples": self.failure_examples,
            "violation_examples": self.violation_examples,
            "snapshot_skips": sum(w.snapshot_skips for w in self.watchers),
            "reconnects": self.reconnects,
            "behind": len(behind),
            "behind_examples": [f"{w.kind}/{w.mode} {w.match}: last {w.last}, wanted "
                                f"{self.targets[w.match]}" for w in behind[:MAX_EXAMPLES]],
            "event_kinds": dict(self.event_kinds),
            "comments": dict(self.comments),
            "stream_ends": dict(self.ends),
            "groups": groups,
            "last_versions": {m: [min((w.last for w in ws if w.last is not None), default=None),
                                  max((w.last for w in ws if w.last is not None), default=None)]
                              for m, ws in self.by_match.items()},
            "notes": self.notes,
        }
        if self.record_arrivals:
            result["arrivals"] = arrivals
            result["arrival_watchers"] = {
                m: sum(1 for w in ws if w.failed is None and w.connected)
                for m, ws in self.by_match.items()}
        if self.keep_streams:
            result["streams"] = self.verify_streams()
        if self.per_watcher:
            result["per_watcher"] = [{
                "kind": w.kind, "mode": w.mode, "encoding": w.encoding, "match": w.match,
                "phase": w.phase, "content_encoding": w.content_encoding,
                "body_bytes": w.body_bytes, "wire_bytes": w.wire_bytes, "events": w.events,
                "last": w.last, "violations": w.violations, "failed": w.failed, "done": w.done,
                "reconnects": w.reconnects,
                "connect_s": w.connected_at - w.started_at if w.connected else None,
                "done_s": w.done_at - w.started_at if w.done else None,
            } for w in self.watchers]
        return result

    def verify_streams(self) -> list[dict[str, Any]]:
        """Replay the kept streams, one per distinct byte sequence (watchers that received
        the same bytes share one result)."""
        results: list[dict[str, Any]] = []
        distinct: dict[tuple[Any, ...], list[Watcher]] = defaultdict(list)
        for w in self.watchers:
            if w.failed is None and w.kept is not None:
                distinct[(w.mode, w.match, *(id(d) for _, _, d in w.kept))].append(w)
        for (mode, match, *_), watchers in distinct.items():
            kept = watchers[0].kept
            assert kept is not None
            results.append({"match": match, "mode": mode, "watchers": len(watchers),
                            **replay(kept)})
        return results


def replay(kept: list[tuple[bytes, int, bytes]]) -> dict[str, Any]:
    """Rebuild the view a stream shows: every ``patch`` applied (``jsonpatch``) to the view so
    far, whose version must be its ``baseVersion``; a ``state`` or ``snapshot`` replaces the
    view (compared with it first when it restates the same version). The digest of the view
    at every version, for comparison with the match state read over REST."""
    import jsonpatch  # type: ignore[import-untyped,unused-ignore]

    problems: list[str] = []
    view: Any = None
    version: int | None = None
    digests: dict[str, str] = {}
    snapshots_checked = patches = 0
    for event, event_version, data in kept:
        document = json.loads(data)
        if event in (b"snapshot", b"state"):
            if view is not None and version == event_version:
                snapshots_checked += 1
                if document != view:
                    problems.append(f"snapshot {event_version} differs from the patched view")
            view, version = document, event_version
        elif event == b"patch":
            patches += 1
            if view is None:
                problems.append(f"patch {event_version} before any snapshot")
                continue
            base = document.get("baseVersion")
            if base != version:
                problems.append(f"patch {document.get('version')} on base {base}, view at "
                                f"{version}")
            try:
                view = jsonpatch.apply_patch(view, document["operations"], in_place=True)
            except Exception as exc:
                problems.append(f"patch {event_version}: {type(exc).__name__}: {exc}")
                continue
            version = int(document.get("version", event_version))
        else:
            continue
        if isinstance(view, dict) and view.get("version") not in (None, version):
            problems.append(f"the view says version {view.get('version')} at {version}")
        if version is not None:
            digests[str(version)] = digest(view)
    return {"version": version, "digest": None if view is None else digest(view),
            "digests": digests, "patches": patches, "snapshots_checked": snapshots_checked,
            "problems": problems[:MAX_EXAMPLES], "problem_count": len(problems)}


def _quantile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    return values[min(len(values) - 1, max(0, round(q * (len(values) - 1))))]


async def run(spec: dict[str, Any]) -> None:
    proc = ClientProc(spec)
    loop = asyncio.get_running_loop()
    stdin = asyncio.StreamReader(limit=1 << 26)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)
    status = asyncio.create_task(proc.status_loop())
    proc.emit({"ready": len(proc.watchers), "open_files": raise_open_files()})
    try:
        while True:
            line = await stdin.readline()
            if not line:
                break
            command = json.loads(line)
            if command["cmd"] == "connect":
                proc.connect(command["phase"])
            elif command["cmd"] == "expect":
                proc.expect({str(k): int(v) for k, v in command["targets"].items()})
            elif command["cmd"] == "stop":
                break
    finally:
        status.cancel()
        final = await proc.stop()
        proc.emit({"final": final})


def main(argv: list[str]) -> int:
    raise_open_files()
    with open(argv[0], encoding="utf-8") as file:
        spec = json.load(file)
    asyncio.run(run(spec))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
