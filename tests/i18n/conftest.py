"""An app on the memory store and helpers to create matches of the real games."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from starlette.testclient import TestClient

from service.app import create_app
from service.store import SqliteStore


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(create_app(SqliteStore(":memory:"))) as test_client:
        yield test_client


@dataclass
class Match:
    id: str
    tokens: dict[int, str]

    @property
    def url(self) -> str:
        return f"/v1/matches/{self.id}"

    def auth(self, seat: int, **headers: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[seat]}", **headers}


def create(client: TestClient, game: str, players: int = 2, seed: int = 3,
           **extra: Any) -> Match:
    answer = client.post("/v1/matches", json={"game": game, "players": players, "seed": seed,
                                              **extra})
    assert answer.status_code == 201, answer.text
    body = answer.json()
    return Match(body["matchId"], {s["seat"]: s["token"] for s in body["seats"]})
