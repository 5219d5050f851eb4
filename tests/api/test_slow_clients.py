"""Slow clients are cut (issue 20, item 7): ``skyline serve`` gives a client
``--header-timeout`` seconds to send a request's line and headers and ``--body-timeout``
seconds to send its body; past them it answers 408 (when part of a request came) and closes
the connection. uvicorn alone kept such connections open for as long as the client liked.

Each test drives a real ``skyline serve`` over raw sockets. The bounds are generous (the
server must cut within a multiple of its setting), never a measure of timing precision."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from service.api.serving import DEFAULT_BODY_TIMEOUT, DEFAULT_HEADER_TIMEOUT
from service.app import Settings
from service.cli import build_parser
from tests.support.live_serve import skyline_serve
from tests.support.slow import starts_processes

TIMEOUT = 1.0  # the server's setting in these tests (seconds)
CUT_WITHIN = 20.0  # the test's bound: a server that never cuts fails, a slow machine passes
TRICKLE = 0.25  # seconds between the slow client's bytes


@dataclass
class Served:
    url: str
    log: Path

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.url.removeprefix("http://").split(":")
        return host, int(port)


@pytest.fixture(scope="module")
@starts_processes
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    log = tmp_path_factory.mktemp("slow") / "serve.log"
    with log.open("wb") as output, skyline_serve(
        ["--header-timeout", str(TIMEOUT), "--body-timeout", str(TIMEOUT)],
        output=output, log_level="info",
    ) as url:
        yield Served(url, log)


def _trickle_until_cut(address: tuple[str, int], start: bytes, drip: bytes) -> bytes:
    """Send ``start``, then ``drip`` every ``TRICKLE`` seconds until the server closes the
    connection; what the server answered. Fails if it is still open after ``CUT_WITHIN``."""
    received = b""
    with socket.create_connection(address, timeout=5) as sock:
        if start:
            sock.sendall(start)
        sock.settimeout(TRICKLE)
        deadline = time.monotonic() + CUT_WITHIN
        while time.monotonic() < deadline:
            try:
                chunk = sock.recv(4096)
            except TimeoutError:
                chunk = None
            except ConnectionResetError:
                return received
            if chunk == b"":
                return received  # closed by the server
            if chunk:
                received += chunk
                continue
            if drip:
                try:
                    sock.sendall(drip)
                except (BrokenPipeError, ConnectionResetError):
                    return received
    raise AssertionError(f"the connection was still open after {CUT_WITHIN} s: {received!r}")


def _head(answer: bytes) -> tuple[str, dict[str, str]]:
    head = answer.split(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in head[1:])}
    return head[0], headers


def test_a_client_trickling_its_headers_is_cut(served: Served) -> None:
    answer = _trickle_until_cut(
        served.address, b"GET /v1/games HTTP/1.1\r\nHost: x\r\n", b"X-Slow: 1\r\n"
    )
    status, headers = _head(answer)
    assert status.startswith("HTTP/1.1 408"), answer
    assert headers["connection"] == "close"
    assert len(headers["x-request-id"]) == 32


def test_a_connection_that_sends_nothing_is_closed(served: Served) -> None:
    assert _trickle_until_cut(served.address, b"", b"") == b""


def test_a_client_trickling_its_body_is_cut(served: Served) -> None:
    answer = _trickle_until_cut(
        served.address,
        b"POST /v1/matches HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: 400\r\n\r\n{",
        b" ",
    )
    status, headers = _head(answer)
    assert status.startswith("HTTP/1.1 408"), answer
    request_id = headers["x-request-id"]
    # The app saw its client go: no error of ours in the log, and the cut names the request.
    log = served.log.read_text()
    assert "Traceback" not in log, log[-3000:]
    assert any("body not received" in line and f"[request_id={request_id}]" in line
               for line in log.splitlines()), log[-3000:]


def test_a_kept_alive_connection_gets_a_fresh_header_deadline_per_request(
    served: Served,
) -> None:
    with socket.create_connection(served.address, timeout=CUT_WITHIN) as sock:
        for _ in range(2):
            time.sleep(TIMEOUT / 2)
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            answer = b""
            while not answer.endswith(b'{"status":"ok"}'):
                chunk = sock.recv(4096)
                assert chunk, f"closed after {answer!r}"
                answer += chunk
            assert answer.startswith(b"HTTP/1.1 200"), answer


def test_prompt_clients_are_served(served: Served) -> None:
    with httpx.Client(base_url=served.url) as http:
        created = http.post("/v1/matches", json={"game": "ny1901", "players": 2})
        assert created.status_code == 201, created.text
        assert http.get("/healthz").status_code == 200


def test_what_is_no_http_gets_400_with_a_request_id(served: Served) -> None:
    answer = _trickle_until_cut(served.address, b"NOT HTTP AT ALL\r\n\r\n", b"")
    status, headers = _head(answer)
    assert status.startswith("HTTP/1.1 400"), answer
    assert len(headers["x-request-id"]) == 32


def test_the_defaults_cut_slow_clients() -> None:
    """``make run`` (``skyline serve`` without flags) and the compose replicas (no timeout
    set) run with these deadlines."""
    args = build_parser().parse_args(["serve"])
    assert (args.header_timeout, args.body_timeout) == (DEFAULT_HEADER_TIMEOUT,
                                                        DEFAULT_BODY_TIMEOUT)
    assert (Settings().header_timeout, Settings().body_timeout) == (DEFAULT_HEADER_TIMEOUT,
                                                                    DEFAULT_BODY_TIMEOUT)
    assert 0 < DEFAULT_HEADER_TIMEOUT <= 10 and 0 < DEFAULT_BODY_TIMEOUT <= 30


@pytest.mark.slow
def test_make_run_s_server_cuts_a_slow_client() -> None:
    """``skyline serve`` as ``make run`` starts it (default settings): a client trickling its
    headers is cut after the default header deadline."""
    with skyline_serve() as url:
        host, port = url.removeprefix("http://").split(":")
        answer = _trickle_until_cut((host, int(port)), b"GET / HTTP/1.1\r\n", b"X: y\r\n")
    assert answer.startswith(b"HTTP/1.1 408"), answer
