"""Matches that wait for players, over REST (issue 17): create with open seats, join, leave,
start early, cancel; visibility; the lobby and the live list; every refusal leaves the match
as it was."""

from __future__ import annotations

from typing import Any

from tests.players.conftest import Guest, Rig, alike, rig, toy_module  # noqa: F401 (fixtures)

NY = "ny1901"


def _problem(answer: Any, status: int, code: str) -> None:
    assert answer.status_code == status, answer.text
    assert answer.json()["code"] == code, answer.text


def _guests(rig: Rig, *names: str) -> list[Guest]:  # noqa: F811
    """Guests of an app of their own (the lobby is per app: tests do not see each other)."""
    app, _ = rig.app()
    return [rig.guest(name, appId=app) for name in names]


def _waiting(rig: Rig, host: Guest, seats: list[dict[str, Any]],  # noqa: F811
             **extra: Any) -> str:
    answer = rig.client.post("/v1/matches", json={"game": NY, "seats": seats, **extra},
                             headers=host.auth)
    assert answer.status_code == 201, answer.text
    assert answer.json()["seats"] == []  # nobody is shown a seat token
    match_id: str = answer.json()["matchId"]
    return match_id


def _state(rig: Rig, match_id: str, who: Guest | None = None) -> dict[str, Any]:  # noqa: F811
    answer = rig.client.get(f"/v1/matches/{match_id}",
                            headers=who.auth if who is not None else {})
    assert answer.status_code == 200, answer.text
    state: dict[str, Any] = answer.json()
    return state


def test_a_waiting_match_fills_and_starts(rig: Rig) -> None:  # noqa: F811
    host, joiner = _guests(rig, "Ann", "Bob")
    match_id = _waiting(rig, host, [{"player": "me"}, {"open": True}],
                        visibility="public", name="Ann's table", labels={"tier": "casual"})
    state = _state(rig, match_id, host)
    assert state["status"] == "waiting" and state["view"] is None
    assert state["version"] == 0 and state["openSeats"] == [1]
    assert state["seedCommitment"] is None and state["seed"] is None
    assert state["players"][0]["name"] == "Ann" and state["players"][1]["open"] is True
    assert state["name"] == "Ann's table" and state["labels"] == {"tier": "casual"}
    assert state["visibility"] == "public" and state["creatorSeat"] == 0
    # No game yet: no moves, no acting.
    assert rig.client.get(f"/v1/matches/{match_id}/legal-moves",
                          headers=host.auth).json()["moves"] == []
    _problem(rig.client.post(f"/v1/matches/{match_id}/actions", json={"action": {}},
                             headers=host.auth), 409, "match_not_started")
    _problem(rig.client.post(f"/v1/matches/{match_id}/seats/0/token", headers=host.auth),
             409, "match_not_started")
    joined = rig.client.post(f"/v1/matches/{match_id}/join", headers=joiner.auth)
    assert joined.status_code == 200, joined.text
    body = joined.json()
    assert body["status"] == "active" and body["seat"] == 1 and body["version"] == 1
    assert body["startVersion"] == 1 and body["openSeats"] == []
    assert body["seedCommitment"] and body["seed"] is None
    assert body["view"] is not None
    # Both play with their own credentials; the log shows the join as a version.
    moves = rig.client.get(f"/v1/matches/{match_id}/legal-moves", headers=joiner.auth)
    assert moves.status_code == 200
    log = rig.client.get(f"/v1/matches/{match_id}/log", headers=host.auth).json()
    assert [(e["version"], e["seat"]) for e in log["entries"]] == [(1, None)]
    mine = rig.client.get("/v1/me/matches", headers=joiner.auth).json()["items"]
    assert [(m["matchId"], m["status"], m["seat"]) for m in mine] == [(match_id, "active", 1)]


def test_leave_start_cancel_and_their_refusals(rig: Rig) -> None:  # noqa: F811
    host, bob, cid = _guests(rig, "Ann", "Bob", "Cid")
    match_id = _waiting(rig, host, [{"player": "me"}, {"open": True}, {"open": True}])
    post = rig.client.post
    assert post(f"/v1/matches/{match_id}/join", json={"seat": 2},
                headers=bob.auth).json()["players"][2]["name"] == "Bob"
    before = _state(rig, match_id, host)
    _problem(post(f"/v1/matches/{match_id}/join", headers=bob.auth), 409, "already_seated")
    _problem(post(f"/v1/matches/{match_id}/join", json={"seat": 2}, headers=cid.auth), 409,
             "seat_taken")
    _problem(post(f"/v1/matches/{match_id}/join", json={"seat": 0}, headers=cid.auth), 409,
             "seat_taken")
    _problem(post(f"/v1/matches/{match_id}/join", json={"seat": 7}, headers=cid.auth), 400,
             "malformed")
    _problem(post(f"/v1/matches/{match_id}/join", json={"sit": 1}, headers=cid.auth), 400,
             "malformed")
    _problem(post(f"/v1/matches/{match_id}/start", headers=bob.auth), 403, "forbidden")
    _problem(post(f"/v1/matches/{match_id}/cancel", headers=bob.auth), 403, "forbidden")
    _problem(post(f"/v1/matches/{match_id}/leave", headers=cid.auth), 403, "forbidden")
    _problem(post(f"/v1/matches/{match_id}/join"), 401, "unauthorized")
    _problem(post("/v1/matches/nope/join", headers=cid.auth), 404, "match_not_found")
    assert _state(rig, match_id, host) == before  # nothing half-written
    left = post(f"/v1/matches/{match_id}/leave", headers=bob.auth)
    assert left.status_code == 200 and left.json()["openSeats"] == [1, 2]
    assert left.json()["version"] == 2
    started = post(f"/v1/matches/{match_id}/start", json={"bot": "random"}, headers=host.auth)
    assert started.status_code == 200, started.text
    assert started.json()["status"] == "active"
    assert started.json()["bots"] == {"1": "random", "2": "random"}
    after = _state(rig, match_id, host)
    _problem(post(f"/v1/matches/{match_id}/join", headers=cid.auth), 409, "match_started")
    _problem(post(f"/v1/matches/{match_id}/leave", headers=host.auth), 409, "match_started")
    _problem(post(f"/v1/matches/{match_id}/cancel", headers=host.auth), 409, "match_started")
    _problem(post(f"/v1/matches/{match_id}/start", headers=host.auth), 409, "match_started")
    assert _state(rig, match_id, host)["version"] >= after["version"]
    # Cancelling another waiting match; then it refuses everything.
    other = _waiting(rig, host, [{"player": "me"}, {"open": True}])
    cancelled = post(f"/v1/matches/{other}/cancel", headers=host.auth)
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    assert cancelled.json()["cancelReason"] == "creator"
    for path in ("join", "start", "cancel"):
        who = cid if path == "join" else host
        _problem(post(f"/v1/matches/{other}/{path}", headers=who.auth), 409, "match_cancelled")
    _problem(post(f"/v1/matches/{other}/actions", json={"action": {}}, headers=host.auth),
             409, "match_cancelled")


def test_the_creator_leaving_cancels(rig: Rig) -> None:  # noqa: F811
    host, bob = _guests(rig, "Ann", "Bob")
    match_id = _waiting(rig, host, [{"player": "me"}, {"open": True}, {"open": True}])
    rig.client.post(f"/v1/matches/{match_id}/join", headers=bob.auth)
    left = rig.client.post(f"/v1/matches/{match_id}/leave", headers=host.auth)
    assert left.json()["status"] == "cancelled"
    assert left.json()["cancelReason"] == "creator_left"
    feed = [e for e in _feed(rig, bob) if e["matchId"] == match_id]
    assert [e["kind"] for e in feed] == ["match_cancelled"]
    assert feed[0]["reason"] == "creator_left"


def _feed(rig: Rig, who: Guest) -> list[dict[str, Any]]:  # noqa: F811
    import json

    with rig.client.stream("GET", "/v1/me/events?after=0", headers=who.auth) as answer:
        text = "".join(answer.iter_text())
    return [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]


def test_feed_tells_joins_leaves_and_the_start(rig: Rig) -> None:  # noqa: F811
    host, bob, cid = _guests(rig, "Ann", "Bob", "Cid")
    match_id = _waiting(rig, host, [{"player": "me"}, {"open": True}, {"open": True}])
    post = rig.client.post
    post(f"/v1/matches/{match_id}/join", headers=bob.auth)
    post(f"/v1/matches/{match_id}/leave", headers=bob.auth)
    post(f"/v1/matches/{match_id}/join", json={"seat": 2}, headers=bob.auth)
    post(f"/v1/matches/{match_id}/join", headers=cid.auth)
    kinds = [(e["kind"], e["version"]) for e in _feed(rig, host) if e["matchId"] == match_id]
    assert kinds[:4] == [("player_joined", 1), ("player_left", 2), ("player_joined", 3),
                         ("player_joined", 4)]
    assert ("match_started", 4) in kinds
    joined = [e for e in _feed(rig, host) if e["kind"] == "player_joined"
              and e["matchId"] == match_id]
    assert (joined[-1]["playerSeat"], joined[-1]["playerName"]) == (1, "Cid")
    cid_kinds = [e["kind"] for e in _feed(rig, cid) if e["matchId"] == match_id]
    assert cid_kinds[0] == "match_started" and "player_joined" not in cid_kinds


def test_private_matches_are_hidden_from_outsiders(rig: Rig) -> None:  # noqa: F811
    host, bob = _guests(rig, "Ann", "Bob")
    match_id = _waiting(rig, host, [{"player": "me"}, {"open": True}], visibility="private")
    assert _state(rig, match_id, host)["visibility"] == "private"
    missing = rig.client.get("/v1/matches/AAAAAAAAAAAAAAAA", headers=bob.auth)
    for who in (bob, None):
        headers = who.auth if who is not None else {}
        hidden = rig.client.get(f"/v1/matches/{match_id}", headers=headers)
        assert hidden.status_code == 404
        assert hidden.json()["code"] == missing.json()["code"]
        assert hidden.json()["detail"] == missing.json()["detail"]
        for path in ("log", "legal-moves", "events"):
            answer = rig.client.get(f"/v1/matches/{match_id}/{path}", headers=headers)
            assert answer.status_code == 404, path
    _problem(rig.client.post(f"/v1/matches/{match_id}/join", headers=bob.auth), 404,
             "match_not_found")
    _problem(rig.client.post(f"/v1/matches/{match_id}/join", json={"invite": "x"},
                             headers=bob.auth), 404, "invite_not_found")
    # Whole answers alike (status, headers that matter, body but its request id), for every
    # read and lobby write an outsider may try.
    missing_id = "AAAAAAAAAAAAAAAA"
    for method, path, body in (("GET", "", None), ("GET", "/log", None),
                               ("GET", "/legal-moves", None), ("POST", "/join", {}),
                               ("POST", "/leave", None), ("POST", "/start", None),
                               ("POST", "/cancel", None), ("POST", "/invitations", {}),
                               ("POST", "/rematch", None)):
        answers = [rig.client.request(method, f"/v1/matches/{mid}{path}", json=body,
                                      headers=bob.auth) for mid in (match_id, missing_id)]
        assert alike(*answers), (path, answers[0].text, answers[1].text)
    # Players of another app cannot see an unlisted one's lobby writes either.
    unlisted = _waiting(rig, host, [{"player": "me"}, {"open": True}])
    stranger = rig.guest("Eve")
    _problem(rig.client.post(f"/v1/matches/{unlisted}/join", headers=stranger.auth), 404,
             "match_not_found")


def test_a_chosen_seed_is_refused_in_a_match_others_join(rig: Rig) -> None:  # noqa: F811
    (host,) = _guests(rig, "Ann")
    answer = rig.client.post("/v1/matches", json={
        "game": NY, "seats": [{"player": "me"}, {"open": True}], "seed": 7},
        headers=host.auth)
    _problem(answer, 400, "seed_not_allowed")


def test_lobby_and_live_lists(rig: Rig) -> None:  # noqa: F811
    host, bob, cid = _guests(rig, "Ann", "Bob", "Cid")
    public = _waiting(rig, host, [{"player": "me"}, {"open": True}], visibility="public",
                      name="open table")
    three = _waiting(rig, host, [{"player": "me"}, {"open": True}, {"open": True}],
                     visibility="public")
    _waiting(rig, host, [{"player": "me"}, {"open": True}])  # unlisted: never listed
    _waiting(rig, host, [{"player": "me"}, {"open": True}], visibility="private")

    def lobby(query: str = "") -> list[str]:
        answer = rig.client.get(f"/v1/lobby{query}", headers=bob.auth)
        assert answer.status_code == 200, answer.text
        return [item["matchId"] for item in answer.json()["items"]]

    assert set(lobby()) == {public, three}
    assert lobby("?players=3") == [three]
    assert lobby(f"?game={NY}&players=2") == [public]
    assert lobby("?game=ginkgopolis") == []
    item = rig.client.get("/v1/lobby?players=2", headers=bob.auth).json()["items"][0]
    assert item["openSeats"] == [1] and item["name"] == "open table"
    assert item["seedChosen"] is False and "seed" not in item and "seedCommitment" not in item
    assert item["seats"][0]["name"] == "Ann" and item["ageSeconds"] >= 0
    # Paging: one at a time, every match once.
    first = rig.client.get("/v1/lobby?limit=1", headers=bob.auth).json()
    second = rig.client.get(f"/v1/lobby?limit=1&cursor={first['nextCursor']}",
                            headers=bob.auth).json()
    assert {first["items"][0]["matchId"], second["items"][0]["matchId"]} == {public, three}
    # A match that fills leaves the lobby and appears among the live matches.
    rig.client.post(f"/v1/matches/{public}/join", headers=bob.auth)
    assert lobby() == [three]
    live = rig.client.get("/v1/matches?status=active&visibility=public", headers=cid.auth)
    assert live.status_code == 200, live.text
    assert [m["matchId"] for m in live.json()["items"]] == [public]
    assert live.json()["items"][0]["activeSeats"]
    # A cancelled one leaves the lobby too.
    rig.client.post(f"/v1/matches/{three}/cancel", headers=host.auth)
    assert lobby() == []
    _problem(rig.client.get("/v1/matches?status=finished&visibility=public",
                            headers=cid.auth), 400, "malformed")
    _problem(rig.client.get("/v1/lobby?limit=0", headers=cid.auth), 400, "malformed")
    _problem(rig.client.get("/v1/lobby?cursor=zz", headers=cid.auth), 400, "malformed")
    _problem(rig.client.get("/v1/lobby"), 401, "unauthorized")


def _stream(rig: Rig, match_id: str, who: Guest, after: int) -> list[tuple[str, Any]]:  # noqa: F811
    import json

    with rig.client.stream("GET", f"/v1/matches/{match_id}/events?after={after}",
                           headers=who.auth) as answer:
        assert answer.status_code == 200, answer.read()
        text = "".join(answer.iter_text())
    out: list[tuple[str, Any]] = []
    kind = "message"
    for line in text.splitlines():
        if line.startswith("event:"):
            kind = line[6:].strip()
        elif line.startswith("data:"):
            out.append((kind, json.loads(line[5:])))
            kind = "message"
    return out


def test_every_lobby_version_is_on_the_event_stream(rig: Rig) -> None:  # noqa: F811
    host, bob, cid = _guests(rig, "Ann", "Bob", "Cid")
    match_id = _waiting(rig, host, [{"player": "me"}, {"open": True}, {"open": True}])
    post = rig.client.post
    post(f"/v1/matches/{match_id}/join", headers=bob.auth)
    post(f"/v1/matches/{match_id}/leave", headers=bob.auth)
    post(f"/v1/matches/{match_id}/join", json={"seat": 2}, headers=cid.auth)
    post(f"/v1/matches/{match_id}/start", headers=host.auth)
    states = [data for kind, data in _stream(rig, match_id, host, 0) if kind == "state"]
    assert [(s["version"], s["status"]) for s in states[:4]] == [
        (1, "waiting"), (2, "waiting"), (3, "waiting"), (4, "active")]
    assert [s["view"] is None for s in states[:4]] == [True, True, True, False]
    assert states[3]["startVersion"] == 4 and states[3]["seat"] == 0
    assert states[3]["seedCommitment"] and states[3]["seed"] is None
