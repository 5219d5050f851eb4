"""Live-viewer fixtures: a match service on the embedded store and on a real Redis, and a
helper that plays moves as the seats whose turn it is."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from service.live import LiveHub
from service.matches import MatchService
from service.matches.models import CreateMatchRequest, wire_action
from service.store import MatchStore, RedisStore, SqliteStore


@dataclass
class Played:
    service: MatchService
    match_id: str
    tokens: dict[int, str]

    async def move(self, rng: random.Random) -> int:
        """One legal move by a seat whose turn it is; the new version."""
        state = await self.service.get_state(self.match_id, None)
        seat = min(state.active_seats)
        token = self.tokens[seat]
        legal = await self.service.legal_moves(self.match_id, token)
        answer = await self.service.act(
            self.match_id, token, wire_action(rng.choice(legal.moves)), None, None
        )
        return answer.version


async def new_match(service: MatchService, game: str = "ny1901", players: int = 3,
                    seed: int = 11) -> Played:
    created = await service.create_match(
        CreateMatchRequest(game=game, players=players, seed=seed)
    )
    return Played(service, created.match_id, {s.seat: s.token for s in created.seats})


PATIENT_POOL = 20.0
"""Seconds a command may wait for a connection, a reply or a retry in these tests."""


@pytest.fixture(params=["embedded", "redis"])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[MatchStore]:
    if request.param == "embedded":
        the_store: MatchStore = SqliteStore(":memory:")
    else:
        url = request.getfixturevalue("redis_url")
        prefix = request.getfixturevalue("redis_prefix")
        # A patient store: these tests open hundreds of watchers at once and count renders
        # and versions, not overload (on a loaded CI machine a 2 s pool wait, and once a
        # command of 500 watchers starting together, ran out of time).
        the_store = RedisStore.from_url(url, prefix=prefix, pool_timeout=PATIENT_POOL,
                                        retry_budget=PATIENT_POOL, socket_timeout=PATIENT_POOL)
    try:
        yield the_store
    finally:
        await the_store.close()


def make_service(store: MatchStore, **hub: int) -> MatchService:
    resume = hub.pop("resume_window", 100)
    return MatchService(store, ttl_finished=None, ttl_idle=None,
                        hub=LiveHub(store, **hub), resume_window=resume)
