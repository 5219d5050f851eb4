"""The toy engine (random bots only: it has no bot model) next to the real games."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from service.store import MatchStore
from service.store.redis import RedisStore
from service.store.sqlite import SqliteStore
from tests.toy_game import registered as toy_registered

TOY = "toy"


@pytest.fixture(autouse=True)
def toy_game() -> Iterator[None]:
    with toy_registered():
        yield


# The store the worker tests run on: a real SQLite file and the test Redis (its own prefix).
@pytest.fixture(params=["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[MatchStore]:
    if request.param == "sqlite":
        the_store: MatchStore = SqliteStore(tmp_path / "s.sqlite3")
    else:
        the_store = RedisStore.from_url(request.getfixturevalue("redis_url"),
                                        prefix=request.getfixturevalue("redis_prefix"))
    try:
        yield the_store
    finally:
        await the_store.close()
