"""Time controls at creation and in every view (issue 18): ``timeControl`` and ``onTimeout``
on ``POST /v1/matches`` (and GraphQL ``createMatch``), their bad input, and what a state
shows -- ``createdAt``, ``updatedAt``, the time control and policy, and ``clock`` (each seat's
remaining time, deadline, whether it runs, when its turn began). Results say how a match
ended (``termination``) and which seats left (``forfeited``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.api.conftest import TOY, create, make_app

DAY = 86400


def created(client: TestClient) -> float:
    """Matches the app has created (its metrics)."""
    lines = [line for line in client.get("/metrics").text.splitlines()
             if line.startswith("skyline_matches_created_total{")]
    return sum(float(line.rsplit(" ", 1)[1]) for line in lines)


def when(text: str) -> float:
    assert text.endswith("Z"), text  # RFC 3339, UTC
    return datetime.fromisoformat(text).timestamp()


def post(client: TestClient, **extra: Any) -> Any:
    return client.post("/v1/matches", json={"game": TOY, "players": 2, "seed": 3, **extra})


def test_a_correspondence_deadline_runs_for_the_active_seat_only(client: TestClient) -> None:
    match = create(client, timeControl={"correspondence": {"secondsPerMove": 3600}},
                   onTimeout={"policy": "bot", "bot": "random"})
    state = client.get(match.url, headers=match.auth(0)).json()
    assert state["timeControl"] == {"correspondence": {"secondsPerMove": 3600}}
    assert state["onTimeout"] == {"policy": "bot", "bot": "random"}
    assert when(state["createdAt"]) <= when(state["updatedAt"])
    clock = state["clock"]
    now = when(clock["serverTime"])
    first, second = clock["seats"]
    assert state["activeSeats"] == [0]
    assert first["running"] and not second["running"]
    started = when(first["turnStartedAt"])
    assert when(first["deadline"]) == pytest.approx(started + 3600, abs=0.002)
    assert first["remainingMs"] == pytest.approx((started + 3600 - now) * 1000, abs=2)
    assert 0 < first["remainingMs"] <= 3_600_000
    assert second == {"seat": 1, "remainingMs": 3_600_000, "deadline": None,
                      "running": False, "turnStartedAt": None}


def test_a_move_hands_the_clock_to_the_next_seat(client: TestClient) -> None:
    match = create(client, timeControl={"correspondence": {"secondsPerMove": 600}})
    moved = client.post(f"{match.url}/actions", json={"action": {"type": "pass"}},
                        headers=match.auth(0))
    assert moved.status_code == 200, moved.text
    state = client.get(match.url, headers=match.auth(1)).json()
    first, second = state["clock"]["seats"]
    assert not first["running"] and first["deadline"] is None
    assert second["running"] and when(second["deadline"]) == pytest.approx(
        when(second["turnStartedAt"]) + 600, abs=0.002)
    assert state["onTimeout"] == {"policy": "forfeit"}  # the default of a timed match


def test_a_live_clock_is_charged_and_given_its_increment(client: TestClient) -> None:
    match = create(client, timeControl={"live": {"baseSeconds": 60, "incrementSeconds": 5}})
    client.post(f"{match.url}/actions", json={"action": {"type": "pass"}},
                headers=match.auth(0)).raise_for_status()
    state = client.get(match.url).json()
    assert state["timeControl"] == {"live": {"baseSeconds": 60, "incrementSeconds": 5}}
    first, second = state["clock"]["seats"]
    # Seat 0 completed its turn: charged the time it ran, given 5 s; stopped.
    assert not first["running"] and 60_000 < first["remainingMs"] <= 65_000
    assert second["running"] and second["remainingMs"] <= 60_000
    assert when(second["deadline"]) == pytest.approx(
        when(second["turnStartedAt"]) + 60, abs=0.002)


def test_an_untimed_match_shows_when_each_turn_began(client: TestClient) -> None:
    match = create(client)
    state = client.get(match.url).json()
    assert state["timeControl"] is None and state["onTimeout"] is None
    first, second = state["clock"]["seats"]
    assert first["running"] and first["turnStartedAt"] is not None
    assert first["remainingMs"] is None and first["deadline"] is None
    assert not second["running"] and second["turnStartedAt"] is None


@pytest.mark.parametrize(("extra", "status", "code"), [
    ({"timeControl": {"correspondence": {"secondsPerMove": 9}}}, 422, "bad_time_control"),
    ({"timeControl": {"correspondence": {"secondsPerMove": 14 * DAY + 1}}}, 422,
     "bad_time_control"),
    ({"timeControl": {"live": {"baseSeconds": 59}}}, 422, "bad_time_control"),
    ({"timeControl": {"live": {"baseSeconds": 3 * 3600 + 1}}}, 422, "bad_time_control"),
    ({"timeControl": {"live": {"baseSeconds": 600, "incrementSeconds": 181}}}, 422,
     "bad_time_control"),
    ({"timeControl": {"live": {"baseSeconds": 600, "incrementSeconds": -1}}}, 422,
     "bad_time_control"),
    ({"timeControl": {"correspondence": {"secondsPerMove": 60},
                      "live": {"baseSeconds": 600}}}, 400, "malformed"),
    ({"timeControl": {"blitz": {"seconds": 60}}}, 400, "malformed"),
    ({"onTimeout": {"policy": "forfeit"}}, 422, "bad_timeout_policy"),
    ({"timeControl": {"correspondence": {"secondsPerMove": 60}},
      "onTimeout": {"policy": "bot", "bot": "greedy"}}, 422, "bad_timeout_policy"),
    ({"timeControl": {"correspondence": {"secondsPerMove": 60}},
      "onTimeout": {"policy": "resign"}}, 400, "malformed"),
])
def test_bad_clock_input_is_a_clear_problem_and_nothing_is_created(
        client: TestClient, extra: dict[str, Any], status: int, code: str) -> None:
    assert post(client).status_code == 201
    assert created(client) == 1
    answer = post(client, **extra)
    assert answer.status_code == status, answer.text
    assert answer.json()["code"] == code
    assert created(client) == 1


def test_the_operator_sets_the_shortest_deadline(toy_game: None) -> None:
    with TestClient(make_app(min_seconds_per_move=120)) as client:
        answer = post(client, timeControl={"correspondence": {"secondsPerMove": 60}})
        assert answer.status_code == 422
        assert answer.json()["code"] == "bad_time_control"
        assert "120" in answer.json()["detail"]
        assert post(client, timeControl={"correspondence": {"secondsPerMove": 120}}
                    ).status_code == 201


def test_bad_clock_input_is_explained_in_each_language(client: TestClient) -> None:
    details = {
        lang: post(client, timeControl={"correspondence": {"secondsPerMove": 1}},
                   ).json()["detail"] if lang == "en" else client.post(
            "/v1/matches", headers={"Accept-Language": lang},
            json={"game": TOY, "players": 2,
                  "timeControl": {"correspondence": {"secondsPerMove": 1}}}).json()["detail"]
        for lang in ("en", "cs", "de")
    }
    assert len(set(details.values())) == 3, details
    assert all("secondsPerMove" in d for d in details.values())


def test_a_resignation_that_ends_the_match_is_in_its_result(client: TestClient) -> None:
    match = create(client, timeControl={"correspondence": {"secondsPerMove": 600}})
    gone = client.post(f"{match.url}/seats/1/resign", headers=match.auth(1))
    assert gone.status_code == 200, gone.text
    state = client.get(match.url).json()
    assert state["status"] == "finished" and state["activeSeats"] == []
    result = state["result"]
    assert result["termination"] == {"reason": "resign"}
    by_seat = {s["seat"]: s for s in result["seats"]}
    assert by_seat[1]["forfeited"] and by_seat[1]["rank"] == 2
    assert not by_seat[0]["forfeited"] and by_seat[0]["rank"] == 1
    assert result["winners"] == [0]
    assert not any(s["running"] for s in state["clock"]["seats"])


def test_a_resigned_seat_ranks_last_when_the_match_is_played_out(client: TestClient) -> None:
    match = create(client, players=3, timeControl={"correspondence": {"secondsPerMove": 600}})
    client.post(f"{match.url}/seats/0/resign", headers=match.auth(0)).raise_for_status()
    state = client.get(match.url).json()
    assert state["status"] == "active"  # two seats still in: played on
    for _ in range(200):
        if state["status"] == "finished":
            break
        for seat in state["activeSeats"]:
            if seat == 0:
                continue  # a random bot plays the seat that left
            moves = client.get(f"{match.url}/legal-moves", headers=match.auth(seat)).json()
            if moves["moves"]:
                client.post(f"{match.url}/actions", json={"action": moves["moves"][0]},
                            headers=match.auth(seat))
        state = client.get(match.url).json()
    assert state["status"] == "finished"
    result = state["result"]
    assert result["termination"] == {"reason": "normal"}
    by_seat = {s["seat"]: s for s in result["seats"]}
    assert by_seat[0]["forfeited"] and by_seat[0]["rank"] == 3
    assert 0 not in result["winners"] and result["winners"]


@pytest.mark.parametrize("control", [
    {"correspondence": {"secondsPerMove": 510510.0}},
    {"live": {"baseSeconds": 698.0, "incrementSeconds": 2.0}},
])
def test_integral_numbers_in_a_time_control_are_integers(control: dict[str, Any]) -> None:
    """JSON Schema's ``integer`` takes ``698.0``, so schemathesis sends it: the union of the
    two controls used to report the other member's errors (400 ``malformed``)."""
    with TestClient(make_app()) as client:
        made = client.post("/v1/matches", json={"game": "ny1901", "players": 2,
                                                "timeControl": control})
        assert made.status_code == 201, made.text
        state = client.get(f"/v1/matches/{made.json()['matchId']}").json()
        assert state["clock"] is not None
        wrong = client.post("/v1/matches", json={"game": "ny1901", "players": 2,
                                                 "timeControl": {"live": {"baseSeconds": 698.5}}})
        assert wrong.status_code == 400
