"""End to end over GraphQL: complete matches of every registered game (the real games and
the toy one), on the memory store and on a real Redis. Each seat reads its ``legalMoves``,
posts a random one back through ``act`` (turning the listed ``Move`` into its
``ActionInput``), while a seat and a spectator read ``matchUpdated``: both receive every
version, in order, and the last one carries the result."""

from __future__ import annotations

import random
from typing import Any

import pytest

from service import games
from tests.graphql.client import GraphQLClient, Subscription, move_input
from tests.graphql.conftest import create_match

MAX_MOVES = 3000


def game_ids() -> list[str]:
    return sorted({*games.ids(), "toy"})


def documents(gql: GraphQLClient, game: str) -> dict[str, str]:
    move = gql.selection("Move", game)
    state = "version status seat activeSeats result { winners seats { seat score rank } }"
    return {
        "moves": f"""query($id: ID!) {{ legalMoves(matchId: $id) {{
            __typename ... on LegalMoves {{ version moves {{ {move} }} }} }} }}""",
        "act": f"""mutation($id: ID!, $action: ActionInput!, $version: Int) {{
            act(matchId: $id, action: $action, expectedVersion: $version) {{
              __typename ... on ActionAccepted {{ version state {{ {state} }} }}
              ... on Problem {{ code message }} }} }}""",
        "updates": f"""subscription($id: ID!) {{ matchUpdated(matchId: $id, after: 0) {{
            __typename ... on MatchState {{ {state} }} }} }}""",
        "state": f"""query($id: ID!) {{ match(id: $id) {{
            __typename ... on MatchState {{ {state} }} }} }}""",
    }


def play_match(gql: GraphQLClient, game: str, seed: int) -> dict[str, Any]:
    engine = games.get(game)
    players = max(engine.min_players, min(3, engine.max_players))
    match_id, tokens = create_match(gql, game=game, players=players, seed=seed)
    docs = documents(gql, game)
    chooser = random.Random(seed)
    with (
        gql.subscribe(docs["updates"], {"id": match_id}) as spectator,
        gql.subscribe(docs["updates"], {"id": match_id}, tokens[0]) as seat0,
    ):
        current = gql(docs["state"], {"id": match_id})["match"]
        for _ in range(MAX_MOVES):
            if current["status"] == "finished":
                break
            seat = chooser.choice(current["activeSeats"])
            listed = gql(docs["moves"], {"id": match_id}, tokens[seat])["legalMoves"]
            assert listed["version"] == current["version"] and listed["moves"]
            move = chooser.choice(listed["moves"])
            accepted = gql(
                docs["act"],
                {"id": match_id, "action": move_input(game, move), "version": listed["version"]},
                tokens[seat],
            )["act"]
            assert accepted["__typename"] == "ActionAccepted", (move, accepted)
            assert accepted["version"] == current["version"] + 1
            current = accepted["state"]
            expect_update(spectator, current, None)
            expect_update(seat0, current, 0)
        else:
            raise AssertionError(f"{game} did not finish within {MAX_MOVES} moves")
        spectator.expect_complete()
        seat0.expect_complete()
    result = current["result"]
    assert sorted(s["seat"] for s in result["seats"]) == list(range(players))
    assert result["winners"]
    return current


def expect_update(sub: Subscription, current: dict[str, Any], seat: int | None) -> None:
    update = sub.next()["matchUpdated"]
    assert update["__typename"] == "MatchState"
    assert update["version"] == current["version"]  # every version, in order
    assert update["seat"] == seat
    assert update["status"] == current["status"]


@pytest.mark.parametrize("game", game_ids())
def test_complete_matches_on_the_memory_store(gql: GraphQLClient, game: str) -> None:
    final = play_match(gql, game, seed=1)
    assert final["status"] == "finished"


@pytest.mark.redis
@pytest.mark.parametrize("game", game_ids())
def test_complete_matches_on_redis(redis_gql: GraphQLClient, game: str) -> None:
    final = play_match(redis_gql, game, seed=2)
    assert final["status"] == "finished"
