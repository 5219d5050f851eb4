"""The single Redis stopped and restarted while players play through two replicas.

The Redis here is our own ``redis-server`` on a free port, with an append-only file fsynced
on every write (a restarted server keeps what it acknowledged, as a production one with
persistence would). What must hold:

- while it is down, requests fail fast with 503, ``Retry-After`` and the problem code
  ``store_unavailable`` (reads, writes and ``/readyz``) -- no hang, no 500;
- ``/readyz`` is red (503) while it is down and turns green again by itself after the
  restart, in the same replica processes (nobody restarts them);
- the players, retrying 503s with the same ``Idempotency-Key``, finish their matches; every
  accepted move is in the log exactly once at the version its answer named, the log is
  contiguous, and SSE watchers that reconnect with ``Last-Event-ID`` saw every version once,
  in order.
"""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from service import games
from tests.scale.conftest import ReplicaFactory
from tests.scale.play import Ledger, Match, Replicas, Watch, check_log, create_match, play_and_watch
from tests.support.redis_servers import RedisServer

pytestmark = pytest.mark.redis

TEST_BOUND = 240.0  # seconds; a hang guard for the whole test
PROBE_TIMEOUT = 15.0  # a 503 must come back well within this (the store's budget is 2 s)


async def _probe_down(client: httpx.AsyncClient, url: str, match: Match) -> None:
    """Reads, writes and /readyz on ``url`` answer 503 store_unavailable with Retry-After."""
    answers = [
        await client.get(f"{url}/readyz", timeout=PROBE_TIMEOUT),
        await client.get(f"{url}/v1/matches/{match.id}", headers=match.auth(0),
                         timeout=PROBE_TIMEOUT),
        await client.post(
            f"{url}/v1/matches/{match.id}/actions",
            headers={**match.auth(0), "Idempotency-Key": "probe-while-down"},
            json={"action": {"type": "anything"}}, timeout=PROBE_TIMEOUT,
        ),
    ]
    for response in answers:
        assert response.status_code == 503, response.text
        assert response.headers["content-type"].startswith("application/problem+json")
        assert response.json()["code"] == "store_unavailable"
        assert int(response.headers["retry-after"]) >= 1


async def _wait_ready(client: httpx.AsyncClient, url: str) -> None:
    while True:
        response = await client.get(f"{url}/readyz", timeout=PROBE_TIMEOUT)
        if response.status_code == 200:
            return
        assert response.status_code == 503
        await asyncio.sleep(0.1)


async def test_single_redis_stopped_and_restarted_during_play(
    replicas: ReplicaFactory,
) -> None:
    server = await asyncio.to_thread(
        RedisServer.start, extra_args=["--appendonly", "yes", "--appendfsync", "always"]
    )
    try:
        a, b = await asyncio.to_thread(replicas.start, 2, redis_url=server.url,
                                       prefix="scale-restart:")
        pids = (a.process.pid, b.process.pid)
        both = Replicas([a.url, b.url])
        ledger = Ledger()
        deadline = time.monotonic() + TEST_BOUND
        async with httpx.AsyncClient() as client, asyncio.timeout(TEST_BOUND):
            matches = [
                await create_match(client, both, ledger, game, 2, seed=7 + i,
                                   deadline=deadline)
                for i, game in enumerate(games.ids())
            ]
            watched = [(m, Watch(f"sse on {m.game}")) for m in matches]
            # Every watcher holds version 0 before anyone moves.
            async with play_and_watch(
                client, both, matches, ledger, watched=watched,
                watch_via=Replicas([b.url, a.url]), seed_step=31, deadline=deadline,
            ) as play:
                await ledger.wait_for(20)

                await asyncio.to_thread(server.stop)
                for url in (a.url, b.url):
                    await _probe_down(client, url, matches[0])
                # The players meet the outage too, and keep retrying.
                while ledger.unavailable["store_unavailable"] < 2:
                    await asyncio.sleep(0.05)
                accepted_while_down = len(ledger.accepted)

                await asyncio.to_thread(server.restart)
                for url in (a.url, b.url):
                    await _wait_ready(client, url)
                assert (a.process.pid, b.process.pid) == pids
                assert a.alive and b.alive

                await ledger.wait_for(20)
                await play.finish()

            assert len(ledger.accepted) > accepted_while_down
            assert set(ledger.unavailable) == {"store_unavailable"}, ledger.unavailable
            assert ledger.retry_after == {"1"}
            for match, watch in watched:
                latest = await check_log(client, a.url, match, ledger)
                assert watch.versions == list(range(latest + 1)), watch.name
                assert watch.statuses[-1] == "finished"
            # A watcher either rode the outage out (the store's watch retries within its
            # budget, then reads the version again) or had its stream cut and resumed from
            # Last-Event-ID; which one depends on how long the outage lasted. Either way it
            # saw every version once, in order (checked above).
            for replica in (a, b):  # faults are handled, not crashed through
                assert not replica.unhandled_errors(), replica.log_tail()
            print(f"\n{__name__}: {ledger.summary()}")
    finally:
        await asyncio.to_thread(server.close)
