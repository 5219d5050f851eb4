"""Due signals (bot seats): signal_due / claim_due / resume_due / ack_due, on every backend
(memory, Redis, Redis Cluster) -- the store contract in service/store/base.py."""

from __future__ import annotations

import uuid

from service.store.sqlite import SqliteStore

from .conftest import Backend


def mid() -> str:
    return uuid.uuid4().hex[:16]


async def test_a_signal_is_delivered_once_and_gone_after_ack(backend: Backend) -> None:
    store, m = backend.store, mid()
    await store.signal_due(m)
    claimed = await store.claim_due("w1", count=10, block_ms=0)
    assert [s.match_id for s in claimed] == [m]
    assert await store.claim_due("w2", count=10, block_ms=0) == []  # delivered to w1 only
    await store.ack_due([s.token for s in claimed])
    assert await store.claim_due("w2", count=10, block_ms=0, reclaim_idle_ms=0) == []
    assert await store.resume_due("w1") == []


async def test_signals_come_in_order_up_to_count(backend: Backend) -> None:
    store = backend.store
    ids = [mid() for _ in range(5)]
    for m in ids:
        await store.signal_due(m)
    first = await store.claim_due("w", count=3, block_ms=0)
    rest = await store.claim_due("w", count=10, block_ms=0)
    assert [s.match_id for s in first + rest] == ids
    await store.ack_due([s.token for s in first + rest])


async def test_an_unacknowledged_signal_is_reclaimed_by_another_consumer(
    backend: Backend,
) -> None:
    store, m = backend.store, mid()
    await store.signal_due(m)
    (held,) = await store.claim_due("dead", count=1, block_ms=0)
    # Not idle long enough for a large threshold: nothing to reclaim, nothing new.
    assert await store.claim_due("alive", count=5, block_ms=0, reclaim_idle_ms=3_600_000) == []
    if backend.clock is not None:
        backend.clock.advance(1)
    taken = await store.claim_due("alive", count=5, block_ms=0, reclaim_idle_ms=0)
    assert [(s.token, s.match_id) for s in taken] == [(held.token, m)]
    await store.ack_due([held.token])
    assert await store.claim_due("alive", count=5, block_ms=0, reclaim_idle_ms=0) == []


async def test_a_restarted_consumer_resumes_what_it_held(backend: Backend) -> None:
    store, m = backend.store, mid()
    await store.signal_due(m)
    (held,) = await store.claim_due("w-1", count=1, block_ms=0)
    other = backend.another_store()  # the restarted process: new connections
    resumed = await other.resume_due("w-1")
    assert [(s.token, s.match_id) for s in resumed] == [(held.token, m)]
    assert await other.resume_due("w-2") == []
    await other.ack_due([held.token])
    assert await other.resume_due("w-1") == []


async def test_a_blocked_claim_wakes_for_a_signal_from_another_replica(
    backend: Backend,
) -> None:
    import asyncio

    store, m = backend.store, mid()
    other = backend.another_store()
    waiting = asyncio.ensure_future(store.claim_due("w", count=1, block_ms=10_000))
    await asyncio.sleep(0.05)
    await other.signal_due(m)
    async with asyncio.timeout(15):
        claimed = await waiting
    assert [s.match_id for s in claimed] == [m]
    await store.ack_due([s.token for s in claimed])


async def test_duplicate_signals_are_harmless(backend: Backend) -> None:
    store, m = backend.store, mid()
    await store.signal_due(m)
    await store.signal_due(m)
    claimed = await store.claim_due("w", count=10, block_ms=0)
    assert {s.match_id for s in claimed} == {m}
    if isinstance(store, SqliteStore):
        assert len(claimed) == 1  # queued once while undelivered (Redis: a stream entry each)
    await store.ack_due([s.token for s in claimed])
    assert await store.claim_due("w", count=10, block_ms=0, reclaim_idle_ms=0) == []
