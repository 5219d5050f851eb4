"""The GraphQL ``boardSvg`` field: the same SVG as REST, the same failures as other reads."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from service.app import create_app
from service.store.sqlite import SqliteStore

QUERY = """
query Board($id: ID!, $highlight: Int) {
  boardSvg(matchId: $id, highlight: $highlight) {
    __typename
    ... on BoardSvg { matchId version svg }
    ... on BadRequest { code message }
    ... on NotFound { code }
    ... on Unauthorized { code }
  }
}
"""


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(create_app(SqliteStore(":memory:"))) as test_client:
        yield test_client


def board(client: TestClient, match_id: str, token: str | None = None,
          highlight: int | None = None) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    answer = client.post("/graphql", json={"query": QUERY, "variables": {
        "id": match_id, "highlight": highlight}}, headers=headers)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert "errors" not in body, body
    result: dict[str, Any] = body["data"]["boardSvg"]
    return result


@pytest.mark.parametrize("game", ["ny1901", "ginkgopolis"])
def test_same_svg_as_rest(client: TestClient, game: str) -> None:
    created = client.post("/v1/matches", json={"game": game, "players": 2, "seed": 3}).json()
    match_id, token = created["matchId"], created["seats"][0]["token"]
    for highlight in (None, 0):
        result = board(client, match_id, token, highlight)
        assert result["__typename"] == "BoardSvg"
        assert result["matchId"] == match_id and result["version"] == 0
        query = "" if highlight is None else f"?highlight={highlight}"
        rest = client.get(f"/v1/matches/{match_id}/board.svg{query}",
                          headers={"Authorization": f"Bearer {token}"})
        assert result["svg"] == rest.text
    assert board(client, match_id)["svg"] == client.get(
        f"/v1/matches/{match_id}/board.svg").text


def test_failures_are_union_members(client: TestClient) -> None:
    created = client.post("/v1/matches", json={"game": "ny1901", "players": 2}).json()
    match_id, token = created["matchId"], created["seats"][0]["token"]
    bad = board(client, match_id, token, 10_000)
    assert bad == {"__typename": "BadRequest", "code": "bad_highlight", "message": bad["message"]}
    assert board(client, match_id, token, -1)["code"] == "malformed"
    assert board(client, "missing")["__typename"] == "NotFound"
    assert board(client, match_id, "sky_wrong")["__typename"] == "Unauthorized"
