"""A small GraphQL test client: HTTP operations, graphql-transport-ws subscriptions, and
generic helpers that select every field of a type and turn a listed move into the
``ActionInput`` that plays it back."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import strawberry
from graphql import (
    GraphQLEnumType,
    GraphQLInterfaceType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLScalarType,
    GraphQLUnionType,
)
from starlette.testclient import TestClient

from service import games
from service.api.graphql.convert import camel, union_members
from service.games.events import event_union_of, members

PROTOCOL = "graphql-transport-ws"


class GraphQLClient:
    """POSTs operations to ``/graphql`` of a Starlette ``TestClient``."""

    def __init__(self, http: TestClient, schema: strawberry.Schema) -> None:
        self.http = http
        self.schema = schema

    def raw(
        self, query: str, variables: dict[str, Any] | None = None, token: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        sent = dict(headers or {})
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        response = self.http.post(
            "/graphql", json={"query": query, "variables": variables or {}}, headers=sent
        )
        assert response.status_code in (200, 400), response.text
        body: dict[str, Any] = response.json()
        return body

    def __call__(
        self, query: str, variables: dict[str, Any] | None = None, token: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """The ``data`` of a successful operation (no GraphQL ``errors`` allowed)."""
        body = self.raw(query, variables, token, headers)
        assert "errors" not in body, body
        data: dict[str, Any] = body["data"]
        return data

    # -- selections built from the schema -----------------------------------------------------

    def selection(self, type_name: str, game: str | None = None, depth: int = 8) -> str:
        """Every field of ``type_name``; of a union, every field of every member (only the
        members of ``game``'s types when given: fields of two games may share a name with
        different types, which GraphQL refuses to merge in one selection)."""
        schema = self.schema._schema
        gql_type = schema.type_map[type_name]
        members = game_type_names(game) if game is not None else None
        if isinstance(gql_type, GraphQLInterfaceType):
            # An interface (Event): its own fields, then every implementation's.
            implementations = schema.get_possible_types(gql_type)
            own = " ".join(name for name in gql_type.fields)
            parts = [
                f"... on {m.name} {{ {_select(m, depth)} }}"
                for m in implementations
                if members is None or m.name in members
            ]
            return " ".join(["__typename", own, *parts])
        return _select(gql_type, depth, members)

    @contextmanager
    def subscribe(
        self, query: str, variables: dict[str, Any], token: str | None = None,
        payload: dict[str, Any] | None = None,
    ) -> Iterator[Subscription]:
        with self.http.websocket_connect("/graphql", subprotocols=[PROTOCOL]) as ws:
            init: dict[str, Any] = {"type": "connection_init"}
            if payload is not None:
                init["payload"] = payload
            elif token is not None:
                init["payload"] = {"authorization": f"Bearer {token}"}
            ws.send_json(init)
            ack = ws.receive_json()
            assert ack["type"] == "connection_ack", ack
            ws.send_json(
                {"id": "1", "type": "subscribe",
                 "payload": {"query": query, "variables": variables}}
            )
            yield Subscription(ws)


class Subscription:
    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.completed = False

    def next(self) -> dict[str, Any]:
        """The ``data`` of the next ``next`` message (pings are answered and skipped)."""
        while True:
            message = self.ws.receive_json()
            if message["type"] == "ping":
                self.ws.send_json({"type": "pong"})
                continue
            if message["type"] == "complete":
                self.completed = True
                raise StopIteration("subscription completed")
            assert message["type"] == "next", message
            payload = message["payload"]
            assert "errors" not in payload, payload
            data: dict[str, Any] = payload["data"]
            return data

    def expect_complete(self) -> None:
        while True:
            message = self.ws.receive_json()
            if message["type"] == "ping":
                continue
            assert message["type"] == "complete", message
            self.completed = True
            return


def _unwrap(gql_type: Any) -> Any:
    while isinstance(gql_type, (GraphQLNonNull, GraphQLList)):
        gql_type = gql_type.of_type
    return gql_type


def game_type_names(game: str) -> set[str]:
    """The names of a game's view, move, options and event types (``UnknownEvent``
    included)."""
    engine = games.get(game)
    found = union_members(engine.Action)
    assert found is not None
    event_union = event_union_of(engine)
    events = [m.__name__ for m in members(event_union)] if event_union is not None else []
    return {engine.View.__name__, engine.Options.__name__,
            *(member.__name__ for member in found[0]), *events, "UnknownEvent"}


def _select(gql_type: Any, depth: int, only: set[str] | None = None) -> str:
    if depth <= 0:
        raise AssertionError("selection too deep")
    if isinstance(gql_type, (GraphQLUnionType, GraphQLInterfaceType)):
        members = (
            gql_type.types if isinstance(gql_type, GraphQLUnionType) else []
        )
        parts = ["__typename"]
        parts += [
            f"... on {m.name} {{ {_select(m, depth)} }}"
            for m in members
            if only is None or m.name in only
        ]
        return " ".join(parts)
    assert isinstance(gql_type, GraphQLObjectType), gql_type
    parts = []
    for name, field in gql_type.fields.items():
        inner = _unwrap(field.type)
        if isinstance(inner, (GraphQLScalarType, GraphQLEnumType)):
            parts.append(name)
        else:
            parts.append(f"{name} {{ {_select(inner, depth - 1)} }}")
    return " ".join(parts)


def move_input(game: str, move: dict[str, Any]) -> dict[str, Any]:
    """The ``ActionInput`` that plays ``move`` (a ``Move`` selected with ``selection``)."""
    payload = {k: _strip(v) for k, v in move.items() if k not in ("__typename", "type")}
    return {camel(game): {camel(move["type"]): payload or True}}


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k != "__typename"}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True)
