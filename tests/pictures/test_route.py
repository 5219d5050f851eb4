"""GET /v1/matches/{id}/board.svg: the caller's view only, highlight by move index, problems."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from service.app import create_app
from service.pictures import render_view
from service.store.sqlite import SqliteStore

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(create_app(SqliteStore(":memory:"))) as test_client:
        yield test_client


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def create(client: TestClient, game: str, **extra: Any) -> tuple[str, list[str]]:
    answer = client.post("/v1/matches", json={"game": game, "players": 2, "seed": 7, **extra})
    assert answer.status_code == 201, answer.text
    body = answer.json()
    return body["matchId"], [s["token"] for s in body["seats"]]


@pytest.mark.parametrize("game", ["ny1901", "ginkgopolis"])
def test_svg_of_the_callers_view(client: TestClient, game: str) -> None:
    match_id, tokens = create(client, game)
    for token in tokens:
        answer = client.get(f"/v1/matches/{match_id}/board.svg", headers=bearer(token))
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("image/svg+xml")
        assert "Authorization" in answer.headers["vary"]
        root = ET.fromstring(answer.text)
        assert root.tag == f"{SVG}svg"
        view = client.get(f"/v1/matches/{match_id}", headers=bearer(token)).json()
        assert f"seat {view['seat']}" in (root.find(f"{SVG}title").text or "")  # type: ignore[union-attr]
    spectator = client.get(f"/v1/matches/{match_id}/board.svg")
    assert spectator.status_code == 200
    assert "spectator" in spectator.text


def test_same_bytes_as_rendering_the_view(client: TestClient) -> None:
    from service.matches import MatchService

    match_id, tokens = create(client, "ginkgopolis")
    service: MatchService = client.app.state.match_service  # type: ignore[attr-defined]
    state = client.portal.call(service.get_state, match_id, tokens[1])  # type: ignore[union-attr]
    answer = client.get(f"/v1/matches/{match_id}/board.svg", headers=bearer(tokens[1]))
    assert answer.text == render_view(state.view)
    # seat 1's own screen is in its picture, never in seat 0's or a spectator's
    assert "Behind your screen (seat 1)" in answer.text
    seat0 = client.get(f"/v1/matches/{match_id}/board.svg", headers=bearer(tokens[0])).text
    assert "Behind your screen (seat 1)" not in seat0
    assert "Behind your screen" not in client.get(f"/v1/matches/{match_id}/board.svg").text


@pytest.mark.parametrize("game", ["ny1901", "ginkgopolis"])
def test_highlight_draws_the_indexed_legal_move(client: TestClient, game: str) -> None:
    match_id, tokens = create(client, game)
    moves = client.get(f"/v1/matches/{match_id}/legal-moves", headers=bearer(tokens[0])).json()
    assert moves["moves"]
    plain = client.get(f"/v1/matches/{match_id}/board.svg", headers=bearer(tokens[0]))
    last = len(moves["moves"]) - 1
    lit = client.get(f"/v1/matches/{match_id}/board.svg?highlight={last}",
                     headers=bearer(tokens[0]))
    assert lit.status_code == 200
    assert lit.text != plain.text
    assert 'class="highlight"' in lit.text
    assert lit.headers["etag"] != plain.headers["etag"]
    again = client.get(f"/v1/matches/{match_id}/board.svg?highlight={last}",
                       headers={**bearer(tokens[0]), "If-None-Match": lit.headers["etag"]})
    assert again.status_code == 304


@pytest.mark.parametrize(
    ("query", "status", "code"),
    [
        ("highlight=9999", 422, "bad_highlight"),
        ("highlight=-1", 400, "malformed"),
        ("highlight=abc", 400, "malformed"),
        ("highlight=1.5", 400, "malformed"),
        ("highlight=99999999999999999999", 400, "malformed"),
    ],
)
def test_bad_highlight_is_a_problem_never_a_500(
    client: TestClient, query: str, status: int, code: str
) -> None:
    match_id, tokens = create(client, "ny1901")
    answer = client.get(f"/v1/matches/{match_id}/board.svg?{query}", headers=bearer(tokens[0]))
    assert answer.status_code == status
    assert answer.headers["content-type"].startswith("application/problem+json")
    assert answer.json()["code"] == code


def test_spectators_and_waiting_seats_have_no_move_to_highlight(client: TestClient) -> None:
    match_id, tokens = create(client, "ny1901")
    assert client.get(f"/v1/matches/{match_id}/board.svg?highlight=0").status_code == 422
    waiting = client.get(f"/v1/matches/{match_id}/board.svg?highlight=0",
                         headers=bearer(tokens[1]))
    assert waiting.status_code == 422
    assert waiting.json()["code"] == "bad_highlight"


def test_unknown_match_and_bad_token(client: TestClient) -> None:
    missing = client.get("/v1/matches/nope/board.svg")
    assert missing.status_code == 404
    assert missing.json()["code"] == "match_not_found"
    match_id, _ = create(client, "ny1901")
    wrong = client.get(f"/v1/matches/{match_id}/board.svg", headers=bearer("sky_wrong"))
    assert wrong.status_code == 401
    malformed = client.get(f"/v1/matches/{match_id}/board.svg",
                           headers={"Authorization": "Basic abc"})
    assert malformed.status_code == 401


def test_the_client_is_served_at_play(client: TestClient) -> None:
    redirect = client.get("/play", follow_redirects=False)
    assert redirect.status_code in (307, 308)
    assert redirect.headers["location"] == "/play/"
    page = client.get("/play/")
    assert page.status_code == 200
    assert '<script type="module" src="app.js">' in page.text
    for asset, media in (("app.js", "javascript"), ("api.js", "javascript"),
                         ("describe.js", "javascript"), ("style.css", "text/css")):
        answer = client.get(f"/play/{asset}")
        assert answer.status_code == 200, asset
        assert media in answer.headers["content-type"]


def test_openapi_path_item_for_the_integrator() -> None:
    from service.api.openapi import build_openapi

    item = build_openapi()["paths"]["/v1/matches/{matchId}/board.svg"]
    operation = item["get"]
    assert operation["operationId"] == "getBoardSvg"
    assert {"200", "304", "400", "401", "404", "410", "422", "429", "503"} == set(
        operation["responses"])
    assert "image/svg+xml" in operation["responses"]["200"]["content"]
    names = [p["name"] for p in operation["parameters"]]
    assert names[:3] == ["matchId", "highlight", "If-None-Match"]
    assert "Authorization" not in names  # the seat token is a security scheme
    # A spectator may look too; a seat by its token, a player by its credential, the app.
    assert operation["security"] == [{}, {"seatToken": []}, {"playerToken": []},
                                     {"playerJwt": []}, {"appKey": []}]
