"""The operation table (``service.api.operations``): one declaration serves an operation
over REST and GraphQL, publishes it in the OpenAPI document with its codes, and charges its
budget; each operation id is written once in ``service/api/``."""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import graphql
import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from service.api.graphql import build_schema
from service.api.graphql import fields as graphql_fields
from service.api.operations import OPERATIONS, Context, Operation, Param, Reply
from service.api.operations.base import NO_STORE, PUBLIC, query
from service.api.problem_codes import OPERATION_CODES
from service.api.rate_limits import Budgets, budget_of
from service.api.rest.http import query_count
from service.app import Settings, create_app
from service.limits import LimitSettings
from service.store.sqlite import SqliteStore

API = Path(__file__).resolve().parents[2] / "service" / "api"


@dataclasses.dataclass
class Echo:
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"echo": self.text}


async def echo(context: Context) -> Echo:
    return Echo(context.path["word"] * (context.query["times"] or 1))


TOY = Operation(
    id="echoToy", method="GET", path="/v1/toys/{word}", tag="toys",
    summary="The word, repeated.", codes=("malformed",), budget="stream",
    security=PUBLIC, graphql=query(returns=Echo),
    params=(Param("word", "path", {"type": "string"}, "A word."),
            Param("times", "query", {"type": "integer", "minimum": 0}, parse=query_count)),
    reply=Reply(None, "The echo.", content={"application/json": {"schema": {
        "type": "object", "properties": {"echo": {"type": "string"}}}}}),
    call=echo, headers=NO_STORE,
)


def test_a_declared_operation_is_served_published_and_charged(toy_game: None) -> None:
    with TestClient(_app_with(TOY)) as client:
        answer = client.get("/v1/toys/hi?times=3")
        assert answer.status_code == 200
        assert answer.json() == {"echo": "hihihi"}
        assert answer.headers["cache-control"] == "no-store"
        assert answer.headers["ratelimit-policy"].startswith('"stream"')
        bad = client.get("/v1/toys/hi?times=x")
        assert (bad.status_code, bad.json()["code"]) == (400, "malformed")
        item = client.get("/openapi.json").json()["paths"]["/v1/toys/{word}"]["get"]
    assert item["operationId"] == "echoToy"
    assert item["summary"] == "The word, repeated."
    assert [p["name"] for p in item["parameters"]][:2] == ["word", "times"]
    assert item["responses"]["400"]["x-problem-codes"] == ["malformed"]
    assert item["responses"]["429"]["x-problem-codes"] == ["rate_limited"]
    assert "Retry-After" in item["responses"]["429"]["headers"]
    budgets = Budgets.of([*OPERATIONS, TOY])
    scope = {"type": "http", "method": "GET", "path": "/v1/toys/hi"}
    assert budget_of(scope, budgets) == "stream"
    assert budget_of(scope) == "read"  # not in the table: the default


TOY_QUERY = "query($w: ID!) { echoToy(word: $w, times: 2) { ... on Echo { text } } }"


def test_a_declared_operation_is_a_graphql_field_charged_to_its_budget(
    toy_game: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    charged: list[str] = []

    async def charge(limits: Any, scope: MutableMapping[str, Any], budget: str) -> None:
        charged.append(budget)

    monkeypatch.setattr(graphql_fields, "charge", charge)
    with TestClient(_app_with(TOY)) as client:
        answer = client.post("/graphql", json={"query": TOY_QUERY, "variables": {"w": "ho"}})
    assert answer.json() == {"data": {"echoToy": {"text": "hoho"}}}
    assert charged == ["stream"]
    sdl = str(build_schema([*OPERATIONS, TOY]))
    assert ('"""The word, repeated."""\n'
            "  echoToy(word: ID!, times: Int = null): EchoToyResult!") in sdl
    assert "union EchoToyResult = Echo | BadRequest" in sdl


def test_an_operation_left_out_of_the_table_leaves_graphql_too(toy_game: None) -> None:
    with TestClient(_app_with(without="listGames")) as client:
        answer = client.post("/graphql", json={"query": "{ games { id } }"}).json()
    assert "Cannot query field 'games'" in answer["errors"][0]["message"]
    sdl = str(build_schema([op for op in OPERATIONS if op.id != "getGame"]))
    assert "GameCatalogueResult" not in sdl and "  games: [Game!]!" in sdl


def _app_with(*extra: Operation, without: str = "") -> Starlette:
    """The app serving the table, plus ``extra``, less the operation ``without``."""
    operations = [*(op for op in OPERATIONS if op.id != without), *extra]
    return create_app(SqliteStore(":memory:"), operations=operations,
                      settings=Settings(limits=LimitSettings(enabled=True)))


def test_an_operation_left_out_of_the_table_is_gone(toy_game: None) -> None:
    with TestClient(_app_with(without="getLegalMoves")) as client:
        assert client.get("/v1/matches/m1/legal-moves").status_code == 404
        assert client.get("/v1/matches/m1").status_code == 404  # still routed: no match
        doc = client.get("/openapi.json").json()
    assert "/v1/matches/{matchId}/legal-moves" not in doc["paths"]
    assert "/v1/matches/{matchId}" in doc["paths"]


def test_codes_and_budgets_are_the_table_s() -> None:
    for operation in OPERATIONS:
        assert OPERATION_CODES[operation.id] == (*operation.codes, "rate_limited")
        scope = {"type": "http", "method": operation.method,
                 "path": operation.path.replace("{", "").replace("}", "")}
        assert budget_of(scope) == operation.budget, operation.id


def _budget_names(tree: ast.AST) -> set[int]:
    """The nodes that name a budget, not an operation (``budget=...``, ``charge(..., b)``,
    ``Budget = ...``, ``*_BUDGET = ...``): the ``act`` budget shares the ``act`` operation's
    name."""
    roots: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "budget":
            roots.append(node.value)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "charge":
            roots += node.args[2:]
        elif isinstance(node, ast.Assign) and any(
                getattr(t, "id", "").upper().endswith("BUDGET") for t in node.targets):
            roots.append(node.value)
    return {id(inner) for root in roots for inner in ast.walk(root)}


def _literals(path: Path) -> set[str]:
    """The string literals of ``path``, budget names left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    budgets = _budget_names(tree)
    return {node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in budgets}


def test_each_operation_id_is_written_in_exactly_one_file_of_service_api() -> None:
    files = {path: _literals(path) for path in API.rglob("*.py")}
    for operation in OPERATIONS:
        found = [str(path.relative_to(API)) for path, literals in files.items()
                 if operation.id in literals]
        assert len(found) == 1, (operation.id, found)


def test_every_query_and_mutation_of_the_table_is_a_graphql_field() -> None:
    schema = graphql.build_schema(str(build_schema()))
    roots = {"query": schema.query_type, "mutation": schema.mutation_type}
    generated = 0
    for operation in OPERATIONS:
        kind, name = operation.graphql.kind, graphql_fields.field_name(operation)
        if kind in roots:
            root: Any = roots[kind]
            assert name in root.fields, name
            generated += not operation.graphql.hand_written
    assert generated >= 25
