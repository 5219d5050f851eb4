"""Player-layer fixtures: an app on the embedded store with the toy game, and helpers to make
guests, apps and matches."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from service import games
from service.players import PlayerService
from tests.api.conftest import TOY, make_app
from tests.identity.conftest import jwks_server, keys  # noqa: F401 (the fixtures)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@dataclass
class Guest:
    id: str
    token: str
    name: str

    @property
    def auth(self) -> dict[str, str]:
        return bearer(self.token)


@dataclass
class Rig:
    client: TestClient

    @property
    def players(self) -> PlayerService:
        service: PlayerService = self.client.app.state.player_service  # type: ignore[attr-defined]
        return service

    def call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """Run a coroutine function on the app's loop (the test client's portal)."""
        async def run() -> Any:
            return await fn(*args, **kwargs)
        return self.client.portal.call(run)  # type: ignore[union-attr]

    def guest(self, name: str = "Alice", **body: Any) -> Guest:
        answer = self.client.post("/v1/players", json={"name": name, **body})
        assert answer.status_code == 201, answer.text
        got = answer.json()
        return Guest(got["id"], got["token"], got["name"])

    def app(self, name: str = "Acme", **settings: Any) -> tuple[str, str]:
        """A new app: (appId, api key)."""
        app, key = self.call(self.players.apps.add, name, **settings)
        return app.id, key

    def seated(self, auth: dict[str, str], seats: list[dict[str, Any]],
               game: str = "toy", **extra: Any) -> str:
        answer = self.client.post("/v1/matches", json={"game": game, "seats": seats, **extra},
                                  headers=auth)
        assert answer.status_code == 201, answer.text
        match_id: str = answer.json()["matchId"]
        return match_id


@pytest.fixture(scope="module")
def toy_module() -> Iterator[None]:
    games.register(TOY, "tests.toy_game:engine")
    yield
    games.unregister(TOY)


@pytest.fixture(scope="module")
def rig(toy_module: None) -> Iterator[Rig]:
    """One app per test module (building one takes a second): every test makes its own
    players, so tests do not see each other's."""
    with TestClient(make_app(sse_max_seconds=0.5)) as client:
        yield Rig(client)


def alike(first: httpx.Response, second: httpx.Response) -> bool:
    """Two answers that must not tell their cases apart: the same status, headers that matter
    and body, but for the request id each answer names (``requestId``, X-Request-Id)."""
    import json

    one, two = json.loads(first.content), json.loads(second.content)
    assert one.pop("requestId") != two.pop("requestId")
    return bool(first.status_code == second.status_code and one == two)
