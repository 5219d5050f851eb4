"""Invitations over REST (issue 17): to a player (feed, list, accept, decline), seat codes
(single and multi use, revoked, spent: 410 with the reason), spectator codes and the
spectator tokens they give (reading a private match, nothing else)."""

from __future__ import annotations

import json
from typing import Any

from tests.lobby.test_tables_rest import _guests, _problem, _state, _waiting
from tests.players.conftest import Guest, Rig, rig, toy_module  # noqa: F401 (fixtures)


def _invite(rig: Rig, match_id: str, who: Guest, **body: Any) -> dict[str, Any]:  # noqa: F811
    answer = rig.client.post(f"/v1/matches/{match_id}/invitations", json=body,
                             headers=who.auth)
    assert answer.status_code == 201, answer.text
    made: dict[str, Any] = answer.json()
    return made


def _feed(rig: Rig, who: Guest) -> list[dict[str, Any]]:  # noqa: F811
    with rig.client.stream("GET", "/v1/me/events?after=0", headers=who.auth) as answer:
        text = "".join(answer.iter_text())
    return [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]


def test_inviting_a_player_to_a_private_match(rig: Rig) -> None:  # noqa: F811
    host, bob, eve = _guests(rig, "Ann", "Bob", "Eve")
    match_id = _waiting(rig, host, [{"player": "me"}, {"open": True}, {"open": True}],
                        visibility="private")
    made = _invite(rig, match_id, host, player=bob.id)
    assert made["kind"] == "player" and made["code"] is None and made["status"] == "valid"
    # Bob's feed and list show it; Eve's do not.
    invited = [e for e in _feed(rig, bob) if e["kind"] == "invited"]
    assert [(e["matchId"], e["invitationId"], e["by"]) for e in invited] == [
        (match_id, made["id"], "Ann")]
    listed = rig.client.get("/v1/me/invitations", headers=bob.auth).json()["items"]
    assert [(i["id"], i["matchId"], i["by"]) for i in listed] == [(made["id"], match_id, "Ann")]
    assert rig.client.get("/v1/me/invitations", headers=eve.auth).json()["items"] == []
    # Only Bob may accept it; the private match stays hidden from Eve.
    _problem(rig.client.post(f"/v1/me/invitations/{made['id']}/accept", headers=eve.auth),
             404, "invite_not_found")
    _problem(rig.client.post(f"/v1/matches/{match_id}/join", headers=eve.auth), 404,
             "match_not_found")
    accepted = rig.client.post(f"/v1/me/invitations/{made['id']}/accept", headers=bob.auth)
    assert accepted.status_code == 200, accepted.text
    assert accepted.json()["seat"] == 1 and accepted.json()["status"] == "waiting"
    assert rig.client.get("/v1/me/invitations", headers=bob.auth).json()["items"] == []
    _problem(rig.client.post(f"/v1/me/invitations/{made['id']}/accept", headers=bob.auth),
             409, "already_seated")
    # Bob now reads the private match; Eve still gets the 404 of a missing one.
    assert _state(rig, match_id, bob)["seat"] == 1
    assert rig.client.get(f"/v1/matches/{match_id}", headers=eve.auth).status_code == 404


def test_declining_and_refusals(rig: Rig) -> None:  # noqa: F811
    host, bob, cid = _guests(rig, "Ann", "Bob", "Cid")
    match_id = _waiting(rig, host, [{"player": "me"}, {"open": True}])
    made = _invite(rig, match_id, host, player=bob.id)
    declined = rig.client.post(f"/v1/me/invitations/{made['id']}/decline", headers=bob.auth)
    assert declined.status_code == 200 and declined.json()["status"] == "declined"
    assert rig.client.get("/v1/me/invitations", headers=bob.auth).json()["items"] == []
    _problem(rig.client.post(f"/v1/me/invitations/{made['id']}/accept", headers=bob.auth),
             404, "invite_not_found")
    post = rig.client.post
    base = f"/v1/matches/{match_id}/invitations"
    _problem(post(base, json={"player": "nobody"}, headers=host.auth), 404, "player_not_found")
    _problem(post(base, json={"player": host.id}, headers=host.auth), 409, "already_seated")
    _problem(post(base, json={"seat": 0}, headers=host.auth), 409, "seat_taken")
    _problem(post(base, json={"player": bob.id, "uses": 2}, headers=host.auth), 400,
             "malformed")
    _problem(post(base, json={"spectate": True, "seat": 1}, headers=host.auth), 400,
             "malformed")
    _problem(post(base, json={"expiresInSeconds": 5}, headers=host.auth), 400, "malformed")
    _problem(post(base, json={}, headers=cid.auth), 403, "forbidden")  # not seated
    _problem(post(base, json={}), 401, "unauthorized")
    before = _state(rig, match_id, host)
    assert before["openSeats"] == [1]


def test_seat_codes_are_used_through_join(rig: Rig) -> None:  # noqa: F811
    host, bob, cid, dan = _guests(rig, "Ann", "Bob", "Cid", "Dan")
    match_id = _waiting(rig, host, [{"player": "me"}, {"open": True}, {"open": True},
                                    {"open": True}], visibility="private")
    single = _invite(rig, match_id, host, seat=2)
    assert single["code"].startswith("ski_") and single["kind"] == "seat"
    assert single["usesLeft"] == 1
    info = rig.client.get(f"/v1/invitations/{single['code']}")
    assert info.status_code == 200, info.text
    assert info.json()["matchId"] == match_id and info.json()["seat"] == 2
    assert info.json()["status"] == "waiting" and "seed" not in info.json()
    joined = rig.client.post(f"/v1/matches/{match_id}/join",
                             json={"invite": single["code"]}, headers=bob.auth)
    assert joined.status_code == 200 and joined.json()["seat"] == 2
    _problem(rig.client.post(f"/v1/matches/{match_id}/join", json={"invite": single["code"]},
                             headers=cid.auth), 410, "invite_used_up")
    _problem(rig.client.get(f"/v1/invitations/{single['code']}"), 410, "invite_used_up")
    multi = _invite(rig, match_id, host, uses=5)
    revoked = rig.client.delete(f"/v1/matches/{match_id}/invitations/{multi['code']}",
                                headers=host.auth)
    assert revoked.status_code == 200 and revoked.json()["status"] == "revoked"
    _problem(rig.client.post(f"/v1/matches/{match_id}/join", json={"invite": multi["code"]},
                             headers=cid.auth), 410, "invite_revoked")
    multi = _invite(rig, match_id, host, uses=5)
    for who in (cid, dan):
        answer = rig.client.post(f"/v1/matches/{match_id}/join",
                                 json={"invite": multi["code"]}, headers=who.auth)
        assert answer.status_code == 200, answer.text
    state = _state(rig, match_id, host)
    assert state["status"] == "active" and state["openSeats"] == []
    _problem(rig.client.get("/v1/invitations/ski_nope.xxxxxxxxxxxxxxxxxxxxxxxx"), 404,
             "invite_not_found")
    _problem(rig.client.get("/v1/invitations/nonsense"), 404, "invite_not_found")


def test_spectator_codes_give_tokens_that_read_one_private_match(rig: Rig) -> None:  # noqa: F811
    host, bob = _guests(rig, "Ann", "Bob")
    match_id = _waiting(rig, host, [{"player": "me"}, {"bot": "random"}],
                        visibility="private")
    other = _waiting(rig, host, [{"player": "me"}, {"bot": "random"}], visibility="private")
    code = _invite(rig, match_id, host, spectate=True, uses=2)["code"]
    assert code.startswith("skv_")
    assert rig.client.get(f"/v1/invitations/{code}").json()["kind"] == "spectate"
    redeemed = rig.client.post(f"/v1/invitations/{code}/redeem")
    assert redeemed.status_code == 201, redeemed.text
    token = redeemed.json()["token"]
    assert token.startswith("sks_") and redeemed.json()["matchId"] == match_id
    auth = {"Authorization": f"Bearer {token}"}
    state = rig.client.get(f"/v1/matches/{match_id}", headers=auth)
    assert state.status_code == 200 and state.json()["seat"] is None
    assert rig.client.get(f"/v1/matches/{match_id}/log", headers=auth).status_code == 200
    # Not another private match, not a seat, not a write.
    assert rig.client.get(f"/v1/matches/{other}", headers=auth).status_code == 404
    _problem(rig.client.post(f"/v1/matches/{match_id}/actions", json={"action": {}},
                             headers=auth), 403, "forbidden")
    forged = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    assert rig.client.get(f"/v1/matches/{match_id}",
                          headers={"Authorization": f"Bearer {forged}"}).status_code == 404
    rig.client.post(f"/v1/invitations/{code}/redeem")
    _problem(rig.client.post(f"/v1/invitations/{code}/redeem"), 410, "invite_used_up")
    seat_code = _invite(rig, _waiting(rig, host, [{"player": "me"}, {"open": True}]), host)
    _problem(rig.client.post(f"/v1/invitations/{seat_code['code']}/redeem"), 400, "malformed")
    del bob


def test_a_spectator_token_reads_its_own_match_and_no_other(rig: Rig) -> None:  # noqa: F811
    """Issue 30 item 9: an ``sks_`` token is "that one match" (docs/lobby.md): another
    match, public or unlisted, is 401 as for a seat token of another match, on every read
    (state, legal moves, log, stream, picture, GraphQL); a forged one too."""
    host, = _guests(rig, "Ann")
    match_id = _waiting(rig, host, [{"player": "me"}, {"bot": "random"}],
                        visibility="private")
    public = _waiting(rig, host, [{"player": "me"}, {"bot": "random"}], visibility="public")
    unlisted = _waiting(rig, host, [{"player": "me"}, {"bot": "random"}])
    code = _invite(rig, match_id, host, spectate=True)["code"]
    token = rig.client.post(f"/v1/invitations/{code}/redeem").json()["token"]
    auth = {"Authorization": f"Bearer {token}"}
    assert rig.client.get(f"/v1/matches/{match_id}", headers=auth).status_code == 200
    for other in (public, unlisted):
        assert rig.client.get(f"/v1/matches/{other}").status_code == 200  # open to all...
        for path in ("", "/legal-moves", "/log", "/events", "/board.svg"):
            _problem(rig.client.get(f"/v1/matches/{other}{path}", headers=auth), 401,
                     "unauthorized")  # ...but not with a token of another match
        answer = rig.client.post("/graphql", headers=auth, json={
            "query": "query($id: ID!) { match(id: $id) { __typename } }",
            "variables": {"id": other}})
        assert answer.json()["data"]["match"]["__typename"] == "Unauthorized", answer.text
    # A token of this match's shape, its MAC forged, reads nothing either.
    forged = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    _problem(rig.client.get(f"/v1/matches/{public}",
                            headers={"Authorization": f"Bearer {forged}"}), 401, "unauthorized")
