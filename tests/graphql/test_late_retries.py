"""Issue 20, item 12 through GraphQL: a retry of an ``idempotencyKey`` the match record no
longer remembers (beyond the last 16) gets its first result, like REST (the same service
method: ``tests/api/test_late_retries.py`` covers every store)."""

from __future__ import annotations

from typing import Any

from tests.graphql.client import GraphQLClient
from tests.graphql.conftest import create_match
from tests.graphql.queries import ACT, MATCH

DRAW = {"toy": {"draw": True}}


def act(gql: GraphQLClient, match_id: str, token: str, action: dict[str, Any],
        key: str) -> dict[str, Any]:
    result: dict[str, Any] = gql(ACT, {"id": match_id, "action": action, "key": key},
                                 token)["act"]
    return result


def test_a_late_retry_gets_its_first_result(gql: GraphQLClient) -> None:
    match_id, tokens = create_match(gql, options={"rounds": 5})
    answers = []
    for n in range(17):
        current = gql(MATCH, {"id": match_id}, tokens[0])["match"]
        seat = min(current["activeSeats"])
        view = gql(MATCH, {"id": match_id}, tokens[seat])["match"]["view"]
        move = DRAW if view["phase"] == "draw" else {"toy": {"play": {"card": view["hand"][0]}}}
        answer = act(gql, match_id, tokens[seat], move, f"k-{n}")
        assert answer["__typename"] == "ActionAccepted", answer
        answers.append(answer)
    assert answers[0]["version"] == 1

    retry = act(gql, match_id, tokens[0], DRAW, "k-0")
    assert retry["__typename"] == "ActionAccepted", retry  # was NotYourTurn
    assert (retry["version"], retry["events"]) == (1, answers[0]["events"])
    assert retry["state"]["version"] == 17
    other = act(gql, match_id, tokens[0], {"toy": {"pass": True}}, "k-0")
    assert (other["__typename"], other["code"]) == ("BadRequest", "idempotency_key_reused")
