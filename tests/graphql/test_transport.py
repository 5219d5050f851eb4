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
