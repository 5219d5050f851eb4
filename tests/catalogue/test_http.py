"""``GET /v1/games/{id}`` (REST) and ``game(id, rulesVersion)`` (GraphQL): the same
catalogue, cacheable (immutable per rules version), refusals as problems (issue 14)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from service import games
from service.api.graphql import build_schema
from tests.api.conftest import make_app
from tests.graphql.client import GraphQLClient

GAMES = ["ny1901", "ginkgopolis"]
IMMUTABLE = "public, max-age=31536000, immutable"


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(make_app()) as test_client:
        yield test_client


def current(game: str) -> int:
    return games.get(game).rules_versions[-1]


@pytest.mark.parametrize("game", GAMES)
def test_a_versioned_catalogue_is_immutable(client: TestClient, game: str) -> None:
    for version in games.get(game).rules_versions:
        response = client.get(f"/v1/games/{game}?rulesVersion={version}")
        assert response.status_code == 200, response.text
        assert response.headers["cache-control"] == IMMUTABLE
        assert response.headers["content-type"].startswith("application/json")
        body = response.json()
        assert (body["game"], body["rulesVersion"]) == (game, version)
        again = client.get(f"/v1/games/{game}?rulesVersion={version}",
                           headers={"If-None-Match": response.headers["etag"]})
        assert again.status_code == 304
        assert again.content == b""
        assert again.headers["etag"] == response.headers["etag"]
        assert again.headers["cache-control"] == IMMUTABLE


@pytest.mark.parametrize("game", GAMES)
def test_the_unversioned_url_is_the_current_version_for_a_short_while(
        client: TestClient, game: str) -> None:
    response = client.get(f"/v1/games/{game}")
    assert response.status_code == 200
    assert response.headers["cache-control"] == "public, max-age=300"
    version = current(game)
    assert response.json()["rulesVersion"] == version
    location = f"/v1/games/{game}?rulesVersion={version}"
    assert response.headers["content-location"] == location
    versioned = client.get(location)
    assert versioned.json() == response.json()
    assert versioned.headers["etag"] == response.headers["etag"]
    for header in (response.headers["etag"], f'W/{response.headers["etag"]}',
                   f'"other", {response.headers["etag"]}', "*"):
        assert client.get(f"/v1/games/{game}",
                          headers={"If-None-Match": header}).status_code == 304
    assert client.get(f"/v1/games/{game}",
                      headers={"If-None-Match": '"other"'}).status_code == 200


@pytest.mark.parametrize("game", GAMES)
def test_versions_that_differ_have_different_etags(client: TestClient, game: str) -> None:
    tags = {}
    for version in games.get(game).rules_versions:
        response = client.get(f"/v1/games/{game}?rulesVersion={version}")
        tags[response.headers["etag"]] = response.json()
    assert len(tags) == len(games.get(game).rules_versions)
    old = next(iter(tags))
    stale = client.get(f"/v1/games/{game}", headers={"If-None-Match": old})
    assert stale.status_code == 200


def problem(response: Any, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    assert (body["status"], body["code"]) == (status, code)
    assert body["detail"]


def test_refusals_are_problems(client: TestClient) -> None:
    problem(client.get("/v1/games/chess"), 404, "not_found")
    problem(client.get("/v1/games/ny1901?rulesVersion=99"), 404, "unknown_rules_version")
    for bad in ("abc", "", "0", "-1", "1.5", "2e0", "99999999999999999999", "١"):
        problem(client.get("/v1/games/ny1901", params={"rulesVersion": bad}), 400, "malformed")
    problem(client.get("/v1/games/ny1901?rulesVersion=1&rulesVersion=2"), 400, "malformed")


def test_a_game_without_a_catalogue_is_not_found(client: TestClient) -> None:
    # The API tests' toy game is hosted but has no components.
    games.register("toy", "tests.toy_game:engine")
    try:
        problem(client.get("/v1/games/toy"), 404, "not_found")
        listed = {g["id"]: g for g in client.get("/v1/games").json()}
        assert listed["toy"]["catalogueUrl"] is None
    finally:
        games.unregister("toy")


def test_the_games_list_links_each_catalogue(client: TestClient) -> None:
    for info in client.get("/v1/games").json():
        if info["id"] in GAMES:
            assert info["catalogueUrl"] == f"/v1/games/{info['id']}"
            assert client.get(info["catalogueUrl"]).status_code == 200


# -- GraphQL --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gql(client: TestClient) -> GraphQLClient:
    return GraphQLClient(client, build_schema())


def strip_typename(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: strip_typename(v) for k, v in value.items() if k != "__typename"}
    if isinstance(value, list):
        return [strip_typename(v) for v in value]
    return value


QUERY = "query($id: String!, $v: Int) {{ game(id: $id, rulesVersion: $v) {{ __typename " \
        "... on {type} {{ {fields} }} ... on Problem {{ code message }} }} }}"
TYPES = {"ny1901": "Ny1901Catalogue", "ginkgopolis": "GinkgopolisCatalogue"}


@pytest.mark.parametrize("game", GAMES)
def test_graphql_serves_the_same_catalogue_as_rest(client: TestClient, gql: GraphQLClient,
                                                   game: str) -> None:
    query = QUERY.format(type=TYPES[game], fields=gql.selection(TYPES[game]))
    for version in [None, *games.get(game).rules_versions]:
        answer = gql(query, {"id": game, "v": version})["game"]
        assert answer["__typename"] == TYPES[game]
        url = f"/v1/games/{game}" + ("" if version is None else f"?rulesVersion={version}")
        assert strip_typename(answer) == client.get(url).json()


def test_graphql_refusals_are_failure_members(gql: GraphQLClient) -> None:
    query = QUERY.format(type="Ny1901Catalogue", fields="rulesVersion")
    for variables, code in (({"id": "chess"}, "not_found"),
                            ({"id": "ny1901", "v": 99}, "unknown_rules_version")):
        answer = gql(query, variables)["game"]
        assert (answer["__typename"], answer["code"]) == ("NotFound", code)
        assert answer["message"]
