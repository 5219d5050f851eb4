"""``matchUpdated(after:)`` replays each version from the record of that version (issue 30,
item 1): a finished 2-seat New York match resumed near its end sends, at each version, what
the ``match`` query answered at that version -- status, active seats, result, seed,
``updatedAt`` and the clocks (but for ``serverTime`` and a running seat's ``remainingMs``,
which are read-time)."""

from __future__ import annotations

import random
from typing import Any

from service.clocks import TimeControl
from tests.graphql.client import GraphQLClient, move_input

STATE = """
  version status seat activeSeats seed seedSalt updatedAt
  bots { seat kind }
  players { seat name bot open }
  result { winners seats { seat score rank } }
  clock { seats { seat deadline running turnStartedAt } }
"""
QUERY = f"query($id: ID!) {{ match(id: $id) {{ ... on MatchState {{ {STATE} }} }} }}"
LEGAL = "query($id: ID!) { legalMoves(matchId: $id) { ... on LegalMoves { moves { %s } } } }"
ACT = """mutation($id: ID!, $action: ActionInput!) {
  act(matchId: $id, action: $action) { __typename } }"""
UPDATED = f"""subscription($id: ID!, $after: Int) {{
  matchUpdated(matchId: $id, after: $after) {{ ... on MatchState {{ {STATE} }} }} }}"""


def _create(gql: GraphQLClient) -> tuple[str, dict[int, str]]:
    """A timed 2-seat New York 1901 match, created by the service (a time control)."""
    service = gql.http.app.state.match_service  # type: ignore[attr-defined]
    from service.matches.models import CreateMatchRequest

    created = gql.http.portal.call(  # type: ignore[union-attr]
        lambda: service.create_match(
            CreateMatchRequest(game="ny1901", players=2, seed=3),
            extra={"time_control": TimeControl("correspondence", seconds_per_move=3600)}))
    return created.match_id, {s.seat: s.token for s in created.seats}


def test_a_resumed_subscription_replays_what_the_match_query_answered(
    gql: GraphQLClient,
) -> None:
    match_id, tokens = _create(gql)
    rng = random.Random(3)
    moves = gql.selection("Move", "ny1901")
    answers: dict[int, dict[str, Any]] = {}
    while True:
        now = gql(QUERY, {"id": match_id}, tokens[1])["match"]
        answers[now["version"]] = now
        if now["status"] == "finished":
            break
        seat = rng.choice(now["activeSeats"])
        legal = gql(LEGAL % moves, {"id": match_id}, tokens[seat])["legalMoves"]["moves"]
        move = rng.choice(legal)
        assert gql(ACT, {"id": match_id, "action": move_input("ny1901", move)},
                   tokens[seat])["act"]["__typename"] == "ActionAccepted"
    final = now["version"]
    got: dict[int, dict[str, Any]] = {}
    with gql.subscribe(UPDATED, {"id": match_id, "after": final - 3}, tokens[1]) as sub:
        while len(got) < 3:
            update = sub.next()["matchUpdated"]
            got[update["version"]] = update
        sub.expect_complete()
    assert sorted(got) == [final - 2, final - 1, final]
    for version, update in got.items():
        assert update == answers[version], version
    assert got[final - 1]["status"] == "active" and got[final - 1]["seed"] is None
    assert got[final - 1]["result"] is None and got[final - 1]["updatedAt"] is not None
    assert any(s["deadline"] for s in got[final - 1]["clock"]["seats"])
    assert got[final]["seed"] == "3" and got[final]["result"] is not None
