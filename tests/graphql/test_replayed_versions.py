"""``matchUpdated(after:)`` replays each version from the record of that version (issue 30,
item 1): a finished 2-seat New York match resumed near its end sends, at each version, what
the ``match`` query answered at that version -- status, active seats, result, seed,
``updatedAt`` and the clocks (but for ``serverTime`` and a running seat's ``remainingMs``,
which are read-time)."""

from __future__ import annotations

import random
from typing import Any

import pytest

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


RESIGN = """mutation($id: ID!, $seat: Int!) {
  resignSeat(matchId: $id, seat: $seat) { __typename } }"""


def _play_and_resign(gql: GraphQLClient, game: str, players: int, seed: int,
                     moves: int) -> tuple[str, dict[int, dict[str, Any]], int]:
    """A timed match of ``game`` with ``moves`` random legal moves, then resignations until
    it ends; the ``match`` query's answer (as seat 0 sees it) at every version."""
    service = gql.http.app.state.match_service  # type: ignore[attr-defined]
    from service.matches.models import CreateMatchRequest

    created = gql.http.portal.call(  # type: ignore[union-attr]
        lambda: service.create_match(
            CreateMatchRequest(game=game, players=players, seed=seed),
            extra={"time_control": TimeControl("correspondence", seconds_per_move=3600)}))
    match_id, tokens = created.match_id, {s.seat: s.token for s in created.seats}
    rng = random.Random(seed)
    selection = gql.selection("Move", game)
    answers: dict[int, dict[str, Any]] = {}
    resigning = sorted(tokens)[1:]
    while True:
        now = gql(QUERY, {"id": match_id}, tokens[0])["match"]
        answers[now["version"]] = now
        if now["status"] == "finished":
            return match_id, answers, now["version"]
        if moves > 0 and now["activeSeats"]:
            moves -= 1
            seat = rng.choice(now["activeSeats"])
            legal = gql(LEGAL % selection, {"id": match_id}, tokens[seat])
            move = rng.choice(legal["legalMoves"]["moves"])
            gql(ACT, {"id": match_id, "action": move_input(game, move)}, tokens[seat])
        else:
            seat = resigning.pop()
            gql(RESIGN, {"id": match_id, "seat": seat}, tokens[seat])


@pytest.mark.parametrize(("game", "players", "seed", "moves"), [
    ("ny1901", 2, 21, 9), ("ny1901", 3, 22, 6), ("ginkgopolis", 2, 23, 8),
    ("ginkgopolis", 3, 24, 5)])
def test_resuming_the_subscription_from_every_version_replays_what_the_query_answered(
    gql: GraphQLClient, game: str, players: int, seed: int, moves: int,
) -> None:
    """The property of ``tests/live/test_replayed_versions_property.py`` over GraphQL:
    random matches of both games, ended by resignations, resumed from every version."""
    match_id, answers, final = _play_and_resign(gql, game, players, seed, moves)
    assert sorted(answers) == list(range(final + 1))
    service = gql.http.app.state.match_service  # type: ignore[attr-defined]
    service.watching.resume_window = final + 1  # replay it all (default: a snapshot)
    for after in range(final):
        got: dict[int, dict[str, Any]] = {}
        with gql.subscribe(UPDATED, {"id": match_id, "after": after}, None) as sub:
            while len(got) < final - after:
                update = sub.next()["matchUpdated"]
                got[update["version"]] = update
            sub.expect_complete()
        assert sorted(got) == list(range(after + 1, final + 1))
        for version, update in got.items():
            seen = {**answers[version], "seat": None}
            assert _read_time_free(update) == _read_time_free(seen), (after, version)


def _read_time_free(state: dict[str, Any]) -> dict[str, Any]:
    """A state without what depends on the reader (the seat: the query was seat 0's)."""
    return {k: v for k, v in state.items() if k != "seat"}
