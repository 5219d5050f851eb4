"""A replica (``skyline serve``) killed with SIGKILL mid-request.

Three replicas on one Redis (a private ``redis-server``: the test pauses its writes). Players
act through all three; then replica A is killed with act requests in flight, in the two
ways that matter, made deterministic:

- *landed, answer lost*: Redis writes are paused (``CLIENT PAUSE WRITE``) while A has taken
  two moves and sent their compare-and-set; A is frozen (SIGSTOP), writes resume, so both
  moves are stored while A cannot answer; then A is killed (SIGKILL). The clients see the
  connection cut. Retrying on replica B with the same ``Idempotency-Key`` must answer 2xx
  with the version that was stored -- not apply the move again.
- *never processed*: a move sent to the frozen A, which never reads it, cut by the kill.
  The retry on replica C applies it, once.

Then the players finish every match through what is left (a request to the dead A fails to
connect and goes to the next replica). Every accepted move is in the log exactly once, the
logs are contiguous, and nothing is in them that no client was told.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import redis

from tests.scale.conftest import ReplicaFactory
from tests.scale.play import (
    REQUEST_TIMEOUT,
    Accepted,
    Ledger,
    Match,
    Replicas,
    cancel,
    check_log,
    create_match,
    play_seat,
)
from tests.support.redis_servers import RedisServer

pytestmark = pytest.mark.redis

TEST_BOUND = 240.0  # seconds; a hang guard for the whole test
PREFIX = "scale-kill:"


@pytest.fixture
def private_redis() -> Iterator[RedisServer]:
    with RedisServer.start() as server:
        yield server


async def _stored_version(client: redis.Redis, match: Match) -> int:
    raw = await asyncio.to_thread(client.hget, f"{PREFIX}match:{{{match.id}}}", "v")
    assert raw is not None
    return int(raw)


async def _next_move(
    http: httpx.AsyncClient, url: str, match: Match, rng: random.Random
) -> tuple[int, Any]:
    """The seat to move in ``match`` and one of its legal moves (asked of ``url``)."""
    state = (await http.get(f"{url}/v1/matches/{match.id}", headers=match.auth(0))).json()
    assert state["status"] == "active", state
    seat = state["activeSeats"][0]
    moves = (await http.get(f"{url}/v1/matches/{match.id}/legal-moves",
                            headers=match.auth(seat))).json()["moves"]
    return seat, rng.choice(moves)


async def _post_act(http: httpx.AsyncClient, url: str, match: Match, seat: int, move: Any,
                    key: str) -> httpx.Response:
    return await http.post(
        f"{url}/v1/matches/{match.id}/actions", json={"action": move},
        headers={**match.auth(seat), "Idempotency-Key": key}, timeout=REQUEST_TIMEOUT,
    )


async def test_replica_killed_mid_request_clients_retry_elsewhere(
    replicas: ReplicaFactory, private_redis: RedisServer
) -> None:
    a, b, c = await asyncio.to_thread(replicas.start, 3, redis_url=private_redis.url,
                                      prefix=PREFIX)
    every = Replicas([a.url, b.url, c.url])
    ledger = Ledger()
    rng = random.Random(5)
    direct = redis.Redis.from_url(private_redis.url, socket_timeout=10)
    deadline = time.monotonic() + TEST_BOUND
    async with httpx.AsyncClient() as http, asyncio.timeout(TEST_BOUND):
        matches = [
            await create_match(http, every, ledger, "ny1901", 2, seed=40 + i, deadline=deadline)
            for i in range(4)
        ]
        stop = asyncio.Event()

        def players(done: asyncio.Event | None) -> list[asyncio.Task[None]]:
            return [
                asyncio.create_task(play_seat(http, every, m, seat, ledger,
                                              seed=rng.randrange(2**32), deadline=deadline,
                                              stop=done))
                for m in matches for seat in range(m.players)
            ]

        # 1. Play through all three replicas for a while, then let the players pause.
        first = players(stop)
        try:
            await ledger.wait_for(30)
            stop.set()
            await asyncio.gather(*first)
        finally:
            await cancel(first)

        # 2. Two moves through A that land while A cannot answer.
        landed = matches[:2]
        before = [await _stored_version(direct, m) for m in landed]
        pending: list[tuple[Match, int, Any, str, asyncio.Task[httpx.Response]]] = []
        await asyncio.to_thread(direct.execute_command, "CLIENT", "PAUSE", "60000", "WRITE")
        try:
            for match in landed:
                seat, move = await _next_move(http, b.url, match, rng)
                key = f"landed-{uuid.uuid4().hex}"
                task = asyncio.create_task(_post_act(http, a.url, match, seat, move, key))
                pending.append((match, seat, move, key, task))
            # Both compare-and-sets sit in Redis, blocked by the pause.
            while int((await asyncio.to_thread(direct.info, "clients"))["blocked_clients"]) < 2:
                assert not any(p[-1].done() for p in pending), "A answered during the pause"
                await asyncio.sleep(0.02)
            await asyncio.to_thread(a.freeze)
        finally:
            await asyncio.to_thread(direct.execute_command, "CLIENT", "UNPAUSE")
        for match, version in zip(landed, before, strict=True):
            while await _stored_version(direct, match) != version + 1:
                await asyncio.sleep(0.02)

        # 3. A move A never reads: sent to the frozen process.
        lost = matches[2]
        seat, move = await _next_move(http, b.url, lost, rng)
        lost_version = await _stored_version(direct, lost)
        lost_key = f"unread-{uuid.uuid4().hex}"
        lost_task = asyncio.create_task(_post_act(http, a.url, lost, seat, move, lost_key))
        await asyncio.sleep(0.2)  # the request reaches A's socket; A is frozen
        assert not lost_task.done()

        await asyncio.to_thread(a.kill)
        for match, seat_, move_, key, task in pending:
            with pytest.raises(httpx.TransportError):
                await task  # the answer was lost with the process
            retry = await _post_act(http, b.url, match, seat_, move_, key)
            assert retry.status_code == 200, retry.text
            version = retry.json()["version"]
            assert version == before[landed.index(match)] + 1  # the stored one, not a new one
            ledger.accept(Accepted(match.id, seat_, version, move_, key))
        with pytest.raises(httpx.TransportError):
            await lost_task
        assert await _stored_version(direct, lost) == lost_version  # it never landed
        retry = await _post_act(http, c.url, lost, seat, move, lost_key)
        assert retry.status_code == 200, retry.text
        assert retry.json()["version"] == lost_version + 1
        ledger.accept(Accepted(lost.id, seat, lost_version + 1, move, lost_key))
        # A second retry of each is still answered with the same version.
        again = await _post_act(http, c.url, lost, seat, move, lost_key)
        assert again.status_code == 200 and again.json()["version"] == lost_version + 1

        # 4. The players finish every match through what is left.
        rest = players(None)
        try:
            await asyncio.gather(*rest)
        finally:
            await cancel(rest)
        assert not a.alive and b.alive and c.alive
        for match in matches:
            await check_log(http, b.url, match, ledger)
        assert ledger.transport_errors > 0  # the players met the dead replica too
        for replica in (b, c):  # faults are handled, not crashed through
            assert not replica.unhandled_errors(), replica.log_tail()
        print(f"\n{__name__}: {ledger.summary()}")
    with contextlib.suppress(redis.RedisError):
        direct.close()
