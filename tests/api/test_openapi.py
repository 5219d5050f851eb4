"""The OpenAPI document: typed per game (no opaque views or moves), deterministic, complete."""

from __future__ import annotations

import json
from typing import Any

from service import games
from service.api.openapi import build_openapi
from tests.api.conftest import TOY


def _refs(node: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        if "$ref" in node:
            found.add(node["$ref"].rsplit("/", 1)[-1])
        for value in node.values():
            found |= _refs(value)
    elif isinstance(node, list):
        for value in node:
            found |= _refs(value)
    return found


def _reachable(node: Any, schemas: dict[str, Any]) -> set[str]:
    seen: set[str] = set()
    todo = _refs(node)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo |= _refs(schemas.get(name, {}))
    return seen


def test_views_moves_and_options_are_typed_per_game(toy_game: None) -> None:
    doc = build_openapi()
    schemas = doc["components"]["schemas"]
    for engine in games.all():
        view = engine.View.__name__
        assert view in _refs(schemas["MatchState"]["properties"]["view"]), engine.id
        assert engine.Options.__name__ in _reachable(schemas["CreateMatchRequest"], schemas)
    moves = _reachable(schemas["LegalMoves"]["properties"]["moves"], schemas)
    assert {"ToyDraw", "ToyPass", "ToyPlay"} <= moves
    # Every tagged union names its tag as required, so a client can always send it.
    assert "type" in schemas["ToyPass"]["required"]


def test_the_document_is_deterministic_and_lists_every_route(toy_game: None) -> None:
    first = json.dumps(build_openapi(), sort_keys=True)
    assert first == json.dumps(build_openapi(), sort_keys=True)
    doc = json.loads(first)
    assert doc["openapi"] == "3.1.0"
    operations = [op for path in doc["paths"].values() for op in path.values()]
    ids = [op["operationId"] for op in operations]
    assert len(ids) == len(set(ids))
    assert {"listGames", "createMatch", "getMatch", "getLegalMoves", "act", "getLog",
            "streamEvents", "healthz", "readyz", "metrics"} <= set(ids)
    for op in operations:
        for status, response in op["responses"].items():
            if status.startswith(("4", "5")):
                assert "application/problem+json" in response["content"]
    create = doc["components"]["schemas"]["CreateMatchRequest"]
    assert create["title"] == "CreateMatchRequest"
    assert f"Create{TOY.title()}Match2" in _refs(create)
