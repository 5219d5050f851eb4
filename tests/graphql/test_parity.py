"""REST and GraphQL cannot disagree: after random play, every seat and a spectator read the
same state, view, legal moves and log through both APIs of one app (GraphQL's typed fields
carry exactly the engine's values, nothing more and nothing less)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from starlette.testclient import TestClient

from service import games
from service.api.graphql.convert import camel
from service.app import create_app
from service.store import SqliteStore
from tests.graphql.client import GraphQLClient, move_input
from tests.graphql.conftest import create_match

MOVES = 25


def normal(value: Any, *, in_event: bool = False) -> Any:
    """JSON with camelCase keys and without ``__typename`` (REST and GraphQL alike). In an
    event's data, a null field is an absent one: GraphQL answers null for an optional field a
    viewer does not see, REST leaves it out; an UnknownEvent's ``json`` is REST's ``data``.
    A move's empty ``others`` (GK-T2 v3: no other token moves) is left out on REST's wire and
    an empty list in GraphQL's typed move. The clock's ``serverTime`` is when each was read
    (the two reads are moments apart)."""
    if isinstance(value, dict):
        return {
            ("data" if in_event and k == "json" else camel(k)):
            normal(v, in_event=in_event or k == "events")
            for k, v in value.items()
            if k not in ("__typename", "serverTime") and not (in_event and v is None)
            and not (k == "others" and v == [])
        }
    if isinstance(value, list):
        return [normal(v, in_event=in_event) for v in value]
    return value


@pytest.mark.parametrize("game", sorted({*games.ids(), "toy"}))
def test_rest_and_graphql_agree_for_every_viewer(game: str) -> None:
    app = create_app(SqliteStore(":memory:"))
    with TestClient(app) as http:
        schema = next(r for r in app.routes if getattr(r, "path", "") == "/graphql").endpoint
        gql = GraphQLClient(http, schema.schema)
        view, move = gql.selection("MatchView", game), gql.selection("Move", game)
        event = gql.selection("Event", game)
        options = gql.selection("MatchOptions", game)
        state = f"""matchId game version rulesVersion status seat activeSeats
                    bots {{ seat kind }} players {{ seat name bot open }}
                    options {{ {options} }} seedChosen seedCommitment seed seedSalt
                    visibility name labels {{ key value }} openSeats startVersion
                    cancelReason creatorSeat rematchOf rematch
                    view {{ {view} }}
                    createdAt updatedAt
                    timeControl {{ correspondence {{ secondsPerMove }}
                                   live {{ baseSeconds incrementSeconds }} }}
                    onTimeout {{ policy bot }}
                    clock {{ serverTime seats {{ seat remainingMs deadline running
                                                 turnStartedAt }} }}
                    result {{ seats {{ seat score rank breakdown {{ rule points }} forfeited }}
                             winners termination {{ reason }}
                             opponents {{ name score rank breakdown {{ rule points }} }} }}"""
        read = f"""query($id: ID!) {{
          match(id: $id) {{ ... on MatchState {{ {state} }} }}
          legalMoves(matchId: $id) {{ ... on LegalMoves {{ matchId version seat
                                                          moves {{ {move} }} texts }} }}
          log(matchId: $id) {{ ... on LogPage {{ matchId latestVersion nextAfter
            players {{ seat name bot open }}
            entries {{ version seat action {{ {move} }} events {{ {event} }} }} }} }}
        }}"""
        act = """mutation($id: ID!, $action: ActionInput!) {
          act(matchId: $id, action: $action) { __typename } }"""

        engine = games.get(game)
        players = max(engine.min_players, min(3, engine.max_players))
        match_id, tokens = create_match(gql, game=game, players=players, seed=4)
        chooser = random.Random(4)
        for _ in range(MOVES):
            current = gql(read, {"id": match_id})["match"]
            if current["status"] == "finished":
                break
            seat = chooser.choice(current["activeSeats"])
            listed = gql(read, {"id": match_id}, tokens[seat])["legalMoves"]["moves"]
            chosen = move_input(game, chooser.choice(listed))
            assert gql(act, {"id": match_id, "action": chosen}, tokens[seat])["act"] == {
                "__typename": "ActionAccepted"
            }

        for token in [*tokens.values(), None]:
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            data = gql(read, {"id": match_id}, token)
            base = f"/v1/matches/{match_id}"
            rest_state = http.get(base, headers=headers).json()
            # Bot seats: a {"seat": kind} map in REST, a list of {seat, kind} in GraphQL.
            rest_state["bots"] = [{"seat": int(s), "kind": k}
                                  for s, k in rest_state["bots"].items()]
            # The seed: a number in REST, a decimal string in GraphQL (beyond a 32-bit Int).
            if rest_state["seed"] is not None:
                rest_state["seed"] = str(rest_state["seed"])
            # Labels: a map in REST, a list of {key, value} sorted by key in GraphQL.
            rest_state["labels"] = [{"key": k, "value": v}
                                    for k, v in sorted(rest_state["labels"].items())]
            assert normal(data["match"]) == normal(rest_state)
            rest_moves = http.get(f"{base}/legal-moves", headers=headers).json()
            assert normal(data["legalMoves"]) == normal(rest_moves)
            assert normal(data["log"]) == normal(http.get(f"{base}/log", headers=headers).json())
