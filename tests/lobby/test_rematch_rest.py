"""Rematch over REST (issue 17): after the end, a waiting match with the same game and
options, the seat order rotated, bots re-seated, the caller seated and the other player's
seat kept for it (``rematch_offered``); linked both ways; a second call, by anyone, answers
the same rematch."""

from __future__ import annotations

from typing import Any

from tests.lobby.test_tables_rest import _feed, _guests, _problem, _state
from tests.players.conftest import Guest, Rig, rig, toy_module  # noqa: F401 (fixtures)


def _play_out(rig: Rig, match_id: str, players: list[Guest]) -> None:  # noqa: F811
    for _ in range(200):
        state = _state(rig, match_id, players[0])
        if state["status"] == "finished":
            return
        for who in players:
            moves = rig.client.get(f"/v1/matches/{match_id}/legal-moves",
                                   headers=who.auth).json()["moves"]
            if moves:
                rig.client.post(f"/v1/matches/{match_id}/actions",
                                json={"action": moves[0]}, headers=who.auth)
    raise AssertionError("the match did not end")


def _toy_match(rig: Rig, host: Guest, bob: Guest, **extra: Any) -> str:  # noqa: F811
    created = rig.client.post("/v1/matches", json={
        "game": "toy", "options": {"rounds": 1}, "name": "Duel",
        "seats": [{"player": "me"}, {"open": True}, {"bot": "random"}], **extra},
        headers=host.auth)
    assert created.status_code == 201, created.text
    match_id: str = created.json()["matchId"]
    assert rig.client.post(f"/v1/matches/{match_id}/join", headers=bob.auth).status_code == 200
    return match_id


def test_a_rematch_rotates_seats_and_keeps_them_for_their_players(rig: Rig) -> None:  # noqa: F811
    host, bob, eve = _guests(rig, "Ann", "Bob", "Eve")
    old = _toy_match(rig, host, bob)
    _problem(rig.client.post(f"/v1/matches/{old}/rematch", headers=host.auth), 409,
             "match_not_finished")
    _play_out(rig, old, [host, bob])
    answer = rig.client.post(f"/v1/matches/{old}/rematch", headers=bob.auth)
    assert answer.status_code == 200, answer.text
    new = answer.json()
    # Rotated: the former seat 1 (Bob) moves first, the bot of seat 2 sits in seat 1, Ann's
    # seat 2 is kept for her.
    assert new["status"] == "waiting" and new["seat"] == 0 and new["rematchOf"] == old
    assert [(p["name"], p["bot"], p["open"]) for p in new["players"]] == [
        ("Bob", None, False), (None, "random", False), (None, None, True)]
    assert new["options"] == {"rounds": 1} and new["name"] == "Duel"
    assert _state(rig, old, host)["rematch"] == new["matchId"]
    again = rig.client.post(f"/v1/matches/{old}/rematch", headers=host.auth)
    assert again.status_code == 200 and again.json()["matchId"] == new["matchId"]
    offered = [e for e in _feed(rig, host) if e["kind"] == "rematch_offered"]
    assert [(e["matchId"], e["seat"], e["rematchOf"]) for e in offered] == [
        (new["matchId"], 2, old)]
    # The kept seat is Ann's alone.
    _problem(rig.client.post(f"/v1/matches/{new['matchId']}/join", headers=eve.auth), 409,
             "seat_taken")
    taken = rig.client.post(f"/v1/matches/{new['matchId']}/join", headers=host.auth)
    assert taken.status_code == 200 and taken.json()["seat"] == 2
    assert taken.json()["status"] == "active"
    _problem(rig.client.post(f"/v1/matches/{old}/rematch", headers=eve.auth), 403,
             "forbidden")


def test_a_timed_match_waits_without_a_clock_and_its_rematch_keeps_the_control(
        rig: Rig) -> None:  # noqa: F811
    host, bob = _guests(rig, "Ann", "Bob")
    control = {"correspondence": {"secondsPerMove": 3600}}
    created = rig.client.post("/v1/matches", json={
        "game": "toy", "options": {"rounds": 1},
        "seats": [{"player": "me"}, {"open": True}],
        "timeControl": control, "onTimeout": {"policy": "bot", "bot": "random"}},
        headers=host.auth)
    assert created.status_code == 201, created.text
    old = created.json()["matchId"]
    waiting = _state(rig, old, host)
    assert waiting["status"] == "waiting" and waiting["clock"] is None
    assert waiting["timeControl"] == control
    assert rig.client.post(f"/v1/matches/{old}/join", headers=bob.auth).status_code == 200
    started = _state(rig, old, host)
    # The clocks start with the game: the first active seat's deadline runs.
    running = [s for s in started["clock"]["seats"] if s["running"]]
    assert [s["seat"] for s in running] == started["activeSeats"]
    assert all(s["deadline"] is not None for s in running)
    _play_out(rig, old, [host, bob])
    rematch = rig.client.post(f"/v1/matches/{old}/rematch", headers=host.auth).json()
    assert rematch["timeControl"] == control
    assert rematch["onTimeout"] == {"policy": "bot", "bot": "random"}
