"""Quick match in GraphQL: enqueue, queueTicket (long-poll), leaveQueue -- the same service
as REST, the same answers and problems."""

from __future__ import annotations

from typing import Any

from tests.players.conftest import Guest, Rig, bearer, rig, toy_module  # noqa: F401

TICKET = ("... on QueueTicket { ticket status game players matchId seat pollWithinSeconds } "
          "... on Problem { code }")


def gql(rig: Rig, who: Guest | dict[str, str] | None, query: str, **variables: Any  # noqa: F811
        ) -> dict[str, Any]:
    headers = who.auth if isinstance(who, Guest) else (who or {})
    answer = rig.client.post("/graphql", json={"query": query, "variables": variables},
                             headers=headers)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    assert "errors" not in body, body
    return body["data"]


ENQUEUE = ("mutation($game: String!, $players: Int!, $options: MatchOptionsInput, "
           "$fill: Int) { enqueue(game: $game, players: $players, gameOptions: $options, "
           "fillWithBotsAfterSeconds: $fill) { " + TICKET + " } }")
POLL = "query($t: ID!, $w: Int!) { queueTicket(ticket: $t, wait: $w) { " + TICKET + " } }"
LEAVE = "mutation($t: ID!) { leaveQueue(ticket: $t) { " + TICKET + " } }"


def test_enqueue_poll_and_leave_as_rest_does(rig: Rig) -> None:  # noqa: F811
    a, b, c = rig.guest("Ann"), rig.guest("Bob"), rig.guest("Cy")
    first = gql(rig, a, ENQUEUE, game="ny1901", players=2)["enqueue"]
    assert first["status"] == "WAITING" and first["matchId"] is None
    # The options after defaults are what is matched: spelling the defaults out is the same queue.
    same = gql(rig, a, ENQUEUE, game="ny1901", players=2,
               options={"ny1901": {"expert": False}})["enqueue"]
    assert same["ticket"] == first["ticket"]
    expert = gql(rig, c, ENQUEUE, game="ny1901", players=2,
                 options={"ny1901": {"expert": True}})["enqueue"]
    assert expert["status"] == "WAITING"
    gql(rig, c, LEAVE, t=expert["ticket"])
    # REST sees the GraphQL ticket, and matches it.
    rest = rig.client.post("/v1/queue", json={"game": "ny1901", "players": 2}, headers=b.auth)
    assert rest.json()["status"] == "matched"
    polled = gql(rig, a, POLL, t=first["ticket"], w=2)["queueTicket"]
    assert polled["status"] == "MATCHED" and polled["matchId"] == rest.json()["matchId"]
    assert {polled["seat"], rest.json()["seat"]} == {0, 1}
    other = gql(rig, c, ENQUEUE, game="ny1901", players=3)["enqueue"]
    assert gql(rig, a, POLL, t=other["ticket"], w=0)["queueTicket"] == {
        "code": "ticket_not_found"}
    assert gql(rig, c, LEAVE, t=other["ticket"])["leaveQueue"]["status"] == "LEFT"


def test_problems(rig: Rig) -> None:  # noqa: F811
    a = rig.guest("Ann")
    cases = [
        ({"game": "ny1901", "players": 2, "options": {"ginkgopolis": {}}}, "malformed"),
        ({"game": "ny1901", "players": 9}, "bad_player_count"),
        ({"game": "ny1901", "players": 2, "fill": -1}, "malformed"),
    ]
    for variables, code in cases:
        assert gql(rig, a, ENQUEUE, **variables)["enqueue"] == {"code": code}
    _, key = rig.app("Keyed")
    assert gql(rig, bearer(key), ENQUEUE, game="ny1901", players=2)["enqueue"] == {
        "code": "forbidden"}
    assert gql(rig, None, ENQUEUE, game="ny1901", players=2)["enqueue"] == {
        "code": "unauthorized"}
    ticket = gql(rig, a, ENQUEUE, game="ny1901", players=2)["enqueue"]["ticket"]
    assert gql(rig, a, POLL, t=ticket, w=61)["queueTicket"] == {"code": "malformed"}
