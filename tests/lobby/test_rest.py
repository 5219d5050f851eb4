"""Quick match over REST: ``POST /v1/queue``, ``GET /v1/queue/{ticket}?wait=``, ``DELETE
/v1/queue/{ticket}``; their problems, their budgets."""

from __future__ import annotations

from typing import Any

from service.api.rate_limits import budget_of
from tests.players.conftest import Rig, bearer, rig, toy_module  # noqa: F401 (fixtures)

NY2 = {"game": "ny1901", "players": 2}


def test_two_players_queue_and_are_matched(rig: Rig) -> None:  # noqa: F811
    a, b = rig.guest("Ann"), rig.guest("Bob")
    first = rig.client.post("/v1/queue", json=NY2, headers=a.auth)
    assert first.status_code == 201, first.text
    assert first.headers["cache-control"] == "no-store"
    ticket = first.json()["ticket"]
    assert first.json()["status"] == "waiting"
    again = rig.client.post("/v1/queue", json=NY2, headers=a.auth)
    assert again.status_code == 200 and again.json()["ticket"] == ticket
    second = rig.client.post("/v1/queue", json=NY2, headers=b.auth)
    assert second.status_code == 201 and second.json()["status"] == "matched"
    polled = rig.client.get(f"/v1/queue/{ticket}?wait=5", headers=a.auth)
    assert polled.status_code == 200
    body = polled.json()
    assert body["status"] == "matched" and body["matchId"] == second.json()["matchId"]
    assert {body["seat"], second.json()["seat"]} == {0, 1}
    # The match is the player's, seen with its own credential.
    state = rig.client.get(f"/v1/matches/{body['matchId']}", headers=a.auth)
    assert state.status_code == 200 and state.json()["seat"] == body["seat"]
    mine = rig.client.get("/v1/me/matches", headers=a.auth).json()["items"]
    assert [m["matchId"] for m in mine] == [body["matchId"]]


def test_leaving_and_tickets_of_others(rig: Rig) -> None:  # noqa: F811
    a, b = rig.guest("Ann"), rig.guest("Bob")
    ticket = rig.client.post("/v1/queue", json={**NY2, "players": 3},
                             headers=a.auth).json()["ticket"]
    for method in ("GET", "DELETE"):
        other = rig.client.request(method, f"/v1/queue/{ticket}", headers=b.auth)
        assert other.status_code == 404 and other.json()["code"] == "ticket_not_found"
    nonsense = rig.client.get("/v1/queue/qt_nope", headers=a.auth)
    assert nonsense.status_code == 404 and nonsense.json()["code"] == "ticket_not_found"
    left = rig.client.delete(f"/v1/queue/{ticket}", headers=a.auth)
    assert left.status_code == 200 and left.json()["status"] == "left"
    assert rig.client.get(f"/v1/queue/{ticket}", headers=a.auth).json()["status"] == "left"


def _problem(answer: Any, status: int, code: str) -> None:
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"].startswith("application/problem+json")
    assert answer.json()["code"] == code


def test_bad_input_and_callers_that_may_not_queue(rig: Rig) -> None:  # noqa: F811
    a = rig.guest("Ann")
    post = rig.client.post
    _problem(post("/v1/queue", json={**NY2, "options": {"nope": True}}, headers=a.auth),
             422, "bad_options")
    _problem(post("/v1/queue", json={"game": "ny1901", "players": 7}, headers=a.auth),
             422, "bad_player_count")
    _problem(post("/v1/queue", json={"game": "nope", "players": 2}, headers=a.auth),
             422, "unknown_game")
    _problem(post("/v1/queue", json={**NY2, "extra": 1}, headers=a.auth), 400, "malformed")
    _problem(post("/v1/queue", json={**NY2, "fillWithBotsAfterSeconds": -1}, headers=a.auth),
             400, "malformed")
    _problem(post("/v1/queue", json=NY2), 401, "unauthorized")
    # A seat token and an app key are no players.
    created = post("/v1/matches", json={"game": "ny1901", "players": 2}).json()
    seat = created["seats"][0]["token"]
    _problem(post("/v1/queue", json=NY2, headers=bearer(seat)), 403, "forbidden")
    _, key = rig.app("Queueless")
    _problem(post("/v1/queue", json=NY2, headers=bearer(key)), 403, "forbidden")
    # Nothing was queued by any refusal: the player's first ticket is new.
    assert post("/v1/queue", json=NY2, headers=a.auth).status_code == 201
    ticket = post("/v1/queue", json=NY2, headers=a.auth).json()["ticket"]
    for wait in ("61", "-1", "abc", "\u0663", "1.5", "", "123"):
        _problem(rig.client.get(f"/v1/queue/{ticket}", params={"wait": wait},
                                headers=a.auth), 400, "malformed")
    _problem(rig.client.get(f"/v1/queue/{ticket}?wait=1&wait=2", headers=a.auth),
             400, "malformed")
    assert rig.client.get(f"/v1/queue/{ticket}?wait=0",
                          headers=a.auth).json()["status"] == "waiting"


def test_budgets() -> None:
    def scope(method: str, path: str) -> Any:
        return {"type": "http", "method": method, "path": path}

    assert budget_of(scope("POST", "/v1/queue")) == "create"
    assert budget_of(scope("GET", "/v1/queue/qt_x")) == "read"
    assert budget_of(scope("DELETE", "/v1/queue/qt_x")) == "act"
