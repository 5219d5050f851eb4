"""Redis-specific properties of RedisStore: round trips, one slot per match, script caching,
lost replies, fast failure, the factory."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis as sync_redis
from redis.crc import key_slot
from redis.exceptions import ConnectionError as RedisConnectionError

from service.store import MatchNotFound, RedisStore, SqliteStore, StoreUnavailable, open_store
from service.store.redis import LOG_CHUNK
from tests.support.redis_servers import RedisClusterProcesses, RedisServer, free_port

pytestmark = pytest.mark.redis


@pytest.fixture(params=["redis", pytest.param("cluster", marks=pytest.mark.slow)])
async def redis_store(request: pytest.FixtureRequest) -> AsyncIterator[RedisStore]:
    if request.param == "redis":
        store = RedisStore.from_url(
            request.getfixturevalue("redis_url"), prefix=request.getfixturevalue("redis_prefix")
        )
    else:
        cluster: RedisClusterProcesses = request.getfixturevalue("redis_cluster")
        store = RedisStore.from_cluster_nodes(
            cluster.nodes_arg, prefix=request.getfixturevalue("redis_cluster_prefix")
        )
    try:
        yield store
    finally:
        await store.close()


def mid() -> str:
    return uuid.uuid4().hex[:16]


async def test_one_round_trip_per_operation(redis_store: RedisStore) -> None:
    store, m = redis_store, mid()
    await store.load_scripts()  # else the first use of a script on a node costs one more

    def costs(before: int) -> int:
        return store.round_trips - before

    n = store.round_trips
    await store.create(m, b"r0")
    assert costs(n) == 1
    n = store.round_trips
    assert await store.load(m) == (0, b"r0")
    assert costs(n) == 1
    n = store.round_trips
    assert await store.compare_and_set(m, 0, b"r1", b"e1")
    assert costs(n) == 1
    n = store.round_trips
    assert not await store.compare_and_set(m, 0, b"r1", b"e1")
    assert costs(n) == 1
    n = store.round_trips
    assert len(await store.log(m)) == 1
    assert costs(n) == 1
    # An action as the service performs it: one load, one CAS.
    n = store.round_trips
    version, record = await store.load(m)
    assert await store.compare_and_set(m, version, record + b"+", b"e2")
    assert costs(n) == 2


async def test_a_match_is_one_hash_in_the_slot_of_its_id(redis_store: RedisStore) -> None:
    """Record, version and log chunks live in one hash whose hash tag is the match id, and
    the wake-up channel is that key's name: one slot per match on a cluster."""
    for m in ("m1", "abc-DEF_123", "x" * 40, "with:colons", "{open"):
        assert key_slot(redis_store.key(m).encode()) == key_slot(m.encode())
    m = mid()
    await redis_store.create(m, b"r0")
    for v in range(LOG_CHUNK + 2):
        assert await redis_store.compare_and_set(m, v, b"r", b"e%d" % (v + 1))
    key = redis_store.key(m)
    assert await redis_store.client.type(key) == b"hash"
    fields = sorted(k.decode() for k in await redis_store.client.hkeys(key))
    assert fields == ["c", "l0", "l1", "r", "v"]
    assert not await redis_store.client.exists(key + ":log")  # no stream beside it
    log = await redis_store.log(m, after=LOG_CHUNK - 1)
    assert [(e.version, e.data) for e in log] == [
        (v, b"e%d" % v) for v in range(LOG_CHUNK, LOG_CHUNK + 3)
    ]


def test_ids_and_prefixes_that_would_break_the_hash_tag_are_refused() -> None:
    with pytest.raises(ValueError):
        RedisStore.from_url("redis://127.0.0.1:1", prefix="a{b}:")
    store = RedisStore.from_url("redis://127.0.0.1:1", prefix="p:")
    with pytest.raises(ValueError):
        store.key("a}b")
    with pytest.raises(ValueError):
        store.key("")
    assert store.key("m1") == "p:match:{m1}"


@pytest.mark.slow
async def test_scripts_are_loaded_once_per_server() -> None:
    """A fresh server has no script cached: the first call of each script costs one extra
    round trip (EVAL after NOSCRIPT); every later call is a single EVALSHA."""
    with RedisServer.start() as server:
        store = RedisStore.from_url(server.url, prefix="t:")
        try:
            await store.create("m", b"r0")
            for v in range(20):
                assert await store.compare_and_set("m", v, b"r", b"e")
            await store.log("m")
            await store.log("m", after=3)
            assert store.script_loads == 3  # create, cas, log: once each
            assert store.round_trips == 1 + 20 + 2 + store.script_loads
            cached = await store.client.script_exists(
                store._create.sha, store._cas.sha, store._log.sha
            )
            assert cached == [True, True, True]
            # After the server lost its cache (a restart), one fallback per script again.
            await store.client.script_flush()
            assert await store.compare_and_set("m", 20, b"r", b"e")
            assert await store.compare_and_set("m", 21, b"r", b"e")
            assert store.script_loads == 4
        finally:
            await store.close()


class _LoseFirstReply:
    """Wraps a client's ``evalsha``: the first call runs on the server, then its reply is
    'lost' (the caller gets a connection error) -- the case a retried CAS must recognise."""

    def __init__(self, store: RedisStore) -> None:
        self.real = store.client.evalsha
        self.lost = 0

    async def __call__(self, *args: Any) -> Any:
        result = await self.real(*args)
        if self.lost == 0:
            self.lost += 1
            raise RedisConnectionError("connection lost while reading the reply")
        return result


async def test_a_cas_whose_reply_was_lost_is_reported_landed_once(redis_store: RedisStore) -> None:
    m = mid()
    await redis_store.create(m, b"r0")
    assert await redis_store.compare_and_set(m, 0, b"r1", b"e1")  # script cached on the node
    lose = _LoseFirstReply(redis_store)
    redis_store.client.evalsha = lose  # type: ignore[method-assign]
    try:
        assert await redis_store.compare_and_set(m, 1, b"r2", b"e2") is True
    finally:
        del redis_store.client.evalsha
    assert lose.lost == 1
    assert await redis_store.load(m) == (2, b"r2")
    assert [(e.version, e.data) for e in await redis_store.log(m)] == [(1, b"e1"), (2, b"e2")]


async def test_a_create_whose_reply_was_lost_does_not_report_match_exists(
    redis_store: RedisStore,
) -> None:
    m = mid()
    lose = _LoseFirstReply(redis_store)
    # Cache the script (on every primary of a cluster), so the first call below runs.
    await redis_store.client.script_load(redis_store._create.source)
    redis_store.client.evalsha = lose  # type: ignore[method-assign]
    try:
        await redis_store.create(m, b"r0")
    finally:
        del redis_store.client.evalsha
    assert lose.lost == 1
    assert await redis_store.load(m) == (0, b"r0")


async def test_unreachable_redis_raises_store_unavailable_then_fails_fast() -> None:
    store = RedisStore.from_url(f"redis://127.0.0.1:{free_port()}", prefix="t:", retry_budget=0.3)
    try:
        with pytest.raises(StoreUnavailable):
            await store.load("m")
        assert store.round_trips > 1  # it did retry
        assert store.known_down
        # Known down: later calls fail after a single attempt instead of a new budget.
        before = store.round_trips
        with pytest.raises(StoreUnavailable):
            await store.compare_and_set("m", 0, b"r", b"e")
        assert store.round_trips == before + 1
        assert await store.ping() is False
    finally:
        await store.close()


@pytest.mark.slow
async def test_a_store_known_down_recovers_with_the_first_success() -> None:
    with RedisServer.start() as server:
        store = RedisStore.from_url(server.url, prefix="t:", retry_budget=0.3)
        try:
            await store.create("m", b"r0")
            server.stop()
            with pytest.raises(StoreUnavailable):
                await store.load("m")
            assert store.known_down
            server.restart()  # no persistence: the data is gone, the store object works
            with pytest.raises(MatchNotFound):
                await store.load("m")
            assert not store.known_down
            await store.create("m", b"again")
            assert await store.load("m") == (0, b"again")
        finally:
            await store.close()


async def test_ping(redis_store: RedisStore) -> None:
    assert await redis_store.ping() is True


async def test_open_store_picks_the_backend(redis_url: str, redis_prefix: str) -> None:
    memory = open_store(None, None, "p:")
    assert isinstance(memory, SqliteStore)
    single = open_store(redis_url, None, redis_prefix)
    assert isinstance(single, RedisStore) and not single.is_cluster
    assert single.prefix == redis_prefix
    try:
        assert await single.ping()
    finally:
        await single.close()
    cluster = open_store(None, "127.0.0.1:7000,127.0.0.1:7001", "p:")
    assert isinstance(cluster, RedisStore) and cluster.is_cluster
    await cluster.close()


@pytest.mark.slow
async def test_the_round_trip_counter_matches_what_the_server_executed() -> None:
    """Checked on the server side (INFO commandstats on a private server): 100 actions
    (load + CAS) are 100 HMGET + 100 EVALSHA and nothing else -- no hidden commands."""
    with RedisServer.start() as server:
        store = RedisStore.from_url(server.url, prefix="t:")
        admin = server.node.client()
        try:
            await store.load_scripts()
            await store.create("m", b"r0")
            await store.load("m")
            admin.execute_command("CONFIG", "RESETSTAT")
            counted = store.round_trips
            for _ in range(100):
                version, record = await store.load("m")
                assert await store.compare_and_set("m", version, record, b"e")
            stats = {
                name.removeprefix("cmdstat_"): int(value["calls"])
                for name, value in admin.info("commandstats").items()
            }
            stats.pop("info", None)  # this very query
            stats.pop("config|resetstat", None)  # and the reset
            top_level = {name: n for name, n in stats.items() if name in {"hmget", "evalsha"}}
            assert top_level == {"hmget": 100, "evalsha": 100}
            assert store.round_trips - counted == 200
            # Everything else the server counted ran inside the scripts.
            assert set(stats) - set(top_level) <= {"hget", "hset", "publish", "persist", "pexpire"}
        finally:
            admin.close()
            await store.close()


async def _take(watcher: Any, n: int) -> list[int]:
    return [await anext(watcher) for _ in range(n)]


async def _until(condition: Any, timeout: float = 10.0) -> None:
    """Wait until ``condition()`` (sync or async) holds, bounded by ``timeout`` seconds."""
    async with asyncio.timeout(timeout):
        while True:
            value = condition()
            if asyncio.iscoroutine(value):
                value = await value
            if value:
                return
            await asyncio.sleep(0.005)


async def _subscribers(store: RedisStore, match_id: str) -> int:
    """Connections subscribed to the match's wake-up channel (sharded on a cluster)."""
    key = store.key(match_id)
    if store.is_cluster:
        node = store.client.get_node_from_key(key)
        shard = sync_redis.Redis(host=node.host, port=int(node.port))
        try:
            reply = shard.execute_command("PUBSUB", "SHARDNUMSUB", key)
        finally:
            shard.close()
    else:
        reply = await store.client.execute_command("PUBSUB", "NUMSUB", key)
    return int(reply[1])


async def test_a_wake_up_naming_a_version_the_match_lacks_is_not_yielded(
    redis_store: RedisStore,
) -> None:
    """A primary may publish a write that a failover then loses: the watcher reads the
    version from the match, never from the message, so the phantom number is not yielded
    and the real write of that number is."""
    store, m = redis_store, mid()
    await store.create(m, b"r0")
    assert await store.compare_and_set(m, 0, b"r1", b"e1")
    watcher = store.watch(m, 0)
    try:
        assert await _take(watcher, 1) == [1]
        phantom = asyncio.create_task(anext(watcher))
        await _until(lambda: _subscribers(store, m))  # subscribed and waiting
        before = store.round_trips
        publish = "spublish" if store.is_cluster else "publish"
        await store.client.execute_command(publish, store.key(m), "5")
        await _until(lambda: store.round_trips > before)  # woken: it read the version
        assert not phantom.done()  # woken, read version 1, waiting again
        assert await store.compare_and_set(m, 1, b"r2", b"e2")
        async with asyncio.timeout(10):
            assert await phantom == 2
    finally:
        await watcher.aclose()


@pytest.mark.slow
async def test_without_channel_rights_writes_work_and_watchers_poll() -> None:
    """An ACL user that may not publish or subscribe (Redis 7's default for new users):
    the compare-and-set still succeeds (its publish is best effort) and watchers fall back
    to reading the version, still seeing every version in order."""
    with RedisServer.start() as server:
        admin = RedisStore.from_url(server.url, prefix="acl:")
        await admin.client.execute_command(
            "ACL", "SETUSER", "player", "on", ">secret", "~*", "+@all", "resetchannels"
        )
        host_port = server.url.removeprefix("redis://")
        store = RedisStore.from_url(f"redis://player:secret@{host_port}", prefix="acl:")
        try:
            await store.create("m", b"r0")
            watcher = store.watch("m", 0)
            try:
                first = asyncio.create_task(anext(watcher))
                assert await store.compare_and_set("m", 0, b"r1", b"e1")
                assert await store.compare_and_set("m", 1, b"r2", b"e2")
                async with asyncio.timeout(10):
                    assert [await first, *await _take(watcher, 1)] == [1, 2]
                third = asyncio.create_task(anext(watcher))  # now it must wait
                await _until(lambda: store.wakeups_refused)
                assert not third.done()
                assert await store.compare_and_set("m", 2, b"r3", b"e3")
                async with asyncio.timeout(10):
                    assert await third == 3
            finally:
                await watcher.aclose()
            assert [e.version for e in await store.log("m")] == [1, 2, 3]
        finally:
            await store.close()
            await admin.close()


async def test_a_burst_of_wake_ups_costs_one_read(redis_url: str, redis_prefix: str) -> None:
    """Fifty wake-ups already waiting when the watcher looks are taken together: a read of
    the version or two (the client may hand them over in more than one batch), not fifty --
    a busy match with many spectators."""
    store = RedisStore.from_url(redis_url, prefix=redis_prefix)
    m = mid()
    await store.create(m, b"r0")
    assert await store.compare_and_set(m, 0, b"r1", b"e1")
    watcher = store.watch(m, 0)
    publisher = sync_redis.Redis.from_url(redis_url)
    try:
        assert await _take(watcher, 1) == [1]
        waiting = asyncio.create_task(anext(watcher))
        await _until(lambda: _subscribers(store, m))  # subscribed and waiting
        before = store.round_trips
        for _ in range(50):  # blocking calls: the watcher cannot run in between
            publisher.publish(store.key(m), "2")  # (phantoms: the match stays at 1)
        # A real write after the burst: once the watcher yields it, it has taken every
        # phantom before it (one connection keeps the order).
        assert await store.compare_and_set(m, 1, b"r2", b"e2")
        async with asyncio.timeout(10):
            assert await waiting == 2
        reads = store.round_trips - before - 1  # less the compare-and-set
        assert 1 <= reads <= 5  # the burst was taken together: a few reads, not 51
    finally:
        publisher.close()
        await watcher.aclose()
        await store.close()
