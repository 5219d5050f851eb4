"""Redis Cluster faults under play, through ``skyline serve --redis-cluster`` replicas.

A cluster of our own (3 primaries + 3 replicas on free ports: these tests crash and fail
over nodes, so they do not share the session cluster). Two replicas serve the players; a
primary holding a match being played is crashed (``DEBUG SEGFAULT``) or handed over to its
replica (``CLUSTER FAILOVER``) mid-match. The app retries with backoff inside its budget;
clients retry a 503 or a cut connection with the same ``Idempotency-Key``. What must hold:

- the victim's slot moved to another node, and play continued on that match afterwards;
- every accepted move is in the log exactly once at the version its answer named, the log
  is contiguous, and nothing is in it that no client was told (``check_log``);
- an SSE watcher (reconnecting with ``Last-Event-ID`` if its stream breaks) saw every
  version of the victim match once, in order.
"""

from __future__ import annotations

import asyncio
import time
import uuid

import httpx
import pytest

from service import games
from tests.scale.conftest import ReplicaFactory
from tests.scale.play import Ledger, Match, Replicas, Watch, check_log, create_match, play_and_watch
from tests.support.redis_servers import RedisClusterProcesses

pytestmark = pytest.mark.redis

TEST_BOUND = 240.0  # seconds; a hang guard per test


@pytest.mark.parametrize("fault", ["crash", "manual-failover"])
async def test_cluster_primary_fault_during_play_loses_nothing(
    fault_cluster: RedisClusterProcesses, replicas: ReplicaFactory, fault: str
) -> None:
    await asyncio.to_thread(fault_cluster.wait_healthy)
    prefix = f"scale-cluster:{uuid.uuid4().hex[:8]}:"
    a, b = await asyncio.to_thread(
        replicas.start, 2, redis_cluster=fault_cluster.nodes_arg, prefix=prefix
    )
    both = Replicas([a.url, b.url])
    ledger = Ledger()
    deadline = time.monotonic() + TEST_BOUND
    async with httpx.AsyncClient() as client, asyncio.timeout(TEST_BOUND):
        # The victim: a 3-seat New York 1901 match (the longest game), so the fault hits it
        # mid-match; one 2-seat match of every game besides, on other slots as it falls.
        matches: list[Match] = [
            await create_match(client, both, ledger, "ny1901", 3, seed=1, deadline=deadline)
        ]
        for i, game in enumerate(games.ids()):
            matches.append(await create_match(client, both, ledger, game, 2, seed=10 + i,
                                              deadline=deadline))
        victim = matches[0]
        victim_key = f"{prefix}match:{{{victim.id}}}"
        watch = Watch("sse on the victim")
        primary = None
        accepted_at_fault = 0
        try:
            async with play_and_watch(
                client, both, matches, ledger, watched=[(victim, watch)],
                watch_via=Replicas([b.url, a.url]), seed_step=97, deadline=deadline,
            ) as play:
                await ledger.wait_for(30)

                primary = await asyncio.to_thread(fault_cluster.primary_for_key, victim_key)
                if fault == "crash":
                    await asyncio.to_thread(fault_cluster.crash, primary)
                else:
                    replica = await asyncio.to_thread(fault_cluster.replica_of, primary)
                    await asyncio.to_thread(fault_cluster.failover, replica)
                accepted_at_fault = len(ledger.accepted)
                await asyncio.to_thread(fault_cluster.wait_healthy, 60.0)
                new_primary = await asyncio.to_thread(fault_cluster.primary_for_key,
                                                      victim_key)
                assert new_primary is not primary

                await play.finish()
        finally:
            if primary is not None and not primary.alive:
                # Back as a replica, so the cluster is whole for the next test.
                await asyncio.to_thread(fault_cluster.restart, primary)

        after_fault = [x for x in ledger.accepted[accepted_at_fault:] if x.match_id == victim.id]
        assert after_fault, "no move of the victim match was accepted after the fault"
        for match in matches:
            latest = await check_log(client, a.url, match, ledger)
            if match is victim:
                assert watch.versions == list(range(latest + 1))
                assert watch.statuses[-1] == "finished"
        # Whatever the clients met (503s inside the failover window, cut connections), no
        # request ended in a server error: every act answer was 2xx, 409 or 422.
        assert set(ledger.unavailable) <= {"store_unavailable", "busy"}
        for server in (a, b):  # faults are handled, not crashed through
            assert not server.unhandled_errors(), server.log_tail()
        print(f"\n{__name__}: {ledger.summary()}")
