"""Refusals of the GraphQL transport (before any operation runs) are problem documents, like
REST's: JSON with a stable ``code``, never plain text."""

from __future__ import annotations

import pytest

from tests.graphql.client import GraphQLClient

PROBLEM = "application/problem+json"


@pytest.mark.parametrize(
    ("content", "content_type", "status", "code"),
    [
        (b"{not json", "application/json", 400, "malformed"),
        (b"", "application/json", 400, "malformed"),
        (b"{}", "application/json", 400, "malformed"),  # no query
        (b'{"query": 7}', "application/json", 400, "malformed"),
        (b'{"query": "{ games { id } }", "variables": []}', "application/json", 400,
         "malformed"),
        (b"query { games { id } }", "text/plain", 415, "unsupported_media_type"),
    ],
)
def test_transport_errors_are_json_problems(
    gql: GraphQLClient, content: bytes, content_type: str, status: int, code: str
) -> None:
    response = gql.http.post("/graphql", content=content, headers={"Content-Type": content_type})
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    problem = response.json()
    assert (problem["status"], problem["code"]) == (status, code)
    assert problem["title"] and problem["detail"]


def test_a_mutation_over_get_is_a_json_problem(gql: GraphQLClient) -> None:
    response = gql.http.get(
        "/graphql", params={"query": 'mutation { createMatch(game: "toy", players: 2) '
                            "{ __typename } }"})
    assert response.status_code in (400, 405)
    assert response.headers["content-type"] == PROBLEM
    assert response.json()["code"] in ("malformed", "method_not_allowed")


def test_get_without_a_query_is_405_json_and_html_for_a_browser(gql: GraphQLClient) -> None:
    refused = gql.http.get("/graphql")
    assert refused.status_code == 405
    assert refused.headers["content-type"] == PROBLEM
    assert refused.json()["code"] == "method_not_allowed"
    page = gql.http.get("/graphql", headers={"Accept": "text/html"})
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")


SUBSCRIPTION = "subscription Watch { matchUpdated(matchId: \"m1\") { __typename } }"


@pytest.mark.parametrize(
    ("method", "host", "proto", "url"),
    [
        ("POST", "games.example:8123", None, "ws://games.example:8123/graphql"),
        ("GET", "games.example:8123", None, "ws://games.example:8123/graphql"),
        ("POST", "play.example", "https", "wss://play.example/graphql"),
    ],
)
def test_a_subscription_over_http_says_to_use_the_websocket(
    gql: GraphQLClient, caplog: pytest.LogCaptureFixture, method: str, host: str,
    proto: str | None, url: str,
) -> None:
    """Issue 30 item 7: not 200 "Unexpected error." with a traceback in the log, but 400 with
    what to do instead: the WebSocket URL (as the request's host names it) and protocol."""
    import logging

    caplog.set_level(logging.DEBUG)
    base = f"{proto or 'http'}://{host}"
    if method == "POST":
        response = gql.http.post(f"{base}/graphql", json={"query": SUBSCRIPTION})
    else:
        response = gql.http.get(f"{base}/graphql", params={"query": SUBSCRIPTION})
    assert response.status_code == 400, response.text
    assert response.headers["content-type"] == PROBLEM
    problem = response.json()
    assert problem["code"] == "malformed"
    assert "WebSocket" in problem["detail"]
    assert "graphql-transport-ws" in problem["detail"]
    assert url in problem["detail"]
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]


def test_the_subscription_refusal_is_translated_and_named_operations_are_told_apart(
    gql: GraphQLClient,
) -> None:
    czech = gql.http.post("http://h.example/graphql?lang=cs", json={"query": SUBSCRIPTION})
    assert czech.status_code == 400
    assert "ws://h.example/graphql" in czech.json()["detail"]
    assert "graphql-transport-ws" in czech.json()["detail"]
    assert "WebSocket" in czech.json()["detail"]
    assert "připojte" in czech.json()["detail"]
    # A document holding a query and a subscription: the operation named runs.
    both = SUBSCRIPTION + " query Games { games { id } }"
    query = gql.http.post("/graphql", json={"query": both, "operationName": "Games"})
    assert query.status_code == 200 and query.json()["data"]["games"]
    sub = gql.http.post("/graphql", json={"query": both, "operationName": "Watch"})
    assert sub.status_code == 400 and "WebSocket" in sub.json()["detail"]
