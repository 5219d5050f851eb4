"""Fixtures for the GraphQL tests: the toy engine registered, an app serving ``/graphql``
on the memory store or a real Redis, and a client for it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from service.api.graphql import graphql_routes
from service.app import expose_services
from service.composition import build_services
from service.limits import LimitSettings
from service.settings import Settings
from service.store import MatchStore, RedisStore, SqliteStore
from tests.graphql.client import GraphQLClient
from tests.support.live_serve import live_serve  # noqa: F401 (the fixture, for the suite)
from tests.toy_game import registered as toy_registered

TOY = "toy"


@pytest.fixture(scope="package", autouse=True)
def toy_game() -> Iterator[None]:
    """The toy engine (hidden hands, a simultaneous step) next to the real games."""
    with toy_registered():
        yield


def graphql_app(store: MatchStore) -> tuple[Starlette, Any]:
    """An app serving ``/graphql`` alone, with every service the composition root builds
    (the fields generated from the operation table reach the player, table and invitation
    services through the app's state, as in ``create_app``); no worker loops, no limits."""
    settings = Settings(limits=LimitSettings(enabled=False), worker=False)
    services = build_services(settings, store)
    routes = graphql_routes(services.matches, allowed_origins=["https://play.example"],
                            players=services.players)
    app = Starlette(routes=routes)
    expose_services(app, services)
    return app, routes[0].endpoint.schema


@pytest.fixture
def make_client() -> Iterator[Callable[[MatchStore], GraphQLClient]]:
    """``make_client(store)``: a GraphQL client of an app on ``store`` (closed afterwards)."""
    opened: list[TestClient] = []

    def make(store: MatchStore) -> GraphQLClient:
        app, schema = graphql_app(store)
        http = TestClient(app)
        http.__enter__()
        opened.append(http)
        return GraphQLClient(http, schema)

    yield make
    for http in opened:
        http.__exit__(None, None, None)


@pytest.fixture
def gql(make_client: Callable[[MatchStore], GraphQLClient]) -> GraphQLClient:
    """A client of an app on a fresh memory store."""
    return make_client(SqliteStore(":memory:"))


@pytest.fixture
def redis_gql(
    make_client: Callable[[MatchStore], GraphQLClient], redis_url: str, redis_prefix: str
) -> GraphQLClient:
    """A client of an app on a real Redis (keys under a per-test prefix)."""
    return make_client(RedisStore.from_url(redis_url, prefix=redis_prefix))


CREATE = """
mutation($game: String!, $players: Int!, $options: JSON, $seed: Int, $bots: [BotSeatInput!]) {
  createMatch(game: $game, players: $players, options: $options, seed: $seed, bots: $bots) {
    __typename
    ... on MatchCreated { matchId game version seats { seat token } }
    ... on Problem { code message }
  }
}
"""


def create_match(
    gql: GraphQLClient, game: str = TOY, players: int = 2, seed: int = 7, **extra: Any
) -> tuple[str, dict[int, str]]:
    """A new match: ``(match id, {seat: token})``."""
    data = gql(CREATE, {"game": game, "players": players, "seed": seed, **extra})
    created = data["createMatch"]
    assert created["__typename"] == "MatchCreated", created
    return created["matchId"], {s["seat"]: s["token"] for s in created["seats"]}
