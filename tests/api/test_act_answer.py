"""An act answer is the caller's move alone (issue 14, item 7): its ``state`` is the match
right after that move, before any bot moves it lets come, and its ``events`` are that move's.
The bots' moves follow as versions of their own."""

from __future__ import annotations

import time

from starlette.testclient import TestClient

from tests.api.conftest import create, make_app

DEADLINE = 30.0  # seconds for the bot worker to move


def test_the_state_of_an_act_answer_is_from_before_the_bot_moves() -> None:
    with TestClient(make_app()) as client:
        match = create(client, "ny1901", seed=42, bots={"1": "greedy"})
        answer = None
        while answer is None or 0 in answer["state"]["activeSeats"]:
            moves = client.get(f"{match.url}/legal-moves", headers=match.auth(0)).json()
            response = client.post(f"{match.url}/actions", headers=match.auth(0), json={
                "action": moves["moves"][-1], "expectedVersion": moves["version"]})
            assert response.status_code == 200, response.text
            answer = response.json()
        # Seat 0's turn ended: the answer shows the bot's turn to come, not its moves.
        assert answer["state"]["version"] == answer["version"]
        assert answer["state"]["activeSeats"] == [1]
        assert all(event["data"].get("seat") in (0, None) for event in answer["events"])
        deadline = time.monotonic() + DEADLINE
        while client.get(match.url).json()["version"] == answer["version"]:
            assert time.monotonic() < deadline, "the bot never moved"
            time.sleep(0.05)
        log = client.get(f"{match.url}/log", params={"after": answer["version"]}).json()
        assert log["entries"][0]["seat"] == 1  # the bot's move: a version of its own
