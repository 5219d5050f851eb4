"""Issue 20, item 3: a full store. Redis at ``maxmemory`` under ``noeviction`` refused every
create and act with ``OOM command not allowed``, which nothing mapped: ``500 internal``. Now a
write the store refuses for want of room (Redis OOM, SQLite's full disk) is ``503 store_full``
with ``Retry-After``, counted in ``/metrics`` (``skyline_store_full_total``) and logged at
most once per interval, while ``/readyz`` stays green (a shared full Redis must not pull every
replica out of rotation at once) -- and still turns red when Redis does not answer.

On an *evicting* ``maxmemory-policy`` live matches vanished silently instead: ``skyline
serve`` and ``skyline worker`` read the policy at start (``CONFIG GET``) and refuse an
evicting one unless ``--allow-evicting-redis`` is given, and then warn loudly.

Every Redis here is a private ``redis-server`` of this module (a tiny ``maxmemory`` must
not starve the other tests' Redis); the cluster is the session's, its settings restored.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
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
from starlette.testclient import TestClient

from service.cli import build_parser, check_redis_memory_policy
from service.store import RedisStore, StoreFull, StoreUnavailable
from service.store.base import FullReports
from service.store.redis import evicting
from tests.api.conftest import TOY, Match, create, make_app
from tests.graphql.client import move_input
from tests.graphql.queries import ACT
from tests.support.redis_servers import RedisClusterProcesses, RedisServer, free_port
from tests.support.slow import starts_processes

ROOT = Path(__file__).resolve().parents[2]
PREFIX = "skyline-full:"
RETRY_AFTER = "30"


@pytest.fixture(scope="module")
@starts_processes
def noeviction_redis() -> Iterator[RedisServer]:
    with RedisServer.start(extra_args=["--maxmemory-policy", "noeviction"]) as server:
        yield server


@pytest.fixture
def room(noeviction_redis: RedisServer) -> Iterator[redis.Redis]:
    """A direct client to the private Redis, emptied and without a memory limit; the limit
    is lifted again afterwards."""
    if not noeviction_redis.alive:
        noeviction_redis.restart()
    client = noeviction_redis.node.client()
    client.flushall()
    client.config_set("maxmemory", 0)
    try:
        yield client
    finally:
        with contextlib.suppress(redis.RedisError):
            client.config_set("maxmemory", 0)
            client.flushall()
        client.close()


def fill(client: redis.Redis) -> int:
    """Give Redis 1 MB of room, then write junk until it refuses (OOM); then lower the limit
    below what it uses, so that a client buffer freed later cannot make room again. Returns
    the junk keys written."""
    used = int(client.info("memory")["used_memory"])
    client.config_set("maxmemory", used + 1_000_000)
    written = 0
    with pytest.raises(redis.exceptions.OutOfMemoryError):
        while written < 10_000:
            client.set(f"junk:{written}", b"x" * 10_000)
            written += 1
    used = int(client.info("memory")["used_memory"])
    client.config_set("maxmemory", max(used - 200_000, 1))
    return written


def full_total(http: TestClient) -> int:
    found = re.search(r"^skyline_store_full_total (\d+)$", http.get("/metrics").text, re.M)
    assert found, "skyline_store_full_total is not on /metrics"
    return int(found.group(1))


def next_move(http: TestClient, match: Match) -> tuple[int, Any, int]:
    """The seat to move, one of its legal moves, and the match's version."""
    state = http.get(match.url).json()
    seat = state["activeSeats"][0]
    moves = http.get(f"{match.url}/legal-moves", headers=match.auth(seat)).json()["moves"]
    return seat, moves[0], state["version"]


def assert_store_full(response: httpx.Response) -> None:
    assert response.status_code == 503, response.text
    assert response.json()["code"] == "store_full"
    assert response.headers["Retry-After"] == RETRY_AFTER
    assert response.json()["retryAfter"] == int(RETRY_AFTER)


def store_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == "skyline.store" and "is full" in r.getMessage()]


# -- Redis at maxmemory under noeviction ----------------------------------------------------


def test_a_full_redis_answers_503_store_full_and_stays_ready(
    room: redis.Redis, noeviction_redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    store = RedisStore.from_url(noeviction_redis.url, prefix=PREFIX)
    with TestClient(make_app(store)) as http:
        match = create(http, TOY)
        seat, move, version = next_move(http, match)
        assert full_total(http) == 0
        assert fill(room) > 0
        caplog.set_level(logging.WARNING, logger="skyline.store")

        created = http.post("/v1/matches", json={"game": TOY, "players": 2})
        assert_store_full(created)
        acted = http.post(f"{match.url}/actions", json={"action": move},
                          headers=match.auth(seat))
        assert_store_full(acted)
        assert full_total(http) == 2
        # GraphQL answers the same refusal as its Unavailable member.
        answer = http.post("/graphql", json={"query": ACT, "variables": {
            "id": match.id, "action": move_input(TOY, move)}}, headers=match.auth(seat)).json()
        assert answer["data"]["act"] == {
            "__typename": "Unavailable", "code": "store_full",
            "message": "The match store is full and refuses new writes; retry later.",
            "retryAfter": int(RETRY_AFTER),
        }, answer
        assert full_total(http) == 3

        # Nothing of the refused writes landed; reads and readiness still work.
        assert http.get(match.url).json()["version"] == version
        assert http.get(f"{match.url}/log", headers=match.auth(seat)).status_code == 200
        ready = http.get("/readyz")
        assert ready.status_code == 200, ready.text
        # Three refusals, one warning (at most one per minute).
        assert len(store_warnings(caplog)) == 1, caplog.text

        room.config_set("maxmemory", 0)  # the operator makes room: the same move lands
        retried = http.post(f"{match.url}/actions", json={"action": move},
                            headers=match.auth(seat))
        assert retried.status_code == 200, retried.text
        assert retried.json()["version"] == version + 1
        assert http.post("/v1/matches", json={"game": TOY, "players": 2}).status_code == 201
        assert full_total(http) == 3


def test_readiness_still_fails_when_redis_does_not_answer(
    room: redis.Redis, noeviction_redis: RedisServer
) -> None:
    store = RedisStore.from_url(noeviction_redis.url, prefix=PREFIX, retry_budget=0.2)
    with TestClient(make_app(store)) as http:
        fill(room)
        assert http.get("/readyz").status_code == 200  # full: still in rotation
        noeviction_redis.stop()
        try:
            gone = http.get("/readyz")
            assert gone.status_code == 503
            assert gone.json()["code"] == "store_unavailable"
        finally:
            noeviction_redis.restart()


async def test_the_store_refuses_with_store_full_and_counts(
    room: redis.Redis, noeviction_redis: RedisServer
) -> None:
    store = RedisStore.from_url(noeviction_redis.url, prefix=PREFIX)
    try:
        await store.create("m1", b"r0")
        fill(room)
        with pytest.raises(StoreFull):
            await store.compare_and_set("m1", 0, b"r1", b"e1")
        with pytest.raises(StoreFull):
            await store.create("m2", b"r0")
        with pytest.raises(StoreFull):
            await store.signal_due("m1")
        assert store.full_refusals == 3
        assert not store.known_down  # full is not down: the next call gets its full budget
        assert await store.load("m1") == (0, b"r0")
        assert await store.ping()
    finally:
        await store.close()


def test_full_reports_log_once_per_interval() -> None:
    now = [0.0]
    records: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record.getMessage())

    logger = logging.getLogger("skyline.test-full-reports")
    logger.addHandler(Collect())
    logger.propagate = False
    reports = FullReports(logger, "Test store", interval=60, clock=lambda: now[0])
    for _ in range(5):
        assert isinstance(reports.refused("OOM"), StoreFull)
    assert (reports.count, len(records)) == (5, 1)
    now[0] = 59.0
    reports.refused("OOM")
    assert len(records) == 1
    now[0] = 60.0
    reports.refused("OOM")
    assert (reports.count, len(records)) == (7, 2)
    assert "Test store is full: 6 write(s) refused since the last report" in records[1]


# -- Redis Cluster: the same mapping (service/store/redis.py serves both) -------------------


@contextlib.contextmanager
def cluster_config(cluster: RedisClusterProcesses, name: str, value: str,
                   nodes: list[Any] | None = None) -> Iterator[None]:
    """``CONFIG SET name value`` on ``nodes`` (every live node) for the block, then back."""
    chosen = nodes if nodes is not None else [n for n in cluster.nodes if n.alive]
    before = {}
    for node in chosen:
        with contextlib.closing(node.client()) as client:
            before[node.name] = client.config_get(name)[name]
            client.config_set(name, value)
    try:
        yield
    finally:
        for node in chosen:
            with contextlib.closing(node.client()) as client:
                client.config_set(name, before[node.name])


def test_a_full_redis_cluster_answers_503_store_full_and_stays_ready(
    redis_cluster: RedisClusterProcesses, redis_cluster_prefix: str
) -> None:
    store = RedisStore.from_cluster_nodes(redis_cluster.nodes_arg, prefix=redis_cluster_prefix)
    with TestClient(make_app(store)) as http:
        match = create(http, TOY)
        seat, move, version = next_move(http, match)
        # A limit below what every node uses: each one is full, noeviction (the default).
        with cluster_config(redis_cluster, "maxmemory", "1"):
            assert_store_full(http.post("/v1/matches", json={"game": TOY, "players": 2}))
            assert_store_full(http.post(f"{match.url}/actions", json={"action": move},
                                        headers=match.auth(seat)))
            assert http.get("/readyz").status_code == 200
            assert full_total(http) == 2
            assert http.get(match.url).json()["version"] == version
        retried = http.post(f"{match.url}/actions", json={"action": move},
                            headers=match.auth(seat))
        assert retried.status_code == 200 and retried.json()["version"] == version + 1


def test_the_cluster_policy_check_reads_every_node(
    redis_cluster: RedisClusterProcesses, capsys: pytest.CaptureFixture[str]
) -> None:
    async def read() -> dict[str, str | None]:
        store = RedisStore.from_cluster_nodes(redis_cluster.nodes_arg)
        try:
            return await store.eviction_policies()
        finally:
            await store.close()

    policies = asyncio.run(read())
    primaries = redis_cluster.primaries_now()
    assert {n.name for n in primaries} <= set(policies)  # and the replicas the slots list
    assert set(policies.values()) == {"noeviction"}
    one = primaries[-1]
    with cluster_config(redis_cluster, "maxmemory-policy", "volatile-lru", [one]):
        args = build_parser().parse_args(["worker", "--redis-cluster", redis_cluster.nodes_arg])
        args.allow_evicting_redis = False
        assert check_redis_memory_policy(args) == 2
        err = capsys.readouterr().err
        assert "refusing to start" in err and "volatile-lru" in err and one.name in err


# -- the embedded store: a full disk ---------------------------------------------------------
# tests/api/test_embedded_store.py (test_a_full_disk_is_503_with_retry_after_...) plays moves
# until the capped file refuses one: 503 store_full there too.


# -- the start check: maxmemory-policy --------------------------------------------------------


def test_evicting_policies() -> None:
    for policy in ("allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-lru",
                   "volatile-lfu", "volatile-random", "volatile-ttl"):
        assert evicting(policy), policy
    assert not evicting("noeviction")


def _skyline(*args: str, env: dict[str, str] | None = None
             ) -> subprocess.Popen[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SKYLINE_")}
    clean.update(env or {})
    return subprocess.Popen(
        [sys.executable, "-m", "service.cli", *args], cwd=ROOT, env=clean, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )


@pytest.fixture(scope="module", params=["allkeys-lru", "volatile-ttl"])
@starts_processes
def evicting_redis(request: pytest.FixtureRequest) -> Iterator[RedisServer]:
    with RedisServer.start(extra_args=["--maxmemory", "64mb",
                                       "--maxmemory-policy", request.param]) as server:
        yield server


@pytest.mark.parametrize("command", ["serve", "worker"])
def test_an_evicting_redis_is_refused_at_start(
    evicting_redis: RedisServer, command: str
) -> None:
    extra = ["--port", str(free_port())] if command == "serve" else []
    process = _skyline(command, "--redis-url", evicting_redis.url, *extra)
    try:
        output, _ = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 2, output
    assert f"skyline {command}: refusing to start" in output
    assert "maxmemory-policy" in output and "--allow-evicting-redis" in output


def test_the_override_starts_and_warns_loudly(evicting_redis: RedisServer) -> None:
    port = free_port()
    process = _skyline("serve", "--host", "127.0.0.1", "--port", str(port), "--redis-url",
                       evicting_redis.url, "--log-level", "warning",
                       env={"SKYLINE_ALLOW_EVICTING_REDIS": "1"})
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, process.communicate()[0]
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                    break
            assert time.monotonic() < deadline, "skyline serve did not start"
            time.sleep(0.1)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            output, _ = process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            output, _ = process.communicate()
    assert "WARNING: Redis EVICTS keys" in output, output
    assert "LIVE MATCHES MAY VANISH" in output


def test_the_override_flag_warns_instead_of_refusing(
    evicting_redis: RedisServer, capsys: pytest.CaptureFixture[str]
) -> None:
    args = build_parser().parse_args(["worker", "--redis-url", evicting_redis.url,
                                      "--allow-evicting-redis"])
    assert check_redis_memory_policy(args) is None
    assert "WARNING: Redis EVICTS keys" in capsys.readouterr().err


def test_noeviction_starts_without_a_word(
    noeviction_redis: RedisServer, capsys: pytest.CaptureFixture[str]
) -> None:
    if not noeviction_redis.alive:
        noeviction_redis.restart()
    args = build_parser().parse_args(["serve", "--redis-url", noeviction_redis.url])
    assert check_redis_memory_policy(args) is None
    assert capsys.readouterr().err == ""


@pytest.mark.slow
def test_a_policy_that_cannot_be_read_is_a_warning(capsys: pytest.CaptureFixture[str]) -> None:
    with RedisServer.start(extra_args=["--rename-command", "CONFIG", ""]) as server:
        args = build_parser().parse_args(["serve", "--redis-url", server.url])
        assert check_redis_memory_policy(args) is None
        assert "could not check maxmemory-policy" in capsys.readouterr().err
    args = build_parser().parse_args(["serve", "--redis-url", f"redis://127.0.0.1:{free_port()}"])
    assert check_redis_memory_policy(args) is None
    assert "could not check Redis' maxmemory-policy" in capsys.readouterr().err


def test_the_embedded_store_needs_no_check() -> None:
    args = build_parser().parse_args(["serve", "--data-dir", ":memory:"])
    assert check_redis_memory_policy(args) is None


def test_store_full_is_a_store_unavailable() -> None:
    # Code that knows only StoreUnavailable (the bot worker's pauses, due signals) treats a
    # full store as an outage, never as a bug.
    assert issubclass(StoreFull, StoreUnavailable)
