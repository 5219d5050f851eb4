"""Schedules (deadlines, webhook retries): store_time_ms / schedule_lower / schedule_claim /
schedule_settle, on every backend (SQLite, Redis, Redis Cluster) -- the contract in
service/store/base.py."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from .conftest import Backend


def name() -> str:
    return "t" + uuid.uuid4().hex[:12]


async def test_claim_takes_what_is_due_by_the_store_clock_and_leases_it(
    backend: Backend,
) -> None:
    store, s = backend.store, name()
    now = await store.store_time_ms()
    await store.schedule_lower(s, "past", now - 5000)
    await store.schedule_lower(s, "older", now - 9000)
    await store.schedule_lower(s, "future", now + 3_600_000)
    at, claimed = await store.schedule_claim(s, 10, 30_000)
    assert at >= now - 1000  # the store's clock, not ours (a fake one on SQLite)
    assert [m for m, _ in claimed] == ["older", "past"]  # earliest first
    assert {till for _, till in claimed} == {at + 30_000}
    # Leased: a second worker does not get them.
    assert (await store.schedule_claim(s, 10, 30_000))[1] == []
    assert await store.schedule_due_at(s, "past") == at + 30_000
    assert await store.schedule_size(s) == 3


async def test_lower_only_moves_a_member_earlier(backend: Backend) -> None:
    store, s = backend.store, name()
    await store.schedule_lower(s, "m", 5_000_000)
    await store.schedule_lower(s, "m", 9_000_000)
    assert await store.schedule_due_at(s, "m") == 5_000_000
    await store.schedule_lower(s, "m", 1_000_000)
    assert await store.schedule_due_at(s, "m") == 1_000_000
    assert await store.schedule_next(s) == 1_000_000
    assert await store.schedule_next(name()) is None


async def test_settle_applies_only_to_an_untouched_claim(backend: Backend) -> None:
    store, s = backend.store, name()
    await store.schedule_lower(s, "a", 1)
    await store.schedule_lower(s, "b", 2)
    _, claimed = await store.schedule_claim(s, 10, 60_000)
    leases = dict(claimed)
    # A writer moved "b" earlier after the claim: its settle loses, the writer's time stays.
    await store.schedule_lower(s, "b", 3)
    assert not await store.schedule_settle(s, "b", leases["b"], 4 * 10**12)
    assert await store.schedule_due_at(s, "b") == 3
    assert await store.schedule_settle(s, "a", leases["a"], 4 * 10**12)
    assert await store.schedule_due_at(s, "a") == 4 * 10**12
    _, again = await store.schedule_claim(s, 10, 60_000)
    assert [m for m, _ in again] == ["b"]
    assert await store.schedule_settle(s, "b", dict(again)["b"], None)
    assert await store.schedule_due_at(s, "b") is None
    await store.schedule_remove(s, "a")
    assert await store.schedule_size(s) == 0


async def test_a_lease_that_runs_out_is_claimed_again(backend: Backend) -> None:
    store, s = backend.store, name()
    await store.schedule_lower(s, "m", 1)
    _, first = await store.schedule_claim(s, 1, 1)  # a worker that died holding it
    assert [m for m, _ in first] == ["m"]
    if backend.clock is not None:
        backend.clock.advance(0.01)
    else:
        await asyncio.sleep(0.01)
    _, second = await store.schedule_claim(s, 1, 60_000)
    assert [m for m, _ in second] == ["m"]
    assert not await store.schedule_settle(s, "m", first[0][1], None)  # the old claim is void


async def test_concurrent_claims_never_share_a_member(backend: Backend) -> None:
    store, s = backend.store, name()
    others = [backend.another_store() for _ in range(3)]
    for i in range(60):
        await store.schedule_lower(s, f"m{i}", i)
    results = await asyncio.gather(*(o.schedule_claim(s, 7, 60_000)
                                     for o in [store, *others] for _ in range(3)))
    members = [m for _, claimed in results for m, _ in claimed]
    assert len(members) == len(set(members)) == 60


@pytest.mark.parametrize("bad", ["", "with space", "x" * 201])
async def test_bad_names_are_refused(backend: Backend, bad: str) -> None:
    with pytest.raises(ValueError):
        await backend.store.schedule_lower(bad, "m", 1)
    with pytest.raises(ValueError):
        await backend.store.schedule_lower("s", bad, 1)
    with pytest.raises(ValueError):
        await backend.store.schedule_lower("s", "m", -1)


async def pause(backend: Backend, seconds: float) -> None:
    if backend.clock is not None:
        backend.clock.advance(seconds)
    else:
        await asyncio.sleep(seconds)


async def test_a_heartbeat_is_stored_by_the_store_clock_and_old_ones_are_dropped(
    backend: Backend,
) -> None:
    """Issue 30 item 6: worker heartbeats, one atomic step each (``beat``), read in one
    (``beats``): newest first, members silent for ``keep`` dropped by the next beat."""
    store, group = backend.store, name()
    assert (await store.beats(group))[1] == []
    first = await store.beat(group, "worker:a", 60_000)
    await pause(backend, 0.01)
    second = await store.beat(group, "worker:b", 60_000)
    now, beats = await store.beats(group)
    assert now >= second >= first
    assert [m for m, _ in beats] == ["worker:b", "worker:a"]
    assert dict(beats) == {"worker:a": first, "worker:b": second}
    # A beat with a keep shorter than a's silence drops a.
    await pause(backend, 0.05)
    await store.beat(group, "worker:b", 20)
    assert [m for m, _ in (await store.beats(group))[1]] == ["worker:b"]
    with pytest.raises(ValueError):
        await store.beat(group, "bad member!", 1000)


async def test_the_heartbeat_group_expires_on_redis(redis_url: str, redis_prefix: str) -> None:
    from service.store import RedisStore

    store = RedisStore.from_url(redis_url, prefix=redis_prefix)
    try:
        await store.beat("workers", "worker:x", 5_000)
        ttl = await store.client.pttl(store.beats_key("workers"))
        assert 0 < ttl <= 5_000
    finally:
        await store.close()
