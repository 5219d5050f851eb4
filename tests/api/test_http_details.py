"""HTTP details of the REST API: entity tags (If-Match compares strongly and refuses what is
no entity tag; legal-moves revalidates with If-None-Match), CORS (every method the routes
use, the headers browser code reads), and event streams bounded by ``sse_max_seconds``."""

from __future__ import annotations

import json

import pytest
from starlette.testclient import TestClient

from service.api.rest.http import NEVER_MATCHES, entity_tags, parse_if_match
from service.app import EXPOSED_HEADERS, cors_methods
from service.errors import ApiError
from tests.api.conftest import bearer, create, make_app
from tests.api.test_errors import act, assert_problem

ORIGIN = "https://play.example"


@pytest.mark.parametrize(
    ("header", "pinned"),
    [
        (None, None),
        ("*", None),
        ('"7"', 7),
        ('"7" , "8"', 7),
        ('W/"7"', NEVER_MATCHES),  # weak: never matches under strong comparison
        ('W/"7", "9"', 9),
        ('"7-x"', NEVER_MATCHES),  # a tag of board.svg, no version
        ('""', NEVER_MATCHES),
        ('"7",', 7),  # empty list elements are allowed (RFC 9110 5.6.1)
        (' , "7" ,', 7),
        ('"a,b", "8"', 8),  # a comma inside a tag is part of it
        ("", NEVER_MATCHES),  # an empty list matches nothing
        (" ", NEVER_MATCHES),
    ],
)
def test_if_match_pins_strong_version_tags(header: str | None, pinned: int | None) -> None:
    assert parse_if_match(header) == pinned


@pytest.mark.parametrize(
    "header",
    ["0", "7", "W/7", '"7', '"7" "8"', '*, "7"', 'w/"7"', '"a"b', '"7", 8', "**"],
)
def test_if_match_that_is_no_entity_tag_list_is_malformed(header: str) -> None:
    with pytest.raises(ApiError) as refused:
        parse_if_match(header)
    assert (refused.value.status, refused.value.code) == (400, "malformed")


def test_entity_tags_keep_weakness_and_opaque_value() -> None:
    assert entity_tags('W/"a", "b"') == [(True, "a"), (False, "b")]
    assert entity_tags("") == []


def test_unquoted_if_match_is_400_and_weak_is_412_not_a_match(client: TestClient) -> None:
    match = create(client)
    move = {"action": {"type": "pass"}}
    assert_problem(act(client, match, 0, move, **{"If-Match": "0"}), 400, "malformed")
    weak = assert_problem(act(client, match, 0, move, **{"If-Match": 'W/"0"'}), 412,
                          "precondition_failed")
    assert weak["currentVersion"] == 0
    assert "-1" not in weak["detail"]
    assert "strong" in weak["detail"]
    strong = act(client, match, 0, move, **{"If-Match": '"0"'})
    assert strong.status_code == 200, strong.text


def test_legal_moves_answer_304_to_their_etag_until_the_match_moves(client: TestClient) -> None:
    match = create(client)
    first = client.get(f"{match.url}/legal-moves", headers=match.auth(0))
    tag = first.headers["etag"]
    assert tag == '"0"'
    again = client.get(f"{match.url}/legal-moves",
                       headers={**match.auth(0), "If-None-Match": tag})
    assert again.status_code == 304
    assert again.content == b""
    assert again.headers["etag"] == tag
    assert act(client, match, 0, {"action": {"type": "pass"}}).status_code == 200
    moved = client.get(f"{match.url}/legal-moves",
                       headers={**match.auth(0), "If-None-Match": tag})
    assert moved.status_code == 200
    assert moved.headers["etag"] == '"1"'


def test_cors_preflight_allows_every_method_the_routes_use() -> None:
    app = make_app(cors_origins=(ORIGIN,))
    methods = cors_methods(list(app.routes))
    assert {"GET", "POST", "OPTIONS"} <= set(methods)
    with TestClient(app) as client:
        for method in ("GET", "POST"):
            preflight = client.options("/v1/matches", headers={
                "Origin": ORIGIN, "Access-Control-Request-Method": method,
                "Access-Control-Request-Headers": "authorization, content-type, if-match",
            })
            assert preflight.status_code == 200, preflight.text
            allowed = {m.strip() for m in preflight.headers["access-control-allow-methods"]
                       .split(",")}
            assert set(methods) <= allowed


def test_cors_methods_follow_the_routes() -> None:
    from starlette.routing import Route

    async def endpoint(request: object) -> None:  # pragma: no cover - never called
        return None

    routes = [Route("/a", endpoint, methods=["DELETE"]), Route("/b", endpoint, methods=["PATCH"])]
    assert {"DELETE", "PATCH", "OPTIONS"} <= set(cors_methods(list(routes)))


def test_cors_exposes_the_headers_clients_read() -> None:
    app = make_app(cors_origins=(ORIGIN,))
    with TestClient(app) as client:
        response = client.get("/v1/games", headers={"Origin": ORIGIN})
    exposed = {h.strip().lower() for h in
               response.headers["access-control-expose-headers"].split(",")}
    wanted = {"etag", "location", "retry-after", "content-language", "ratelimit",
              "ratelimit-policy"}
    assert wanted <= exposed
    assert {h.lower() for h in EXPOSED_HEADERS} == exposed


def _events(text: str) -> list[dict[str, str]]:
    events: list[dict[str, str]] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.split("\n"):
            if line and not line.startswith(":"):
                name, _, value = line.partition(":")
                fields[name] = value.removeprefix(" ")
        if "data" in fields:
            events.append(fields)
    return events


def test_a_stream_ends_after_sse_max_seconds_and_resumes_losslessly() -> None:
    app = make_app(sse_max_seconds=0.3)
    with TestClient(app) as client:
        match = create(client)
        # An active match: without the bound this stream would stay open.
        first = client.get(f"{match.url}/events", headers=match.auth(0))
        assert first.status_code == 200
        [event] = _events(first.text)
        assert (event["event"], event["id"]) == ("state", "0")
        assert json.loads(event["data"])["version"] == 0
        assert act(client, match, 0, {"action": {"type": "pass"}}).status_code == 200
        resumed = client.get(f"{match.url}/events",
                             headers={**match.auth(0), "Last-Event-ID": event["id"]})
        assert [e["id"] for e in _events(resumed.text)] == ["1"]


def test_a_spectator_stream_needs_no_credentials() -> None:
    app = make_app(sse_max_seconds=0.2)
    with TestClient(app) as client:
        match = create(client)
        stream = client.get(f"{match.url}/events")
        [event] = _events(stream.text)
        assert json.loads(event["data"])["seat"] is None
        refused = client.get(f"{match.url}/events", headers=bearer("sky_not-a-seat"))
        assert_problem(refused, 401, "unauthorized")


@pytest.mark.parametrize(("path", "query", "headers"), [
    ("log", "after=9007199254740992", {}),            # beyond the schema's maximum (2^53-1)
    ("events", "after=9007199254740992", {}),
    ("log", "after=%C2%B2", {}),                       # '²' is a digit to str.isdigit()
    ("events", "after=", {"Last-Event-ID": "0"}),      # validated although Last-Event-ID wins
])
def test_after_is_validated_on_log_and_events(
        toy_game: None, path: str, query: str, headers: dict[str, str]) -> None:
    with TestClient(make_app()) as client:
        match = create(client)
        answer = client.get(f"/v1/matches/{match.id}/{path}?{query}",
                            headers={**bearer(match.tokens[0]), **headers})
        assert_problem(answer, 400, "malformed")
