"""Languages over GraphQL: the same texts as REST, chosen the same way (Accept-Language or
``?lang=``); over a WebSocket, a ``lang`` member of ``connection_init`` (docs/graphql.md)."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.i18n.conftest import Match, create

PROTOCOL = "graphql-transport-ws"
READ = """query($id: ID!) {
  legalMoves(matchId: $id) { ... on LegalMoves { version texts } }
  log(matchId: $id) { ... on LogPage { entries { version events { kind text } } } }
}"""
MISSING = """query { match(id: "nothing-here") { __typename ... on Problem { code message } } }"""


def gql(client: TestClient, query: str, variables: dict[str, Any] | None = None, *,
        token: str | None = None, url: str = "/graphql", **headers: str) -> dict[str, Any]:
    sent = dict(headers)
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    answer = client.post(url, json={"query": query, "variables": variables or {}},
                         headers=sent)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    assert "errors" not in body, body
    return body["data"]  # type: ignore[no-any-return]


def _played(client: TestClient, game: str) -> Match:
    match = create(client, game, players=2, seed=8)
    for _ in range(6):
        state = client.get(match.url).json()
        seat = state["activeSeats"][0]
        move = client.get(f"{match.url}/legal-moves", headers=match.auth(seat)).json()
        client.post(f"{match.url}/actions", json={"action": move["moves"][0]},
                    headers=match.auth(seat)).raise_for_status()
    return match


@pytest.mark.parametrize("game", ["ny1901", "ginkgopolis"])
@pytest.mark.parametrize("lang", ["cs", "de"])
def test_graphql_says_what_rest_says(client: TestClient, game: str, lang: str) -> None:
    match = _played(client, game)
    seat = client.get(match.url).json()["activeSeats"][0]
    token = match.tokens[seat]
    by_header = gql(client, READ, {"id": match.id}, token=token, **{"Accept-Language": lang})
    by_param = gql(client, READ, {"id": match.id}, token=token, url=f"/graphql?lang={lang}")
    assert by_header == by_param
    rest_moves = client.get(f"{match.url}/legal-moves?lang={lang}",
                            headers=match.auth(seat)).json()
    assert by_header["legalMoves"]["texts"] == rest_moves["texts"]
    rest_log = client.get(f"{match.url}/log?lang={lang}", headers=match.auth(seat)).json()
    assert [[e["text"] for e in entry["events"]] for entry in by_header["log"]["entries"]] == [
        [e["text"] for e in entry["events"]] for entry in rest_log["entries"]]
    english = gql(client, READ, {"id": match.id}, token=token)
    assert english["legalMoves"]["texts"] != by_header["legalMoves"]["texts"]


def test_graphql_answers_say_their_language_and_failures_speak_it(client: TestClient) -> None:
    answer = client.post("/graphql", json={"query": MISSING}, headers={"Accept-Language": "de"})
    assert answer.headers["content-language"] == "de"
    assert "accept-language" in answer.headers["vary"].lower()
    assert answer.json()["data"]["match"] == {
        "__typename": "NotFound", "code": "match_not_found",
        "message": "Diese Partie gibt es nicht (oder sie ist abgelaufen)."}
    catalogue = gql(client, '{ game(id: "ginkgopolis") { ... on GinkgopolisCatalogue { '
                    "actions { name } } } }", url="/graphql?lang=cs")
    assert [a["name"] for a in catalogue["game"]["actions"]] == [
        "Zužitkování", "Urbanizace", "Stavba patra"]


@pytest.mark.parametrize(("payload", "headers", "expected"), [
    ({"lang": "de"}, {}, "Spieler 0"),
    ({"lang": "cs"}, {"Accept-Language": "de"}, "Hráč 0"),  # the payload wins
    ({}, {"Accept-Language": "cs"}, "Hráč 0"),  # else the upgrade request's header
    ({}, {}, "Seat 0"),
])
def test_a_websocket_takes_its_language_from_connection_init(
    client: TestClient, payload: dict[str, str], headers: dict[str, str], expected: str
) -> None:
    match = create(client, "ginkgopolis", players=2, seed=8)
    move = client.get(f"{match.url}/legal-moves", headers=match.auth(0)).json()["moves"][0]
    client.post(f"{match.url}/actions", json={"action": move},
                headers=match.auth(0)).raise_for_status()  # "Seat 0 chose a card."
    init = {"authorization": f"Bearer {match.tokens[0]}", **payload}
    query = """query($id: ID!) { log(matchId: $id) { ... on LogPage {
                 entries { events { kind text } } } } }"""
    with client.websocket_connect("/graphql", subprotocols=[PROTOCOL], headers=headers) as ws:
        ws.send_json({"type": "connection_init", "payload": init})
        assert ws.receive_json()["type"] == "connection_ack"
        ws.send_json({"id": "1", "type": "subscribe",
                      "payload": {"query": query, "variables": {"id": match.id}}})
        message = ws.receive_json()
        assert message["type"] == "next", message
        texts = [e["text"] for entry in message["payload"]["data"]["log"]["entries"]
                 for e in entry["events"]]
        assert any(text.startswith(expected) for text in texts), texts


def test_a_bad_lang_in_connection_init_closes_the_socket(client: TestClient) -> None:
    from starlette.websockets import WebSocketDisconnect

    with client.websocket_connect("/graphql", subprotocols=[PROTOCOL]) as ws:
        ws.send_json({"type": "connection_init", "payload": {"lang": 5}})
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_json()
    assert closed.value.code == 4400
