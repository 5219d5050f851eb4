"""Issue 20, item 11: GraphQL does what REST does -- a document of several operations needs
``operationName`` (GraphQL spec: a request error, not the first operation run), over HTTP and
WebSocket; ``matchUpdated(after:)`` beyond the current version starts from the current state
like REST's event stream, and a negative ``after`` is refused like REST's 400, not a replay
of every version. REST and GraphQL are asked side by side on one app."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from service.app import Settings, create_app
from service.store import SqliteStore
from tests.graphql.client import PROTOCOL, GraphQLClient
from tests.graphql.conftest import create_match
from tests.graphql.queries import MATCH_UPDATED
from tests.graphql.test_operations import DRAW, PASS, act

TWO = "query A { games { id } } query B { games { id } }"
MIXED = ('query A { games { id } } '
         'mutation B { createMatch(game: "toy", players: 2) { __typename } }')
MULTIPLE = "Must provide operation name if query contains multiple operations."


@pytest.fixture
def both() -> Iterator[tuple[TestClient, GraphQLClient]]:
    """One app serving REST and GraphQL; event streams end after half a second, so a test
    reads a REST stream whole."""
    app = create_app(SqliteStore(":memory:"), settings=Settings(sse_max_seconds=0.5))
    with TestClient(app) as http:
        graphql = next(r for r in app.routes if getattr(r, "path", "") == "/graphql")
        yield http, GraphQLClient(http, graphql.endpoint.schema)  # type: ignore[attr-defined]


def _sse(http: TestClient, url: str) -> list[dict[str, str]]:
    events: list[dict[str, str]] = []
    current: dict[str, str] = {}
    with http.stream("GET", url) as answer:
        assert answer.status_code == 200, answer.read()
        for line in answer.iter_lines():
            if line == "":
                if "data" in current:
                    events.append(current)
                current = {}
            elif not line.startswith(":"):
                field, _, value = line.partition(":")
                current[field] = value.removeprefix(" ")
    return events


def _first_update(gql: GraphQLClient, variables: dict[str, Any]) -> dict[str, Any]:
    with gql.subscribe(MATCH_UPDATED, variables) as sub:
        update: dict[str, Any] = sub.next()["matchUpdated"]
        return update


@pytest.mark.parametrize("document", [TWO, MIXED])
def test_several_operations_without_a_name_are_refused_over_http(
    both: tuple[TestClient, GraphQLClient], document: str
) -> None:
    http, _ = both
    posted = http.post("/graphql", json={"query": document}).json()
    assert posted["data"] is None
    assert MULTIPLE in [e["message"] for e in posted["errors"]]
    got = http.get("/graphql", params={"query": TWO}).json()
    assert got == {"data": None, "errors": [{"message": MULTIPLE}]}
    # With a name, the named one runs (and only it).
    named = http.post("/graphql", json={"query": TWO, "operationName": "B"}).json()
    assert named["data"]["games"] and "errors" not in named


def test_several_operations_without_a_name_are_refused_over_websocket(
    both: tuple[TestClient, GraphQLClient],
) -> None:
    http, gql = both
    match_id, _ = create_match(gql)
    two_subscriptions = (
        "subscription A { matchUpdated(matchId: $ID) { __typename } } "
        "subscription B { matchUpdated(matchId: $ID) { __typename } }"
    ).replace("$ID", f'"{match_id}"')
    with http.websocket_connect("/graphql", subprotocols=[PROTOCOL]) as ws:
        ws.send_json({"type": "connection_init"})
        assert ws.receive_json()["type"] == "connection_ack"
        for number, document in enumerate((two_subscriptions, TWO), start=1):
            ws.send_json({"id": str(number), "type": "subscribe",
                          "payload": {"query": document}})
            refused = ws.receive_json()
            assert refused == {"id": str(number), "type": "error",
                               "payload": [{"message": MULTIPLE}]}
        ws.send_json({"id": "3", "type": "subscribe",
                      "payload": {"query": two_subscriptions, "operationName": "B"}})
        named = ws.receive_json()
        assert named["type"] == "next", named
        assert named["payload"]["data"]["matchUpdated"]["__typename"] == "MatchState"


def test_after_beyond_the_current_version_starts_from_the_current_state_on_both(
    both: tuple[TestClient, GraphQLClient],
) -> None:
    http, gql = both
    match_id, tokens = create_match(gql)
    act(gql, match_id, tokens[0], DRAW)
    act(gql, match_id, tokens[1], PASS)
    rest = _sse(http, f"/v1/matches/{match_id}/events?after=99")
    assert [(e["event"], e["id"]) for e in rest] == [("state", "2")]
    update = _first_update(gql, {"id": match_id, "after": 99})
    assert (update["__typename"], update["version"]) == ("MatchState", 2)


def test_a_negative_after_is_refused_on_both(
    both: tuple[TestClient, GraphQLClient],
) -> None:
    http, gql = both
    match_id, tokens = create_match(gql)
    act(gql, match_id, tokens[0], DRAW)
    rest = http.get(f"/v1/matches/{match_id}/events?after=-1")
    assert (rest.status_code, rest.json()["code"]) == (400, "malformed")
    with gql.subscribe(MATCH_UPDATED, {"id": match_id, "after": -1}) as sub:
        refused = sub.next()["matchUpdated"]
        assert (refused["__typename"], refused["code"]) == ("BadRequest", "malformed")
        assert "after" in refused["message"]
        sub.expect_complete()
