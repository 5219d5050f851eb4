"""Issue 31 item 12 (low findings): a seat code used after the table filled answers 409
``seat_taken`` (was 404 ``invite_not_found``); resigning another player's seat answers 403
``not_your_seat`` (was 401); another app's private match answers, on every route, exactly as
a missing one (``seats/0/token`` with another app's key answered 403)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lobby.test_tables_rest import _guests, _problem, _waiting
from tests.players.conftest import Rig, alike, rig, toy_module  # noqa: F401 (fixtures)


def _invite(rig: Rig, match_id: str, auth: dict[str, str], **body: Any) -> str:  # noqa: F811
    answer = rig.client.post(f"/v1/matches/{match_id}/invitations", json=body, headers=auth)
    assert answer.status_code == 201, answer.text
    code: str = answer.json()["code"]
    return code


def test_a_seat_code_after_the_table_filled_is_seat_taken(rig: Rig) -> None:  # noqa: F811
    host, bob, cid = _guests(rig, "Ann", "Bob", "Cid")
    match_id = _waiting(rig, host, [{"player": "me"}, {"open": True}], visibility="private")
    code = _invite(rig, match_id, host.auth, uses=5)
    joined = rig.client.post(f"/v1/matches/{match_id}/join", json={"invite": code},
                             headers=bob.auth)
    assert joined.status_code == 200 and joined.json()["status"] == "active"
    _problem(rig.client.post(f"/v1/matches/{match_id}/join", json={"invite": code},
                             headers=cid.auth), 409, "seat_taken")
    # A code that is not this match's still answers as for a missing match.
    made_up = f"ski_{match_id}.{'A' * 32}"
    _problem(rig.client.post(f"/v1/matches/{match_id}/join", json={"invite": made_up},
                             headers=cid.auth), 404, "invite_not_found")


def test_resigning_another_players_seat_is_forbidden(rig: Rig) -> None:  # noqa: F811
    host, bob = _guests(rig, "Ann", "Bob")
    match_id = _waiting(rig, host, [{"player": "me"}, {"open": True}])
    assert rig.client.post(f"/v1/matches/{match_id}/join", headers=bob.auth).status_code == 200
    answer = rig.client.post(f"/v1/matches/{match_id}/seats/0/resign", headers=bob.auth)
    _problem(answer, 403, "not_your_seat")
    state = rig.client.get(f"/v1/matches/{match_id}").json()
    assert state["status"] == "active" and state["version"] == 1  # nothing written


ROUTES = [
    ("GET", "/v1/matches/{id}", None),
    ("GET", "/v1/matches/{id}/legal-moves", None),
    ("GET", "/v1/matches/{id}/log", None),
    ("GET", "/v1/matches/{id}/board.svg", None),
    ("POST", "/v1/matches/{id}/actions", {"action": {"type": "pass"}}),
    ("POST", "/v1/matches/{id}/seats/0/token", None),
    ("POST", "/v1/matches/{id}/seats/0/bot", {"bot": "greedy"}),
    ("POST", "/v1/matches/{id}/seats/0/resign", None),
    ("POST", "/v1/matches/{id}/seats/0/reclaim", None),
    ("POST", "/v1/matches/{id}/stream-tickets", None),
    ("POST", "/v1/matches/{id}/join", None),
    ("POST", "/v1/matches/{id}/leave", None),
    ("POST", "/v1/matches/{id}/start", None),
    ("POST", "/v1/matches/{id}/cancel", None),
    ("POST", "/v1/matches/{id}/invitations", {"uses": 1}),
    ("POST", "/v1/matches/{id}/rematch", None),
]


@pytest.mark.parametrize("started", [True, False], ids=["active", "waiting"])
def test_another_apps_private_match_answers_as_a_missing_one(
    rig: Rig, started: bool,  # noqa: F811
) -> None:
    app, _ = rig.app("Owner")
    _, other_key = rig.app("Other")
    host = rig.guest("Ann", appId=app)
    seats: list[dict[str, Any]] = [{"player": "me"}, {"open": True}]
    match_id = _waiting(rig, host, seats, visibility="private")
    if started:
        bob = rig.guest("Bob", appId=app)
        code = _invite(rig, match_id, host.auth, uses=1)
        assert rig.client.post(f"/v1/matches/{match_id}/join", json={"invite": code},
                               headers=bob.auth).status_code == 200
    missing = "x" + match_id[1:] if match_id[0] != "x" else "y" + match_id[1:]
    other = {"Authorization": f"Bearer {other_key}"}
    for method, path, body in ROUTES:
        answers = [rig.client.request(method, path.format(id=wanted), json=body,
                                      headers=other)
                   for wanted in (match_id, missing)]
        assert alike(*answers), (path, answers[0].text, answers[1].text)
        assert answers[0].status_code in (401, 403, 404, 405), (path, answers[0].text)
