"""Credential shapes, ids and secrets (service/identity/credentials.py)."""

from __future__ import annotations

import base64
import hashlib
import re

import pytest

from service.errors import ApiError
from service.identity import credentials as c
from service.identity import seats

BASE32 = re.compile(r"[a-z2-7]+")


# -- kind_of ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("token", "kind"),
    [
        (seats.new_token(), "seat"),
        (c.new_player_token(c.new_player_id()), "player"),
        (c.new_app_key(c.new_app_id()), "app"),
        ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln", "jwt"),
        ("a.b.c", "jwt"),
        ("A-_9.b.c", "jwt"),
        ("sky_" + "x" * 4092, "seat"),  # 4096 characters: still read
    ],
    ids=lambda value: value[:4],  # stable ids: the random tokens differ per worker
)
def test_kind_of(token: str, kind: str) -> None:
    assert c.kind_of(token) == kind


@pytest.mark.parametrize(
    "token",
    ["", "abc", "Bearer x", "a.b", "a..c", ".b.c", "a.b.", "a.b.c.d", "a.b.c=", "a+b.c.d",
     "a/b.c.d", "a.b.c ", " a.b.c", "a.b.c\n", "é.b.c", "SKY_abc", "skx_abc",
     "sky_" + "x" * 4093, "a." * 2048 + "b"],
)
def test_kind_of_refuses_anything_else(token: str) -> None:
    with pytest.raises(ApiError) as caught:
        c.kind_of(token)
    assert caught.value.code == "malformed_token"
    assert caught.value.status == 401


# -- ids --------------------------------------------------------------------------------------


def test_app_ids_are_app_and_20_base32_letters() -> None:
    ids = {c.new_app_id() for _ in range(500)}
    assert len(ids) == 500
    for app_id in ids:
        assert app_id.startswith("app_") and len(app_id) == 24
        assert BASE32.fullmatch(app_id[4:])
        assert c.is_app_id(app_id)


def test_player_ids_carry_at_least_128_random_bits() -> None:
    ids = [c.new_player_id() for _ in range(2000)]
    assert len(set(ids)) == len(ids)
    for player_id in ids:
        assert len(player_id) == 26 and BASE32.fullmatch(player_id)
    assert 26 * 5 >= 128
    # Every position takes all 32 letters, the last one included (no wasted padding bits).
    for position in (0, 12, 25):
        assert len({player_id[position] for player_id in ids}) == 32


# -- tokens and keys --------------------------------------------------------------------------


def test_app_keys_and_player_tokens_name_their_owner() -> None:
    app_id, player_id = c.new_app_id(), c.new_player_id()
    key, token = c.new_app_key(app_id), c.new_player_token(player_id)
    assert re.fullmatch(rf"ska_{app_id}\.[A-Za-z0-9_-]{{43}}", key)
    assert re.fullmatch(rf"skp_{player_id}\.[A-Za-z0-9_-]{{43}}", token)
    assert c.app_of_key(key) == app_id
    assert c.player_of_token(token) == player_id
    assert c.new_app_key(app_id) != key and c.new_player_token(player_id) != token
    assert c.app_of_key(token) is None and c.player_of_token(key) is None


def _tampered(good: str, owner: str) -> list[str]:
    secret = good.rsplit(".", 1)[1]
    prefix = good[:4]
    return [
        "", prefix, good[:-1], good + "A", good + "\n", good + ".x", good.upper(),
        good.replace(".", "", 1), good.replace(".", "_", 1),
        prefix + owner.upper() + "." + secret,
        prefix + owner[:-1] + "." + secret,
        prefix + owner + "a" + "." + secret,
        prefix + owner[:-1] + "1" + "." + secret,  # 1 is no base32 letter
        prefix + owner[:-1] + "é" + "." + secret,
        prefix + owner + "." + secret[:-1] + "=",
        prefix + owner + "." + secret[:-1] + "é",
        prefix + owner + "." + secret[:-1] + "٣",  # a non-ASCII digit
        prefix + owner + ".." + secret,
        " " + good,
    ]


def test_tampered_app_keys_name_no_app() -> None:
    app_id = c.new_app_id()
    key = c.new_app_key(app_id)
    for bad in [*_tampered(key, app_id), "skp_" + key[4:], "ska_" + app_id[4:] + key[-44:]]:
        assert c.app_of_key(bad) is None, bad


def test_tampered_player_tokens_name_no_player() -> None:
    player_id = c.new_player_id()
    token = c.new_player_token(player_id)
    for bad in [*_tampered(token, player_id), "ska_" + token[4:]]:
        assert c.player_of_token(bad) is None, bad


@pytest.mark.parametrize("owner", ["", "app_x", "APP_" + "a" * 20, "app_" + "a" * 21, "a" * 26])
def test_keys_are_only_made_for_app_ids(owner: str) -> None:
    with pytest.raises(ValueError):
        c.new_app_key(owner)


@pytest.mark.parametrize("owner", ["", "a" * 25, "a" * 27, "A" * 26, "app_" + "a" * 20])
def test_tokens_are_only_made_for_player_ids(owner: str) -> None:
    with pytest.raises(ValueError):
        c.new_player_token(owner)


def test_digest_and_same() -> None:
    token = c.new_player_token(c.new_player_id())
    stored = c.digest(token)
    assert stored == seats.digest(token)
    assert token not in stored
    assert c.same(token, stored)
    assert not c.same(token[:-1] + ("A" if token[-1] != "A" else "B"), stored)
    assert not c.same(token, "")
    assert not c.same(token, stored[:-1])
    assert not c.same(token, "é" * len(stored))  # a garbled stored digest: no error, no match


# -- user_key ---------------------------------------------------------------------------------


def test_user_key_is_store_safe_and_deterministic() -> None:
    app_id = c.new_app_id()
    subs = ["alice", "Alice", "alice ", "", "user:1:2", "ünï©ødé 🐉", "\ud800", "x" * 255,
            "../../etc/passwd", "a\x00b", "{tag}"]
    keys = {}
    for sub in subs:
        if not sub:
            continue
        key = c.user_key(app_id, sub)
        assert re.fullmatch(r"[a-z0-9:_]+", key), key
        assert key == c.user_key(app_id, sub)
        keys[sub] = key
    assert len(set(keys.values())) == len(keys)  # case and spaces matter
    expected = base64.b32encode(hashlib.sha256(b"alice").digest()).decode().rstrip("=").lower()
    assert keys["alice"] == f"user:{app_id}:{expected}"
    assert len(expected) == 52
    assert c.user_key(c.new_app_id(), "alice") != keys["alice"]


@pytest.mark.parametrize(("app_id", "sub"), [("app_x", "alice"), ("app_" + "a" * 20, ""),
                                             ("app_" + "a" * 20, "x" * 256)])
def test_user_key_refuses_what_no_verified_token_holds(app_id: str, sub: str) -> None:
    with pytest.raises(ValueError):
        c.user_key(app_id, sub)
