"""Issue 15: watchers never take a replica out of rotation. A readiness ping that times out
while the store keeps completing commands is a busy replica, still ready; a ping that times
out while nothing completes, or a store that fails, is not."""

from __future__ import annotations

import asyncio
import contextlib
import random
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from service.app import Settings, create_app
from service.matches import MatchService
from service.store import RedisStore
from service.workers.heartbeat import Heartbeat, member_name, worker_check


class SlowPing(RedisStore):
    """A real Redis store whose PING is answered late (a busy event loop); ``busy`` other
    commands complete meanwhile, or none."""

    busy = True

    async def ping(self) -> bool:
        if self.busy:
            for _ in range(30):
                await self.load_or_none()
                await asyncio.sleep(0.1)
        else:
            await asyncio.sleep(3)
        return True

    async def load_or_none(self) -> None:
        with contextlib.suppress(KeyError):
            await self.load("no-such-match")


@pytest.mark.parametrize("busy", [True, False])
async def test_a_slow_ping_is_ready_while_commands_complete(
    redis_url: str, redis_prefix: str, busy: bool
) -> None:
    store = SlowPing.from_url(redis_url, prefix=redis_prefix)
    store.busy = busy
    try:
        service = MatchService(store, ttl_finished=None, ttl_idle=None)
        assert await service.ready() is busy
    finally:
        await store.close()


async def test_a_store_that_is_down_is_not_ready() -> None:
    store = RedisStore.from_url("redis://127.0.0.1:1/0", retry_budget=0.2)
    try:
        service = MatchService(store, ttl_finished=None, ttl_idle=None)
        assert await service.ready() is False
    finally:
        await store.close()


# -- issue 30 item 6: the worker loops run in `skyline serve` by default; /readyz says when
# -- no worker beats (HTTP 200 `degraded` with the reason, so a replica stays in rotation).

BOT_FIRST = {"game": "ny1901", "players": 2, "seed": 3, "bots": {"0": "greedy"}}
"""Seat 0, a bot, moves first (the human seat 1 waits for it)."""


def _wait(predicate: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def _version(http: Any, match_id: str) -> int:
    response = http.get(f"/v1/matches/{match_id}")
    assert response.status_code == 200, response.text
    version: int = response.json()["version"]
    return version


def test_serve_on_redis_plays_bots_and_beats_by_default(
    redis_url: str, redis_prefix: str
) -> None:
    """Before: on Redis `serve` ran no worker unless asked, and a bot seat stayed at version
    0 with /readyz ready."""
    store = RedisStore.from_url(redis_url, prefix=redis_prefix)
    app = create_app(store, settings=Settings(heartbeat_seconds=0.2, worker_stale_seconds=2))
    with TestClient(app) as http:
        match_id = http.post("/v1/matches", json=BOT_FIRST).json()["matchId"]
        assert _wait(lambda: _version(http, match_id) >= 1, 20), "the bots did not move"
        assert app.state.clock_worker is not None and app.state.webhook_worker is not None
        assert _wait(lambda: app.state.heartbeat.count > 0, 5)
        ready = http.get("/readyz")
        assert ready.status_code == 200
        body = ready.json()
        assert body["status"] == "ready", body
        assert body["checks"]["store"] == {"status": "ok"}
        assert body["checks"]["worker"]["status"] == "ok"
        assert body["checks"]["worker"]["workers"] >= 1


def test_serve_without_a_worker_is_degraded_and_says_why(
    redis_url: str, redis_prefix: str
) -> None:
    store = RedisStore.from_url(redis_url, prefix=redis_prefix)
    app = create_app(store, settings=Settings(worker=False, worker_stale_seconds=1))
    with TestClient(app) as http:
        match_id = http.post("/v1/matches", json=BOT_FIRST).json()["matchId"]
        ready = http.get("/readyz")
        assert ready.status_code == 200  # degraded, still in rotation: it serves
        body = ready.json()
        assert body["status"] == "degraded"
        worker = body["checks"]["worker"]
        assert worker["status"] == "degraded" and worker["workers"] == 0
        assert worker["lastBeatSecondsAgo"] is None
        assert "skyline worker" in worker["reason"] and "--no-worker" in worker["reason"]
        time.sleep(1.0)
        assert _version(http, match_id) == 0  # nobody plays: what /readyz warned of
    # The check can be switched off (0): then only the store counts.
    quiet = create_app(RedisStore.from_url(redis_url, prefix=redis_prefix),
                       settings=Settings(worker=False, worker_stale_seconds=0))
    with TestClient(quiet) as http:
        assert http.get("/readyz").json() == {"status": "ready",
                                               "checks": {"store": {"status": "ok"}}}


async def test_a_worker_whose_loop_ended_stops_beating(redis_url: str,
                                                      redis_prefix: str) -> None:
    store = RedisStore.from_url(redis_url, prefix=redis_prefix)
    try:
        ended = asyncio.create_task(asyncio.sleep(0), name="bots")
        running = asyncio.create_task(asyncio.sleep(30), name="clocks")
        await asyncio.sleep(0.01)
        heartbeat = Heartbeat(store, member_name("worker", "t"), [ended, running],
                              interval=0.05)
        await asyncio.wait_for(heartbeat.run(), 2)  # returns: a loop ended
        assert heartbeat.count == 0
        check = await worker_check(store, 1.0)
        assert check["status"] == "degraded"
        running.cancel()
    finally:
        await store.close()


@pytest.mark.slow
def test_a_killed_worker_turns_readiness_degraded(redis_url: str, redis_prefix: str,
                                                  tmp_path: Path) -> None:
    """Real processes: `skyline serve --no-worker` and a `skyline worker`; with no worker
    /readyz is degraded and a bot seat waits; a worker plays and makes it ready; killed
    (SIGKILL: no goodbye), /readyz turns degraded again within the stale time."""
    port = _port_in_range()
    store_flags = ["--redis-url", redis_url, "--redis-prefix", redis_prefix]
    serve = subprocess.Popen(
        [SKYLINE, "serve", "--no-worker", "--port", str(port), "--worker-stale-seconds", "2",
         "--rate-limits", "off", *store_flags],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path)
    worker: subprocess.Popen[bytes] | None = None
    try:
        url = f"http://127.0.0.1:{port}"
        assert _wait(lambda: _get(f"{url}/readyz") is not None, 30), "serve did not start"
        time.sleep(2.5)
        ready = _get(f"{url}/readyz")
        assert ready is not None and ready.status_code == 200
        assert ready.json()["status"] == "degraded", ready.json()
        match_id = httpx.post(f"{url}/v1/matches", json=BOT_FIRST).json()["matchId"]
        time.sleep(1.0)
        assert httpx.get(f"{url}/v1/matches/{match_id}").json()["version"] == 0

        worker = subprocess.Popen(
            [SKYLINE, "worker", "--heartbeat-seconds", "0.3", *store_flags],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path)
        assert _wait(lambda: _status(f"{url}/readyz") == "ready", 30)
        assert _wait(lambda: httpx.get(f"{url}/v1/matches/{match_id}").json()["version"] > 0,
                     30), "the worker did not play"
        worker.kill()
        worker.wait(10)
        started = time.monotonic()
        assert _wait(lambda: _status(f"{url}/readyz") == "degraded", 10)
        assert time.monotonic() - started < 4  # 2 s stale time, plus one beat at most
        body = httpx.get(f"{url}/readyz").json()
        assert "the last heartbeat was" in body["checks"]["worker"]["reason"]
    finally:
        for process in (worker, serve):
            if process is not None and process.poll() is None:
                process.terminate()
                try:
                    process.wait(15)
                except subprocess.TimeoutExpired:
                    process.kill()


SKYLINE = str(Path(sys.executable).parent / "skyline")


def _port_in_range() -> int:
    """A free port of 23000-23999 (the range this suite's helpers may use)."""
    for port in random.sample(range(23000, 24000), 1000):
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port in 23000-23999")


def _get(url: str) -> httpx.Response | None:
    try:
        return httpx.get(url, timeout=2)
    except httpx.HTTPError:
        return None


def _status(url: str) -> str | None:
    response = _get(url)
    return None if response is None else str(response.json().get("status"))
