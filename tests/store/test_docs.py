"""The DocStore contract (service/store/base.py): documents by compare-and-set, their indexes
and exactly-once event feeds, run against every backend (SQLite file, Redis, Redis Cluster;
see conftest.py), plus what only one backend has: one command per operation and one hash slot
per key on Redis, the in-place schema upgrade of a version-1 SQLite file."""

from __future__ import annotations

import asyncio
import contextlib
import random
import sqlite3
import uuid
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest
from redis.crc import key_slot
from redis.exceptions import ConnectionError as RedisConnectionError

from service.store import (
    PAGE_LIMIT,
    Doc,
    DocStore,
    FeedItem,
    FeedPage,
    RedisStore,
    SqliteStore,
    StoreUnavailable,
)
from service.store.sqlite import APPLICATION_ID, SCHEMA_VERSION
from tests.support.redis_servers import free_port

from .conftest import BACKENDS, Backend

WAIT = 10.0  # bounds every wait on a watcher: a broken watch fails instead of hanging
DAY = 86400.0


def key() -> str:
    return f"player:{uuid.uuid4().hex[:12]}"


def byte_order(members: list[str]) -> list[str]:
    return sorted(members, key=lambda m: m.encode())


async def next_of(gen: AsyncGenerator[int, None]) -> int:
    return await asyncio.wait_for(anext(gen), WAIT)


async def pending(gen: AsyncGenerator[int, None]) -> asyncio.Task[int]:
    """``anext(gen)`` as a task, checked not to finish on its own at once (it must wait)."""
    task = asyncio.ensure_future(anext(gen))
    done, _ = await asyncio.wait({task}, timeout=0.05)
    assert not done, "the watcher yielded without a new append"
    return task


# -- keys ---------------------------------------------------------------------------------------


BAD_NAMES = ["", "x" * 201, "a b", "a{b}", "a}b", "é", "a/b", "a\nb"]


async def test_bad_keys_index_names_and_sources_are_refused(backend: Backend) -> None:
    store, k = backend.store, key()
    for bad in BAD_NAMES:
        await _all_refused(store, k, bad)
    # Nothing was written by the refused calls.
    assert await store.get_doc(k) is None
    assert await store.feed_read(k, 0, 10) == FeedPage([], 0, 0)


async def _all_refused(store: RedisStore | SqliteStore, k: str, bad: str) -> None:
    calls: list[Any] = [
        lambda: store.get_doc(bad),
        lambda: store.get_docs([k, bad]),
        lambda: store.put_doc(bad, 0, b"d"),
        lambda: store.put_doc(k, 0, b"d", index_add=[(bad, "m")]),
        lambda: store.put_doc(k, 0, b"d", index_remove=[(bad, "m")]),
        lambda: store.index_add(bad, "i", ["m"]),
        lambda: store.index_add(k, bad, ["m"]),
        lambda: store.index_remove(k, bad, ["m"]),
        lambda: store.index_page(bad, "i", after=None, limit=10),
        lambda: store.index_page(k, bad, after=None, limit=10),
        lambda: store.feed_append(bad, "m1", 1, [b"e"], now=0.0),
        lambda: store.feed_append(k, bad, 1, [b"e"], now=0.0),
        lambda: store.feed_marks(k, ["m1", bad]),
        lambda: store.feed_read(bad, 0, 10),
        lambda: anext(store.watch_feed(bad, 0)),
    ]
    for call in calls:
        with pytest.raises(ValueError):
            await call()


async def test_the_longest_key_and_every_allowed_character_work(backend: Backend) -> None:
    store = backend.store
    for k in ("A" * 200, "aZ09:._-" + uuid.uuid4().hex):
        assert await store.put_doc(k, 0, b"d", index_add=[("i:1.x_y-z", "m")])
        assert await store.get_doc(k) == Doc(1, b"d")
        assert await store.index_page(k, "i:1.x_y-z", after=None, limit=1) == ["m"]
        assert await store.feed_append(k, "match:1", 1, [b"e"], now=0.0)
        assert await store.feed_marks(k, ["match:1"]) == [1]


async def test_limits_outside_1_to_1000_are_refused(backend: Backend) -> None:
    store, k = backend.store, key()
    for limit in (0, -1, PAGE_LIMIT + 1):
        with pytest.raises(ValueError):
            await store.index_page(k, "i", after=None, limit=limit)
        with pytest.raises(ValueError):
            await store.feed_read(k, 0, limit)
    assert await store.index_page(k, "i", after=None, limit=PAGE_LIMIT) == []
    with pytest.raises(ValueError):
        await store.put_doc(k, -1, b"d")
    with pytest.raises(ValueError):
        await store.feed_append(k, "m", 1, [], now=0.0, keep=-1)
    with pytest.raises(ValueError):
        await store.feed_append(k, "m", 1, [], now=float("nan"))


# -- documents ----------------------------------------------------------------------------------


async def test_put_doc_is_a_compare_and_set_on_the_version(backend: Backend) -> None:
    store, k = backend.store, key()
    assert await store.get_doc(k) is None
    assert not await store.put_doc(k, 1, b"v1")  # version 1 does not exist yet
    assert await store.get_doc(k) is None
    assert await store.put_doc(k, 0, b"v1")
    assert await store.get_doc(k) == Doc(1, b"v1")
    assert not await store.put_doc(k, 0, b"other")  # taken
    assert not await store.put_doc(k, 2, b"v3")  # from the future
    assert await store.put_doc(k, 1, b"")  # empty data is data
    assert await store.get_doc(k) == Doc(2, b"")
    blob = bytes(range(256)) * 64  # any bytes, spaces and NULs included
    assert await store.put_doc(k, 2, blob)
    assert await store.get_doc(k) == Doc(3, blob)


async def test_get_docs_answers_in_order_with_none_for_missing(backend: Backend) -> None:
    store = backend.store
    keys = [key() for _ in range(12)]
    for i, k in enumerate(keys[::2]):
        assert await store.put_doc(k, 0, b"d%d" % i)
    got = await store.get_docs([*keys, keys[0]])
    assert got == [
        *(Doc(1, b"d%d" % (i // 2)) if i % 2 == 0 else None for i in range(12)),
        Doc(1, b"d0"),
    ]
    assert await store.get_docs([]) == []


async def test_twenty_concurrent_puts_at_one_version_one_wins(backend: Backend) -> None:
    store, k = backend.store, key()
    stores = [store, *(backend.another_store() for _ in range(3))]
    winners: list[str] = []
    for version in (0, 1):
        results = await asyncio.gather(*(
            stores[i % len(stores)].put_doc(
                k, version, b"writer %d at %d" % (i, version),
                index_add=[("who", f"w{i}-at-{version}")],
            )
            for i in range(20)
        ))
        assert results.count(True) == 1
        winner = results.index(True)
        assert await store.get_doc(k) == Doc(version + 1, b"writer %d at %d" % (winner, version))
        winners.append(f"w{winner}-at-{version}")
    # Only the winners' index changes landed: the index went with the document, atomically.
    assert await store.index_page(k, "who", after=None, limit=100) == byte_order(winners)


async def test_a_repeated_put_after_a_lost_reply_is_true_and_writes_nothing(
    backend: Backend,
) -> None:
    store, k = backend.store, key()
    assert await store.put_doc(k, 0, b"v1", index_add=[("i", "m1")])
    await store.index_remove(k, "i", ["m1"])  # so that a second write would show
    # The caller never got its answer and asks again with the same arguments.
    assert await store.put_doc(k, 0, b"v1", index_add=[("i", "m1")])
    assert await store.get_doc(k) == Doc(1, b"v1")
    assert await store.index_page(k, "i", after=None, limit=10) == []  # not applied twice
    # Equal data at another version, or other data at the next one, is no retry.
    assert not await store.put_doc(k, 0, b"v1-other")
    assert await store.put_doc(k, 1, b"v2")
    assert not await store.put_doc(k, 0, b"v1")
    assert await store.get_doc(k) == Doc(2, b"v2")


async def test_index_changes_go_with_the_put_or_not_at_all(backend: Backend) -> None:
    store, k = backend.store, key()
    assert await store.put_doc(k, 0, b"v1", index_add=[("active", "m1"), ("active", "m2")])
    assert not await store.put_doc(
        k, 0, b"late", index_add=[("active", "m9")], index_remove=[("active", "m1")]
    )
    assert await store.index_page(k, "active", after=None, limit=10) == ["m1", "m2"]
    # A match that ends: out of one index, into another, with the document.
    assert await store.put_doc(
        k, 1, b"v2", index_add=[("done", "m1")], index_remove=[("active", "m1")]
    )
    assert await store.index_page(k, "active", after=None, limit=10) == ["m2"]
    assert await store.index_page(k, "done", after=None, limit=10) == ["m1"]
    # Removals first, then additions: a pair in both ends up present.
    assert await store.put_doc(k, 2, b"v3", index_add=[("done", "m2")],
                               index_remove=[("done", "m2"), ("done", "absent")])
    assert await store.index_page(k, "done", after=None, limit=10) == ["m1", "m2"]
    # Indexes are per key.
    assert await store.index_page(key(), "done", after=None, limit=10) == []


# -- indexes ------------------------------------------------------------------------------------


async def test_index_pages_in_byte_order_after_an_exclusive_cursor(backend: Backend) -> None:
    store, k = backend.store, key()
    members = ["b", "a", "B", "A", "aa", "a:1", "a.2", "z", "Z", "é", "ä", "€", "\U0001f600",
               "10", "9", "-", "_", "a b", "", "ab"]
    rng = random.Random(7)
    rng.shuffle(members)
    await store.index_add(k, "i", members[:10])
    await store.index_add(k, "i", members[5:])  # overlapping: a set
    await store.index_add(k, "i", [])
    expected = byte_order(members)
    assert await store.index_page(k, "i", after=None, limit=1000) == expected
    pages: list[str] = []
    after: str | None = None
    while True:
        page = await store.index_page(k, "i", after=after, limit=3)
        assert len(page) <= 3
        if not page:
            break
        pages += page
        after = page[-1]
    assert pages == expected
    assert await store.index_page(k, "i", after="a", limit=2) == byte_order(members)[
        expected.index("a") + 1 : expected.index("a") + 3
    ]
    assert await store.index_page(k, "i", after="zzz", limit=5) == ["ä", "é", "€", "\U0001f600"]
    assert await store.index_page(k, "i", after="", limit=1) == [expected[1]]  # "" is first
    assert expected[0] == ""
    await store.index_remove(k, "i", ["a", "never-there"])
    assert "a" not in await store.index_page(k, "i", after=None, limit=1000)


async def test_members_added_between_pages_are_neither_repeated_nor_skipped(
    backend: Backend,
) -> None:
    store, k = backend.store, key()
    initial = [f"m{n:03d}" for n in range(0, 60, 2)]
    await store.index_add(k, "i", initial)
    seen: list[str] = []
    ahead: list[str] = []
    after: str | None = None
    for _ in range(100):  # a bound, should paging never end
        page = await store.index_page(k, "i", after=after, limit=4)
        if not page:
            break
        seen += page
        after = page[-1]
        if after < initial[-1]:
            # Between two pages: one member behind the cursor, one right after it.
            ahead.append(after + "x")
            await store.index_add(k, "i", ["l" + after, after + "x"])
    assert len(seen) > 30
    # Each member ahead of the cursor seen once, in order; none of those behind it.
    assert seen == byte_order(initial + ahead)
    assert len(await store.index_page(k, "i", after=None, limit=1000)) == len(initial) + 2 * len(
        ahead
    )


# -- feeds --------------------------------------------------------------------------------------


async def test_feed_append_numbers_items_and_keeps_marks(backend: Backend) -> None:
    store, k = backend.store, key()
    assert await store.feed_read(k, 0, 10) == FeedPage([], 0, 0)
    assert await store.feed_marks(k, ["m1", "m2"]) == [0, 0]
    assert not await store.feed_append(k, "m1", 0, [b"never"], now=0.0)  # 0 is not above 0
    assert await store.feed_append(k, "m1", 1, [b"a", b"b"], now=0.0)
    assert await store.feed_append(k, "m2", 4, [b"c"], now=0.0)
    assert not await store.feed_append(k, "m1", 1, [b"a", b"b"], now=0.0)  # again: nothing
    assert not await store.feed_append(k, "m2", 3, [b"old"], now=0.0)  # below the mark
    assert await store.feed_append(k, "m1", 3, [], now=0.0)  # nothing to say, mark moves
    assert await store.feed_append(k, "m1", 5, [b"d  with spaces ", b""], now=0.0)
    assert await store.feed_marks(k, ["m2", "m1", "m3", "m1"]) == [4, 5, 0, 5]
    assert await store.feed_marks(k, []) == []
    page = await store.feed_read(k, 0, 100)
    assert page == FeedPage(
        [FeedItem(1, b"a"), FeedItem(2, b"b"), FeedItem(3, b"c"),
         FeedItem(4, b"d  with spaces "), FeedItem(5, b"")],
        last=5,
        trimmed=0,
    )
    assert await store.feed_read(k, 2, 2) == FeedPage(page.items[2:4], 5, 0)
    assert await store.feed_read(k, 5, 10) == FeedPage([], 5, 0)
    assert await store.feed_read(k, 99, 10) == FeedPage([], 5, 0)
    assert await store.feed_read(k, -3, 1) == FeedPage(page.items[:1], 5, 0)
    assert await store.feed_read(key(), 0, 10) == FeedPage([], 0, 0)  # per key


async def test_concurrent_appends_of_one_match_version_land_once(backend: Backend) -> None:
    """Several replicas append the events of the same match versions: each lands once."""
    store, k = backend.store, key()
    replicas = [store, *(backend.another_store() for _ in range(3))]
    results: list[bool] = []
    for version in range(1, 6):
        items = [b"v%d-e%d" % (version, e) for e in range(3)]
        results += await asyncio.gather(*(
            replica.feed_append(k, "match-1", version, items, now=0.0)
            for replica in replicas for _ in range(3)
        ))
        # Another match of the same player at the same time, also raced.
        results += await asyncio.gather(*(
            replica.feed_append(k, "match-2", version, [b"other-%d" % version], now=0.0)
            for replica in replicas
        ))
    assert results.count(True) == 10
    page = await store.feed_read(k, 0, 1000)
    data = [item.data for item in page.items]
    assert sorted(data) == sorted(
        [b"v%d-e%d" % (v, e) for v in range(1, 6) for e in range(3)]
        + [b"other-%d" % v for v in range(1, 6)]
    )
    assert [item.seq for item in page.items] == list(range(1, 21))
    assert page.last == 20 and page.trimmed == 0
    for version in range(1, 6):  # one append's items are consecutive, in order
        at = data.index(b"v%d-e0" % version)
        assert data[at : at + 3] == [b"v%d-e%d" % (version, e) for e in range(3)]
    assert await store.feed_marks(k, ["match-1", "match-2"]) == [5, 5]


async def test_trimming_drops_only_items_both_beyond_keep_and_old(backend: Backend) -> None:
    store, k = backend.store, key()

    async def append(version: int, n: int, now: float) -> FeedPage:
        items = [b"v%d-%d" % (version, i) for i in range(n)]
        assert await store.feed_append(k, "m", version, items, now=now, keep=3,
                                       keep_seconds=10.0)
        return await store.feed_read(k, 0, 100)

    def seqs(page: FeedPage) -> list[int]:
        return [item.seq for item in page.items]

    # Beyond keep, but not old enough: nothing goes (cutoffs 90, 95, then 100 -- an item
    # appended at 100 is not appended *before* 100).
    assert (await append(1, 5, now=100.0)).trimmed == 0
    assert (await append(2, 1, now=105.0)).trimmed == 0
    page = await append(3, 1, now=110.0)
    assert page.trimmed == 0 and seqs(page) == list(range(1, 8))
    # Cutoff 110.5: seqs 1-6 are old, but 6 is among the newest 3 (6, 7, 8): 1-5 go.
    page = await append(4, 1, now=120.5)
    assert page == FeedPage(
        [FeedItem(6, b"v2-0"), FeedItem(7, b"v3-0"), FeedItem(8, b"v4-0")], last=8, trimmed=5
    )
    # A reader that had read up to 2 missed items 3-5; one at 5 missed nothing.
    missed = await store.feed_read(k, 2, 2)
    assert missed.trimmed > 2 and seqs(missed) == [6, 7]
    assert (await store.feed_read(k, 5, 100)).items == page.items
    # Beyond keep again (5 items), but the oldest (6, at 105) is not before the cutoff 105.
    page = await append(5, 2, now=115.0)
    assert page.trimmed == 5 and seqs(page) == [6, 7, 8, 9, 10]
    # An append of no items trims too: much later, all old, the newest 3 stay.
    page = await append(6, 0, now=10 * DAY)
    assert page.trimmed == 7 and seqs(page) == [8, 9, 10] and page.last == 10
    # keep=0 with the default 7 days: everything appended before the cutoff goes.
    assert await store.feed_append(k, "m", 7, [b"new"], now=20 * DAY, keep=0)
    page = await store.feed_read(k, 0, 100)
    assert page == FeedPage([FeedItem(11, b"new")], last=11, trimmed=10)
    # Seqs are never reused after trimming.
    assert await store.feed_append(k, "m", 8, [b"next"], now=20 * DAY)
    assert (await store.feed_read(k, 0, 10)).items == [
        FeedItem(11, b"new"), FeedItem(12, b"next")
    ]


async def test_trimming_takes_the_oldest_first_and_stops_at_one_that_stays(
    backend: Backend,
) -> None:
    """Append times need not grow (replicas' clocks differ): an item that must stay keeps
    every newer one too, so the items kept are always trimmed + 1 .. last."""
    store, k = backend.store, key()
    assert await store.feed_append(k, "a", 1, [b"1"], now=100.0, keep=10, keep_seconds=10.0)
    assert await store.feed_append(k, "b", 1, [b"2"], now=500.0, keep=10, keep_seconds=10.0)
    assert await store.feed_append(k, "c", 1, [b"3"], now=90.0, keep=10, keep_seconds=10.0)
    # Now 200, cutoff 190: item 1 (100) goes, item 2 (500) stays, so item 3 (90) stays too.
    assert await store.feed_append(k, "d", 1, [b"4"], now=200.0, keep=1, keep_seconds=10.0)
    page = await store.feed_read(k, 0, 10)
    assert page.trimmed == 1 and [item.seq for item in page.items] == [2, 3, 4]


async def test_watch_feed_yields_the_newest_seq_on_each_append(backend: Backend) -> None:
    store, k = backend.store, key()
    # Woken by the append itself, not by the idle poll: make that poll far away.
    if isinstance(store, RedisStore):
        store.watch_block_ms = 3_600_000
    else:
        store.WATCH_TICK = 3600.0
    writer = backend.another_store()  # another replica appends
    assert await writer.feed_append(k, "m1", 1, [b"a", b"b"], now=0.0)
    current = store.watch_feed(k, 0)
    behind = store.watch_feed(k, 1)
    caught_up = store.watch_feed(k, 2)
    try:
        assert await next_of(current) == 2  # the current one at once
        assert await next_of(behind) == 2
        waiting = await pending(caught_up)
        assert await writer.feed_append(k, "m1", 2, [b"c"], now=0.0)
        assert await asyncio.wait_for(waiting, WAIT) == 3
        assert await next_of(current) == 3
        # A burst: the watcher may skip values, never goes back, ends at the newest.
        for version in range(3, 8):
            assert await writer.feed_append(k, "m1", version, [b"x", b"y"], now=0.0)
        seen = [await next_of(current)]
        while seen[-1] < 13:
            seen.append(await next_of(current))
        assert seen == sorted(set(seen)) and seen[-1] == 13
        # An append that lands nothing new (no items) yields nothing.
        assert await writer.feed_append(k, "m1", 8, [], now=0.0)
        waiting = await pending(current)
        assert await writer.feed_append(k, "m2", 1, [b"z"], now=0.0)
        assert await asyncio.wait_for(waiting, WAIT) == 14
    finally:
        for gen in (current, behind, caught_up):
            await gen.aclose()


async def test_a_feed_watcher_of_an_empty_feed_waits_for_the_first_item(
    backend: Backend,
) -> None:
    store, k = backend.store, key()
    gen = store.watch_feed(k, 0)
    try:
        waiting = await pending(gen)
        assert await store.feed_append(k, "m1", 1, [b"first"], now=0.0)
        assert await asyncio.wait_for(waiting, WAIT) == 1
    finally:
        await gen.aclose()


async def test_feed_and_match_watchers_share_the_pubsub_connections(backend: Backend) -> None:
    """Many feed watchers and a match watcher: one pub/sub connection per node at most
    (SQLite: none), and each wakes on its own channel."""
    store = backend.store
    keys = [key() for _ in range(20)]
    match_id = uuid.uuid4().hex[:16]
    await store.create(match_id, b"r0")
    gens = [store.watch_feed(k, 0) for k in keys for _ in range(2)]
    match_watch = store.watch(match_id, 0)
    waits = [asyncio.ensure_future(anext(gen)) for gen in gens]
    match_next = asyncio.ensure_future(anext(match_watch))
    try:
        await asyncio.gather(*(store.feed_append(k, "m", 1, [b"e"], now=0.0) for k in keys))
        assert await asyncio.wait_for(asyncio.gather(*waits), WAIT) == [1] * len(gens)
        assert await store.compare_and_set(match_id, 0, b"r1", b"e1")
        assert await asyncio.wait_for(match_next, WAIT) == 1
        if isinstance(store, RedisStore):
            assert 1 <= store.pubsub_connections <= (3 if store.is_cluster else 1)
        else:
            assert store.pubsub_connections == 0
    finally:
        # A failed wait leaves the others running: stop them before closing their
        # generators (else aclose() raises and hides the failure).
        for task in [*waits, match_next]:
            task.cancel()
        await asyncio.gather(*waits, match_next, return_exceptions=True)
        for gen in gens:
            await gen.aclose()
        await match_watch.aclose()


# -- failures -----------------------------------------------------------------------------------


async def _every_operation_unavailable(store: RedisStore | SqliteStore) -> None:
    calls: list[Any] = [
        lambda: store.get_doc("k"),
        lambda: store.get_docs(["k", "j"]),
        lambda: store.put_doc("k", 0, b"d", index_add=[("i", "m")]),
        lambda: store.index_add("k", "i", ["m"]),
        lambda: store.index_remove("k", "i", ["m"]),
        lambda: store.index_page("k", "i", after=None, limit=5),
        lambda: store.feed_append("k", "m", 1, [b"e"], now=0.0),
        lambda: store.feed_marks("k", ["m"]),
        lambda: store.feed_read("k", 0, 5),
        lambda: anext(store.watch_feed("k", 0)),
    ]
    for call in calls:
        with pytest.raises(StoreUnavailable):
            await call()


async def test_an_unreachable_or_closed_store_raises_store_unavailable(tmp_path: Path) -> None:
    redis_store = RedisStore.from_url(
        f"redis://127.0.0.1:{free_port()}", prefix="t-docs:", retry_budget=0.2
    )
    try:
        await _every_operation_unavailable(redis_store)
    finally:
        await redis_store.close()
    sqlite_store = SqliteStore(tmp_path / "s.sqlite3")
    await sqlite_store.close()
    await _every_operation_unavailable(sqlite_store)


# -- Redis: one command per operation, one slot per key, lost replies -----------------------


REDIS_ONLY = pytest.mark.parametrize("backend_spec", BACKENDS[1:], indirect=True)


def _redis(backend: Backend) -> RedisStore:
    assert isinstance(backend.store, RedisStore)
    return backend.store


@REDIS_ONLY
async def test_every_operation_is_one_command_on_redis(backend: Backend) -> None:
    store, k = _redis(backend), key()
    await store.load_scripts()  # else the first use of a script on a node costs one more

    async def cost(call: Any) -> int:
        before = store.round_trips
        await call
        return store.round_trips - before

    assert await cost(store.get_doc(k)) == 1
    assert await cost(store.put_doc(k, 0, b"d", index_add=[("a", "1"), ("b", "2")],
                                    index_remove=[("c", "3")])) == 1
    assert await cost(store.put_doc(k, 0, b"d")) == 1  # the retry
    assert await cost(store.put_doc(k, 0, b"x")) == 1  # refused
    assert await cost(store.index_add(k, "a", ["2", "3", "4"])) == 1
    assert await cost(store.index_remove(k, "a", ["2", "3"])) == 1
    assert await cost(store.index_page(k, "a", after="1", limit=10)) == 1
    assert await cost(store.feed_append(k, "m", 1, [b"e"] * 5, now=0.0, keep=2,
                                        keep_seconds=0.0)) == 1
    assert await cost(store.feed_append(k, "m", 1, [b"e"], now=0.0)) == 1  # refused
    assert await cost(store.feed_marks(k, ["m", "n", "o"])) == 1
    assert await cost(store.feed_read(k, 0, 10)) == 1
    # Nothing to do, nothing sent.
    assert await cost(store.index_add(k, "a", [])) == 0
    assert await cost(store.feed_marks(k, [])) == 0
    assert await cost(store.get_docs([])) == 0
    # get_docs: one pipeline; on a cluster one batch per node that owns some of the keys.
    keys = [key() for _ in range(30)]
    nodes = {store._owner(store.doc_key(x)) for x in keys} if store.is_cluster else {None}
    assert await cost(store.get_docs(keys)) == len(nodes)
    if store.is_cluster:
        assert len(nodes) > 1  # 30 random keys span the 3 primaries
    assert await cost(store.get_docs(keys[:1])) == 1


@REDIS_ONLY
async def test_a_keys_doc_indexes_and_feed_share_its_hash_slot(backend: Backend) -> None:
    store, k = _redis(backend), key()
    assert await store.put_doc(k, 0, b"d", index_add=[("active", "m1"), ("done", "m0")])
    assert await store.feed_append(k, "m1", 1, [b"e"], now=0.0)
    names = [store.doc_key(k), store.index_key(k, "active"), store.index_key(k, "done"),
             store.feed_key(k), store.feed_items_key(k)]
    assert names == [f"{store.prefix}doc:{{{k}}}", f"{store.prefix}doc:{{{k}}}:i:active",
                     f"{store.prefix}doc:{{{k}}}:i:done", f"{store.prefix}doc:{{{k}}}:f",
                     f"{store.prefix}doc:{{{k}}}:fi"]
    types = [await store.client.type(name) for name in names]
    assert types == [b"hash", b"zset", b"zset", b"hash", b"list"]
    assert {key_slot(name.encode()) for name in names} == {key_slot(k.encode())}
    if store.is_cluster:  # as the server computes it
        slots = {int(await store.client.execute_command("CLUSTER KEYSLOT", name))
                 for name in names}
        assert slots == {key_slot(k.encode())}


class _LoseFirstReply:
    """Wraps a client's ``evalsha``: the first call runs on the server, then its reply is
    'lost' (the caller gets a connection error): the store retries by itself."""

    def __init__(self, store: RedisStore) -> None:
        self.real = store.client.evalsha
        self.lost = 0

    async def __call__(self, *args: Any) -> Any:
        result = await self.real(*args)
        if self.lost == 0:
            self.lost += 1
            raise RedisConnectionError("connection lost while reading the reply")
        return result


@REDIS_ONLY
async def test_a_put_whose_reply_was_lost_is_retried_and_reported_landed_once(
    backend: Backend,
) -> None:
    store, k = _redis(backend), key()
    await store.load_scripts()
    assert await store.put_doc(k, 0, b"v1")
    lose = _LoseFirstReply(store)
    store.client.evalsha = lose  # type: ignore[method-assign, assignment]
    try:
        before = store.round_trips
        assert await store.put_doc(k, 1, b"v2", index_add=[("i", "m")]) is True
        assert store.round_trips - before == 2  # the lost one and the retry
    finally:
        del store.client.evalsha
    assert lose.lost == 1
    assert await store.get_doc(k) == Doc(2, b"v2")
    assert await store.index_page(k, "i", after=None, limit=5) == ["m"]
    # A feed append whose reply was lost: landed once, the retry says "not by me".
    lose = _LoseFirstReply(store)
    store.client.evalsha = lose  # type: ignore[method-assign, assignment]
    try:
        assert await store.feed_append(k, "m", 1, [b"e1", b"e2"], now=0.0) is False
    finally:
        del store.client.evalsha
    assert lose.lost == 1
    assert await store.feed_read(k, 0, 10) == FeedPage(
        [FeedItem(1, b"e1"), FeedItem(2, b"e2")], 2, 0
    )


# -- SQLite: the schema upgrade -----------------------------------------------------------------

# The schema of version 1 as it was released (a frozen copy: do not edit).
_V1_SCHEMA = (
    """CREATE TABLE matches (serial INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,
        version INTEGER NOT NULL, record BLOB NOT NULL, create_id TEXT, expires_at REAL)""",
    "CREATE INDEX matches_by_expiry ON matches (expires_at) WHERE expires_at IS NOT NULL",
    """CREATE TABLE log (match_id TEXT NOT NULL REFERENCES matches (id) ON DELETE CASCADE,
        version INTEGER NOT NULL, data BLOB NOT NULL, write_tag TEXT NOT NULL,
        PRIMARY KEY (match_id, version)) WITHOUT ROWID""",
    """CREATE TABLE due (seq INTEGER PRIMARY KEY AUTOINCREMENT, match_id TEXT NOT NULL,
        consumer TEXT, delivered_at REAL)""",
    "CREATE UNIQUE INDEX due_queued ON due (match_id) WHERE consumer IS NULL",
    "CREATE INDEX due_pending ON due (consumer, seq) WHERE consumer IS NOT NULL",
    f"PRAGMA application_id = {APPLICATION_ID}",
    "PRAGMA user_version = 1",
)


def _tables(path: Path) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        return {str(n) for (n,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )}
    finally:
        conn.close()


async def test_a_version_1_file_is_upgraded_in_place_and_keeps_its_data(tmp_path: Path) -> None:
    path = tmp_path / "skyline.sqlite3"
    conn = sqlite3.connect(path)
    with contextlib.closing(conn):
        for statement in _V1_SCHEMA:
            conn.execute(statement)
        conn.execute("INSERT INTO matches (id, version, record) VALUES ('m1', 1, x'7231')")
        conn.execute("INSERT INTO log VALUES ('m1', 1, x'6531', '0badf00d')")
        conn.execute("INSERT INTO due (match_id) VALUES ('m1')")
        conn.commit()
    assert _tables(path) == {"matches", "log", "due"}
    store = SqliteStore(path)
    try:
        assert await store.load("m1") == (1, b"r1")
        assert [(e.version, e.data, e.write_tag) for e in await store.log("m1")] == [
            (1, b"e1", "0badf00d")
        ]
        assert [s.match_id for s in await store.claim_due("w", block_ms=0)] == ["m1"]
        assert await store.put_doc("player:1", 0, b"p", index_add=[("active", "m1")])
        assert await store.feed_append("player:1", "m1", 1, [b"ev"], now=0.0)
    finally:
        await store.close()
    assert SCHEMA_VERSION == 2
    conn = sqlite3.connect(path)
    with contextlib.closing(conn):
        assert conn.execute("PRAGMA user_version").fetchone() == (2,)
        assert conn.execute("PRAGMA application_id").fetchone() == (APPLICATION_ID,)
    assert _tables(path) == {"matches", "log", "due", "docs", "doc_index", "feeds",
                             "feed_items", "feed_marks", "schedules"}
    store = SqliteStore(path)  # reopened at version 2: everything is there
    try:
        assert await store.load("m1") == (1, b"r1")
        assert await store.get_doc("player:1") == Doc(1, b"p")
        assert await store.index_page("player:1", "active", after=None, limit=5) == ["m1"]
        assert await store.feed_read("player:1", 0, 5) == FeedPage([FeedItem(1, b"ev")], 1, 0)
        assert await store.feed_marks("player:1", ["m1"]) == [1]
    finally:
        await store.close()


def test_the_index_is_ordered_by_bytes_in_sqlite(tmp_path: Path) -> None:
    """The member column compares with BINARY whatever a query asks, in a UTF-8 file."""
    path = tmp_path / "skyline.sqlite3"
    asyncio.run(SqliteStore(path).close())
    conn = sqlite3.connect(path)
    with contextlib.closing(conn):
        assert conn.execute("PRAGMA encoding").fetchone() == ("UTF-8",)
        sql = conn.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'doc_index'"
        ).fetchone()[0]
        assert "member TEXT NOT NULL COLLATE BINARY" in sql


def _both_are_doc_stores(redis_store: RedisStore, sqlite_store: SqliteStore) -> list[DocStore]:
    """Checked by mypy, never run: both stores satisfy the protocol."""
    return [redis_store, sqlite_store]


async def test_due_signals_of_a_file_made_before_lanes_stay_and_get_the_human_lane(
    tmp_path: Path,
) -> None:
    """Fair bot scheduling (issue 20, item 2) added ``due.lane`` without a new schema
    version: opening a file without it adds it in the opening transaction; its queued and
    pending signals are kept (human lane), and an older Skyline that inserts a signal
    without a lane still can."""
    path = tmp_path / "skyline.sqlite3"
    conn = sqlite3.connect(path)
    with contextlib.closing(conn):
        for statement in _V1_SCHEMA:
            conn.execute(statement)
        conn.execute("INSERT INTO due (match_id) VALUES ('queued')")
        conn.execute("INSERT INTO due (match_id, consumer, delivered_at) VALUES "
                     "('pending', 'w', 0)")
        conn.commit()
    store = SqliteStore(path)
    try:
        await store.signal_due("bots", all_bots=True)
        resumed = await store.resume_due("w")
        assert [(s.match_id, s.all_bots) for s in resumed] == [("pending", False)]
        claimed = await store.claim_due("w", count=5, block_ms=0, reclaim_idle_ms=None)
        assert [(s.match_id, s.all_bots) for s in claimed] == [
            ("queued", False), ("bots", True)]
        await store.ack_due([s.token for s in resumed + claimed])
    finally:
        await store.close()
    conn = sqlite3.connect(path)
    with contextlib.closing(conn):
        columns = [str(row[1]) for row in conn.execute("PRAGMA table_info(due)")]
        assert columns == ["seq", "match_id", "consumer", "delivered_at", "lane"]
        conn.execute("INSERT INTO due (match_id) VALUES ('older')")  # an older Skyline
        conn.commit()
    store = SqliteStore(path)  # reopened: the column is not added twice
    try:
        claimed = await store.claim_due("w", count=5, block_ms=0)
        assert [(s.match_id, s.all_bots) for s in claimed] == [("older", False)]
    finally:
        await store.close()
