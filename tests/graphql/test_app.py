"""The application factory mounts GraphQL on ``/graphql`` for HTTP and WebSockets."""

from __future__ import annotations

from starlette.testclient import TestClient

from service.app import Settings, create_app
from service.store import SqliteStore
from tests.graphql.client import PROTOCOL


def test_create_app_serves_graphql_over_http_and_websocket() -> None:
    app = create_app(SqliteStore(":memory:"), settings=Settings(cors_origins=("https://play.example",)))
    with TestClient(app) as http:
        response = http.post("/graphql", json={"query": "{ games { id } }"})
        assert response.status_code == 200
        assert "toy" in [g["id"] for g in response.json()["data"]["games"]]
        created = http.post("/v1/matches", json={"game": "toy", "players": 2}).json()
        query = "query($id: ID!) { match(id: $id) { ... on MatchState { version } } }"
        body = http.post(
            "/graphql", json={"query": query, "variables": {"id": created["matchId"]}}
        ).json()
        assert body == {"data": {"match": {"version": 0}}}  # REST and GraphQL share a store
        with http.websocket_connect(
            "/graphql", subprotocols=[PROTOCOL], headers={"Origin": "https://play.example"}
        ) as ws:
            ws.send_json({"type": "connection_init"})
            assert ws.receive_json()["type"] == "connection_ack"


def test_a_browser_gets_graphiql_and_anything_else_a_405_problem() -> None:
    with TestClient(create_app(SqliteStore(":memory:"))) as http:
        page = http.get("/graphql", headers={"Accept": "text/html,application/xhtml+xml"})
        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/html")
        assert "graphiql" in page.text.lower()
        for accept in ("application/json", "*/*", ""):
            refused = http.get("/graphql", headers={"Accept": accept})
            assert refused.status_code == 405, accept
            assert refused.headers["content-type"] == "application/problem+json"
            assert refused.json()["code"] == "method_not_allowed"
            assert "POST" in refused.headers["allow"]
        # A query over GET still runs.
        query = http.get("/graphql", params={"query": "{ games { id } }"})
        assert query.status_code == 200
        assert query.json()["data"]["games"]
