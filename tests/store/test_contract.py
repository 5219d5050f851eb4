"""The MatchStore contract (service/store/base.py), run against every backend: the embedded
SQLite store, a real Redis and a real local Redis Cluster (see conftest.py)."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator

import pytest

from service.store import LogEntry, MatchExists, MatchNotFound, write_tag
from service.store.redis import RedisStore
from service.store.sqlite import SqliteStore

from .conftest import Backend

# Bounds every wait on a watcher: a broken watch fails the test instead of hanging it.
WAIT = 15.0


def mid() -> str:
    return uuid.uuid4().hex[:16]


async def take(iterator: AsyncIterator[int], n: int) -> list[int]:
    """The next ``n`` items of ``iterator`` (bounded in time)."""
    out: list[int] = []
    async with asyncio.timeout(WAIT):
        while len(out) < n:
            out.append(await anext(iterator))
    return out


async def write(store: SqliteStore | RedisStore, match_id: str, n: int) -> None:
    """``n`` successful CAS writes after the current version; record/entry name the version."""
    version, _ = await store.load(match_id)
    for v in range(version + 1, version + n + 1):
        assert await store.compare_and_set(match_id, v - 1, b"r%d" % v, b"e%d" % v)


# -- create / load --------------------------------------------------------------------------


async def test_create_then_load_is_version_zero_with_an_empty_log(backend: Backend) -> None:
    store, m = backend.store, mid()
    await store.create(m, b"record-0")
    assert await store.load(m) == (0, b"record-0")
    assert await store.log(m) == []


async def test_create_twice_raises_match_exists_and_keeps_the_first(backend: Backend) -> None:
    store, m = backend.store, mid()
    await store.create(m, b"first")
    with pytest.raises(MatchExists):
        await store.create(m, b"second")
    assert await store.load(m) == (0, b"first")


async def test_create_is_idempotent_per_write_id(backend: Backend) -> None:
    store, m = backend.store, mid()
    await store.create(m, b"first", write_id="create-1")
    await store.create(m, b"first", write_id="create-1")  # a retry whose reply was lost
    with pytest.raises(MatchExists):
        await store.create(m, b"other", write_id="create-2")
    assert await store.load(m) == (0, b"first")


async def test_unknown_match_raises_match_not_found_everywhere(backend: Backend) -> None:
    store, m = backend.store, mid()
    with pytest.raises(MatchNotFound):
        await store.load(m)
    with pytest.raises(MatchNotFound):
        await store.compare_and_set(m, 0, b"r", b"e")
    with pytest.raises(MatchNotFound):
        await store.log(m)
    with pytest.raises(MatchNotFound):
        await anext(store.watch(m, 0))
    with pytest.raises(MatchNotFound):  # a failed CAS created nothing
        await store.load(m)


async def test_matches_are_independent(backend: Backend) -> None:
    store, a, b = backend.store, mid(), mid()
    await store.create(a, b"a0")
    await store.create(b, b"b0")
    assert await store.compare_and_set(a, 0, b"a1", b"ea1")
    assert await store.load(b) == (0, b"b0")
    assert await store.log(b) == []


# -- compare and set -------------------------------------------------------------------------


async def test_cas_on_the_current_version_writes_the_next(backend: Backend) -> None:
    store, m = backend.store, mid()
    await store.create(m, b"r0")
    assert await store.compare_and_set(m, 0, b"r1", b"e1") is True
    assert await store.load(m) == (1, b"r1")
    [entry] = await store.log(m)
    assert (entry.version, entry.data) == (1, b"e1")


@pytest.mark.parametrize("expected", [-1, 0, 2, 7])
async def test_cas_on_another_version_changes_nothing(backend: Backend, expected: int) -> None:
    store, m = backend.store, mid()
    await store.create(m, b"r0")
    assert await store.compare_and_set(m, 0, b"r1", b"e1")
    assert await store.compare_and_set(m, expected, b"x", b"x") is False
    assert await store.load(m) == (1, b"r1")
    assert [e.version for e in await store.log(m)] == [1]


async def test_each_cas_adds_one_version_and_one_log_entry(backend: Backend) -> None:
    store, m = backend.store, mid()
    await store.create(m, b"r0")
    for v in range(1, 13):
        assert await store.compare_and_set(m, v - 1, b"r%d" % v, b"e%d" % v)
        assert await store.load(m) == (v, b"r%d" % v)
        log = await store.log(m)
        assert [e.version for e in log] == list(range(1, v + 1))
        assert [e.data for e in log] == [b"e%d" % i for i in range(1, v + 1)]


async def test_log_after_returns_only_later_entries(backend: Backend) -> None:
    store, m = backend.store, mid()
    await store.create(m, b"r0")
    await write(store, m, 5)
    assert [e.version for e in await store.log(m)] == [1, 2, 3, 4, 5]
    assert [e.version for e in await store.log(m, after=0)] == [1, 2, 3, 4, 5]
    assert [e.version for e in await store.log(m, after=3)] == [4, 5]
    assert await store.log(m, after=5) == []
    assert await store.log(m, after=99) == []
    assert await store.log(m, after=4) == [LogEntry(5, b"e5", (await store.log(m))[4].write_tag)]


async def test_cas_is_idempotent_per_write_id(backend: Backend) -> None:
    """The 'did my write land?' contract: repeating a CAS with the same write id returns
    True once that write is in the log, and never writes it twice."""
    store, m = backend.store, mid()
    await store.create(m, b"r0")
    assert await store.compare_and_set(m, 0, b"r1", b"e1", write_id="w-a")
    # The same call again (as after a lost reply): True, nothing written.
    assert await store.compare_and_set(m, 0, b"r1", b"e1", write_id="w-a")
    assert await store.load(m) == (1, b"r1")
    assert await store.log(m) == [LogEntry(1, b"e1", write_tag("w-a"))]
    # Another write id on the same stale version lost the race.
    assert not await store.compare_and_set(m, 0, b"r1'", b"e1'", write_id="w-b")
    # So did the same write id with other bytes: it is not the write that landed.
    assert not await store.compare_and_set(m, 0, b"r1", b"e1'", write_id="w-a")
    assert not await store.compare_and_set(m, 0, b"r1'", b"e1'")
    # Still recognised after later versions were written by others.
    assert await store.compare_and_set(m, 1, b"r2", b"e2", write_id="w-c")
    assert await store.compare_and_set(m, 0, b"r1", b"e1", write_id="w-a")
    assert [(e.version, e.write_tag) for e in await store.log(m)] == [
        (1, write_tag("w-a")), (2, write_tag("w-c"))
    ]


async def test_every_log_entry_has_a_write_tag(backend: Backend) -> None:
    """Writes without a caller's write id still get distinct 32-bit tags."""
    store, m = backend.store, mid()
    await store.create(m, b"r0")
    await write(store, m, 3)
    tags = [e.write_tag for e in await store.log(m)]
    assert all(len(t) == 8 and int(t, 16) >= 0 for t in tags) and len(set(tags)) == 3


async def test_large_binary_records_round_trip(backend: Backend) -> None:
    store, m = backend.store, mid()
    record = os.urandom(1 << 20) + b"\x00\xff{}\r\n"  # 1 MiB of any bytes
    entry = os.urandom(200_000)
    await store.create(m, record)
    assert await store.load(m) == (0, record)
    assert await store.compare_and_set(m, 0, record[::-1], entry)
    assert await store.load(m) == (1, record[::-1])
    assert [e.data for e in await store.log(m)] == [entry]


async def test_empty_record_and_entry(backend: Backend) -> None:
    store, m = backend.store, mid()
    await store.create(m, b"")
    assert await store.load(m) == (0, b"")
    assert await store.compare_and_set(m, 0, b"", b"")
    assert await store.load(m) == (1, b"")
    assert [(e.version, e.data) for e in await store.log(m)] == [(1, b"")]


# -- TTL -------------------------------------------------------------------------------------


async def test_ttl_is_set_by_writes_that_pass_one_and_cleared_by_writes_that_do_not(
    backend: Backend,
) -> None:
    store, m = backend.store, mid()
    await store.create(m, b"r0", ttl_seconds=3600)
    [ttl] = await backend.ttl(m)
    assert ttl is not None and 3500 < ttl <= 3600
    assert await store.compare_and_set(m, 0, b"r1", b"e1")  # no TTL: keep forever
    assert await backend.ttl(m) == [None] * len(await backend.ttl(m))
    assert await store.compare_and_set(m, 1, b"r2", b"e2", ttl_seconds=60)  # finished
    ttls = await backend.ttl(m)
    assert ttls and all(t is not None and 50 < t <= 60 for t in ttls)  # record and log alike


async def test_expired_match_is_gone_and_its_id_free_again(backend: Backend) -> None:
    store, m = backend.store, mid()
    await store.create(m, b"r0")
    await write(store, m, 2)
    assert await store.compare_and_set(m, 2, b"r3", b"e3", ttl_seconds=30)
    await backend.expire_now(m)
    with pytest.raises(MatchNotFound):
        await store.load(m)
    with pytest.raises(MatchNotFound):
        await store.log(m)
    with pytest.raises(MatchNotFound):
        await store.compare_and_set(m, 3, b"r4", b"e4")
    await store.create(m, b"new")  # a new history: version 0, empty log
    assert await store.load(m) == (0, b"new")
    assert await store.log(m) == []


async def test_the_in_memory_sqlite_store_expires_on_its_clock_without_sleeping() -> None:
    from .conftest import FakeClock

    clock = FakeClock()
    store = SqliteStore(":memory:", clock=clock)
    await store.create("m", b"r0", ttl_seconds=10)
    clock.advance(9.9)
    assert await store.load("m") == (0, b"r0")
    clock.advance(0.2)
    with pytest.raises(MatchNotFound):
        await store.load("m")


@pytest.mark.parametrize("ttl", [0, -5])
async def test_non_positive_ttl_is_refused(backend: Backend, ttl: int) -> None:
    store, m = backend.store, mid()
    with pytest.raises(ValueError):
        await store.create(m, b"r0", ttl_seconds=ttl)
    await store.create(m, b"r0")
    with pytest.raises(ValueError):
        await store.compare_and_set(m, 0, b"r1", b"e1", ttl_seconds=ttl)
    assert await store.load(m) == (0, b"r0")


# -- watch -----------------------------------------------------------------------------------


async def test_watch_yields_the_past_then_live_versions_in_order(backend: Backend) -> None:
    store, m = backend.store, mid()
    await store.create(m, b"r0")
    await write(store, m, 3)
    watcher = store.watch(m, 0)
    try:
        assert await take(watcher, 3) == [1, 2, 3]
        pending = asyncio.ensure_future(take(watcher, 4))
        await asyncio.sleep(0)
        await write(store, m, 4)
        assert await pending == [4, 5, 6, 7]
    finally:
        await watcher.aclose()


async def test_watch_after_a_negative_version_starts_at_version_one(backend: Backend) -> None:
    store, m = backend.store, mid()
    await store.create(m, b"r0")
    await write(store, m, 2)
    watcher = store.watch(m, -2)
    try:
        assert await take(watcher, 2) == [1, 2]
    finally:
        await watcher.aclose()


async def test_an_empty_write_id_counts_as_none(backend: Backend) -> None:
    """A retry matches only a caller's real write id: "" is no id, on every backend."""
    store, m = backend.store, mid()
    await store.create(m, b"r0")
    assert await store.compare_and_set(m, 0, b"r1", b"e1", write_id="")
    assert not await store.compare_and_set(m, 0, b"r1", b"e1", write_id="")


async def test_watch_resumes_after_a_given_version(backend: Backend) -> None:
    store, m = backend.store, mid()
    await store.create(m, b"r0")
    await write(store, m, 5)
    watcher = store.watch(m, 3)
    try:
        assert await take(watcher, 2) == [4, 5]
        await write(store, m, 1)
        assert await take(watcher, 1) == [6]
    finally:
        await watcher.aclose()


async def test_watch_from_version_zero_of_a_new_match_waits_for_the_first_write(
    backend: Backend,
) -> None:
    store, m = backend.store, mid()
    await store.create(m, b"r0")
    watcher = store.watch(m, 0)
    try:
        pending = asyncio.ensure_future(take(watcher, 2))
        await asyncio.sleep(0.05)
        assert not pending.done()
        await write(store, m, 2)
        assert await pending == [1, 2]
    finally:
        await watcher.aclose()


async def test_many_watchers_see_every_version_of_concurrent_writes(backend: Backend) -> None:
    store, m = backend.store, mid()
    await store.create(m, b"r0")
    total = 40
    watchers = [store.watch(m, 0) for _ in range(4)]
    try:
        pending = [asyncio.ensure_future(take(w, total)) for w in watchers]
        await write(backend.another_store(), m, total)
        for result in await asyncio.gather(*pending):
            assert result == list(range(1, total + 1))
    finally:
        for w in watchers:
            await w.aclose()


# -- concurrency -----------------------------------------------------------------------------


async def test_concurrent_writers_lose_no_update(backend: Backend) -> None:
    """20 writers (on two store objects, as two service replicas would) each add N
    increments with load + CAS, retrying on conflict. Every CAS that returned True is in the
    log exactly once, in order; the final version equals the number of successes; the record
    at every version is the count of increments so far (no lost update)."""
    m, writers, increments = mid(), 20, 8
    stores = [backend.store, backend.another_store()]
    await backend.store.create(m, b"0")
    successes: list[tuple[str, int]] = []

    async def writer(w: int) -> None:
        store = stores[w % 2]
        for i in range(increments):
            write_id = f"w{w}-{i}"
            while True:
                version, record = await store.load(m)
                assert int(record) == version  # every version holds its own count
                new = str(int(record) + 1).encode()
                if await store.compare_and_set(m, version, new, write_id.encode(),
                                               write_id=write_id):
                    successes.append((write_id, version + 1))
                    break
                await asyncio.sleep(0)  # lost the race: reload and retry

    async with asyncio.timeout(120):
        await asyncio.gather(*(writer(w) for w in range(writers)))

    total = writers * increments
    assert len(successes) == total
    assert await backend.store.load(m) == (total, str(total).encode())
    log = await backend.store.log(m)
    assert [e.version for e in log] == list(range(1, total + 1))
    assert sorted((e.write_tag, e.version) for e in log) == sorted(
        (write_tag(w), v) for w, v in successes
    )
    assert all(e.write_tag == write_tag(e.data.decode()) for e in log)


async def test_watch_ends_when_the_match_expires(backend: Backend) -> None:
    store, m = backend.store, mid()
    await store.create(m, b"r0")
    await write(store, m, 2)
    assert await store.compare_and_set(m, 2, b"r3", b"e3", ttl_seconds=30)
    watcher = store.watch(m, 0)
    try:
        assert await take(watcher, 3) == [1, 2, 3]
        await backend.expire_now(m)
        with pytest.raises(MatchNotFound):
            await store.load(m)  # the embedded store notices expiry on access
        async with asyncio.timeout(WAIT):
            with pytest.raises(StopAsyncIteration):
                await anext(watcher)
    finally:
        await watcher.aclose()
