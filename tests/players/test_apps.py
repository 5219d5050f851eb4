"""Apps: an app key seats the app's users by their ids and reads their matches (server to
server); the app's JWTs sign its users in; revoked and rotated keys stop working; a user the
app deletes is gone everywhere."""

from __future__ import annotations

import base64
import time

import jwt
import pytest

from service.identity.names import NEUTRAL_NAME
from tests.identity.conftest import JwksServer, Keys

from .conftest import Rig, alike, bearer

AUDIENCE = "skyline"


@pytest.fixture(scope="module")
def acme(rig: Rig) -> tuple[str, str, bytes]:
    """An app with an HS256 secret: (appId, api key, secret)."""
    app_id, key = rig.app("Acme", match_url="https://acme.example/m/{matchId}")
    secret = rig.call(rig.players.apps.add_hs256_secret, app_id, "k1")  # base64url, once
    return app_id, key, base64.urlsafe_b64decode(secret + "=" * (-len(secret) % 4))


def user_jwt(app_id: str, secret: bytes, sub: str, name: str | None = "Uma",
             **claims: object) -> str:
    now = int(time.time())
    body: dict[str, object] = {"iss": app_id, "sub": sub, "aud": AUDIENCE, "iat": now,
                               "exp": now + 600, **claims}
    if name is not None:
        body["name"] = name
    return jwt.encode(body, secret, algorithm="HS256", headers={"kid": "k1"})


def test_a_jwt_signs_the_user_in_as_one_player(rig: Rig, acme: tuple[str, str, bytes]) -> None:
    app_id, _, secret = acme
    first = rig.client.get("/v1/me", headers=bearer(user_jwt(app_id, secret, "u-1")))
    assert first.status_code == 200, first.text
    again = rig.client.get("/v1/me", headers=bearer(user_jwt(app_id, secret, "u-1", "Uma B")))
    assert again.json()["id"] == first.json()["id"]
    assert again.json() == {"id": first.json()["id"], "name": "Uma B", "appId": app_id,
                            "user": "u-1"}


def test_jwt_refusals_have_their_codes(rig: Rig, acme: tuple[str, str, bytes]) -> None:
    app_id, _, secret = acme
    now = int(time.time())
    cases = {
        "token_expired": user_jwt(app_id, secret, "u", iat=now - 4000, exp=now - 3000),
        "token_bad_audience": user_jwt(app_id, secret, "u", aud="elsewhere"),
        "token_bad_signature": user_jwt(app_id, b"another secret of 32 bytes......", "u"),
        "token_bad_issuer": user_jwt("app_" + "q" * 20, secret, "u"),
        "token_too_long_lived": user_jwt(app_id, secret, "u", exp=now + 2 * 86400),
        "token_not_yet_valid": user_jwt(app_id, secret, "u", iat=now + 3600,
                                        exp=now + 4000),
        "malformed_token": "not.a.jwt",
    }
    for code, token in cases.items():
        answer = rig.client.get("/v1/me", headers=bearer(token))
        assert (answer.status_code, answer.json()["code"]) == (401, code), code


def test_an_app_seats_its_users_and_reads_their_matches(
    rig: Rig, acme: tuple[str, str, bytes]
) -> None:
    app_id, key, secret = acme
    match_id = rig.seated(bearer(key), [{"user": "u-2"}, {"user": "u-3"}])
    two = rig.client.get("/v1/apps/me/players/u-2", headers=bearer(key)).json()
    page = rig.client.get(f"/v1/apps/me/matches?player={two['id']}", headers=bearer(key))
    assert page.status_code == 200
    (item,) = page.json()["items"]
    assert item["matchId"] == match_id and item["seat"] == 0
    assert item["url"] == f"https://acme.example/m/{match_id}"
    # The user signs in later with the app's JWT and plays its seat.
    token = user_jwt(app_id, secret, "u-2", "Una")
    state = rig.client.get(f"/v1/matches/{match_id}", headers=bearer(token)).json()
    assert state["seat"] == 0
    mine = rig.client.get("/v1/me/matches", headers=bearer(token)).json()["items"]
    assert [m["matchId"] for m in mine] == [match_id]
    # The app key reads as a spectator and never acts.
    assert rig.client.get(f"/v1/matches/{match_id}", headers=bearer(key)).json()["seat"] is None
    moves = rig.client.get(f"/v1/matches/{match_id}/legal-moves", headers=bearer(token)).json()
    acted = rig.client.post(f"/v1/matches/{match_id}/actions", headers=bearer(key),
                            json={"action": moves["moves"][0]})
    assert acted.status_code == 403


def test_unknown_users_and_other_apps_players_answer_alike(
    rig: Rig, acme: tuple[str, str, bytes]
) -> None:
    _, key, _ = acme
    _, other_key = rig.app("Other")
    rig.seated(bearer(other_key), [{"user": "theirs"}, {"bot": "random"}])
    theirs = rig.client.get("/v1/apps/me/players/theirs", headers=bearer(key))
    nobody = rig.client.get("/v1/apps/me/players/nobody", headers=bearer(key))
    assert theirs.status_code == nobody.status_code == 404
    assert alike(theirs, nobody)
    their_id = rig.client.get("/v1/apps/me/players/theirs", headers=bearer(other_key)).json()
    listed = rig.client.get(f"/v1/apps/me/matches?player={their_id['id']}",
                            headers=bearer(key))
    unknown = rig.client.get(f"/v1/apps/me/matches?player={'c' * 26}", headers=bearer(key))
    assert listed.status_code == unknown.status_code == 404
    assert alike(listed, unknown)


def test_a_rotated_key_and_a_revoked_key_stop_working(rig: Rig) -> None:
    app_id, key = rig.app("Rotating")
    assert rig.client.get("/v1/apps/me/players/x", headers=bearer(key)).status_code == 404
    new_key = rig.call(rig.players.apps.rotate_key, app_id)
    old = rig.client.get("/v1/apps/me/players/x", headers=bearer(key))
    assert (old.status_code, old.json()["code"]) == (401, "unauthorized")
    assert rig.client.get("/v1/apps/me/players/x", headers=bearer(new_key)).status_code == 404
    rig.call(rig.players.apps.revoke, app_id)
    revoked = rig.client.get("/v1/apps/me/players/x", headers=bearer(new_key))
    assert (revoked.status_code, revoked.json()["code"]) == (401, "credential_revoked")


def test_player_credentials_are_not_app_keys(rig: Rig) -> None:
    alice = rig.guest()
    answer = rig.client.get("/v1/apps/me/players/x", headers=alice.auth)
    assert answer.status_code == 401


def test_deleting_a_user_renames_it_and_refuses_its_jwts(
    rig: Rig, acme: tuple[str, str, bytes]
) -> None:
    app_id, key, secret = acme
    match_id = rig.seated(bearer(key), [{"user": "u-del"}, {"bot": "random"}])
    token = user_jwt(app_id, secret, "u-del", "Dee")
    assert rig.client.get("/v1/me", headers=bearer(token)).status_code == 200
    guest_way = rig.client.delete("/v1/me", headers=bearer(token))
    assert guest_way.status_code == 403  # an app's user is deleted by its app
    gone = rig.client.delete("/v1/apps/me/players/u-del", headers=bearer(key))
    assert gone.status_code == 200 and gone.json()["matchesRenamed"] == 1
    names = [p["name"] for p in rig.client.get(f"/v1/matches/{match_id}").json()["players"]]
    assert names == [NEUTRAL_NAME, None]
    refused = rig.client.get("/v1/me", headers=bearer(user_jwt(app_id, secret, "u-del")))
    assert (refused.status_code, refused.json()["code"]) == (401, "credential_revoked")
    again = rig.client.get("/v1/apps/me/players/u-del", headers=bearer(key))
    assert again.status_code == 404


def test_an_app_rotates_a_player_seats_token(rig: Rig, acme: tuple[str, str, bytes]) -> None:
    _, key, _ = acme
    match_id = rig.seated(bearer(key), [{"user": "u-rot"}, {"bot": "random"}])
    rotated = rig.client.post(f"/v1/matches/{match_id}/seats/0/token", headers=bearer(key))
    assert rotated.status_code == 200
    seat_token = rotated.json()["token"]
    assert rig.client.get(f"/v1/matches/{match_id}",
                          headers=bearer(seat_token)).json()["seat"] == 0
    bot_seat = rig.client.post(f"/v1/matches/{match_id}/seats/1/token", headers=bearer(key))
    assert bot_seat.status_code == 403
    _, other_key = rig.app("Stranger")
    foreign = rig.client.post(f"/v1/matches/{match_id}/seats/0/token",
                              headers=bearer(other_key))
    assert foreign.status_code == 403


def test_an_apps_jwks_signs_its_users_in_end_to_end(
    rig: Rig, keys: Keys, jwks_server: JwksServer
) -> None:
    """RS256 and EdDSA tokens checked against the app's JWKS, fetched over HTTP from the
    URL the operator set; a key the document does not hold is token_unknown_key."""
    app_id, _ = rig.app("Keyed", jwks_url=jwks_server.url)
    jwks_server.serve(keys.jwk("RS256", "rs1"), keys.jwk("EdDSA", "ed1"))
    now = int(time.time())
    claims = {"iss": app_id, "sub": "k-user", "aud": AUDIENCE, "iat": now, "exp": now + 600,
              "name": "Kay"}
    for alg, kid in (("RS256", "rs1"), ("EdDSA", "ed1")):
        token = jwt.encode(claims, keys.private(alg), algorithm=alg, headers={"kid": kid})
        me = rig.client.get("/v1/me", headers=bearer(token))
        assert me.status_code == 200, me.text
        assert me.json()["user"] == "k-user" and me.json()["name"] == "Kay"
    unknown = jwt.encode(claims, keys.rsa_other, algorithm="RS256", headers={"kid": "nope"})
    answer = rig.client.get("/v1/me", headers=bearer(unknown))
    assert (answer.status_code, answer.json()["code"]) == (401, "token_unknown_key")
    forged = jwt.encode(claims, keys.rsa_other, algorithm="RS256", headers={"kid": "rs1"})
    answer = rig.client.get("/v1/me", headers=bearer(forged))
    assert (answer.status_code, answer.json()["code"]) == (401, "token_bad_signature")
