"""Every operation's published ``security`` against what its handler accepts (issue 30 item
5), probed over HTTP for each operation of the document:

- ``security: []`` means no credential is looked at: a malformed ``Authorization`` header
  changes nothing;
- ``{}`` among the alternatives means a caller without a credential is served (not 401);
  without it, such a caller gets 401;
- each credential scheme listed (a seat token, a player token, a player JWT, an app key) is
  taken (not 401); a credential of a scheme not listed is refused (401 or 403), or, where
  credentials are optional (``{}``), served as no credential is.

Each operation runs on a world of its own (an app, its guest, its user, matches), so that a
write (resign, cancel, delete) never spoils the next probe.
"""

from __future__ import annotations

import base64
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import jwt
import pytest
from starlette.testclient import TestClient

from service import games
from service.api.openapi import build_openapi
from tests.api.conftest import TOY, make_app

SCHEMES = ("seatToken", "playerToken", "playerJwt", "appKey")
AUDIENCE = "skyline"
GARBAGE = {"Authorization": "Basic bm90OmEgYmVhcmVy"}


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    games.register(TOY, "tests.toy_game:engine")
    try:
        with TestClient(make_app(sse_max_seconds=0.2)) as test_client:
            yield test_client
    finally:
        games.unregister(TOY)


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@dataclass
class World:
    """An app with a guest (seat 0 of ``seated``) and a user (seat 1, by JWT), a match of
    anonymous seats the app created (``anonymous``, its seat tokens) and, for the lobby, a
    match with an open seat (``table``, created by the guest)."""

    app_id: str
    app_key: str
    guest: str
    guest_token: str
    user_jwt: str
    seated: str
    anonymous: str
    seat_token: str
    table: str
    finished: str

    def credential(self, scheme: str) -> dict[str, str]:
        token = {"seatToken": self.seat_token, "playerToken": self.guest_token,
                 "playerJwt": self.user_jwt, "appKey": self.app_key}[scheme]
        return _bearer(token)


def _call(client: TestClient, fn: Any, *args: Any) -> Any:
    async def run() -> Any:
        return await fn(*args)
    assert client.portal is not None
    return client.portal.call(run)


def _world(client: TestClient) -> World:
    players = client.app.state.player_service  # type: ignore[attr-defined]
    app, key = _call(client, lambda: players.apps.add("Probe", now=int(time.time())))
    secret = _call(client, players.apps.add_hs256_secret, app.id, "k1")
    raw = base64.urlsafe_b64decode(secret + "=" * (-len(secret) % 4))
    now = int(time.time())
    user = jwt.encode({"iss": app.id, "sub": "u1", "aud": AUDIENCE, "iat": now,
                       "exp": now + 600, "name": "Uma"}, raw, algorithm="HS256",
                      headers={"kid": "k1"})
    guest = client.post("/v1/players", json={"name": "Gus", "appId": app.id})
    assert guest.status_code == 201, guest.text
    guest_id, guest_token = guest.json()["id"], guest.json()["token"]

    def created(body: dict[str, Any], token: str) -> dict[str, Any]:
        answer = client.post("/v1/matches", json={"game": TOY, **body}, headers=_bearer(token))
        assert answer.status_code == 201, answer.text
        return dict(answer.json())

    seated = created({"seats": [{"player": guest_id}, {"user": "u1"}]}, key)["matchId"]
    anonymous = created({"players": 2}, key)
    table = created({"seats": [{"player": "me"}, {"open": True}],
                     "visibility": "public"}, guest_token)["matchId"]
    finished = created({"seats": [{"player": guest_id}, {"user": "u1"}]}, key)["matchId"]
    resigned = client.post(f"/v1/matches/{finished}/seats/1/resign", headers=_bearer(user))
    assert resigned.status_code == 200, resigned.text
    return World(app.id, key, guest_id, guest_token, user, seated, anonymous["matchId"],
                 anonymous["seats"][0]["token"], table, finished)


LOBBY = {"joinMatch", "leaveMatch", "startMatch", "cancelMatch", "createInvitation",
         "revokeInvitation"}
"""Operations on a waiting match (the table); the others read or play a started one."""


def _request(world: World, operation: str, path: str, method: str,
             scheme: str | None) -> tuple[str, dict[str, Any]]:
    """The URL and body of a request of ``operation`` that ``scheme``'s best credential
    could rightly make (its own match, its own seat)."""
    if operation in ("streamEvents", "rematchMatch") and scheme != "seatToken":
        match = world.finished  # a stream that ends; a match that may be played again
    elif operation in LOBBY:
        match = world.table
    else:
        match = world.anonymous if scheme == "seatToken" else world.seated
    seat = "1" if scheme == "playerJwt" else "0"
    values = {"matchId": match, "seat": seat, "gameId": TOY, "sub": "u1",
              "webhookId": "wh_probe", "code": "probecode", "ticket": "probeticket",
              "invitationId": "inv_probe"}
    url = re.sub(r"\{(\w+)\}", lambda m: values[m.group(1)], path)
    query = {"listAppPlayerMatches": f"?player={world.guest}",
             "listMatches": "?status=active&visibility=public"}.get(operation, "")
    bodies: dict[str, dict[str, Any]] = {
        "createMatch": {"game": TOY, "players": 2},
        "act": {"action": {"kind": "probe"}},
        "handSeatToBot": {"kind": "random"},
        "createPlayer": {"name": "Pat"},
        "enqueue": {"game": TOY, "players": 2},
        "joinMatch": {}, "startMatch": {}, "createInvitation": {},
        "createWebhook": {"url": "https://hooks.probe.example/x", "events": ["match_finished"]},
        "updateWebhook": {},
    }
    return url + query, bodies.get(operation, {})


def _status(client: TestClient, method: str, url: str, body: dict[str, Any],
            headers: dict[str, str]) -> int:
    if method in ("post", "patch"):
        return client.request(method, url, json=body, headers=headers).status_code
    return client.request(method, url, headers=headers).status_code


def _operations() -> list[tuple[str, str, str, list[dict[str, list[str]]]]]:
    games.register(TOY, "tests.toy_game:engine")
    try:
        doc = build_openapi()
    finally:
        games.unregister(TOY)
    return [(op["operationId"], path, method, op["security"])
            for path, item in doc["paths"].items() for method, op in item.items()]


OPERATIONS = _operations()


@pytest.mark.parametrize(("operation", "path", "method", "security"), OPERATIONS,
                         ids=[o[0] for o in OPERATIONS])
def test_security_is_what_the_handler_accepts(
    client: TestClient, operation: str, path: str, method: str,
    security: list[dict[str, list[str]]],
) -> None:
    declared = {scheme for requirement in security for scheme in requirement}
    assert declared <= set(SCHEMES)
    world = _world(client)
    url, body = _request(world, operation, path, method, None)
    anonymous = _status(client, method, url, body, {})
    if security == []:
        # Nothing is looked at: a header no scheme could read changes nothing.
        assert anonymous != 401, operation
        garbage = _status(client, method, url, body, GARBAGE)
        assert garbage == anonymous, f"{operation} looks at credentials: declare them"
        return
    if {} in security:
        assert anonymous != 401, f"{operation} needs a credential: drop {{}}"
    else:
        assert anonymous == 401, f"{operation} serves a caller without a credential"
    for scheme in SCHEMES:
        url, body = _request(world, operation, path, method, scheme)
        status = _status(client, method, url, body, world.credential(scheme))
        if scheme in declared:
            assert status != 401, f"{operation} refuses a declared {scheme}"
        elif {} in security and status == anonymous:
            pass  # an optional credential this operation does not use: served as anonymous
        else:
            assert status in (401, 403), f"{operation} takes an undeclared {scheme} ({status})"


def test_create_match_declares_its_credentials_as_optional_alternatives() -> None:
    security = {o[0]: o[3] for o in OPERATIONS}["createMatch"]
    assert security[0] == {}
    assert {s for requirement in security[1:] for s in requirement} == {
        "appKey", "playerToken", "playerJwt"}
