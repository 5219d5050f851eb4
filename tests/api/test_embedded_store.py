"""The embedded SQLite store behind the API on bad days: a data folder that cannot be used is a
clear message at start (never a traceback), a full disk is ``503 store_unavailable`` with
``Retry-After`` and nothing half-written, and matches survive a restart of the app."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from service.app import Settings, create_app
from service.cli import main
from service.store import DEFAULT_FILENAME
from service.store.sqlite import SqliteStore
from tests.support.states import timeless


def _serve(data_dir: Path | str) -> int:
    return main(["serve", "--data-dir", str(data_dir), "--redis-url", "", "--port", "1"])


def test_a_data_folder_that_is_a_file_is_a_clear_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    assert _serve(blocker) == 2
    err = capsys.readouterr().err
    assert "skyline serve:" in err and "not a folder" in err and "--data-dir" in err
    assert "Traceback" not in err


def test_a_foreign_database_is_refused_and_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / DEFAULT_FILENAME
    with sqlite3.connect(path) as other:
        other.execute("CREATE TABLE invoices (id INTEGER)")
    before = path.read_bytes()
    assert _serve(tmp_path) == 2
    assert "is not a Skyline database" in capsys.readouterr().err
    assert path.read_bytes() == before


def test_a_corrupt_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / DEFAULT_FILENAME).write_bytes(b"\x00garbage" * 512)
    assert _serve(tmp_path) == 2
    assert "is not a Skyline database" in capsys.readouterr().err


def test_a_second_server_on_the_same_folder_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = create_app(settings=Settings(data_dir=str(tmp_path)))
    try:
        assert _serve(tmp_path) == 2
        err = capsys.readouterr().err
        assert "in use by another Skyline process" in err and "Redis" in err
    finally:
        asyncio.run(first.state.store.close())


def test_a_full_disk_is_503_with_retry_after_and_nothing_half_written(tmp_path: Path) -> None:
    """A write SQLite refuses for want of room (SQLITE_FULL) is 503 ``store_full`` (issue
    20, item 3: the same answer as a full Redis), counted on /metrics; /readyz stays green."""
    store = SqliteStore(tmp_path / DEFAULT_FILENAME)
    with TestClient(create_app(store)) as client:
        matches = []
        for seed in range(6):
            match = client.post("/v1/matches", json={"game": "ny1901", "players": 2,
                                                     "seed": seed}).json()
            matches.append((f"/v1/matches/{match['matchId']}",
                            {s["seat"]: s["token"] for s in match["seats"]}))
        asyncio.run(store._set_max_pages(1))  # the file may not grow: the disk is full
        refused = None
        for n in range(3000):  # until a write needs a page the file cannot get
            url, tokens = matches[n % len(matches)]
            state = client.get(url).json()
            if state["status"] == "finished":
                continue
            seat = state["activeSeats"][0]
            auth = {"Authorization": f"Bearer {tokens[seat]}"}
            move = client.get(f"{url}/legal-moves", headers=auth).json()["moves"][0]
            answer = client.post(f"{url}/actions", json={"action": move}, headers=auth)
            if answer.status_code != 200:
                refused = answer
                break
        assert refused is not None, "the capped file never filled up"
        assert refused.status_code == 503
        assert refused.json()["code"] == "store_full"
        assert refused.headers["Retry-After"] == "30"
        assert "\nskyline_store_full_total 1\n" in client.get("/metrics").text
        assert store.full_refusals == 1
        assert client.get("/readyz").status_code == 200
        after = client.get(url).json()
        assert after["version"] == state["version"]  # nothing of the refused move landed
        log = client.get(f"{url}/log", headers=auth).json()
        assert [e["version"] for e in log["entries"]] == list(range(1, after["version"] + 1))
        asyncio.run(store._set_max_pages(1_000_000))  # room again: the same move lands
        retried = client.post(f"{url}/actions", json={"action": move}, headers=auth)
        assert retried.status_code == 200 and retried.json()["version"] == after["version"] + 1


def test_matches_survive_a_restart_of_the_app(tmp_path: Path) -> None:
    settings = Settings(data_dir=str(tmp_path), ttl_idle=3600)
    with TestClient(create_app(settings=settings)) as client:
        match = client.post("/v1/matches", json={"game": "ny1901", "players": 2}).json()
        url = f"/v1/matches/{match['matchId']}"
        auth = {"Authorization": f"Bearer {match['seats'][0]['token']}"}
        move = client.get(f"{url}/legal-moves", headers=auth).json()["moves"][0]
        assert client.post(f"{url}/actions", json={"action": move}, headers=auth).is_success
        before = client.get(url, headers=auth).json()
    with TestClient(create_app(settings=settings)) as client:  # a new process, in effect
        assert timeless(client.get(url, headers=auth).json()) == timeless(before)
        log = client.get(f"{url}/log", headers=auth).json()["entries"]
        assert [(e["version"], e["action"]) for e in log] == [(1, move)]
