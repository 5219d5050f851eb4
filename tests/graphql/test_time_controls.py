"""GraphQL ``createMatch`` takes ``timeControl`` and ``onTimeout`` as REST does, and a
match shows them with its clock (issue 18)."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from service.app import create_app
from service.store import SqliteStore
from tests.graphql.client import GraphQLClient

CREATE = """
mutation($tc: TimeControlInput, $ot: OnTimeoutInput) {
  createMatch(game: "toy", players: 2, timeControl: $tc, onTimeout: $ot) {
    __typename
    ... on MatchCreated { matchId seats { seat token } }
    ... on Problem { code message }
  }
}
"""
READ = """
query($id: ID!) {
  match(id: $id) {
    ... on MatchState {
      createdAt updatedAt activeSeats
      timeControl { correspondence { secondsPerMove } live { baseSeconds incrementSeconds } }
      onTimeout { policy bot }
      clock { serverTime seats { seat remainingMs deadline running turnStartedAt } }
    }
  }
}
"""


def test_a_timed_match_created_over_graphql_reads_as_over_rest() -> None:
    app = create_app(SqliteStore(":memory:"))
    with TestClient(app) as http:
        schema = next(r for r in app.routes if getattr(r, "path", "") == "/graphql").endpoint
        timed_match_reads_alike(GraphQLClient(http, schema.schema))


def timed_match_reads_alike(gql: GraphQLClient) -> None:
    created = gql(CREATE, {"tc": {"live": {"baseSeconds": 300, "incrementSeconds": 2}},
                           "ot": {"policy": "bot", "bot": "random"}})["createMatch"]
    assert created["__typename"] == "MatchCreated", created
    token = created["seats"][0]["token"]
    state = gql(READ, {"id": created["matchId"]}, token)["match"]
    assert state["timeControl"] == {"correspondence": None,
                                    "live": {"baseSeconds": 300, "incrementSeconds": 2}}
    assert state["onTimeout"] == {"policy": "bot", "bot": "random"}
    assert state["createdAt"].endswith("Z") and state["updatedAt"].endswith("Z")
    rest = gql.http.get(f"/v1/matches/{created['matchId']}",
                        headers={"Authorization": f"Bearer {token}"}).json()
    assert rest["createdAt"] == state["createdAt"]
    for mine, theirs in zip(state["clock"]["seats"], rest["clock"]["seats"], strict=True):
        assert {k: v for k, v in mine.items() if k != "remainingMs"} == {
            k: v for k, v in theirs.items() if k != "remainingMs"}
    first = state["clock"]["seats"][0]
    assert first["running"] and 0 < first["remainingMs"] <= 300_000


@pytest.mark.parametrize(("tc", "ot", "code"), [
    ({"correspondence": {"secondsPerMove": 5}}, None, "bad_time_control"),
    ({"live": {"baseSeconds": 600, "incrementSeconds": 500}}, None, "bad_time_control"),
    (None, {"policy": "forfeit"}, "bad_timeout_policy"),
    ({"correspondence": {"secondsPerMove": 60}}, {"policy": "bot", "bot": "search"},
     "bad_timeout_policy"),
])
def test_bad_clock_input_is_a_problem(gql: GraphQLClient, tc: Any, ot: Any,
                                      code: str) -> None:
    answer = gql(CREATE, {"tc": tc, "ot": ot})["createMatch"]
    assert answer["__typename"] != "MatchCreated"
    assert answer["code"] == code, answer
