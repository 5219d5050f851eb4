"""Quick-match fixtures: service replicas (each its own MatchService, PlayerService and
QueueService, as replicas are) on one store -- the embedded one, Redis, or a Redis Cluster
-- sharing a clock the tests move."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

from service.identity.callers import Caller
from service.matches import MatchService
from service.players import PlayerService
from service.players.models import CreatePlayerRequest
from service.queue import QueueService
from service.queue.models import EnqueueRequest, QueueTicket
from service.store import SqliteStore
from service.store.redis import RedisStore
from service.tables import TableService


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Replica:
    store: Any
    matches: MatchService
    players: PlayerService
    queue: QueueService
    tables: TableService

    async def guest(self, name: str) -> Caller:
        created = await self.players.create_guest(CreatePlayerRequest(name=name))
        caller = await self.players.authenticate(created.token)
        assert isinstance(caller, Caller)
        return caller

    async def enqueue(self, who: Caller, **body: Any) -> QueueTicket:
        ticket, _ = await self.queue.enqueue(who, EnqueueRequest.model_validate(body))
        return ticket


def open_store(request: pytest.FixtureRequest, kind: str, tmp: Any) -> Any:
    if kind == "sqlite":
        return SqliteStore(str(tmp / "skyline.sqlite3"))
    if kind == "redis":
        return RedisStore.from_url(request.getfixturevalue("redis_url"),
                                   prefix=request.getfixturevalue("redis_prefix"))
    cluster = request.getfixturevalue("redis_cluster")
    return RedisStore.from_cluster_nodes(
        cluster.nodes_arg, prefix=request.getfixturevalue("redis_cluster_prefix"))


async def make_replicas(
    request: pytest.FixtureRequest, kind: str, tmp: Any, count: int, clock: Clock,
    **queue: Any,
) -> list[Replica]:
    shared = open_store(request, kind, tmp) if kind == "sqlite" else None
    made = []
    for _ in range(count):
        store = shared if shared is not None else open_store(request, kind, tmp)
        matches = MatchService(store, ttl_finished=None, ttl_idle=None, clock=clock)
        players = PlayerService(store, matches, clock=clock)
        made.append(Replica(store, matches, players,
                            QueueService(store, players, clock=clock, **queue),
                            TableService(players, matches)))
    return made


async def close(replicas: list[Replica]) -> None:
    closed: set[int] = set()
    for replica in replicas:
        await replica.players.aclose()
        if id(replica.store) not in closed:
            closed.add(id(replica.store))
            await replica.store.close()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def one(tmp_path: Any, request: pytest.FixtureRequest, clock: Clock
              ) -> AsyncIterator[Replica]:
    """One replica on the embedded store."""
    made = await make_replicas(request, "sqlite", tmp_path, 1, clock)
    try:
        yield made[0]
    finally:
        await close(made)


@pytest.fixture(params=["sqlite", pytest.param("redis", marks=pytest.mark.redis),
                        pytest.param("cluster", marks=[pytest.mark.redis, pytest.mark.slow])])
async def replicas(tmp_path: Any, request: pytest.FixtureRequest, clock: Clock
                   ) -> AsyncIterator[list[Replica]]:
    """Three replicas on one store of each kind."""
    made = await make_replicas(request, request.param, tmp_path, 3, clock)
    try:
        yield made
    finally:
        await close(made)
