"""The watch wake-ups at scale (store/redis_wakeups.py): one pub/sub connection per store on a
single Redis and at most one per shard primary on a cluster, whatever the number of watchers;
a bounded command pool; every watcher sees every version through a killed connection and a
slot moved under it; a channel is unsubscribed when its last watcher leaves.

What the server says is what is checked (``CLIENT LIST``, ``PUBSUB CHANNELS`` /
``SHARDCHANNELS``): every store here names its connections (``client_name``), so the counts
are this store's alone even on a Redis other tests share.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest
import redis as sync_redis
from redis.crc import key_slot

from service.store import RedisStore, StoreUnavailable
from tests.support.redis_servers import RedisClusterProcesses, RedisNode

pytestmark = pytest.mark.redis

MATCHES = 50
WATCHERS_PER_MATCH = 10  # 500 watchers
POOL = 16  # command connections (per node on a cluster)
BOUND = 120.0  # seconds; a hang guard per test (each takes a few seconds, more on a loaded CI)


@dataclass
class Where:
    """The store under test and the servers it talks to."""

    store: RedisStore
    name: str  # its CLIENT SETNAME
    servers: Callable[[], list[sync_redis.Redis]]  # single node: it; cluster: every live node
    cluster: RedisClusterProcesses | None = None

    def primaries(self) -> list[sync_redis.Redis]:
        if self.cluster is None:
            return self.servers()
        return [n.client() for n in self.cluster.primaries_now()]

    def clients(self) -> list[tuple[str, list[dict[str, Any]]]]:
        """``(node, CLIENT LIST entries of this store)`` for every server."""
        out = []
        for server in self.servers():
            with contextlib.closing(server):
                entries = [c for c in server.client_list() if c.get("name") == self.name]
                kwargs = server.connection_pool.connection_kwargs
                out.append((f"{kwargs['host']}:{kwargs['port']}", entries))
        return out

    def channels(self) -> list[str]:
        """Match channels of this store's prefix subscribed on any primary."""
        found: list[str] = []
        pattern = self.store.prefix + "*"
        for server in self.primaries():
            with contextlib.closing(server):
                if self.cluster is None:
                    reply = server.execute_command("PUBSUB", "CHANNELS", pattern)
                else:
                    reply = server.execute_command("PUBSUB", "SHARDCHANNELS", pattern)
            found.extend(c.decode() for c in reply)
        return found


PATIENT = 20.0


def _pubsub(entry: dict[str, Any]) -> bool:
    return "P" in entry["flags"] or any(int(entry.get(f, 0)) for f in ("sub", "psub", "ssub"))


@pytest.fixture(params=["redis", pytest.param("cluster", marks=pytest.mark.slow)])
async def where(request: pytest.FixtureRequest) -> AsyncIterator[Where]:
    name = f"skyline-test-{uuid.uuid4().hex[:10]}"
    if request.param == "redis":
        url: str = request.getfixturevalue("redis_url")
        # A generous pool_timeout: these tests count connections and versions; on a loaded
        # machine (2 cores, xdist) a 2 s wait for a slot is no sign of a stuck pool -- and
        # neither is a slow TCP connect (CI saw "Timeout connecting" at the default 0.5 s).
        store = RedisStore.from_url(url, prefix=request.getfixturevalue("redis_prefix"),
                                    max_connections=POOL, client_name=name,
                                    pool_timeout=PATIENT, connect_timeout=PATIENT,
                                    retry_budget=PATIENT)
        place = Where(store, name, lambda: [sync_redis.Redis.from_url(url)])
    else:
        cluster: RedisClusterProcesses = request.getfixturevalue("redis_cluster")
        store = RedisStore.from_cluster_nodes(
            cluster.nodes_arg, prefix=request.getfixturevalue("redis_cluster_prefix"),
            max_connections=POOL, client_name=name, pool_timeout=PATIENT,
            connect_timeout=PATIENT,
        )
        place = Where(store, name, lambda: [n.client() for n in cluster.nodes if n.alive],
                      cluster)
    try:
        yield place
    finally:
        await store.close()


def mid() -> str:
    return uuid.uuid4().hex[:12]


async def until(condition: Callable[[], Any], what: str, timeout: float = 45.0) -> None:
    """Wait until ``condition()`` (sync, async or run in a thread when blocking) holds."""
    try:
        async with asyncio.timeout(timeout):
            while True:
                value = condition()
                if isinstance(value, Awaitable):
                    value = await value
                if value:
                    return
                await asyncio.sleep(0.02)
    except TimeoutError:
        pytest.fail(f"timed out waiting for: {what}")


async def watch_until(store: RedisStore, match_id: str, total: int, out: list[int]) -> None:
    watcher = store.watch(match_id, 0)
    try:
        async for version in watcher:
            out.append(version)
            if version >= total:
                return
    finally:
        await watcher.aclose()


async def write(store: RedisStore, match_id: str, first: int, last: int) -> None:
    """Versions ``first..last`` of ``match_id``, one CAS each, interleaved with others."""
    for version in range(first, last + 1):
        assert await store.compare_and_set(match_id, version - 1, b"r%d" % version, b"e")
        await asyncio.sleep(random.uniform(0, 0.002))


async def check_connections(where: Where) -> None:
    """Exactly one pub/sub connection of this store per node holding watched channels (a
    single node: one), only on primaries; at most POOL command connections per node."""
    def look() -> list[tuple[str, list[dict[str, Any]]]]:
        return where.clients()

    by_node = await asyncio.to_thread(look)
    pubsub = {node: [c for c in entries if _pubsub(c)] for node, entries in by_node}
    # Command connections; on a cluster, less the one the client keeps from discovering the
    # topology (CLUSTER SLOTS on a startup node: redis-py's own, outside the per-node pools).
    commands = {
        node: [c for c in entries if not _pubsub(c) and c["cmd"] != "cluster|slots"]
        for node, entries in by_node
    }
    assert all(len(c) <= 1 for c in pubsub.values()), pubsub
    total = sum(len(c) for c in pubsub.values())
    if where.cluster is None:
        assert total == 1
    else:
        primaries = {n.name for n in where.cluster.primaries_now()}
        assert {node for node, c in pubsub.items() if c} <= primaries
        assert 1 <= total <= len(primaries)
    assert all(len(c) <= POOL for c in commands.values()), {
        node: sorted(e["cmd"] for e in c) for node, c in commands.items()
    }
    assert where.store.pubsub_connections == total


async def pubsub_ids(where: Where) -> set[str]:
    """Ids of this store's pub/sub connections, as the servers list them."""
    by_node = await asyncio.to_thread(where.clients)
    return {f"{node}/{c['id']}" for node, entries in by_node for c in entries if _pubsub(c)}


async def kill_pubsub(where: Where) -> int:
    """``CLIENT KILL`` this store's pub/sub connections (by id: the single Redis may be
    shared with other tests' connections); how many were killed."""
    def kill() -> int:
        killed = 0
        for server in where.servers():
            with contextlib.closing(server):
                for entry in server.client_list():
                    if entry.get("name") == where.name and _pubsub(entry):
                        killed += int(server.execute_command("CLIENT", "KILL", "ID",
                                                             entry["id"]))
        return killed

    return await asyncio.to_thread(kill)


async def test_500_watchers_share_one_pubsub_connection_and_see_every_version(
    where: Where,
) -> None:
    store = where.store
    matches = [mid() for _ in range(MATCHES)]
    for m in matches:
        await store.create(m, b"r0")
    half, total = 10, 20
    seen: dict[tuple[str, int], list[int]] = {
        (m, w): [] for m in matches for w in range(WATCHERS_PER_MATCH)
    }
    async with asyncio.timeout(BOUND):
        watchers = [
            asyncio.create_task(watch_until(store, m, total, out)) for (m, _), out in seen.items()
        ]
        try:
            await until(lambda: store.subscribed_channels == MATCHES, "all channels subscribed")
            # Writes while all of them watch, on the same store (its pool serves both).
            await asyncio.gather(*(write(store, m, 1, half) for m in matches))
            await until(lambda: all(len(out) >= half for out in seen.values()),
                        "every watcher at the first half")
            await check_connections(where)
            assert store.wakeups >= MATCHES * half  # one message per write at least
            assert store.subscribed_channels == MATCHES

            # The server drops the pub/sub connection(s) while writes go on: the watchers
            # lose nothing, the store reconnects and subscribes everything again.
            before = await pubsub_ids(where)
            writes = asyncio.gather(*(write(store, m, half + 1, half + 5) for m in matches))
            await asyncio.sleep(0.01)
            assert await kill_pubsub(where) >= 1
            await writes
            await until(lambda: store.subscribed_channels == MATCHES, "resubscribed")
            after = await pubsub_ids(where)
            assert after and not after & before  # new connections
            await check_connections(where)
            await asyncio.gather(*(write(store, m, half + 6, total) for m in matches))
            for task in watchers:
                await task
            for out in seen.values():
                assert out == list(range(1, total + 1))
        finally:
            for task in watchers:
                task.cancel()
            await asyncio.gather(*watchers, return_exceptions=True)
        # Every watcher left: nothing subscribed, no pub/sub connection left open.
        await until(lambda: asyncio.to_thread(lambda: not where.channels()),
                    "channels unsubscribed on the server")
        await until(lambda: store.pubsub_connections == 0, "pub/sub connections closed")


async def test_the_watchers_of_one_match_share_a_subscription_until_the_last_leaves(
    where: Where,
) -> None:
    store, m = where.store, mid()
    await store.create(m, b"r0")
    key = store.key(m)
    first, second = store.watch(m, 0), store.watch(m, 0)
    async with asyncio.timeout(BOUND):
        try:
            waiting = [asyncio.create_task(anext(first)), asyncio.create_task(anext(second))]
            await until(lambda: store.subscribed_channels == 1, "subscribed")
            assert store.pubsub_connections == 1
            assert await asyncio.to_thread(where.channels) == [key]
            assert await store.compare_and_set(m, 0, b"r1", b"e1")
            assert await asyncio.gather(*waiting) == [1, 1]
        finally:
            await first.aclose()
        # One watcher left: still subscribed.
        assert await asyncio.to_thread(where.channels) == [key]
        assert store.subscribed_channels == 1
        try:
            nxt = asyncio.create_task(anext(second))
            assert await store.compare_and_set(m, 1, b"r2", b"e2")
            assert await nxt == 2
        finally:
            await second.aclose()
        await until(lambda: asyncio.to_thread(lambda: not where.channels()), "unsubscribed")
        await until(lambda: store.pubsub_connections == 0, "pub/sub connection closed")
        assert store.subscribed_channels == 0


async def test_a_busy_pool_makes_commands_wait_then_fail_as_unavailable(where: Where) -> None:
    """More concurrent commands than connections: they wait their turn (no "Too many
    connections"); a command that cannot get one within pool_timeout is StoreUnavailable
    at once -- overload, not an outage: the store is not marked down."""
    store, m = where.store, mid()
    await store.create(m, b"r0")
    async with asyncio.timeout(BOUND):
        loads = await asyncio.gather(*(store.load(m) for _ in range(POOL * 20)))
        assert loads == [(0, b"r0")] * (POOL * 20)

        store.pool_timeout = 0.2
        slots = store._command_slots
        assert slots is not None
        taken = 0
        busy: list[asyncio.Task[Any]] = []
        try:
            # Every command slot taken: the store's own (fair) queue is the bound.
            for _ in range(POOL):
                await slots.acquire()
                taken += 1
            with pytest.raises(StoreUnavailable, match="busy"):
                await store.load(m)
            assert not store.known_down
            for _ in range(taken):
                slots.release()
            taken = 0
            if where.cluster is None:
                # Behind it redis-py's blocking pool: every connection busy for 1.5 s (BLPOP
                # on a list nobody pushes to, sent around the store) also makes a command
                # wait, then fail the same way.
                store.client.connection_pool.timeout = 0.2  # type: ignore[union-attr]
                blocker = f"{store.prefix}blocker:{{{m}}}"
                busy = [
                    asyncio.create_task(store.client.execute_command("BLPOP", blocker, 1.5))
                    for _ in range(POOL)
                ]
                pool = store.client.connection_pool
                await until(lambda: len(pool._in_use_connections) == POOL, "pool busy")
                with pytest.raises(StoreUnavailable, match="busy"):
                    await store.load(m)
                assert not store.known_down
        finally:
            for _ in range(taken):
                slots.release()
            await asyncio.gather(*busy, return_exceptions=True)
        assert await store.load(m) == (0, b"r0")


# -- a slot moved under the watchers (cluster) -----------------------------------------------


def _node_id(node: RedisNode) -> str:
    with contextlib.closing(node.client()) as client:
        return str(client.execute_command("CLUSTER", "MYID").decode())


def move_slot(cluster: RedisClusterProcesses, slot: int, source: RedisNode,
              target: RedisNode) -> None:
    """Reshard one slot from ``source`` to ``target`` (IMPORTING/MIGRATING, MIGRATE the keys,
    SETSLOT NODE everywhere) as ``redis-cli --cluster reshard`` does."""
    source_id, target_id = _node_id(source), _node_id(target)
    with contextlib.closing(source.client(timeout=10)) as src, \
            contextlib.closing(target.client(timeout=10)) as dst:
        dst.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", source_id)
        src.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", target_id)
        while keys := src.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 100):
            src.execute_command("MIGRATE", target.host, target.port, "", 0, 5000, "KEYS", *keys)
        dst.execute_command("CLUSTER", "SETSLOT", slot, "NODE", target_id)
        src.execute_command("CLUSTER", "SETSLOT", slot, "NODE", target_id)
    for node in cluster.primaries_now():
        if node not in (source, target):
            with contextlib.closing(node.client()) as other:
                other.execute_command("CLUSTER", "SETSLOT", slot, "NODE", target_id)
    cluster.wait_healthy()


async def test_watchers_follow_a_slot_moved_to_another_primary(
    redis_cluster: RedisClusterProcesses, redis_cluster_prefix: str
) -> None:
    """Resharding moves a watched match's slot to another primary: the old one ends the
    shard channel (a pushed ``sunsubscribe``), the store subscribes it on the new owner and
    the watchers see every version -- by the wake-ups alone (an hour between idle reads)."""
    name = f"skyline-test-{uuid.uuid4().hex[:10]}"
    store = RedisStore.from_cluster_nodes(redis_cluster.nodes_arg, prefix=redis_cluster_prefix,
                                          client_name=name, watch_block_ms=3_600_000)
    m = mid()
    key = store.key(m)
    slot = key_slot(key.encode())
    source = redis_cluster.primary_for_key(key)
    target = next(n for n in redis_cluster.primaries_now() if n is not source)
    moved = False
    try:
        async with asyncio.timeout(BOUND):
            await store.create(m, b"r0")
            outs: list[list[int]] = [[], [], []]
            watchers = [asyncio.create_task(watch_until(store, m, 30, out)) for out in outs]
            await until(lambda: store.subscribed_channels == 1, "subscribed")
            await write(store, m, 1, 10)
            await until(lambda: all(len(out) == 10 for out in outs), "first ten seen")
            writes = asyncio.create_task(write(store, m, 11, 20))
            await asyncio.to_thread(move_slot, redis_cluster, slot, source, target)
            moved = True
            await writes
            await write(store, m, 21, 30)
            for task in watchers:
                await task
            assert outs == [list(range(1, 31))] * 3
            assert store._wakeups.dropped >= 1  # the old owner ended the subscription

            def on_target() -> int:
                with contextlib.closing(target.client()) as client:
                    return int(client.execute_command("PUBSUB", "SHARDNUMSUB", key)[1])

            # The watchers are gone: the subscription on the new owner goes too.
            await until(lambda: asyncio.to_thread(lambda: on_target() == 0), "unsubscribed")
    finally:
        if moved:
            await asyncio.to_thread(move_slot, redis_cluster, slot, target, source)
        await store.close()


async def test_watchers_after_a_slot_move_subscribe_on_the_new_owner(
    redis_cluster: RedisClusterProcesses, redis_cluster_prefix: str
) -> None:
    """The channel itself moves: once the slot is elsewhere, the store's subscription is on
    the new owner and no longer on the old one."""
    name = f"skyline-test-{uuid.uuid4().hex[:10]}"
    store = RedisStore.from_cluster_nodes(redis_cluster.nodes_arg, prefix=redis_cluster_prefix,
                                          client_name=name, watch_block_ms=3_600_000)
    m = mid()
    key = store.key(m)
    slot = key_slot(key.encode())
    source = redis_cluster.primary_for_key(key)
    target = next(n for n in redis_cluster.primaries_now() if n is not source)

    def subscribers(node: RedisNode) -> int:
        with contextlib.closing(node.client()) as client:
            return int(client.execute_command("PUBSUB", "SHARDNUMSUB", key)[1])

    moved = False
    watcher = store.watch(m, 0)
    try:
        async with asyncio.timeout(BOUND):
            await store.create(m, b"r0")
            first = asyncio.create_task(anext(watcher))
            await until(lambda: subscribers(source) == 1, "subscribed on the old owner")
            await asyncio.to_thread(move_slot, redis_cluster, slot, source, target)
            moved = True
            await until(lambda: subscribers(target) == 1, "subscribed on the new owner")
            assert subscribers(source) == 0
            assert store._wakeups.dropped + store._wakeups.moves >= 1
            assert await store.compare_and_set(m, 0, b"r1", b"e1")
            assert await first == 1
    finally:
        await watcher.aclose()
        if moved:
            await asyncio.to_thread(move_slot, redis_cluster, slot, target, source)
        await store.close()


async def test_the_embedded_store_has_the_same_counters() -> None:
    """SqliteStore answers the same attribute names (its wake-ups are in-process: no pub/sub
    connection; a channel per watched match; a wake-up per match a write woke)."""
    from service.store import SqliteStore

    store = SqliteStore(":memory:")
    try:
        await store.create("m", b"r0")
        assert (store.pubsub_connections, store.wakeups, store.subscribed_channels) == (0, 0, 0)
        watchers = [store.watch("m", 0), store.watch("m", 0)]
        try:
            waiting = [asyncio.create_task(anext(w)) for w in watchers]
            await until(lambda: store.subscribed_channels == 1, "watched")
            await asyncio.sleep(0.05)
            assert await store.compare_and_set("m", 0, b"r1", b"e1")
            assert await asyncio.gather(*waiting) == [1, 1]
            assert store.wakeups >= 1
            assert store.pubsub_connections == 0
        finally:
            for w in watchers:
                await w.aclose()
        assert store.subscribed_channels == 0
    finally:
        await store.close()
