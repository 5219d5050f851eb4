"""App-signed JWTs (service/identity/jwt.py): every accepted algorithm verifies against keys
served by a real HTTP server, and every refusal has its own code."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Callable
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization

from service.errors import ApiError
from service.identity.jwt import AppJwtKeys, UserClaims

from .conftest import APP, AUDIENCE, NOW, OTHER_APP, OTHER_HS_SECRET, Keys, Rig, sign


async def refused(rig: Rig, token: str) -> ApiError:
    with pytest.raises(ApiError) as caught:
        await rig.verifier.verify(token)
    for part in token.split("."):  # no detail repeats the token
        assert len(part) < 4 or part not in caught.value.detail
    return caught.value


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def forge(header: dict[str, Any], payload: dict[str, Any], secret: bytes) -> str:
    """A token HMAC-SHA256-signed by hand (PyJWT refuses to sign some of these)."""
    signing_input = b64(json.dumps(header).encode()) + "." + b64(json.dumps(payload).encode())
    mac = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return signing_input + "." + b64(mac)


def claims(**overrides: Any) -> dict[str, Any]:
    base = {"iss": APP, "aud": AUDIENCE, "sub": "user-1", "iat": NOW, "exp": NOW + 600}
    return {**base, **overrides}


@pytest.fixture
def rig(make_rig: Callable[..., Rig], keys: Keys) -> Rig:
    made = make_rig()
    made.server.serve(keys.jwk("RS256", "rs1"), keys.jwk("ES256", "es1"),
                      keys.jwk("EdDSA", "ed1"))
    return made


# -- accepted ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("alg", "kid"), [("RS256", "rs1"), ("ES256", "es1"),
                                          ("EdDSA", "ed1"), ("HS256", "k1")])
async def test_each_algorithm_verifies(rig: Rig, keys: Keys, alg: str, kid: str) -> None:
    token = sign(keys.private(alg), alg, kid, sub="alice", name="Alice", exp=NOW + 900)
    assert await rig.verifier.verify(token) == UserClaims(
        app_id=APP, sub="alice", name="Alice", issued_at=NOW, expires_at=NOW + 900
    )
    assert rig.lookups == [APP]


async def test_name_is_optional_and_audience_may_be_a_list(rig: Rig, keys: Keys) -> None:
    token = sign(keys.rsa, "RS256", "rs1", aud=["someone-else", AUDIENCE])
    assert (await rig.verifier.verify(token)).name is None


async def test_a_jwk_without_alg_or_use_is_used_for_its_key_type(
    rig: Rig, keys: Keys
) -> None:
    rig.server.serve(keys.jwk("ES256", "es1", alg=None, use=None))
    assert (await rig.verifier.verify(sign(keys.ec, "ES256", "es1"))).sub == "user-1"


# -- signature and keys -----------------------------------------------------------------------


async def test_a_signature_by_another_key_is_refused(rig: Rig, keys: Keys) -> None:
    error = await refused(rig, sign(keys.rsa_other, "RS256", "rs1"))
    assert error.code == "token_bad_signature"
    assert (await refused(rig, sign(b"x" * 32, "HS256", "k1"))).code == "token_bad_signature"


async def test_a_tampered_payload_is_refused(rig: Rig, keys: Keys) -> None:
    header, _, signature = sign(keys.ed, "EdDSA", "ed1").split(".")
    forged = b64(json.dumps(claims(sub="admin")).encode())
    error = await refused(rig, f"{header}.{forged}.{signature}")
    assert error.code == "token_bad_signature"


@pytest.mark.parametrize(("alg", "kid"), [("RS256", "nope"), ("HS256", "rs1")])
async def test_an_unknown_key_id_is_refused(rig: Rig, keys: Keys, alg: str, kid: str) -> None:
    assert (await refused(rig, sign(keys.private(alg), alg, kid))).code == "token_unknown_key"


async def test_an_app_without_jwks_cannot_use_public_keys(rig: Rig, keys: Keys) -> None:
    error = await refused(rig, sign(keys.rsa, "RS256", "rs1", iss=OTHER_APP))
    assert error.code == "token_unknown_key"
    assert rig.server.requests == 0


async def test_hs256_signed_with_the_public_key_pem_is_refused(rig: Rig, keys: Keys) -> None:
    """Algorithm confusion: a token HMAC'd with the app's public RSA key (which anyone can
    download) must not verify against that key."""
    pem = keys.rsa.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    header = {"alg": "HS256", "typ": "JWT", "kid": "rs1"}
    assert (await refused(rig, forge(header, claims(), pem))).code == "token_unknown_key"
    # Even an app whose HS256 secrets use that key id: its own secret is used, not the JWK.
    rig.apps[APP] = AppJwtKeys(APP, {"rs1": b"z" * 32}, rig.server.url)
    assert (await refused(rig, forge(header, claims(), pem))).code == "token_bad_signature"
    # And a JWK's raw JSON as the secret fares no better.
    raw_jwk = json.dumps(keys.jwk("RS256", "rs1")).encode()
    assert (await refused(rig, forge(header, claims(), raw_jwk))).code == "token_bad_signature"


async def test_a_jwk_of_another_algorithm_is_not_used(rig: Rig, keys: Keys) -> None:
    # "es1" is the app's ES256 key: an RS256 token naming it is refused before any check.
    error = await refused(rig, sign(keys.rsa, "RS256", "es1"))
    assert error.code == "token_unknown_key"
    assert "another algorithm" in error.detail
    # An RSA key published for RS256 does not verify an ES256 token either.
    assert (await refused(rig, sign(keys.ec, "ES256", "rs1"))).code == "token_unknown_key"


async def test_keys_not_for_signing_or_of_other_algorithms_are_ignored(
    rig: Rig, keys: Keys
) -> None:
    oct_key = {"kty": "oct", "kid": "oct1", "k": b64(b"s" * 32), "alg": "HS256"}
    rig.server.serve(
        keys.jwk("RS256", "enc1", use="enc"),
        keys.jwk("RS256", "rs384", alg="RS384"),
        {**oct_key, "use": "sig"},
        {**oct_key, "kid": "oct2", "alg": None},
        keys.jwk("ES256", "es1"),
    )
    for kid in ("enc1", "rs384"):  # ignored: not the "another algorithm" refusal
        error = await refused(rig, sign(keys.rsa, "RS256", kid))
        assert (error.code, error.detail) == (
            "token_unknown_key", "The app has no signing key with this key id."
        )
    rs384 = sign(keys.rsa, "RS384", "rs384")
    assert (await refused(rig, rs384)).code == "malformed_token"
    # A symmetric JWK served in the key set is no HS256 secret.
    assert (await refused(rig, sign(b"s" * 32, "HS256", "oct1"))).code == "token_unknown_key"
    assert (await rig.verifier.verify(sign(keys.ec, "ES256", "es1"))).sub == "user-1"


# -- issuer and audience ----------------------------------------------------------------------


async def test_an_unknown_issuer_is_refused(rig: Rig, keys: Keys) -> None:
    error = await refused(rig, sign(keys.rsa, "RS256", "rs1", iss="app_nobody"))
    assert error.code == "token_bad_issuer"
    assert rig.server.requests == 0


async def test_an_app_cannot_sign_for_another_app(rig: Rig, keys: Keys) -> None:
    """The issuer picks the keys: APP's secret under OTHER_APP's name is a bad signature."""
    token = sign(keys.private("HS256"), "HS256", "k1", iss=OTHER_APP)
    assert (await refused(rig, token)).code == "token_bad_signature"
    good = sign(OTHER_HS_SECRET, "HS256", "k1", iss=OTHER_APP)
    assert (await rig.verifier.verify(good)).app_id == OTHER_APP


@pytest.mark.parametrize("iss", [None, "", 7, ["x"]])
async def test_a_missing_or_odd_issuer_is_malformed(rig: Rig, keys: Keys, iss: Any) -> None:
    token = forge({"alg": "HS256", "kid": "k1"}, {**claims(), "iss": iss}, b"s" * 32)
    if iss is None:
        token = sign(keys.private("HS256"), "HS256", "k1", iss=None)
    assert (await refused(rig, token)).code == "malformed_token"


async def test_a_wrong_audience_is_refused(rig: Rig, keys: Keys) -> None:
    token = sign(keys.ec, "ES256", "es1", aud="another-service")
    assert (await refused(rig, token)).code == "token_bad_audience"
    token = sign(keys.ec, "ES256", "es1", aud=["a", "b"])
    assert (await refused(rig, token)).code == "token_bad_audience"


async def test_a_missing_audience_is_malformed(rig: Rig, keys: Keys) -> None:
    error = await refused(rig, sign(keys.ec, "ES256", "es1", aud=None))
    assert error.code == "malformed_token"
    assert "aud" in error.detail


# -- times ------------------------------------------------------------------------------------


async def test_an_expired_token_is_refused(rig: Rig, keys: Keys) -> None:
    token = sign(keys.rsa, "RS256", "rs1", iat=NOW - 3600, exp=NOW - 600)
    assert (await refused(rig, token)).code == "token_expired"


@pytest.mark.parametrize(("skew", "accepted"), [(59, True), (61, False)])
async def test_the_leeway_is_60_seconds(rig: Rig, keys: Keys, skew: int, accepted: bool) -> None:
    expired = sign(keys.rsa, "RS256", "rs1", iat=NOW - 600, exp=NOW - skew)
    early_nbf = sign(keys.rsa, "RS256", "rs1", nbf=NOW + skew)
    early_iat = sign(keys.rsa, "RS256", "rs1", iat=NOW + skew, exp=NOW + skew + 600)
    for token, code in [(expired, "token_expired"), (early_nbf, "token_not_yet_valid"),
                        (early_iat, "token_not_yet_valid")]:
        if accepted:
            assert (await rig.verifier.verify(token)).sub == "user-1"
        else:
            assert (await refused(rig, token)).code == code


async def test_the_verifier_reads_its_own_clock(rig: Rig, keys: Keys) -> None:
    token = sign(keys.ed, "EdDSA", "ed1")  # valid NOW .. NOW + 600
    assert await rig.verifier.verify(token)
    rig.wall.advance(661)
    assert (await refused(rig, token)).code == "token_expired"
    rig.wall.now = NOW - 61
    assert (await refused(rig, token)).code == "token_not_yet_valid"


async def test_a_token_may_live_24_hours_but_no_longer(rig: Rig, keys: Keys) -> None:
    assert await rig.verifier.verify(sign(keys.ec, "ES256", "es1", exp=NOW + 86400))
    error = await refused(rig, sign(keys.ec, "ES256", "es1", exp=NOW + 86401))
    assert error.code == "token_too_long_lived"
    far = sign(keys.ec, "ES256", "es1", exp=10**30)
    assert (await refused(rig, far)).code == "token_too_long_lived"


async def test_a_token_expiring_before_its_issue_is_malformed(rig: Rig, keys: Keys) -> None:
    token = sign(keys.ec, "ES256", "es1", iat=NOW, exp=NOW - 5)
    assert (await refused(rig, token)).code == "malformed_token"


@pytest.mark.parametrize("claim", ["exp", "iat", "nbf"])
@pytest.mark.parametrize("value", ["1800000600", True, [1]])
async def test_times_must_be_numbers(rig: Rig, claim: str, value: Any) -> None:
    token = forge({"alg": "HS256", "kid": "k1"}, {**claims(nbf=NOW), claim: value}, b"s" * 32)
    assert (await refused(rig, token)).code == "malformed_token"


async def test_fractional_times_are_accepted(rig: Rig) -> None:
    token = forge({"alg": "HS256", "kid": "k1"}, claims(iat=NOW + 0.5, exp=NOW + 60.9),
                  b"s" * 32)
    verified = await rig.verifier.verify(token)
    assert (verified.issued_at, verified.expires_at) == (NOW, NOW + 60)


# -- required claims, header ------------------------------------------------------------------


@pytest.mark.parametrize("claim", ["sub", "exp", "iat"])
async def test_required_claims(rig: Rig, keys: Keys, claim: str) -> None:
    error = await refused(rig, sign(keys.rsa, "RS256", "rs1", **{claim: None}))
    assert error.code == "malformed_token"
    assert claim in error.detail


@pytest.mark.parametrize("sub", ["", "x" * 256, 42, {"id": 1}])
async def test_the_subject_is_a_string_of_1_to_255(rig: Rig, sub: Any) -> None:
    token = forge({"alg": "HS256", "kid": "k1"}, claims(sub=sub), b"s" * 32)
    assert (await refused(rig, token)).code == "malformed_token"
    long_ok = forge({"alg": "HS256", "kid": "k1"}, claims(sub="é" * 255), b"s" * 32)
    assert (await rig.verifier.verify(long_ok)).sub == "é" * 255


async def test_a_name_that_is_not_a_string_is_malformed(rig: Rig) -> None:
    token = forge({"alg": "HS256", "kid": "k1"}, claims(name=["Bob"]), b"s" * 32)
    assert (await refused(rig, token)).code == "malformed_token"


async def test_alg_none_is_refused(rig: Rig) -> None:
    unsigned = jwt.encode(
        claims(), None, algorithm="none", headers={"kid": "k1"}  # type: ignore[arg-type]
    )
    assert unsigned.endswith(".")
    assert (await refused(rig, unsigned)).code == "malformed_token"
    _, payload, _ = forge({"alg": "HS256", "kid": "k1"}, claims(), b"s" * 32).split(".")
    for alg in ("none", "None", "NONE"):
        none_header = b64(json.dumps({"alg": alg, "kid": "k1"}).encode())
        error = await refused(rig, f"{none_header}.{payload}.c2ln")
        assert error.code == "malformed_token"
    assert rig.lookups == []


@pytest.mark.parametrize("alg", ["HS384", "HS512", "PS256", "RS512", "ES384", ""])
async def test_other_algorithms_are_refused(rig: Rig, alg: str) -> None:
    token = forge({"alg": alg, "kid": "k1"}, claims(), b"s" * 32)
    assert (await refused(rig, token)).code == "malformed_token"


@pytest.mark.parametrize("kid", [None, "", 5])
async def test_a_key_id_is_required(rig: Rig, kid: Any) -> None:
    header = {"alg": "HS256"} if kid is None else {"alg": "HS256", "kid": kid}
    assert (await refused(rig, forge(header, claims(), b"s" * 32))).code == "malformed_token"


@pytest.mark.parametrize(
    "token",
    ["a.b.c", "eyJ.eyJ.sig", "a.b", "a..c", "a.b.c.d", "", "x" * 5000,
     b64(b"[1]") + "." + b64(b"{}") + ".c2ln", b64(b'{"alg":"HS256","kid":"k1"}') + "."
     + b64(b"[1]") + ".c2ln", b64(b'{"alg":"HS256","kid":"k1"}') + "." + b64(b"nope") + ".c2ln"],
)
async def test_garbage_is_malformed(rig: Rig, token: str) -> None:
    assert (await refused(rig, token)).code == "malformed_token"


async def test_a_seat_token_is_not_a_jwt(rig: Rig) -> None:
    assert (await refused(rig, "sky_" + "a" * 43)).code == "malformed_token"


async def test_a_token_over_4096_characters_is_refused_unread(rig: Rig) -> None:
    token = forge({"alg": "HS256", "kid": "k1"}, claims(pad="p" * 4000), b"s" * 32)
    assert len(token) > 4096
    assert (await refused(rig, token)).code == "malformed_token"
    assert rig.lookups == []
