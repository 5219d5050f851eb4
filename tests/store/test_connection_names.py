"""Every Redis connection a replica opens is bounded and named (issue 31, item 12).

Before: the store's connections were unnamed (``open_store`` passed no ``client_name``) and
the ``limits`` counting storages (rate limits, webhook guest budgets) kept pools of up to
1,000 unnamed connections each, so a replica held 165 connections where the docs promised at
most 65 and ``CLIENT LIST`` could not say whose they were."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Iterator

import pytest
import redis

from service.limits import DEFAULT_POLICIES, storage_uri
from service.limits import rates as limit_rates
from service.limits.rates import RateLimiter
from service.store import DEFAULT_MAX_CONNECTIONS, MatchNotFound, open_store
from service.store.redis import connection_name
from service.webhooks import budget as guest_budget
from service.webhooks.budget import GuestBudget, Window

pytestmark = pytest.mark.redis

BURST = 200


@pytest.fixture
def server(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


def named(server: redis.Redis, what: str) -> int:
    name = connection_name(what)
    return sum(1 for entry in server.client_list() if entry.get("name") == name)


async def test_the_store_names_its_connections_and_keeps_to_its_pool(
    redis_url: str, redis_prefix: str, server: redis.Redis
) -> None:
    store = open_store(redis_url, None, redis_prefix)

    async def load() -> None:
        with contextlib.suppress(MatchNotFound):
            await store.load(uuid.uuid4().hex)

    try:
        await asyncio.gather(*(load() for _ in range(BURST)))
        held = named(server, "store")
        assert 1 <= held <= DEFAULT_MAX_CONNECTIONS + 1
    finally:
        await store.close()


async def test_rate_limits_name_their_connections_and_hold_at_most_eight(
    redis_url: str, redis_prefix: str, server: redis.Redis
) -> None:
    limiter = RateLimiter(storage_uri(redis_url, None), dict(DEFAULT_POLICIES),
                          key_prefix=redis_prefix)
    try:
        decisions = await asyncio.gather(
            *(limiter.hit("read", f"a:10.0.0.{i % 50}") for i in range(BURST)))
        # Past the pool, a count waits for a connection (and, on a starved machine, may go
        # uncounted after 2 s): what matters here is that the pool is bounded and named.
        assert any(d is not None for d in decisions)
        held = named(server, "limits")
        assert 1 <= held <= limit_rates.MAX_CONNECTIONS == 8
    finally:
        await limiter.aclose()


async def test_webhook_guest_budgets_name_their_connections_and_hold_at_most_four(
    redis_url: str, redis_prefix: str, server: redis.Redis
) -> None:
    budget = GuestBudget(storage_uri(redis_url, None), per_guest=Window(10_000, 60),
                         per_app=Window(100_000, 60), key_prefix=redis_prefix)
    try:
        admitted = await asyncio.gather(
            *(budget.admit("app1", f"guest{i % 20}", 1) for i in range(BURST)))
        assert all(admitted)
        held = named(server, "webhook-budget")
        assert 1 <= held <= guest_budget.MAX_CONNECTIONS == 4
    finally:
        await budget.aclose()
