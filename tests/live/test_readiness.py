"""Issue 15: watchers never take a replica out of rotation. A readiness ping that times out
while the store keeps completing commands is a busy replica, still ready; a ping that times
out while nothing completes, or a store that fails, is not."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from service.matches import MatchService
from service.store import RedisStore


class SlowPing(RedisStore):
    """A real Redis store whose PING is answered late (a busy event loop); ``busy`` other
    commands complete meanwhile, or none."""

    busy = True

    async def ping(self) -> bool:
        if self.busy:
            for _ in range(30):
                await self.load_or_none()
                await asyncio.sleep(0.1)
        else:
            await asyncio.sleep(3)
        return True

    async def load_or_none(self) -> None:
        with contextlib.suppress(KeyError):
            await self.load("no-such-match")


@pytest.mark.parametrize("busy", [True, False])
async def test_a_slow_ping_is_ready_while_commands_complete(
    redis_url: str, redis_prefix: str, busy: bool
) -> None:
    store = SlowPing.from_url(redis_url, prefix=redis_prefix)
    store.busy = busy
    try:
        service = MatchService(store, ttl_finished=None, ttl_idle=None)
        assert await service.ready() is busy
    finally:
        await store.close()


async def test_a_store_that_is_down_is_not_ready() -> None:
    store = RedisStore.from_url("redis://127.0.0.1:1/0", retry_budget=0.2)
    try:
        service = MatchService(store, ttl_finished=None, ttl_idle=None)
        assert await service.ready() is False
    finally:
        await store.close()
