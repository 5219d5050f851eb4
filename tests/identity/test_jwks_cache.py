"""The JWKS cache (service/identity/jwt.py, ``JwksCache``) against a real HTTP server:
Cache-Control honoured and clamped, key rotation, refetches bounded whatever the callers
send, failures falling back to the last good copy, one fetch for concurrent lookups."""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import Callable, Mapping

import pytest
from jwt.algorithms import RSAAlgorithm

from service.errors import ApiError
from service.identity.jwt import AppJwtKeys, JwksCache

from .conftest import APP, Keys, Rig, sign


@pytest.fixture
def rig(make_rig: Callable[..., Rig], keys: Keys) -> Rig:
    made = make_rig(min_refetch_seconds=10, default_max_age=300, max_max_age=1000)
    made.server.serve(keys.jwk("RS256", "rs1"), keys.jwk("EdDSA", "ed1"))
    return made


def token(keys: Keys, kid: str = "rs1") -> str:
    return sign(keys.ed if kid.startswith("ed") else keys.rsa, "EdDSA" if kid.startswith(
        "ed") else "RS256", kid)


async def code_of(rig: Rig, jwt_token: str) -> str:
    with pytest.raises(ApiError) as caught:
        await rig.verifier.verify(jwt_token)
    return caught.value.code


def point_app_at(rig: Rig, path: str) -> None:
    url = f"http://127.0.0.1:{rig.server.port}{path}"
    rig.apps[APP] = AppJwtKeys(APP, {}, url)


# -- how long a copy is kept ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cache_control", "kept"),
    [
        (None, 300),  # no header: the default
        ("max-age=120", 120),
        ("public, Max-Age=45", 45),
        ('max-age="60"', 60),
        ("max-age=soon", 300),  # invalid: the default
        ("max-age=-5", 300),
        ("max-age=1", 10),  # clamped up to min_refetch_seconds
        ("max-age=0", 10),
        ("max-age=99999999", 1000),  # clamped down to max_max_age
        ("max-age=" + "9" * 40, 1000),
        ("no-store", 10),
        ("no-cache, max-age=600", 10),
    ],
)
async def test_cache_control_decides_how_long_a_copy_is_kept(
    rig: Rig, keys: Keys, cache_control: str | None, kept: int
) -> None:
    headers = {} if cache_control is None else {"Cache-Control": cache_control}
    rig.server.serve(keys.jwk("RS256", "rs1"), **headers)
    await rig.verifier.verify(token(keys))
    assert rig.server.requests == 1
    rig.mono.advance(kept - 0.5)
    await rig.verifier.verify(token(keys))
    assert rig.server.requests == 1
    rig.mono.advance(1)
    await rig.verifier.verify(token(keys))
    assert rig.server.requests == 2
    await rig.verifier.verify(token(keys))
    assert rig.server.requests == 2


async def test_known_keys_need_no_refetch(rig: Rig, keys: Keys) -> None:
    for _ in range(20):
        await rig.verifier.verify(token(keys, "rs1"))
        await rig.verifier.verify(token(keys, "ed1"))
        rig.mono.advance(10)
    assert rig.server.requests == 1


# -- rotation and unknown key ids -------------------------------------------------------------


async def test_a_rotated_key_is_fetched_once_then_verifies(rig: Rig, keys: Keys) -> None:
    await rig.verifier.verify(token(keys))
    rig.mono.advance(30)  # still fresh (300 s), but past min_refetch_seconds
    rotated = RSAAlgorithm.to_jwk(keys.rsa_other.public_key(), as_dict=True)
    rig.server.serve(keys.jwk("RS256", "rs1"), {**rotated, "kid": "rs2", "use": "sig"})
    new = sign(keys.rsa_other, "RS256", "rs2")
    assert (await rig.verifier.verify(new)).sub == "user-1"
    assert rig.server.requests == 2
    await rig.verifier.verify(new)
    await rig.verifier.verify(token(keys))
    assert rig.server.requests == 2


async def test_random_key_ids_refetch_at_most_once_per_interval(rig: Rig, keys: Keys) -> None:
    await rig.verifier.verify(token(keys))
    rig.mono.advance(11)
    for _ in range(30):
        kid = secrets.token_hex(8)
        assert await code_of(rig, sign(keys.rsa, "RS256", kid)) == "token_unknown_key"
    assert rig.server.requests == 2  # one refetch for thirty unknown key ids
    rig.mono.advance(9.5)
    for _ in range(10):
        assert await code_of(rig, sign(keys.rsa, "RS256", secrets.token_hex(8))) == (
            "token_unknown_key"
        )
    assert rig.server.requests == 2
    assert (await rig.verifier.verify(token(keys))).sub == "user-1"  # known keys still work
    rig.mono.advance(0.5)  # 10 s since the last fetch
    assert await code_of(rig, sign(keys.rsa, "RS256", "another")) == "token_unknown_key"
    assert rig.server.requests == 3


async def test_a_key_published_right_after_a_fetch_waits_for_the_interval(
    rig: Rig, keys: Keys
) -> None:
    await rig.verifier.verify(token(keys))
    rig.server.serve(keys.jwk("RS256", "rs1"), keys.jwk("ES256", "es9"))
    new = sign(keys.ec, "ES256", "es9")
    assert await code_of(rig, new) == "token_unknown_key"
    assert rig.server.requests == 1
    rig.mono.advance(10)
    assert (await rig.verifier.verify(new)).sub == "user-1"
    assert rig.server.requests == 2


# -- failures ---------------------------------------------------------------------------------


async def test_a_server_down_keeps_the_cached_copy(rig: Rig, keys: Keys) -> None:
    await rig.verifier.verify(token(keys))
    rig.server.stop()
    rig.mono.advance(301)  # expired: a refetch is tried and fails
    assert (await rig.verifier.verify(token(keys))).sub == "user-1"
    assert (await rig.verifier.verify(token(keys, "ed1"))).sub == "user-1"
    assert await code_of(rig, sign(keys.rsa, "RS256", "rs2")) == "token_unknown_key"
    rig.mono.advance(3600)
    assert (await rig.verifier.verify(token(keys))).sub == "user-1"


async def test_a_server_down_with_no_copy_is_an_unknown_key(rig: Rig, keys: Keys) -> None:
    rig.server.stop()
    with pytest.raises(ApiError) as caught:
        await rig.verifier.verify(token(keys))
    assert caught.value.code == "token_unknown_key"
    assert "cannot be fetched" in caught.value.detail


BAD_RESPONSES: list[tuple[int, bytes]] = [
    (500, b'{"keys": []}'),
    (404, b""),
    (200, b"<html>not json</html>"),
    (200, b"[1, 2]"),
    (200, b'{"keys": {}}'),
    (200, b'{"keys": []}'),
    (200, b"[" * 100_000 + b"]" * 100_000),
    (200, json.dumps({"keys": [
        {"kty": "oct", "kid": "o", "k": "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0"},
        {"kty": "RSA", "kid": "bad", "n": 5, "e": []},
        {"kty": "EC", "kid": "bad2", "alg": ["ES256"], "crv": "P-256"},
        {"kty": "RSA", "n": "AQAB", "e": "AQAB"},  # no kid
        "not an object",
    ]}).encode()),
]


@pytest.mark.parametrize(("status", "body"), BAD_RESPONSES)
async def test_a_bad_response_keeps_the_previous_copy(
    rig: Rig, keys: Keys, status: int, body: bytes
) -> None:
    await rig.verifier.verify(token(keys))
    rig.server.status, rig.server.document = status, body
    rig.mono.advance(301)
    assert (await rig.verifier.verify(token(keys))).sub == "user-1"
    assert rig.server.requests == 2
    assert (await rig.verifier.verify(token(keys))).sub == "user-1"
    assert rig.server.requests == 2  # a failed fetch is not retried at once either


@pytest.mark.parametrize(("status", "body"), BAD_RESPONSES)
async def test_a_bad_first_response_is_an_unknown_key(
    rig: Rig, keys: Keys, status: int, body: bytes
) -> None:
    rig.server.status, rig.server.document = status, body
    for _ in range(5):
        assert await code_of(rig, token(keys)) == "token_unknown_key"
    assert rig.server.requests == 1
    rig.server.status = 200
    rig.server.serve(keys.jwk("RS256", "rs1"))
    rig.mono.advance(10)
    assert (await rig.verifier.verify(token(keys))).sub == "user-1"


async def test_unusable_members_do_not_spoil_the_usable_ones(rig: Rig, keys: Keys) -> None:
    rig.server.document = json.dumps({"keys": [
        {"kty": "RSA", "kid": "bad", "n": 5, "e": []},
        {"kty": "EC", "kid": "bad2", "alg": ["ES256"]},
        {"kty": "OKP", "kid": "bad3", "crv": "X25519", "x": "AAAA"},
        keys.jwk("RS256", "rs1", use=[]),
        keys.jwk("RS256", "rs1"),
        keys.jwk("EdDSA", "rs1"),  # a duplicate key id: the first usable key wins
    ]}).encode()
    assert (await rig.verifier.verify(token(keys))).sub == "user-1"


@pytest.mark.parametrize(("size", "accepted"), [(256 * 1024, True), (256 * 1024 + 1, False)])
async def test_the_body_is_capped_at_256_kb(
    rig: Rig, keys: Keys, size: int, accepted: bool
) -> None:
    document = json.dumps({"keys": [keys.jwk("RS256", "rs1")]}).encode()
    rig.server.document = document[:-1] + b" " * (size - len(document)) + b"}"
    assert len(rig.server.document) == size
    if accepted:
        assert (await rig.verifier.verify(token(keys))).sub == "user-1"
    else:
        assert await code_of(rig, token(keys)) == "token_unknown_key"


async def test_redirects_are_not_followed(rig: Rig, keys: Keys) -> None:
    point_app_at(rig, "/redirect")
    assert await code_of(rig, token(keys)) == "token_unknown_key"
    assert rig.server.paths == ["/redirect"]


# -- concurrency ------------------------------------------------------------------------------


async def test_concurrent_verifies_share_one_fetch(rig: Rig, keys: Keys) -> None:
    rig.server.delay = 0.2
    tokens = [token(keys, "rs1"), token(keys, "ed1")] * 10
    results = await asyncio.gather(*(rig.verifier.verify(t) for t in tokens))
    assert {r.sub for r in results} == {"user-1"}
    assert rig.server.requests == 1


async def test_concurrent_unknown_key_ids_share_one_refetch(rig: Rig, keys: Keys) -> None:
    await rig.verifier.verify(token(keys))
    rig.mono.advance(11)
    rig.server.delay = 0.2
    tokens = [sign(keys.rsa, "RS256", secrets.token_hex(4)) for _ in range(15)]
    results = await asyncio.gather(*(rig.verifier.verify(t) for t in tokens),
                                   rig.verifier.verify(token(keys)), return_exceptions=True)
    assert [getattr(r, "code", None) for r in results[:-1]] == ["token_unknown_key"] * 15
    assert getattr(results[-1], "sub", None) == "user-1"
    assert rig.server.requests == 2


async def test_a_cancelled_caller_does_not_cancel_the_shared_fetch(
    rig: Rig, keys: Keys
) -> None:
    rig.server.delay = 0.2
    first = asyncio.create_task(rig.verifier.verify(token(keys)))
    second = asyncio.create_task(rig.verifier.verify(token(keys)))
    await asyncio.sleep(0.05)
    first.cancel()
    assert (await second).sub == "user-1"
    assert first.cancelled()
    assert rig.server.requests == 1


# -- the cache on its own ---------------------------------------------------------------------


async def test_an_injected_fetch_and_its_failures(keys: Keys) -> None:
    calls: list[str] = []
    document = json.dumps({"keys": [keys.jwk("ES256", "es1")]}).encode()
    now = [0.0]

    async def fetch(url: str) -> tuple[int, Mapping[str, str], bytes]:
        calls.append(url)
        if len(calls) == 2:
            raise RuntimeError("boom")
        return 200, {"cache-control": "max-age=60"}, document

    cache = JwksCache(fetch=fetch, clock=lambda: now[0])
    key = await cache.key("https://app.example/jwks", "es1")
    assert (key.algorithm_name, key.key_id) == ("ES256", "es1")
    now[0] = 61
    assert (await cache.key("https://app.example/jwks", "es1")).key_id == "es1"  # boom: kept
    now[0] = 72
    assert (await cache.key("https://app.example/jwks", "es1")).key_id == "es1"
    assert calls == ["https://app.example/jwks"] * 3
    with pytest.raises(ApiError) as caught:
        await cache.key("https://other.example/jwks", "zz")
    assert caught.value.code == "token_unknown_key"
    await cache.aclose()


async def test_aclose_closes_the_client_and_may_be_repeated(rig: Rig, keys: Keys) -> None:
    await rig.verifier.verify(token(keys))
    await rig.cache.aclose()
    await rig.cache.aclose()
