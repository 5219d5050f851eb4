"""The store under test, parametrized over every backend: SQLite (a real file, in WAL mode),
Redis, Redis Cluster. (The service's own tests run on SQLite's in-memory mode.)

``backend`` gives the store plus what a contract test needs beyond the contract: reading a
match's TTL and making a match expire now (SQLite: a fake clock; Redis: PEXPIRE)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from service.store.redis import RedisStore
from service.store.sqlite import SqliteStore

# The contract tests share two cores with another pytest worker, Redis and the scale tests'
# subprocesses: opening forty connections at once has taken longer than the production
# connect timeout (0.5 s) there. The contract is about results, not latency; the production
# timeouts and retry budget have their own tests (test_redis.py, test_faults.py).
LOADED_MACHINE = {"connect_timeout": 5.0, "retry_budget": 15.0}


@dataclass
class FakeClock:
    """Seconds that move only when a test says so."""

    now: float = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class Backend:
    name: str
    store: SqliteStore | RedisStore
    clock: FakeClock | None = None
    where: str | None = None
    extra: list[RedisStore] = field(default_factory=list)

    async def ttl(self, match_id: str) -> list[float | None]:
        """Seconds left on each key of the match (None: no expiry); SQLite: one value."""
        if isinstance(self.store, SqliteStore):
            return [self.store.ttl(match_id)]
        client = self.store.client
        result: list[float | None] = []
        pttl = int(await client.pttl(self.store.key(match_id)))
        if pttl != -2:  # -2: no such key
            result.append(None if pttl == -1 else pttl / 1000)
        return result

    async def expire_now(self, match_id: str) -> None:
        """Make the match expire as its TTL would."""
        if isinstance(self.store, SqliteStore):
            assert self.clock is not None
            ttl = self.store.ttl(match_id)
            assert ttl is not None, "expire_now needs a match with a TTL"
            self.clock.advance(ttl + 0.001)
            return
        client = self.store.client
        keys = (self.store.key(match_id),)
        for key in keys:
            await client.pexpire(key, 1)
        async with asyncio.timeout(10):  # the server expires keys on access after 1 ms
            while any([await client.exists(key) for key in keys]):
                await asyncio.sleep(0.005)

    def another_store(self) -> SqliteStore | RedisStore:
        """A second store object with its own connections on the same data (another replica
        of the service); closed with the backend."""
        if isinstance(self.store, SqliteStore):
            return self.store  # one process: the object is the shared state (the file is
            # locked to one store object)
        assert self.where is not None
        if self.store.is_cluster:
            other = RedisStore.from_cluster_nodes(self.where, prefix=self.store.prefix,
                                                  **LOADED_MACHINE)
        else:
            other = RedisStore.from_url(self.where, prefix=self.store.prefix, **LOADED_MACHINE)
        self.extra.append(other)
        return other


BACKENDS = [
    "sqlite",
    pytest.param("redis", marks=pytest.mark.redis),
    pytest.param("cluster", marks=[pytest.mark.redis, pytest.mark.slow]),
]


@pytest.fixture(params=BACKENDS)
def backend_spec(request: pytest.FixtureRequest) -> tuple[str, str | None, str | None]:
    """(backend name, connection string, key prefix); resolves only what it needs."""
    name: str = request.param
    if name == "redis":
        return name, request.getfixturevalue("redis_url"), request.getfixturevalue("redis_prefix")
    if name == "cluster":
        cluster = request.getfixturevalue("redis_cluster")
        return name, cluster.nodes_arg, request.getfixturevalue("redis_cluster_prefix")
    return name, None, None


@pytest.fixture
async def backend(
    backend_spec: tuple[str, str | None, str | None], tmp_path: Path
) -> AsyncIterator[Backend]:
    name, where, prefix = backend_spec
    if name == "sqlite":
        clock = FakeClock()
        sqlite = SqliteStore(tmp_path / "s.sqlite3", clock=clock)  # a real file: WAL
        try:
            yield Backend(name, sqlite, clock)
        finally:
            await sqlite.close()
        return
    assert where is not None and prefix is not None
    if name == "redis":
        store = RedisStore.from_url(where, prefix=prefix, **LOADED_MACHINE)
    else:
        store = RedisStore.from_cluster_nodes(where, prefix=prefix, **LOADED_MACHINE)
    backend = Backend(name, store, where=where)
    try:
        yield backend
    finally:
        for other in backend.extra:
            await other.close()
        await store.close()
