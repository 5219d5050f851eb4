"""Oversized headers and WebSocket messages (issue 31, items 4 and 5): ``skyline serve``
answers a request whose line and headers pass ``--max-header-bytes`` with 431 and closes the
connection before it has read the rest (30 MB of one header used to be read and held), and
closes a WebSocket whose message passes the body cap with 1009 (messages up to 16 MiB used
to be taken).

Each test drives a real ``skyline serve`` over raw sockets (and the ``websockets`` client);
nothing here measures time."""

from __future__ import annotations

import base64
import json
import os
import socket
import struct
from collections.abc import Iterator

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from service.api.serving import DEFAULT_MAX_HEADER_BYTES
from service.app import DEFAULT_MAX_BODY_BYTES
from service.cli import build_parser
from tests.support.live_serve import skyline_serve

pytestmark = pytest.mark.slow

LIMIT = 16 * 1024
"""The served ``--max-header-bytes`` of these tests."""
FLOOD = 8 * 1024 * 1024
"""How much of one header the flooding client offers: far more than the socket buffers of
both ends hold, so a server that reads it all is told from one that stops."""
PIECE = 64 * 1024


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    with skyline_serve(["--max-header-bytes", str(LIMIT)]) as url:
        yield url


def _address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").split(":")
    return host, int(port)


def _flood(sock: socket.socket, start: bytes) -> int:
    """Send ``start`` then header bytes in pieces until the server stops taking them or
    ``FLOOD`` bytes went; how many header bytes went."""
    sock.sendall(start)
    sent = 0
    sock.settimeout(10)
    try:
        while sent < FLOOD:
            sock.sendall(b"a" * PIECE)
            sent += PIECE
    except (BrokenPipeError, ConnectionResetError, TimeoutError):
        pass
    return sent


def _answer(sock: socket.socket) -> bytes:
    sock.settimeout(10)
    received = b""
    try:
        while chunk := sock.recv(4096):
            received += chunk
    except (ConnectionResetError, TimeoutError):
        pass
    return received


def _get(sock: socket.socket, extra: bytes = b"") -> bytes:
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + extra + b"\r\n")
    answer = b""
    while not answer.endswith(b'{"status":"ok"}'):
        chunk = sock.recv(4096)
        assert chunk, f"closed after {answer!r}"
        answer += chunk
    return answer


def test_an_oversized_header_is_refused_with_431_before_it_is_read(served: str) -> None:
    with socket.create_connection(_address(served), timeout=10) as sock:
        sent = _flood(sock, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ")
        answer = _answer(sock)
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
    head = answer.split(b"\r\n\r\n")[0].lower()
    assert b"connection: close" in head and b"x-request-id: " in head
    # The server stopped reading: the client could not hand it the whole header.
    assert sent < FLOOD, sent


def test_many_short_header_lines_count_too(served: str) -> None:
    lines = b"".join(b"X-H%d: %s\r\n" % (i, b"b" * 100) for i in range(LIMIT // 100 + 10))
    with socket.create_connection(_address(served), timeout=10) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + lines + b"\r\n")
        answer = _answer(sock)
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]


def test_headers_within_the_limit_and_a_body_in_the_same_read_are_served(served: str) -> None:
    body = json.dumps({"game": "ny1901", "players": 2, "pad": "x" * 50_000}).encode()
    with socket.create_connection(_address(served), timeout=10) as sock:
        answer = _get(sock, b"X-Fits: " + b"c" * (LIMIT - 200) + b"\r\n")
        assert answer.startswith(b"HTTP/1.1 200 "), answer[:200]
        # A body far larger than the header limit, sent with its headers in one write:
        # only the headers count (the body is judged by the body cap: a 4xx of the app).
        sock.sendall(b"POST /v1/matches HTTP/1.1\r\nHost: x\r\nContent-Type: "
                     b"application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        answer = sock.recv(4096)
        assert answer.startswith(b"HTTP/1.1 4") and not answer.startswith(b"HTTP/1.1 431"), \
            answer[:200]
        assert b"connection: close" not in answer.split(b"\r\n\r\n")[0].lower()


def test_a_kept_alive_connection_is_refused_on_its_oversized_request(served: str) -> None:
    with socket.create_connection(_address(served), timeout=10) as sock:
        assert _get(sock).startswith(b"HTTP/1.1 200 ")
        sent = _flood(sock, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ")
        answer = _answer(sock)
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
    assert sent < FLOOD


def test_the_default_header_limit_is_the_body_cap() -> None:
    args = build_parser().parse_args(["serve"])
    assert args.max_header_bytes == DEFAULT_MAX_HEADER_BYTES == DEFAULT_MAX_BODY_BYTES


# -- WebSocket messages --------------------------------------------------------------------


def _ws_url(url: str) -> str:
    return url.replace("http://", "ws://") + "/graphql"


def test_a_websocket_message_over_the_body_cap_closes_with_1009(served: str) -> None:
    with connect(_ws_url(served), subprotocols=["graphql-transport-ws"],
                 max_size=None, open_timeout=10) as ws:
        ws.send(json.dumps({"type": "connection_init", "payload": {}}))
        assert json.loads(ws.recv(timeout=10))["type"] == "connection_ack"
        # Within the cap: the server reads it (an unknown operation id answers nothing
        # harmful; a ping is answered).
        ws.send(json.dumps({"type": "ping", "payload": {"pad": "p" * 60_000}}))
        assert json.loads(ws.recv(timeout=10))["type"] == "pong"
        ws.send(json.dumps({"type": "ping", "payload": {"pad": "p" * DEFAULT_MAX_BODY_BYTES}}))
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=10)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009


def _ws_handshake(sock: socket.socket) -> None:
    key = base64.b64encode(os.urandom(16))
    sock.sendall(b"GET /graphql HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                 b"Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                 b"Sec-WebSocket-Protocol: graphql-transport-ws\r\n"
                 b"Sec-WebSocket-Key: " + key + b"\r\n\r\n")
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        assert chunk, head
        head += chunk
    assert head.startswith(b"HTTP/1.1 101 "), head


def test_a_huge_websocket_frame_is_refused_from_its_header(served: str) -> None:
    """A frame that announces 15 MB is refused from its length alone: the server answers
    with a close frame, 1009, while the client has sent only the frame's start."""
    with socket.create_connection(_address(served), timeout=10) as sock:
        _ws_handshake(sock)
        mask = os.urandom(4)
        sock.sendall(bytes([0x81, 0x80 | 127]) + struct.pack("!Q", 15 * 1024 * 1024) + mask
                     + bytes(b ^ mask[i % 4] for i, b in enumerate(b"x" * 4096)))
        answer = _answer(sock)
    assert answer[:1] == b"\x88", answer[:20]  # a close frame
    (code,) = struct.unpack("!H", answer[2:4])
    assert code == 1009
