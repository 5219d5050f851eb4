"""Issue 15: a GraphQL subscription holds one of the replica's watcher slots, like an event
stream; past a cap it answers the ``Unavailable`` member (never an error, never a cut)."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.testclient import TestClient

from service.api.graphql import graphql_routes
from service.live import LiveHub
from service.matches import MatchService
from service.store import SqliteStore

from .client import GraphQLClient
from .conftest import create_match

UPDATES = """subscription($id: ID!) { matchUpdated(matchId: $id) {
  __typename ... on MatchState { version } ... on Unavailable { code retryAfter } } }"""


def test_subscriptions_count_against_the_caps() -> None:
    store = SqliteStore(":memory:")
    hub = LiveHub(store, max_watchers=2, max_watchers_per_client=1)
    service = MatchService(store, ttl_finished=None, ttl_idle=None, hub=hub)
    routes = graphql_routes(service, allowed_origins=[])
    app = Starlette(routes=routes)
    app.state.match_service = service
    with TestClient(app) as http:
        gql = GraphQLClient(http, routes[0].endpoint.schema)
        match_id, tokens = create_match(gql, game="ny1901", players=2, seed=3)
        with gql.subscribe(UPDATES, {"id": match_id}, tokens[0]) as first:
            assert first.next()["matchUpdated"] == {"__typename": "MatchState", "version": 0}
            assert hub.watchers == 1
            with gql.subscribe(UPDATES, {"id": match_id}, tokens[0]) as second:
                refused = second.next()["matchUpdated"]
                assert refused["__typename"] == "Unavailable"
                assert refused["code"] == "too_many_streams" and refused["retryAfter"] > 0
                second.expect_complete()
            with gql.subscribe(UPDATES, {"id": match_id}, tokens[1]) as other:
                assert other.next()["matchUpdated"]["version"] == 0  # another client
                assert hub.watchers == 2
                with gql.subscribe(UPDATES, {"id": match_id}) as spectator:
                    full = spectator.next()["matchUpdated"]
                    assert (full["__typename"], full["code"]) == ("Unavailable", "replica_full")
    assert hub.watchers == 0  # every slot given back when the subscriptions ended
