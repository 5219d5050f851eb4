"""What client generators read in the OpenAPI document: the seat token as a bearer security
scheme (no ``Authorization`` parameter anywhere), optional body fields without ``default``
(a generator types a defaulted field as always present), and the event stream described
event by event (name, id, and the JSON ``data`` with its schema)."""

from __future__ import annotations

import json
from typing import Any

import jsonschema_rs
import pytest
from starlette.testclient import TestClient

from service.api.openapi import build_openapi
from tests.api.conftest import create, make_app

READS = ("getMatch", "getLegalMoves", "getLog", "streamEvents", "getBoardSvg")
WRITES = ("act", "handSeatToBot")
PUBLIC = ("listGames", "createPlayer", "healthz", "readyz", "metrics")
PLAYER = [{"playerToken": []}, {"playerJwt": []}]
APP = [{"appKey": []}]
SCHEMES = ("seatToken", "playerToken", "playerJwt", "appKey")


def _operations(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {op["operationId"]: op for item in doc["paths"].values() for op in item.values()}


def test_the_seat_token_is_a_bearer_security_scheme(toy_game: None) -> None:
    doc = build_openapi()
    scheme = doc["components"]["securitySchemes"]["seatToken"]
    assert (scheme["type"], scheme["scheme"]) == ("http", "bearer")
    assert scheme["description"]
    operations = _operations(doc)
    for name in SCHEMES:  # issue 16: one bearer scheme per credential
        scheme = doc["components"]["securitySchemes"][name]
        assert (scheme["type"], scheme["scheme"]) == ("http", "bearer"), name
    assert doc["components"]["securitySchemes"]["playerJwt"]["bearerFormat"] == "JWT"
    for name in READS:
        assert operations[name]["security"] == [{}, {"seatToken": []}, *PLAYER, *APP], name
    for name in WRITES:
        assert operations[name]["security"] == [{"seatToken": []}, *PLAYER], name
    for name in PUBLIC:
        assert operations[name]["security"] == [], name
    create = operations["createMatch"]  # credentials optional (issue 30 item 5)
    assert create["security"] == [{}, *APP, *PLAYER]
    assert all(f"`{name}`" in create["description"] for name in ("appKey", "playerToken"))
    for name in ("getMe", "deleteMe", "listMyMatches", "streamPlayerEvents"):
        assert operations[name]["security"] == PLAYER, name
    for name in ("getAppPlayer", "deleteAppPlayer", "listAppPlayerMatches"):
        assert operations[name]["security"] == APP, name
    # Every operation says what it needs (redocly's `security-defined`); one that can answer
    # 401 needs a credential scheme.
    for name, op in operations.items():
        assert "security" in op, name
        if "401" in op["responses"]:
            assert any(s in SCHEMES for req in op["security"] for s in req), name


def test_no_operation_takes_authorization_as_a_parameter(toy_game: None) -> None:
    doc = build_openapi()
    for name, op in _operations(doc).items():
        headers = [p["name"].lower() for p in op.get("parameters", []) if p["in"] == "header"]
        assert "authorization" not in headers, name
    # Nor does a link try to carry it.
    assert "Authorization" not in json.dumps(doc["paths"]).replace(
        "`Authorization: Bearer", "")


def _request_schemas(schemas: dict[str, Any]) -> set[str]:
    seen: set[str] = set()
    todo = ["CreateMatchRequest", "ActRequest", "HandSeatRequest"]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            text = json.dumps(schemas[name])
            todo += [part.split('"')[0] for part in text.split("#/components/schemas/")[1:]]
    return seen


def test_optional_body_fields_have_no_default(toy_game: None) -> None:
    schemas = build_openapi()["components"]["schemas"]
    request = _request_schemas(schemas)
    assert {"ActRequest", "CreateToyMatch2", "ToyOptions"} <= request

    def check(node: Any, where: str) -> None:
        if isinstance(node, dict):
            required = set(node.get("required", ()))
            for name, prop in node.get("properties", {}).items():
                if name not in required:
                    assert "default" not in prop, f"{where}.{name}"
            for key, value in node.items():
                check(value, f"{where}.{key}")
        elif isinstance(node, list):
            for value in node:
                check(value, where)

    for name in request:
        check(schemas[name], name)
    create_toy = schemas["CreateToyMatch2"]
    assert set(create_toy["required"]) == {"game", "players"}
    assert {"options", "seed", "bots"} <= set(create_toy["properties"])
    assert schemas["ActRequest"]["required"] == ["action"]
    # A non-null default is still told, in words.
    assert "Default: `3`" in schemas["ToyOptions"]["properties"]["rounds"]["description"]


def test_the_event_stream_is_described_event_by_event(toy_game: None) -> None:
    doc = build_openapi()
    stream = _operations(doc)["streamEvents"]["responses"]["200"]["content"]
    schema = stream["text/event-stream"]["schema"]
    assert schema == {"$ref": "#/components/schemas/MatchStreamEvent"}
    schemas = doc["components"]["schemas"]
    union = schemas["MatchStreamEvent"]
    assert union["anyOf"] == [{"$ref": f"#/components/schemas/{name}"} for name in
                              ("MatchStateEvent", "MatchPatchEvent", "MatchRevokedEvent",
                               "OtherStreamEvent")]
    assert union["x-extensible-enum"] == ["state", "snapshot", "patch", "revoked"]  # open
    for name, kinds, content in (("MatchStateEvent", {"enum": ["state", "snapshot"]},
                                  "MatchState"),
                                 ("MatchPatchEvent", {"const": "patch"}, "StreamPatch")):
        event = schemas[name]
        assert set(event["required"]) == {"event", "id", "data"}
        assert event["properties"]["event"] == {**kinds, "description": "The event name."}
        data = event["properties"]["data"]
        assert data["contentMediaType"] == "application/json"
        assert data["contentSchema"] == {"$ref": f"#/components/schemas/{content}"}
    revoked = schemas["MatchRevokedEvent"]
    assert set(revoked["required"]) == {"event", "data"} and "id" not in revoked["properties"]
    assert revoked["properties"]["event"]["const"] == "revoked"
    assert revoked["properties"]["data"]["contentSchema"]["required"] == ["code"]
    assert schemas["OtherStreamEvent"]["properties"]["event"]["not"] == {
        "enum": ["state", "snapshot", "patch", "revoked"]}


def _sse(text: str) -> list[dict[str, Any]]:
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields: dict[str, Any] = {}
        for line in block.split("\n"):
            if line and not line.startswith(":"):
                name, _, value = line.partition(":")
                fields[name] = value.removeprefix(" ")
        if "data" in fields:
            events.append(fields)
    return events


@pytest.mark.parametrize("mode", ["full", "patch"])
@pytest.mark.parametrize("seat", [None, 0])
def test_every_served_event_fits_the_published_event_schema(
    toy_game: None, seat: int | None, mode: str
) -> None:
    app = make_app(sse_max_seconds=0.3)
    doc = app.state.openapi

    def validator(name: str) -> Any:
        root = {"$ref": f"#/components/schemas/{name}", "components": doc["components"]}
        return jsonschema_rs.validator_for(root)

    event_schema = validator("MatchStreamEvent")
    data_schema = {"state": validator("MatchState"), "snapshot": validator("MatchState"),
                   "patch": validator("StreamPatch")}
    with TestClient(app) as client:
        match = create(client)
        for _ in range(4):
            state = client.get(match.url).json()
            seat_to_move = min(state["activeSeats"])
            legal = client.get(f"{match.url}/legal-moves",
                               headers=match.auth(seat_to_move)).json()
            answer = client.post(f"{match.url}/actions", json={"action": legal["moves"][0]},
                                 headers=match.auth(seat_to_move))
            assert answer.status_code == 200, answer.text
        headers = {} if seat is None else match.auth(seat)
        events = _sse(client.get(f"{match.url}/events?after=1&mode={mode}",
                                 headers=headers).text)
    assert [e["id"] for e in events] == ["2", "3", "4"]
    expected = ["state"] * 3 if mode == "full" else ["snapshot", "patch", "patch"]
    assert [e["event"] for e in events] == expected
    for event in events:
        event_schema.validate(event)
        data_schema[event["event"]].validate(json.loads(event["data"]))
