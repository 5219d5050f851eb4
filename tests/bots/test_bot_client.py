"""examples/bot_client.py finishes matches against a live server (``skyline serve`` on the
embedded store, in a subprocess on a free port), and retries safely."""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import httpx
import pytest

from tests.support.slow import starts_processes

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "examples" / "bot_client.py"


def _load_client() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bot_client", CLIENT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="module")
@starts_processes
def server() -> Iterator[str]:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "service.cli", "serve", "--port", str(port),
         "--log-level", "warning", "--data-dir", ":memory:"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        env={k: v for k, v in os.environ.items() if not k.startswith("SKYLINE_")},
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                if httpx.get(f"{base}/healthz", timeout=1.0).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None:
                raise AssertionError(f"server exited: {process.stdout.read()!r}")  # type: ignore[union-attr]
            time.sleep(0.05)
        else:
            raise AssertionError("server did not start")
        yield base
    finally:
        process.terminate()
        process.wait(timeout=10)


def _run_client(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(CLIENT), *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


def test_client_creates_a_match_and_plays_every_seat_to_the_end(server: str) -> None:
    done = _run_client("--base-url", server, "--quiet", "create", "--game", "ny1901",
                       "--players", "2")
    assert done.returncode == 0, done.stderr
    assert "finished at version" in done.stdout
    match_id = done.stdout.split()[1]
    state = httpx.get(f"{server}/v1/matches/{match_id}").json()
    assert state["status"] == "finished"
    assert state["result"]["winners"]


def test_two_clients_join_one_match_each_with_its_seat_token(server: str) -> None:
    created = httpx.post(f"{server}/v1/matches",
                         json={"game": "ginkgopolis", "players": 2, "seed": 3}).json()
    match_id = created["matchId"]
    clients = [
        subprocess.Popen([sys.executable, str(CLIENT), "--base-url", server, "--quiet",
                          "--seed", str(entry["seat"]), "join", "--match", match_id,
                          "--token", entry["token"]],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for entry in created["seats"]
    ]
    outputs = [client.communicate(timeout=300) for client in clients]
    for client, (out, err) in zip(clients, outputs, strict=True):
        assert client.returncode == 0, err
        assert f"match {match_id} finished" in out
    state = httpx.get(f"{server}/v1/matches/{match_id}").json()
    assert state["status"] == "finished"
    # Both seats moved (Ginkgopolis' card choice is simultaneous: each seat acts itself).
    log = httpx.get(f"{server}/v1/matches/{match_id}/log?after=0").json()
    assert {entry["seat"] for entry in log["entries"]} >= {0, 1}


def test_retries_reuse_the_idempotency_key_and_conflicts_refetch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    client_module = _load_client()
    seen_keys: list[str] = []
    calls = {"legal": 0, "act": 0}

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/legal-moves"):
            calls["legal"] += 1
            moves = [{"type": "end_turn"}] if calls["legal"] <= 2 else []
            return httpx.Response(200, json={"matchId": "m", "version": calls["legal"],
                                             "seat": 0, "moves": moves})
        if request.url.path.endswith("/actions"):
            calls["act"] += 1
            seen_keys.append(request.headers["Idempotency-Key"])
            body = json.loads(request.content)
            if calls["act"] == 1:
                return httpx.Response(503, json={"code": "store_unavailable"})
            if calls["act"] == 2:
                raise httpx.ConnectError("connection lost")
            if calls["act"] == 3:  # first move finally lands... but the version moved on
                return httpx.Response(409, json={"code": "version_conflict",
                                                 "currentVersion": 2})
            assert body["expectedVersion"] == 2
            return httpx.Response(200, json={
                "matchId": "m", "version": 3, "events": [],
                "state": {"status": "active", "activeSeats": [1], "version": 3},
            })
        raise AssertionError(request.url)

    # No real waiting in the test; monkeypatch restores the standard library afterwards.
    monkeypatch.setattr(client_module.time, "sleep", lambda _: None)
    with httpx.Client(base_url="http://test", transport=httpx.MockTransport(handler)) as http:
        bot = client_module.BotClient(http, "m", {0: "token"}, log=False)
        bot.take_turn(0)
    # Attempts 1-3 are one intended move (same key); after the 409 a new decision, new key.
    assert seen_keys[0] == seen_keys[1] == seen_keys[2]
    assert seen_keys[3] != seen_keys[0]
    assert calls["legal"] == 2 and bot.moves == 1


def test_sse_parser_handles_ids_comments_and_multiline_data() -> None:
    client_module = _load_client()
    lines = [": ping", "id: 4", "event: state", 'data: {"a":', "data: 1}", "", ": ping", ""]
    events = list(client_module._sse_events(iter(lines)))
    assert events == [("4", "state", '{"a":\n1}')]
