"""Bot seats on Redis with real processes: `skyline serve` (no worker) and `skyline worker`
as separate processes on one Redis, under this test's own key prefix.

Humans play random legal moves over REST while an SSE reader records every version. Midway
the worker is killed (SIGKILL) while it holds a due signal it never acknowledged; a new worker
process takes that signal back -- under the same consumer name at once (``resume_due``), or
under another name once it has been pending ``--reclaim-idle-ms`` (``XAUTOCLAIM``) -- and the
match finishes, every version once, in order; no signal is left pending."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from service.store.redis import DUE_GROUP, RedisStore
from tests.support.redis_servers import free_port
from tests.support.slow import starts_processes

from .helpers import HANG, Watched, assert_contiguous, create, follow, play_to_the_end

SKYLINE = str(Path(sys.executable).parent / "skyline")

pytestmark = pytest.mark.redis


class Processes:
    """The processes one test started; every one is stopped at the end."""

    def __init__(self, directory: Path, env: dict[str, str]) -> None:
        self.directory = directory
        self.env = env
        self.started: list[subprocess.Popen[bytes]] = []

    def start(self, name: str, *args: str) -> subprocess.Popen[bytes]:
        out = (self.directory / f"{name}.log").open("wb")
        process = subprocess.Popen([SKYLINE, *args], stdout=out, stderr=subprocess.STDOUT,
                                   env=self.env)
        self.started.append(process)
        return process

    def log(self, name: str) -> str:
        return (self.directory / f"{name}.log").read_text(errors="replace")[-3000:]

    def stop_all(self) -> None:
        for process in self.started:
            if process.poll() is None:
                process.terminate()
        for process in self.started:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=20)


@pytest.fixture
@starts_processes
def processes(tmp_path: Path, redis_url: str, redis_prefix: str) -> Iterator[Processes]:
    # The worker reads its Redis and prefix from the environment, as in deploy/.
    env = {**os.environ, "SKYLINE_REDIS_URL": redis_url, "SKYLINE_REDIS_PREFIX": redis_prefix}
    started = Processes(tmp_path, env)
    try:
        yield started
    finally:
        started.stop_all()


def wait_ready(url: str, process: subprocess.Popen[bytes], logs: Processes) -> None:
    deadline = time.monotonic() + 60  # process start-up, not a measurement
    while time.monotonic() < deadline:
        assert process.poll() is None, logs.log("serve")
        try:
            if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    raise AssertionError("skyline serve did not become ready: " + logs.log("serve"))


def pending(redis_url: str, prefix: str) -> dict[str, int]:
    """Unacknowledged due signals per consumer."""
    client = redis.Redis.from_url(redis_url)
    try:
        summary: Any = client.xpending(f"{prefix}bots:due", DUE_GROUP)
    finally:
        client.close()
    return {
        (c["name"].decode() if isinstance(c["name"], bytes) else c["name"]): int(c["pending"])
        for c in summary.get("consumers") or []
    }


@pytest.mark.parametrize(
    ("game", "players", "bots", "restart"),
    [
        ("ny1901", 2, {"1": "search"}, "same-name"),
        ("ginkgopolis", 3, {"1": "search", "2": "greedy"}, "other-name"),
    ],
)
async def test_bots_finish_through_a_worker_process_that_is_killed_and_replaced(
    processes: Processes, redis_url: str, redis_prefix: str, game: str, players: int,
    bots: dict[str, str], restart: str,
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    serve = processes.start(
        "serve", "serve", "--port", str(port), "--redis-url", redis_url,
        "--redis-prefix", redis_prefix, "--log-level", "warning",
        "--no-worker",  # the bots are the dedicated workers' (serve runs one by default)
    )
    await asyncio.to_thread(wait_ready, url, serve, processes)
    first = processes.start("worker-1", "worker", "--consumer", "w-1", "--bot-budget", "3")

    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        match_id, tokens = await create(http, game, players, bots, seed=21)
        watched = Watched()
        reader = asyncio.create_task(follow(http, match_id, watched))

        async def until_midway() -> bool:
            return (watched.latest or {}).get("version", 0) < 8

        await play_to_the_end(http, match_id, tokens, seed=2, watched=watched,
                              pause=until_midway)
        assert (watched.latest or {}).get("status") == "active", "finished before midway"
        assert first.poll() is None, processes.log("worker-1")
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=20)

        # The dead worker holds a signal it never acknowledged: whatever it held when it
        # died, and the match's next signal as if it had claimed it just before dying.
        store = RedisStore.from_url(redis_url, prefix=redis_prefix)
        try:
            await store.signal_due(match_id)
            await store.claim_due("w-1", count=100, block_ms=0, reclaim_idle_ms=None)
        finally:
            await store.close()
        assert pending(redis_url, redis_prefix).get("w-1", 0) >= 1

        if restart == "same-name":
            args = ["--consumer", "w-1"]
        else:
            args = ["--consumer", "w-2", "--reclaim-idle-ms", "1"]
        second = processes.start("worker-2", "worker", "--bot-budget", "3", *args)
        final = await play_to_the_end(http, match_id, tokens, seed=3, watched=watched)
        async with asyncio.timeout(HANG):
            await reader
        assert final["status"] == "finished", final
        assert final["bots"] == bots
        log = (await http.get(f"/v1/matches/{match_id}/log")).json()["entries"]
        assert_contiguous(watched, log, final["version"])
        assert {str(e["seat"]) for e in log} >= set(bots)

    # The signal the dead worker held was taken back and acknowledged.
    async with asyncio.timeout(HANG):
        while sum(pending(redis_url, redis_prefix).values()):
            await asyncio.sleep(0.05)
    second.send_signal(signal.SIGTERM)
    assert second.wait(timeout=30) == 0, processes.log("worker-2")
    assert "Traceback" not in processes.log("worker-2")
    assert "Traceback" not in processes.log("serve")
