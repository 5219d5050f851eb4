"""Request bodies in the published contract (issue 30 items 3 and 4): every field the server
(and GraphQL) accepts is in the body's schema, and no optional property of any request body
carries a ``default`` (openapi-typescript types a defaulted property as required), checked over
the exported ``openapi/openapi.json`` as well as the document built now."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from service.api.openapi import build_openapi, request_bodies
from service.lobby.invitation_models import InvitationRequest
from service.lobby.models import EnqueueRequest
from service.lobby.table_models import JoinRequest, StartRequest
from service.matches.models import ActRequest, CreateMatchRequest, HandSeatRequest
from service.notify.models import CreateWebhookRequest, UpdateWebhookRequest
from service.players.models import CreatePlayerRequest

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
