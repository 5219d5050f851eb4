"""Request bodies in the published contract (issue 30 items 3 and 4): every field the server
(and GraphQL) accepts is in the body's schema, and no optional property of any request body
carries a ``default`` (openapi-typescript types a defaulted property as required), checked over
the exported ``openapi/openapi.json`` as well as the document built now."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from pydantic import BaseModel

from service.api.openapi import build_openapi, request_bodies
from service.invitations.models import InvitationRequest
from service.matches.models import ActRequest, CreateMatchRequest, HandSeatRequest
from service.players.models import CreatePlayerRequest
from service.queue.models import EnqueueRequest
from service.tables.models import JoinRequest, StartRequest
from service.webhooks.models import CreateWebhookRequest, UpdateWebhookRequest

EXPORTED = Path(__file__).resolve().parents[2] / "openapi" / "openapi.json"

SERVER_BODIES: dict[str, type[BaseModel]] = {
    "createMatch": CreateMatchRequest,
    "act": ActRequest,
    "handSeatToBot": HandSeatRequest,
    "createPlayer": CreatePlayerRequest,
    "enqueue": EnqueueRequest,
    "joinMatch": JoinRequest,
    "startMatch": StartRequest,
    "createInvitation": InvitationRequest,
    "createWebhook": CreateWebhookRequest,
    "updateWebhook": UpdateWebhookRequest,
}
"""Each operation's request body as the server reads it (the model its handler validates)."""


def _exported() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(EXPORTED.read_text())
    return doc


def _operations(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {op["operationId"]: op for item in doc["paths"].values() for op in item.values()}


def _resolve(node: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = schemas[node["$ref"].rsplit("/", 1)[-1]]
    return node


def _objects(node: dict[str, Any], schemas: dict[str, Any]) -> list[dict[str, Any]]:
    """The object schemas a body may be: the members of its unions, each resolved."""
    node = _resolve(node, schemas)
    members = node.get("anyOf") or node.get("oneOf")
    if members:
        return [o for m in members for o in _objects(m, schemas)]
    return [node]


def _reachable(names: list[str], schemas: dict[str, Any]) -> set[str]:
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        text = json.dumps(schemas[name])
        todo += [part.split('"')[0] for part in text.split("#/components/schemas/")[1:]]
    return seen


def _defaults(node: Any, where: str) -> list[str]:
    """Where an optional property carries a ``default``."""
    found: list[str] = []
    if isinstance(node, dict):
        required = set(node.get("required", ()))
        for name, prop in node.get("properties", {}).items():
            if name not in required and isinstance(prop, dict) and "default" in prop:
                found.append(f"{where}.{name} (default {prop['default']!r})")
        for key, value in node.items():
            found += _defaults(value, f"{where}.{key}")
    elif isinstance(node, list):
        for value in node:
            found += _defaults(value, where)
    return found


@pytest.mark.parametrize("source", ["exported", "built"])
def test_no_request_body_property_carries_a_default(source: str, toy_game: None) -> None:
    doc = _exported() if source == "exported" else build_openapi()
    schemas = doc["components"]["schemas"]
    bodies = request_bodies(doc["paths"])
    # Every operation with a body is covered, those the issue names among them.
    assert {"CreatePlayerRequest", "EnqueueRequest", "JoinRequest", "InvitationRequest",
            "CreateMatchRequest", "ActRequest", "StartRequest"} <= set(bodies)
    assert len(bodies) == len(SERVER_BODIES)
    reachable = _reachable(bodies, schemas)
    found = [hit for name in sorted(reachable) for hit in _defaults(schemas[name], name)]
    assert found == []
    # What the server does for an omitted field is still told, in words.
    join = schemas["JoinRequest"]["properties"]
    assert "default" not in join["seat"] and "default" not in join["invite"]


@pytest.mark.parametrize("source", ["exported", "built"])
def test_every_field_the_server_accepts_is_in_the_contract(source: str,
                                                            toy_game: None) -> None:
    doc = _exported() if source == "exported" else build_openapi()
    schemas = doc["components"]["schemas"]
    operations = _operations(doc)
    assert {name for name, op in operations.items() if "requestBody" in op} == set(
        SERVER_BODIES)
    for operation, model in SERVER_BODIES.items():
        body = operations[operation]["requestBody"]["content"]["application/json"]["schema"]
        accepted = {f.alias or name for name, f in model.model_fields.items()}
        for variant in _objects(body, schemas):
            published = set(variant.get("properties", {}))
            if operation == "createMatch":
                # A variant is one way to create: `players` + `bots`, or `seats`.
                accepted_here = accepted - ({"bots"} if "seats" in published else {"seats"})
            else:
                accepted_here = accepted
            missing = accepted_here - published
            assert not missing, f"{operation} ({variant.get('title')}) lacks {missing}"
            if variant.get("additionalProperties") is False:
                assert published <= accepted, f"{operation}: {published - accepted}"


def test_graphql_create_match_takes_no_field_the_contract_lacks() -> None:
    """GraphQL's ``createMatch`` and REST's body are one request: every argument GraphQL
    takes is a property of every create variant (``gameOptions`` is REST's ``options``,
    typed per game in both)."""
    from service.api.graphql.schema import build_schema

    mutation = build_schema()._schema.mutation_type
    assert mutation is not None
    arguments = set(mutation.fields["createMatch"].args)
    assert {"timeControl", "onTimeout"} <= arguments
    fields = (arguments - {"gameOptions"}) | {"options"}
    schemas = _exported()["components"]["schemas"]
    variants = _objects(schemas["CreateMatchRequest"], schemas)
    assert len(variants) == 16  # New York 2-4, Ginkgopolis 1-5 players: plain and seated
    for variant in variants:
        published = set(variant["properties"])
        way = {"bots"} if "seats" in published else {"seats"}  # the other way to create
        assert fields - way <= published, (variant["title"], fields - way - published)


@pytest.mark.parametrize("source", ["exported", "built"])
def test_a_timed_match_is_created_from_the_contract(source: str, toy_game: None) -> None:
    """As a generated client would: a body the published schema validates, with a time
    control and a timeout policy, is accepted and the match is timed."""
    from starlette.testclient import TestClient

    from tests.api.conftest import make_app

    doc = _exported() if source == "exported" else build_openapi()
    schema = {"$ref": "#/components/schemas/CreateMatchRequest",
              "components": doc["components"]}
    validator = jsonschema_rs.validator_for(schema)
    bodies = [
        {"game": "ny1901", "players": 2, "seed": 3,
         "timeControl": {"live": {"baseSeconds": 300, "incrementSeconds": 5}},
         "onTimeout": {"policy": "bot", "bot": "random"}},
        {"game": "ny1901", "players": 2,
         "timeControl": {"correspondence": {"secondsPerMove": 86400}},
         "onTimeout": {"policy": "forfeit"}},
    ]
    client = TestClient(make_app())
    for body in bodies:
        assert validator.is_valid(body), list(validator.iter_errors(body))
        answer = client.post("/v1/matches", json=body)
        assert answer.status_code == 201, answer.text
        state = client.get(f"/v1/matches/{answer.json()['matchId']}").json()
        assert state["timeControl"] == {
            key: {**value, **({"incrementSeconds": 0} if "live" in body["timeControl"]
                              and "incrementSeconds" not in value else {})}
            for key, value in body["timeControl"].items()}
        assert state["onTimeout"]["policy"] == body["onTimeout"]["policy"]
    # A field nobody accepts is still refused by the contract.
    assert not validator.is_valid({"game": "ny1901", "players": 2, "clock": 5})
