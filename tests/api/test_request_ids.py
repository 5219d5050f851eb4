"""Request ids (issue 20, item 13): every response carries ``X-Request-Id`` -- kept from a
trusted proxy when sane, else new -- every problem document names it (``requestId``) and
every log line written while handling the request names it."""

from __future__ import annotations

import logging
import re
import socket
from pathlib import Path

import httpx
import pytest
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.testclient import TestClient
from starlette.types import ASGIApp, Receive, Scope, Send

from service.api.request_ids import MAX_LENGTH
from tests.api.conftest import TOY, create, make_app, serve_in_thread
from tests.support.live_serve import skyline_serve

HEX_ID = re.compile(r"[0-9a-f]{32}")


def _id(response: httpx.Response) -> str:
    found = response.headers.get("x-request-id")
    assert found, f"no X-Request-Id on {response.request.method} {response.request.url}"
    return found


def _problem_names_its_id(response: httpx.Response) -> str:
    assert response.headers["content-type"].startswith("application/problem+json")
    request_id = _id(response)
    assert response.json()["requestId"] == request_id
    return request_id


def test_every_rest_answer_carries_a_new_id(client: TestClient) -> None:
    ok = client.get("/v1/games")
    again = client.get("/v1/games")
    assert HEX_ID.fullmatch(_id(ok)) and HEX_ID.fullmatch(_id(again))
    assert _id(ok) != _id(again)
    created = client.post("/v1/matches", json={"game": TOY, "players": 2})
    assert created.status_code == 201 and HEX_ID.fullmatch(_id(created))
    assert HEX_ID.fullmatch(_id(client.get("/healthz")))
    assert HEX_ID.fullmatch(_id(client.get("/metrics")))


def test_every_problem_names_its_id(client: TestClient) -> None:
    match = create(client)
    refusals = [
        client.get("/nowhere"),  # 404 from the router
        client.get("/v1/matches/nosuchmatch"),  # 404 from the service
        client.put("/v1/games"),  # 405
        client.post("/v1/matches", content=b"{", headers={"Content-Type": "application/json"}),
        client.post(f"{match.url}/actions", json={"action": {"type": "pass"}}),  # 401
        client.post("/v1/matches", content=b"x" * 70_000,  # 413, from the body limit
                    headers={"Content-Type": "application/json"}),
        client.get("/graphql"),  # GraphQL's own problem (405)
    ]
    statuses = [r.status_code for r in refusals]
    assert statuses == [404, 404, 405, 400, 401, 413, 405]
    ids = {_problem_names_its_id(r) for r in refusals}
    assert len(ids) == len(refusals)


def test_graphql_answers_carry_the_id(client: TestClient) -> None:
    answer = client.post("/graphql", json={"query": "{ games { id } }"})
    assert answer.status_code == 200
    assert HEX_ID.fullmatch(_id(answer))


class _Boom:
    """A middleware that fails: an error outside the routes and their exception handlers."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == "/boom-middleware":
            raise RuntimeError("a middleware broke")
        await self.app(scope, receive, send)


def test_a_500_from_a_middleware_names_its_id_in_body_header_and_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = make_app()
    app.user_middleware.insert(0, Middleware(_Boom))  # before the stack is built

    async def boom(request: Request) -> Response:
        logging.getLogger("skyline.matches").warning("about to fail")
        raise RuntimeError("a route broke")

    app.router.routes.append(Route("/boom-route", boom))
    caplog.set_level(logging.INFO)
    with TestClient(app, raise_server_exceptions=False) as client:
        for path in ("/boom-middleware", "/boom-route"):
            caplog.clear()
            failed = client.get(path)
            assert failed.status_code == 500
            assert failed.json()["code"] == "internal"
            request_id = _problem_names_its_id(failed)
            logged = [r for r in caplog.records if r.name.startswith("skyline")]
            assert logged, "the error was not logged"
            for record in logged:
                assert record.request_id == request_id  # type: ignore[attr-defined]
                assert f"[request_id={request_id}]" in record.getMessage()
    # Outside a request, no id.
    record = logging.getLogger("skyline").makeRecord("skyline", logging.INFO, "x", 1, "idle",
                                                     (), None)
    assert record.request_id == ""  # type: ignore[attr-defined]
    assert record.getMessage() == "idle"


@pytest.mark.parametrize(("trusted", "sent", "kept"), [
    (("testclient",), "lb-7f3a9c.2", True),
    (("testclient",), "Root=1-67891233-abcdef012345678912345678", True),
    ((), "lb-7f3a9c.2", False),  # not from a trusted proxy: the client's word is not taken
    (("10.0.0.0/8",), "lb-7f3a9c.2", False),  # a trusted list without this peer
    (("testclient",), "has space", False),
    (("testclient",), "semi;colon", False),
    (("testclient",), "100%", False),
    (("testclient",), "é", False),
    (("testclient",), "x" * (MAX_LENGTH + 1), False),
    (("testclient",), "", False),
])
def test_a_trusted_proxy_s_sane_id_is_kept(trusted: tuple[str, ...], sent: str,
                                           kept: bool) -> None:
    with TestClient(make_app(trusted_proxies=trusted)) as client:
        headers = {"X-Request-Id": sent.encode("utf-8") if sent == "é" else sent}
        answer = client.get("/v1/matches/nosuchmatch", headers=headers)  # type: ignore[arg-type]
    request_id = _problem_names_its_id(answer)
    if kept:
        assert request_id == sent
    else:
        assert HEX_ID.fullmatch(request_id)


def test_browsers_may_read_the_id_cross_origin() -> None:
    with TestClient(make_app(cors_origins=("https://play.example",))) as client:
        answer = client.get("/v1/games", headers={"Origin": "https://play.example"})
    exposed = answer.headers["access-control-expose-headers"].lower()
    assert "x-request-id" in exposed


def _websocket_handshake(url: str) -> dict[str, str]:
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(
            b"GET /graphql HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
            b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            b"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n"
        )
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
    head = data.split(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
    assert head[0].startswith("HTTP/1.1 101"), head
    return {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in head[1:])}


@pytest.mark.slow
def test_streams_and_websockets_carry_the_id_on_a_real_server() -> None:
    with serve_in_thread(make_app()) as live, httpx.Client(base_url=live.url) as http:
        created = http.post("/v1/matches", json={"game": TOY, "players": 2})
        match_id = created.json()["matchId"]
        with http.stream("GET", f"/v1/matches/{match_id}/events") as stream:
            assert stream.status_code == 200
            assert stream.headers["content-type"].startswith("text/event-stream")
            assert HEX_ID.fullmatch(_id(stream))
        bad_resume = http.get(f"/v1/matches/{match_id}/events", headers={"Last-Event-ID": "x"})
        assert bad_resume.status_code == 400
        _problem_names_its_id(bad_resume)
        handshake = _websocket_handshake(live.url)
        assert HEX_ID.fullmatch(handshake["x-request-id"])


@pytest.mark.slow
def test_serve_s_log_lines_name_the_id(tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    with log.open("wb") as output, skyline_serve(
        ["--trusted-proxies", "127.0.0.1"], output=output, log_level="info"
    ) as url:
        kept = httpx.get(f"{url}/nowhere", headers={"X-Request-Id": "proxy-id-1"})
        assert _problem_names_its_id(kept) == "proxy-id-1"
        fresh = httpx.get(f"{url}/v1/games")
        assert HEX_ID.fullmatch(_id(fresh))
    lines = log.read_text().splitlines()
    assert any('"GET /nowhere HTTP/1.1" 404' in line and line.endswith("[request_id=proxy-id-1]")
               for line in lines), lines
    assert any('"GET /v1/games HTTP/1.1" 200' in line
               and line.endswith(f"[request_id={_id(fresh)}]") for line in lines), lines
