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


# -- lanes (fair bot scheduling, issue 20 item 2) -------------------------------------------


async def test_the_human_lane_is_claimed_before_the_all_bot_lane(backend: Backend) -> None:
    store = backend.store
    bots = [mid() for _ in range(3)]
    humans = [mid() for _ in range(2)]
    for m in bots[:2]:
        await store.signal_due(m, all_bots=True)
    await store.signal_due(humans[0])
    await store.signal_due(bots[2], all_bots=True)
    await store.signal_due(humans[1])
    first = await store.claim_due("w", count=3, block_ms=0)
    rest = await store.claim_due("w", count=10, block_ms=0)
    assert [(s.match_id, s.all_bots) for s in first + rest] == [
        (humans[0], False), (humans[1], False),
        (bots[0], True), (bots[1], True), (bots[2], True)]
    await store.ack_due([s.token for s in first + rest])
    assert await store.claim_due("w", count=10, block_ms=0, reclaim_idle_ms=0) == []
    assert await store.resume_due("w") == []


async def test_all_bots_first_takes_that_many_all_bot_signals_before_the_human_lane(
    backend: Backend,
) -> None:
    store = backend.store
    bots, humans = [mid() for _ in range(3)], [mid() for _ in range(2)]
    for b, h in zip(bots, [*humans, mid()], strict=True):
        await store.signal_due(h)
        await store.signal_due(b, all_bots=True)
    claimed = await store.claim_due("w", count=3, block_ms=0, all_bots_first=1)
    assert [s.match_id for s in claimed][:1] == [bots[0]]
    assert [s.match_id for s in claimed][1:3] == humans[:2]
    await store.ack_due([s.token for s in claimed])
    rest = await store.claim_due("w", count=10, block_ms=0, all_bots_first=1)
    assert rest[0].match_id == bots[1]
    assert [s.all_bots for s in rest] == [True, False, True]
    await store.ack_due([s.token for s in rest])
    # Nothing in the all-bot lane: all_bots_first takes from the human lane instead.
    only_human = mid()
    await store.signal_due(only_human)
    (alone,) = await store.claim_due("w", count=2, block_ms=0, all_bots_first=1)
    assert (alone.match_id, alone.all_bots) == (only_human, False)
    await store.ack_due([alone.token])


async def test_both_lanes_are_resumed_reclaimed_and_acknowledged(backend: Backend) -> None:
    store, human, bot = backend.store, mid(), mid()
    await store.signal_due(bot, all_bots=True)
    await store.signal_due(human)
    held = await store.claim_due("dead", count=5, block_ms=0)
    assert [(s.match_id, s.all_bots) for s in held] == [(human, False), (bot, True)]
    other = backend.another_store()
    resumed = await other.resume_due("dead")
    assert sorted((s.token, s.match_id) for s in resumed) == sorted(
        (s.token, s.match_id) for s in held)
    if backend.clock is not None:
        backend.clock.advance(1)
    taken = await other.claim_due("alive", count=5, block_ms=0, reclaim_idle_ms=0)
    assert sorted((s.token, s.match_id, s.all_bots) for s in taken) == sorted(
        (s.token, s.match_id, s.all_bots) for s in held)
    await other.ack_due([s.token for s in taken])
    assert await store.claim_due("w", count=5, block_ms=0, reclaim_idle_ms=0) == []
    assert await store.resume_due("alive") == []


async def test_a_blocked_claim_wakes_for_an_all_bot_signal(backend: Backend) -> None:
    import asyncio

    store, m = backend.store, mid()
    other = backend.another_store()
    waiting = asyncio.ensure_future(store.claim_due("w", count=1, block_ms=10_000))
    await asyncio.sleep(0.05)
    await other.signal_due(m, all_bots=True)
    async with asyncio.timeout(15):
        claimed = await waiting
    assert [(s.match_id, s.all_bots) for s in claimed] == [(m, True)]
    await store.ack_due([s.token for s in claimed])
