"""``skyline apps``: the operator's commands (``service.cli.main``, as the ``skyline`` script
runs it) against the embedded store's file and against Redis; what they write is what the
server then checks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from service.cli import main
from service.identity import credentials
from service.players.apps import Apps
from service.players.docs import Docs
from service.store import SqliteStore
from service.store.redis import RedisStore


@dataclass
class Done:
    returncode: int
    stdout: str
    stderr: str


CAPTURE: list[pytest.CaptureFixture[str]] = []


@pytest.fixture(autouse=True)
def _capture(capsys: pytest.CaptureFixture[str]) -> Iterator[None]:
    CAPTURE.append(capsys)
    yield
    CAPTURE.pop()


def skyline(*args: str) -> Done:
    capsys = CAPTURE[-1]
    capsys.readouterr()
    code = main(["apps", *args])
    out, err = capsys.readouterr()
    return Done(code, out, err)


def _json(done: Done) -> object:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_apps_on_the_embedded_store(tmp_path: Path) -> None:
    where = ["--data-dir", str(tmp_path), "--json"]
    added = _json(skyline("add", "Acme Games", "--match-url",
                          "https://acme.example/m/{matchId}", *where))
    assert isinstance(added, dict)
    app_id, key = added["appId"], added["apiKey"]
    assert credentials.app_of_key(key) == app_id
    listed = _json(skyline("list", *where))
    assert listed == [{"appId": app_id, "name": "Acme Games", "guests": True, "key": "set",
                       "matchUrlTemplate": "https://acme.example/m/{matchId}",
                       "jwksUrl": None, "hs256Kids": []}]
    rotated = _json(skyline("rotate-key", app_id, *where))
    assert isinstance(rotated, dict) and rotated["apiKey"] != key
    changed = _json(skyline("set", app_id, "--guests", "off", *where))
    assert isinstance(changed, dict) and changed["guests"] is False
    secret = skyline("set", app_id, "--add-hs256-kid", "k1", "--data-dir", str(tmp_path))
    assert secret.returncode == 0 and "hs256 secret for kid k1" in secret.stdout
    revoked = _json(skyline("revoke", app_id, *where))
    assert isinstance(revoked, dict) and revoked["key"] == "revoked"

    async def check() -> None:
        store = SqliteStore(str(tmp_path / "skyline.sqlite3"))
        try:
            app = await Apps(Docs(store)).get(app_id)
            assert app is not None and app.revoked and app.key is None
            assert not app.guests and list(app.hs256) == ["k1"]
        finally:
            await store.close()

    import asyncio
    asyncio.run(check())


def test_unknown_apps_and_bad_templates_are_refused(tmp_path: Path) -> None:
    where = ["--data-dir", str(tmp_path)]
    unknown = skyline("rotate-key", "app_" + "z" * 20, *where)
    assert unknown.returncode == 1 and "No app" in unknown.stderr
    bad = skyline("add", "X", "--match-url", "ftp://nowhere", *where)
    assert bad.returncode == 1 and "{matchId}" in bad.stderr


@pytest.mark.redis
def test_apps_on_redis(redis_url: str, redis_prefix: str) -> None:
    where = ["--redis-url", redis_url, "--redis-prefix", redis_prefix, "--json"]
    added = _json(skyline("add", "Bot Platform", *where))
    assert isinstance(added, dict)
    listed = _json(skyline("list", *where))
    assert [a["appId"] for a in listed] == [added["appId"]]  # type: ignore[union-attr,index]

    async def check() -> None:
        store = RedisStore.from_url(redis_url, prefix=redis_prefix)
        try:
            app = await Apps(Docs(store)).get(added["appId"])
            assert app is not None and app.key == credentials.digest(added["apiKey"])
        finally:
            await store.close()

    import asyncio
    asyncio.run(check())


def _secret_of(app_id: str, kid: str, data_dir: Path) -> str | None:
    async def read() -> str | None:
        store = SqliteStore(str(data_dir / "skyline.sqlite3"))
        try:
            app = await Apps(Docs(store)).get(app_id)
            assert app is not None
            return app.hs256.get(kid)
        finally:
            await store.close()

    import asyncio
    return asyncio.run(read())


def test_a_new_hs256_secret_is_in_the_json_and_a_kid_is_never_silently_replaced(
    tmp_path: Path,
) -> None:
    """Issue 30 item 8: ``--json`` carries the one-time secret; issue 31 item 12: adding a
    kid the app has is refused (the secret stays), rotating and removing are explicit."""
    where = ["--data-dir", str(tmp_path), "--json"]
    added = _json(skyline("add", "Acme", *where))
    assert isinstance(added, dict)
    app_id = added["appId"]
    first = _json(skyline("set", app_id, "--add-hs256-kid", "k1", *where))
    assert isinstance(first, dict)
    assert first["hs256Kid"] == "k1" and first["hs256Kids"] == ["k1"]
    secret = first["hs256Secret"]
    assert isinstance(secret, str) and len(secret) == 43  # 32 bytes, base64url
    assert _secret_of(app_id, "k1", tmp_path) == secret  # the very secret the server checks

    again = skyline("set", app_id, "--add-hs256-kid", "k1", *where)
    assert again.returncode == 1 and again.stdout == ""
    assert "k1" in again.stderr and "--rotate-hs256-kid" in again.stderr
    assert _secret_of(app_id, "k1", tmp_path) == secret

    unknown = skyline("set", app_id, "--rotate-hs256-kid", "k9", *where)
    assert unknown.returncode == 1 and "k9" in unknown.stderr
    rotated = _json(skyline("set", app_id, "--rotate-hs256-kid", "k1", *where))
    assert isinstance(rotated, dict) and rotated["hs256Kid"] == "k1"
    assert rotated["hs256Secret"] not in (secret, None)
    assert _secret_of(app_id, "k1", tmp_path) == rotated["hs256Secret"]

    second = _json(skyline("set", app_id, "--add-hs256-kid", "k2", *where))
    assert isinstance(second, dict) and second["hs256Kids"] == ["k1", "k2"]
    removed = _json(skyline("set", app_id, "--remove-hs256-kid", "k1", *where))
    assert isinstance(removed, dict) and removed["hs256Kids"] == ["k2"]
    assert "hs256Secret" not in removed  # nothing new to show
    assert _secret_of(app_id, "k1", tmp_path) is None
    gone = skyline("set", app_id, "--remove-hs256-kid", "k1", *where)
    assert gone.returncode == 1 and "k1" in gone.stderr
    # Text output prints the secret too (as before).
    text = skyline("set", app_id, "--add-hs256-kid", "k3", "--data-dir", str(tmp_path))
    assert text.returncode == 0
    assert _secret_of(app_id, "k3", tmp_path) in text.stdout
