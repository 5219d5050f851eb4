"""Hostile input (issue 20, items 4, 5 and 10): what an adversarial client sent that was read
wrong or answered 500.

- Item 4: numbers in query values and headers are ASCII digits only. ``str.isdigit`` takes
  ``"²"`` (which ``int`` refuses: a 500) and ``int`` takes ``"٣"`` (3, silently).
- Item 5: JSON nested deeper than ``MAX_JSON_DEPTH`` is refused with 400 ``malformed`` (a
  WebSocket closes with 4400) before it is parsed; a write checks its credential before it
  parses its body.
- Item 10: a body is read as JSON only when it says so (415 ``unsupported_media_type``
  otherwise); an empty body needs no content type.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from service.api.bodies import MAX_JSON_DEPTH, is_json_media, too_deep
from service.api.rest.http import ascii_int
from service.cli import build_parser
from service.i18n.negotiation import preferred_languages
from tests.api.conftest import TOY, Match, bearer, create, make_app

PROTOCOL = "graphql-transport-ws"
# Digits of other scripts, and digit-like characters: superscript two (byte 0xB2 in
# Latin-1), circled one, Arabic-Indic three, Devanagari three, fullwidth three.
FOREIGN_DIGITS = ["²", "①", "٣", "३", "３", "1٣"]
DEEP = 3000
"""As deep as the adversarial test nested (the parser's recursion gives out near 1000)."""


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(make_app(), raise_server_exceptions=False) as test_client:
        yield test_client


def nested(depth: int, inner: str = "1") -> str:
    return "[" * depth + inner + "]" * depth


def assert_problem(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body: dict[str, Any] = response.json()
    assert body["code"] == code, body
    return body


def guest_token(client: TestClient) -> str:
    answer = client.post("/v1/players", json={"name": "Ann"})
    assert answer.status_code == 201, answer.text
    token: str = answer.json()["token"]
    return token


def version_of(client: TestClient, match: Match) -> int:
    version: int = client.get(match.url).json()["version"]
    return version


# -- item 4: ASCII digits only ------------------------------------------------------------


@pytest.mark.parametrize("digits", FOREIGN_DIGITS)
@pytest.mark.parametrize("where", [
    "log?after={}", "log?limit={}", "events?after={}", "events?snapshotEvery={}",
    "board.svg?highlight={}",
])
def test_foreign_digits_in_a_match_query_are_refused(
    client: TestClient, where: str, digits: str
) -> None:
    match = create(client)
    response = client.get(f"{match.url}/{where.format(digits)}", headers=match.auth(0))
    assert_problem(response, 400, "malformed")


@pytest.mark.parametrize("digits", FOREIGN_DIGITS)
def test_foreign_digits_elsewhere_are_refused(client: TestClient, digits: str) -> None:
    assert_problem(client.get(f"/v1/games/{TOY}?rulesVersion={digits}"), 400, "malformed")
    token = guest_token(client)
    response = client.get(f"/v1/me/matches?limit={digits}", headers=bearer(token))
    assert_problem(response, 400, "malformed")


def test_a_highlight_in_arabic_indic_digits_is_not_taken_as_a_number(
    client: TestClient,
) -> None:
    """``int("٣") == 3``: the toy game has no picture (422), which the server answered for
    ``highlight=٣`` as for ``highlight=3``; the value is refused before that now."""
    match = create(client)
    assert_problem(client.get(f"{match.url}/board.svg?highlight=3"), 422, "no_picture")
    assert_problem(client.get(f"{match.url}/board.svg?highlight=٣"), 400, "malformed")


@pytest.mark.parametrize("value", [b"\xb2", b"\xb9", b"\xd9\xa3", b"1\xb2", b" 1_0"])
def test_a_last_event_id_of_foreign_digits_is_refused(client: TestClient, value: bytes) -> None:
    """Header bytes arrive as Latin-1: 0xB2 is ``"²"``, a digit to ``str.isdigit``."""
    match = create(client)
    response = client.get(f"{match.url}/events", headers={**match.auth(0), "Last-Event-ID": value})
    assert_problem(response, 400, "malformed")
    token = guest_token(client)
    response = client.get("/v1/me/events", headers={**bearer(token), "Last-Event-ID": value})
    assert_problem(response, 400, "malformed")


def test_ascii_int_takes_ascii_digits_only() -> None:
    assert ascii_int("0", 3) == 0 and ascii_int("042", 3) == 42
    for text in ["", "٣", "²", "①", "３", "+1", "-1", "1_0", " 1", "1\n", "1234"]:
        assert ascii_int(text, 3) is None, text


def test_quality_values_in_foreign_digits_are_malformed() -> None:
    """``float("٠.٩") == 0.9``: a q-value in other digits is a malformed range (dropped)."""
    assert preferred_languages("de;q=0.9, cs;q=0.5") == ["de", "cs"]
    assert preferred_languages("de;q=٠.٩, cs;q=0.5") == ["cs"]
    assert preferred_languages("de;q=0_9, cs;q=0.5") == ["cs"]


@pytest.mark.parametrize("argv", [
    ["serve", "--port", "٨٠٨٠"],
    ["serve", "--max-body-bytes", "٣"],
    ["serve", "--sse-max-seconds", "٣"],
    ["worker", "--processes", "٣"],
])
def test_command_line_numbers_are_ascii_digits(argv: list[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(argv)


# -- item 5: JSON nesting ------------------------------------------------------------------


def test_too_deep_counts_nesting_without_parsing() -> None:
    assert not too_deep(nested(MAX_JSON_DEPTH)) and too_deep(nested(MAX_JSON_DEPTH + 1))
    assert not too_deep(json.dumps({"a": [{"b": [1]}] * 100}))
    # Brackets inside strings do not count, escaped quotes included.
    assert not too_deep(json.dumps(["[" * 100, '"{' * 100, "\\" * 7]))
    assert too_deep(b'{"a":' * (MAX_JSON_DEPTH + 1))
    assert too_deep(nested(DEEP).encode())


def assert_too_deep(response: Any) -> None:
    body = assert_problem(response, 400, "malformed")
    assert f"{MAX_JSON_DEPTH} levels deep" in body["detail"], body


def test_deep_json_is_refused_in_create(client: TestClient) -> None:
    body = f'{{"game": "{TOY}", "players": 2, "options": {{"x": {nested(DEEP)}}}}}'
    assert_too_deep(client.post("/v1/matches", content=body,
                                headers={"content-type": "application/json"}))
    # At the limit, the body is parsed and its options judged on their own.
    body = f'{{"game": "{TOY}", "players": 2, "options": {{"x": {nested(MAX_JSON_DEPTH - 2)}}}}}'
    refused = client.post("/v1/matches", content=body,
                          headers={"content-type": "application/json"})
    assert refused.status_code == 422 and "levels deep" not in refused.json()["detail"]


def test_deep_json_is_refused_in_act_and_nothing_changes(client: TestClient) -> None:
    match = create(client)
    body = f'{{"action": {{"type": {nested(DEEP)}}}}}'
    response = client.post(f"{match.url}/actions", content=body,
                           headers={**match.auth(0), "content-type": "application/json"})
    assert_too_deep(response)
    assert version_of(client, match) == 0


def test_act_checks_the_token_before_it_parses_the_body(client: TestClient) -> None:
    """A well-formed seat token of another match (or none of any match) reached the parser:
    now the answer is 401 whatever the body, deep, or not even JSON."""
    match, other = create(client), create(client)
    for body, content_type in [(f'{{"action": {nested(DEEP)}}}', "application/json"),
                               ("not json", "text/plain")]:
        response = client.post(f"{match.url}/actions", content=body,
                               headers={**other.auth(0), "content-type": content_type})
        assert_problem(response, 401, "unauthorized")
    response = client.post(f"{match.url}/seats/0/bot", content=f'{{"kind": {nested(DEEP)}}}',
                           headers={**other.auth(0), "content-type": "application/json"})
    assert_problem(response, 401, "unauthorized")
    response = client.post("/v1/matches/nosuchmatch0000/actions", content="{",
                           headers={**other.auth(0), "content-type": "application/json"})
    assert_problem(response, 404, "match_not_found")


def test_deep_json_is_refused_in_every_rest_body(client: TestClient) -> None:
    match = create(client)
    headers = {"content-type": "application/json"}
    assert_too_deep(client.post("/v1/players", content=f'{{"name": {nested(DEEP)}}}',
                                headers=headers))
    assert_too_deep(client.post(f"{match.url}/seats/0/bot",
                                content=f'{{"kind": {nested(DEEP)}}}',
                                headers={**headers, **match.auth(0)}))
    assert version_of(client, match) == 0


def test_deep_json_is_refused_in_graphql_bodies_and_variables(client: TestClient) -> None:
    headers = {"content-type": "application/json"}
    query = json.dumps("query Q($x: Int) { games { id } }")
    for body in [
        f'{{"query": {query}, "variables": {{"x": {nested(DEEP)}}}}}',
        f'{{"query": {query}, "extensions": {{"x": {nested(DEEP)}}}}}',
        nested(DEEP),
    ]:
        assert_too_deep(client.post("/graphql", content=body, headers=headers))
    response = client.get("/graphql", params={"query": "{ games { id } }",
                                              "variables": f'{{"x": {nested(DEEP)}}}'})
    assert_too_deep(response)
    # A move nested too deep in variables never reaches the match.
    match = create(client)
    act = json.dumps("mutation A($m: ID!, $a: JSON) { act(matchId: $m, action: $a) "
                     "{ __typename } }")
    body = f'{{"query": {act}, "variables": {{"m": "{match.id}", "a": {nested(DEEP)}}}}}'
    assert_too_deep(client.post("/graphql", content=body, headers={**headers, **match.auth(0)}))
    assert version_of(client, match) == 0


@pytest.mark.parametrize("body", [b"\x80", b"{\"query\": \"\xff\xfe\"}", b"\xc3(",
                                  b"\xed\xa0\x80"])
def test_bytes_that_are_not_text_are_malformed_at_graphql(client: TestClient, body: bytes) -> None:
    """Found by tests/api/test_random_input.py: json.loads raises UnicodeDecodeError (not
    JSONDecodeError) on such bytes, which strawberry let through as a 500."""
    response = client.post("/graphql", content=body,
                           headers={"content-type": "application/json"})
    assert_problem(response, 400, "malformed")


def test_a_refused_graphql_document_is_not_logged_as_a_server_error(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    """strawberry logged every validation error at ERROR with the document around it: a
    client could fill the server's log at its own pace (and a live server whose output
    nobody read blocked on it). Only the server's own failures are errors."""
    caplog.set_level(logging.DEBUG)
    for query in ["{ nope }", "mutation { act(matchId: 1) { x } }", "{ games { id } "]:
        response = client.post("/graphql", json={"query": query})
        assert response.status_code in (200, 400), response.text
        assert response.json()["errors"], response.text
    errors = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert errors == [], [r.getMessage()[:200] for r in errors]
    assert any(r.name == "service.api.graphql.schema" for r in caplog.records)


def _closed(ws: Any) -> WebSocketDisconnect:
    with pytest.raises(WebSocketDisconnect) as closed:
        while True:
            ws.receive_json()
    return closed.value


def test_deep_json_in_connection_init_closes_with_4400(client: TestClient) -> None:
    with client.websocket_connect("/graphql", subprotocols=[PROTOCOL]) as ws:
        ws.send_text(f'{{"type": "connection_init", "payload": {{"x": {nested(DEEP)}}}}}')
        assert _closed(ws).code == 4400


def test_deep_json_in_a_subscribe_message_closes_with_4400(client: TestClient) -> None:
    match = create(client)
    with client.websocket_connect("/graphql", subprotocols=[PROTOCOL]) as ws:
        ws.send_json({"type": "connection_init", "payload": {}})
        assert ws.receive_json()["type"] == "connection_ack"
        query = json.dumps("subscription S($id: ID!) { matchUpdated(id: $id) "
                           "{ __typename } }")
        ws.send_text(f'{{"id": "1", "type": "subscribe", "payload": {{"query": {query}, '
                     f'"variables": {{"id": "{match.id}", "x": {nested(DEEP)}}}}}}}')
        assert _closed(ws).code == 4400
    # The server is fine: the next connection is acknowledged.
    with client.websocket_connect("/graphql", subprotocols=[PROTOCOL]) as ws:
        ws.send_json({"type": "connection_init"})
        assert ws.receive_json()["type"] == "connection_ack"


# -- item 10: bodies must say they are JSON ------------------------------------------------

NOT_JSON = [None, "text/plain", "text/plain; charset=utf-8", "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x", "application/json-seq", "text/json",
            "application/jsonx", "text/plain; application/json"]


def _headers(content_type: str | None, **extra: str) -> dict[str, str]:
    return extra if content_type is None else {"content-type": content_type, **extra}


@pytest.mark.parametrize("content_type", NOT_JSON)
def test_create_without_a_json_content_type_is_refused(
    client: TestClient, content_type: str | None
) -> None:
    """A cross-site form (or ``fetch`` without a preflight) cannot create a match."""
    body = json.dumps({"game": TOY, "players": 2})
    response = client.post("/v1/matches", content=body, headers=_headers(content_type))
    assert_problem(response, 415, "unsupported_media_type")


@pytest.mark.parametrize("content_type", NOT_JSON)
def test_every_rest_body_needs_a_json_content_type(
    client: TestClient, content_type: str | None
) -> None:
    match = create(client)
    act = json.dumps({"action": {"type": "draw"}})
    response = client.post(f"{match.url}/actions", content=act,
                           headers=_headers(content_type, **match.auth(0)))
    assert_problem(response, 415, "unsupported_media_type")
    response = client.post(f"{match.url}/seats/0/bot", content=json.dumps({"kind": "random"}),
                           headers=_headers(content_type, **match.auth(0)))
    assert_problem(response, 415, "unsupported_media_type")
    response = client.post("/v1/players", content=json.dumps({"name": "Ann"}),
                           headers=_headers(content_type))
    assert_problem(response, 415, "unsupported_media_type")
    assert version_of(client, match) == 0


@pytest.mark.parametrize("content_type", NOT_JSON)
def test_graphql_posts_need_a_json_content_type(
    client: TestClient, content_type: str | None
) -> None:
    body = json.dumps({"query": f'mutation {{ createMatch(game: "{TOY}", players: 2) '
                                "{ __typename } }"})
    response = client.post("/graphql", content=body, headers=_headers(content_type))
    assert_problem(response, 415, "unsupported_media_type")


@pytest.mark.parametrize("content_type", ["application/json", "application/json; charset=utf-8",
                                          "Application/JSON", "application/vnd.skyline+json"])
def test_json_content_types_are_taken(client: TestClient, content_type: str) -> None:
    body = json.dumps({"game": TOY, "players": 2})
    response = client.post("/v1/matches", content=body, headers={"content-type": content_type})
    assert response.status_code == 201, response.text
    body = json.dumps({"query": "{ games { id } }"})
    response = client.post("/graphql", content=body, headers={"content-type": content_type})
    assert response.status_code == 200 and "errors" not in response.json(), response.text


def test_what_counts_as_a_json_media_type() -> None:
    assert all(is_json_media(t) for t in ["application/json", "APPLICATION/Json ; charset=utf-8",
                                          "application/problem+json"])
    assert not any(is_json_media(t) for t in NOT_JSON)


def test_an_empty_body_needs_no_content_type(client: TestClient) -> None:
    """Empty, the body is judged for what it is (no JSON object: 400), never 415."""
    match = create(client)
    for url, headers in [("/v1/matches", {}), (f"{match.url}/actions", match.auth(0)),
                         (f"{match.url}/seats/0/bot", match.auth(0)), ("/v1/players", {}),
                         ("/graphql", {})]:
        assert_problem(client.post(url, headers=headers), 400, "malformed")
        assert_problem(client.post(url, content=b"", headers={**headers,
                                                              "content-type": "text/plain"}),
                       400, "malformed")
    # A POST that takes no body needs no content type either.
    response = client.post(f"{match.url}/stream-tickets", headers=match.auth(0))
    assert response.status_code == 200, response.text


def test_a_body_is_not_parsed_for_its_media_type_before_the_token(client: TestClient) -> None:
    """Order of the checks on a write: the credential (401), then the media type (415)."""
    match = create(client)
    response = client.post(f"{match.url}/actions", content="x",
                           headers={"content-type": "text/plain"})
    assert_problem(response, 401, "unauthorized")
    response = client.post(f"{match.url}/actions", content="x",
                           headers={**match.auth(0), "content-type": "text/plain"})
    assert_problem(response, 415, "unsupported_media_type")


async def test_a_subscriber_leaving_during_a_send_is_not_a_server_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Found by bench/soak.py: a GraphQL subscriber closing its WebSocket while a message was
    being sent left an ERROR traceback ("Exception in worker task"). The client's leaving is
    not the server's failure; any other exception of a worker task still is an ERROR."""
    from strawberry.http.exceptions import WebSocketDisconnected

    from service.api.graphql.routes import TransportWS, client_went_away

    handler = TransportWS.__new__(TransportWS)
    try:
        try:
            raise WebSocketDisconnected
        except WebSocketDisconnected as gone:
            raise RuntimeError("send failed") from gone
    except RuntimeError as chained:
        wrapped = chained
    assert client_went_away(wrapped) and not client_went_away(ValueError("x"))
    caplog.set_level(logging.DEBUG)
    await handler.handle_task_exception(WebSocketDisconnected())
    await handler.handle_task_exception(wrapped)
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    await handler.handle_task_exception(ValueError("a real failure"))
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == [
        "Exception in worker task"]
