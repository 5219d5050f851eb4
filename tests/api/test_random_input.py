"""Random JSON shapes and byte strings at every endpoint: never a 5xx, never a changed match.

Issue 20's fuzzing gate, beside schemathesis (which generates from the document, so its
"negative" data is still shaped by it): hypothesis draws bodies that know nothing of the
document (any JSON value nested a few levels, or raw bytes, often invalid UTF-8), query
strings, path parameters (a real match, seat or player, or junk), a credential (each seat's,
the player's, a made-up one, none) and a content type, and sends them to every operation of
the OpenAPI document (its own method, and POST), and to ``/graphql``.

After every request, on the embedded store and on Redis:
- the status is below 500;
- a refused request (not 2xx/3xx) left every match's stored record byte for byte as it was
  (nothing half-written).
A random body that happens to be a valid request may be accepted (posting ``{}`` to hand a
seat to a bot is one): then the match may change, and the test takes the new record as the
baseline. At the end, the matches must have changed only through such accepted writes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from service.store import MatchStore
from service.store.redis import RedisStore
from service.store.sqlite import SqliteStore
from tests.api.conftest import create, make_app, stored

pytestmark = pytest.mark.slow  # the fuzzing gate: long property runs

DOCUMENT = json.loads(
    TestClient(make_app()).get("/openapi.json").content
)
METHODS = ("get", "post", "put", "patch", "delete")
OPERATIONS = sorted(
    {(path, method.upper()) for path, ops in DOCUMENT["paths"].items() for method in ops
     if method in METHODS}
    | {(path, "POST") for path in DOCUMENT["paths"]}
    | {("/graphql", "POST"), ("/graphql", "GET")}
)
EXAMPLES = 30  # per operation and store

scalars = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
           | st.text(max_size=20))
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
# Keys the API knows, so that some random objects get past the first look.
known_keys = st.sampled_from(
    ["game", "players", "seed", "seats", "action", "move", "index", "expectedVersion",
     "name", "bot", "player", "query", "variables", "operationName", "options", "appId"]
)
shaped_objects = st.dictionaries(known_keys, json_values, max_size=5)
header_text = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40)
content_types = st.sampled_from(
    [None, "application/json", "application/json; charset=utf-8", "text/plain",
     "application/merge-patch+json", "multipart/form-data; boundary=x"]
)


class Scene:
    """An app on one store (its bot worker off: nothing moves but what the test sends),
    with a two-seat match of seat tokens, one of a player and a bot, and their
    credentials."""

    def __init__(self, client: TestClient) -> None:
        self.client = client
        self.match = create(client)
        player = client.post("/v1/players", json={"name": "Fuzzed"}).json()
        self.player_id = player["id"]
        self.player_token = player["token"]
        seated = client.post(
            "/v1/matches",
            json={"game": "toy", "players": 2,
                  "seats": [{"player": self.player_id}, {"bot": "random"}]},
            headers={"Authorization": f"Bearer {self.player_token}"},
        )
        assert seated.status_code == 201, seated.text
        self.match_ids = [self.match.id, seated.json()["matchId"]]
        self.credentials = [None, "Bearer junk", "Bearer sks_0000", "Basic Zm9vOmJhcg==",
                            f"Bearer {self.player_token}",
                            *(f"Bearer {t}" for t in self.match.tokens.values())]

    def records(self) -> dict[str, Any]:
        return {match_id: stored(self.client, match_id) for match_id in self.match_ids}


@pytest.fixture(params=["embedded", "redis"])
def scene(request: pytest.FixtureRequest, toy_game: None) -> Iterator[Scene]:
    if request.param == "embedded":
        store: MatchStore = SqliteStore(":memory:")
        extra: dict[str, Any] = {}
    else:
        url = request.getfixturevalue("redis_url")
        prefix = request.getfixturevalue("redis_prefix")
        store = RedisStore.from_url(url, prefix=prefix)
        extra = {"redis_url": url, "redis_prefix": prefix}
    with TestClient(make_app(store, sse_max_seconds=0.05, worker=False, **extra)) as client:
        yield Scene(client)


def path_parameters(scene: Scene) -> dict[str, st.SearchStrategy[str]]:
    junk = st.text(max_size=30).map(lambda s: quote(s, safe=""))
    return {
        "matchId": st.sampled_from(scene.match_ids) | junk,
        "seat": st.sampled_from(["0", "1", "2", "-1", "01", "٣"]) | junk,
        "sub": st.just(scene.player_id) | junk,
        "gameId": st.sampled_from(["toy", "ny1901", "ginkgopolis"]) | junk,
        "ticket": st.sampled_from(["qt_0_0", "qt_" + "a" * 40 + "_x"]) | junk,
        "code": st.sampled_from([f"ski_{scene.match_ids[1]}." + "a" * 24,
                                 f"skv_{scene.match_ids[0]}." + "b" * 24, "ski_x"]) | junk,
        "invitationId": st.sampled_from([f"{scene.match_ids[1]}.abcdefghijkl", "x.y"]) | junk,
        "webhookId": st.sampled_from(["we_" + "0" * 20, "we_x"]) | junk,
    }


@pytest.mark.parametrize(("path", "method"), OPERATIONS)
def test_random_input_never_errs_and_never_half_writes(
    scene: Scene, path: str, method: str
) -> None:
    parameters = path_parameters(scene)
    names = [part[1:-1] for part in path.split("/") if part.startswith("{")]
    assert set(names) <= set(parameters), f"no strategy for a parameter of {path}"

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(
        values=st.fixed_dictionaries({name: parameters[name] for name in names}),
        body=(json_values | shaped_objects).map(lambda v: json.dumps(v).encode())
        | st.binary(max_size=200),
        query=st.dictionaries(st.text(max_size=10), st.text(max_size=20), max_size=3),
        credential=st.sampled_from(scene.credentials) | header_text.map(lambda t: "Bearer " + t),
        content_type=content_types,
    )
    def one_request(values: dict[str, str], body: bytes, query: dict[str, str],
                    credential: str | None, content_type: str | None) -> None:
        url = path
        for name, value in values.items():
            url = url.replace("{" + name + "}", value)
        headers = {}
        if credential is not None:
            headers["Authorization"] = credential
        if content_type is not None:
            headers["Content-Type"] = content_type
        before = scene.records()
        response = scene.client.request(
            method, url, params=query, headers=headers,
            content=body if method != "GET" else None,
        )
        assert response.status_code < 500, (method, url, body[:200], response.text[:500])
        if response.status_code >= 400:
            assert scene.records() == before, (method, url, body[:200], response.status_code)

    one_request()
