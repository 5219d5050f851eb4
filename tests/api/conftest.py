"""API fixtures: the toy game, apps on the memory store or Redis, clients, a live server.

``toy`` is registered for every test here (and unregistered after), so service tests do not
depend on the real engines; tests that play every game parametrize over ``GAMES``.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.testclient import TestClient

from service import games
from service.app import Settings, create_app
from service.limits import LimitSettings
from service.matches.records import MatchRecord
from service.store import MatchStore
from service.store.redis import RedisStore
from service.store.sqlite import SqliteStore
from tests.support.live_serve import live_serve  # noqa: F401 (the fixture, for the suite)
from tests.support.slow import starts_processes

TOY = "toy"
REAL_GAMES = [g for g in games.ids() if g != TOY]
GAMES = [TOY, *REAL_GAMES]


@pytest.fixture(autouse=True)
def toy_game() -> Iterator[None]:
    games.register(TOY, "tests.toy_game:engine")
    yield
    games.unregister(TOY)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


LIMITS_OFF = LimitSettings(enabled=False)
"""Rate limits and quotas switched off (``--rate-limits off``): the suite's apps make
requests as fast as they can. Tests of the limits themselves pass ``limits=``."""


def make_app(store: MatchStore | None = None, **settings: Any) -> Starlette:
    settings.setdefault("limits", LIMITS_OFF)
    return create_app(store or SqliteStore(":memory:"), settings=Settings(**settings))


@pytest.fixture
def app(toy_game: None) -> Starlette:
    return make_app()


@pytest.fixture
def client(app: Starlette) -> Iterator[TestClient]:
    with TestClient(app) as test_client:
        yield test_client


@dataclass
class Match:
    id: str
    game: str
    tokens: dict[int, str]
    players: int

    def auth(self, seat: int) -> dict[str, str]:
        return bearer(self.tokens[seat])

    @property
    def url(self) -> str:
        return f"/v1/matches/{self.id}"


def create(client: TestClient, game: str = TOY, players: int = 2, seed: int = 7,
           **extra: Any) -> Match:
    response = client.post(
        "/v1/matches", json={"game": game, "players": players, "seed": seed, **extra}
    )
    assert response.status_code == 201, response.text
    body = response.json()
    tokens = {s["seat"]: s["token"] for s in body["seats"]}
    return Match(body["matchId"], game, tokens, players)


def stored(client: TestClient, match_id: str) -> tuple[int, MatchRecord]:
    """The raw stored (version, record), read through the app's own store and loop."""
    store: MatchStore = client.app.state.store  # type: ignore[attr-defined]
    assert client.portal is not None, "use the client inside `with`"
    version, data = client.portal.call(store.load, match_id)
    return version, MatchRecord.decode(data)


def engine_state(record: MatchRecord) -> Any:
    engine = games.get(record.game)
    return engine.loads(record.state)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class LiveServer:
    url: str
    app: Starlette


@contextlib.contextmanager
def serve_in_thread(app: Starlette) -> Iterator[LiveServer]:
    """Run ``app`` under uvicorn on a free port in a background thread; stop it after."""
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                            lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    try:
        yield LiveServer(f"http://127.0.0.1:{port}", app)
    finally:
        server.should_exit = True
        thread.join(timeout=20)


@pytest.fixture(params=["memory", "redis"])
@starts_processes
def live(request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    """A live server on the memory store and on a real Redis."""
    if request.param == "memory":
        store: MatchStore = SqliteStore(":memory:")
    else:
        url = request.getfixturevalue("redis_url")
        prefix = request.getfixturevalue("redis_prefix")
        store = RedisStore.from_url(url, prefix=prefix)
    with serve_in_thread(make_app(store)) as server:
        yield server


@pytest.fixture
async def http(live: LiveServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=live.url, timeout=30) as client:
        yield client
