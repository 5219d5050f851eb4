"""The OpenAPI 3.1 document, built from the wire models and the registered engines.

The service models hold per-game values as ``Any``; here they are narrowed to the union of
every registered engine's ``View`` / ``Action``, and match creation becomes one variant per
(game, player count), so views, moves and options are typed in the document and any request
the schema admits is one the server accepts (except moves the rules refuse at that moment).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, Field, create_model
from pydantic.json_schema import models_json_schema

from service import games
from service.errors import CODES, Problem
from service.games.base import Engine
from service.matches.models import (
    MAX_SEED,
    ActRequest,
    ActResponse,
    CreateMatchRequest,
    CreateMatchResponse,
    GameInfo,
    HandSeatRequest,
    LegalMoves,
    LogEntryOut,
    LogPage,
    MatchState,
    Version,
)

REF = "#/components/schemas/{model}"
MATCH_ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
PROBLEM = "application/problem+json"
SVG_MEDIA_TYPE = "image/svg+xml"


def _union(members: list[Any]) -> Any:
    if not members:
        return dict[str, Any]
    if len(members) == 1:
        return members[0]
    return Union[tuple(members)]  # noqa: UP007 - built at run time


def _camel_id(game_id: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in game_id.replace("-", "_").split("_"))


def _bot_kinds(engine: Engine[Any]) -> tuple[str, ...]:
    """The bot kinds that play ``engine`` (greedy and search need a bot model)."""
    from service.bots.games import model_for

    try:
        model_for(engine)
    except ValueError:
        return ("random",)
    return ("random", "greedy", "search")


def _create_variants(engine: Engine[Any]) -> list[type[BaseModel]]:
    """One request model per player count: the game, the count and the bot seats it admits."""
    variants: list[type[BaseModel]] = []
    game: Any = Literal[engine.id]
    options: Any = engine.Options | None
    for players in range(engine.min_players, engine.max_players + 1):
        seat: Any = Annotated[
            str, Field(pattern="^(" + "|".join(str(n) for n in range(players)) + ")$")
        ]
        count: Any = Literal[players]
        kind: Any = Literal[_bot_kinds(engine)]
        bots: Any = Annotated[
            dict[seat, kind],
            Field(max_length=players - 1, json_schema_extra={"additionalProperties": False}),
        ] | None
        variants.append(
            create_model(
                f"Create{_camel_id(engine.id)}Match{players}",
                __base__=CreateMatchRequest,
                __doc__=f"Create a {engine.title} match for {players} players.",
                game=(game, Field(description="The game id.")),
                players=(count, Field(description="Number of seats.")),
                options=(options, Field(default=None)),
                seed=(
                    Annotated[int, Field(ge=0, le=MAX_SEED)] | None,
                    Field(default=None, description="Seed; omitted: a random one."),
                ),
                bots=(
                    bots,
                    Field(
                        default=None,
                        description="Bot seats: seat number (a string) -> bot kind; "
                        "no token, a worker plays them.",
                    ),
                ),
            )
        )
    return variants


def document_models() -> dict[str, tuple[Any, Any]]:
    """The models of the document, typed with the registered engines: name -> (model, mode)."""
    engines = games.all()
    view: Any = _union([e.View for e in engines])
    action: Any = _union([e.Action for e in engines])
    state = create_model(
        "MatchState", __base__=MatchState,
        view=(view, Field(description="What the caller may see (the game's view).")),
    )
    moves = create_model(
        "LegalMoves", __base__=LegalMoves,
        moves=(list[action], Field(description="Every legal move, postable as `action`.")),
    )
    entry: Any = create_model(
        "LogEntryOut", __base__=LogEntryOut,
        action=(action | None, Field(description="The action, only for the caller's own moves.")),
    )
    page: Any = create_model("LogPage", __base__=LogPage, entries=(list[entry], ...))
    act_response = create_model(
        "ActResponse", __base__=ActResponse,
        state=(state, Field(description="The caller's view (after any bot moves).")),
    )
    act_request = create_model(
        "ActRequest", __base__=ActRequest,
        action=(action, Field(description="One of the moves from legal-moves.")),
        expected_version=(
            Version | None,
            Field(default=None, description="Act only at this version (else 409)."),
        ),
    )
    bot_kind: Any = Literal["random", "greedy", "search"]
    hand_request = create_model(
        "HandSeatRequest", __base__=HandSeatRequest,
        kind=(bot_kind,
              Field(description="The bot that takes the seat over (greedy and search: only "
                    "for games with a bot model, else 422 bad_bots).")),
    )
    variants = [v for e in engines for v in _create_variants(e)]
    create: Any = _union(variants) if variants else CreateMatchRequest
    create_request = create_model(
        "CreateMatchRequestBody", __base__=BaseModel, body=(create, ...)
    )
    return {
        "GameInfo": (GameInfo, "serialization"),
        "CreateMatchRequestBody": (create_request, "validation"),
        "CreateMatchResponse": (CreateMatchResponse, "serialization"),
        "MatchState": (state, "serialization"),
        "LegalMoves": (moves, "serialization"),
        "ActRequest": (act_request, "validation"),
        "ActResponse": (act_response, "serialization"),
        "HandSeatRequest": (hand_request, "validation"),
        "LogPage": (page, "serialization"),
        "Problem": (Problem, "serialization"),
    }


def _require_discriminators(node: Any, schemas: dict[str, Any]) -> None:
    """A tagged union needs its tag: mark each mapped member's tag property required.

    (Actions default their ``type`` tag for Python callers, so pydantic's validation schema
    calls it optional; on the wire the server cannot tell the members apart without it.)
    """
    if isinstance(node, dict):
        discriminator = node.get("discriminator")
        if isinstance(discriminator, dict) and "mapping" in discriminator:
            tag = discriminator["propertyName"]
            for ref in discriminator["mapping"].values():
                target = schemas.get(ref.rsplit("/", 1)[-1])
                if target is not None and tag in target.get("properties", {}):
                    required = target.setdefault("required", [])
                    if tag not in required:
                        required.append(tag)
        for value in node.values():
            _require_discriminators(value, schemas)
    elif isinstance(node, list):
        for value in node:
            _require_discriminators(value, schemas)


def _json(schema_ref: str, description: str = "", *, media: str = "application/json",
          headers: dict[str, Any] | None = None, links: dict[str, Any] | None = None
          ) -> dict[str, Any]:
    response: dict[str, Any] = {
        "description": description or "OK",
        "content": {media: {"schema": {"$ref": f"#/components/schemas/{schema_ref}"}}},
    }
    if headers:
        response["headers"] = headers
    if links:
        response["links"] = links
    return response


def _problems(*statuses: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for status in statuses:
        codes = sorted(code for code, (s, _) in CODES.items() if s == status)
        description = "Problem: " + ", ".join(f"`{c}`" for c in codes) if codes else "Problem"
        if status == 422:
            description += "; or the engine's code of an illegal move"
        response = _json("Problem", description, media=PROBLEM)
        if status == 503:
            response["headers"] = {
                "Retry-After": {"description": "Seconds to wait.", "schema": {"type": "string"}}
            }
        out[str(status)] = response
    return out


MATCH_ID_PARAM = {
    "name": "matchId",
    "in": "path",
    "required": True,
    "description": "The match id from POST /v1/matches.",
    "schema": {"type": "string", "pattern": MATCH_ID_PATTERN},
}
ETAG = {"ETag": {"description": 'The match version, quoted ("7").', "required": True,
                 "schema": {"type": "string"}}}
# Seat tokens travel as an explicit `Authorization` header parameter rather than a security
# scheme: reads accept no token (spectator), and the stateful tests' links must be able to
# carry the token from the create response into later requests (a link-supplied credential
# is not recognised as one by schemathesis' auth checks).
AUTH_PARAM = {
    "name": "Authorization",
    "in": "header",
    "required": False,
    "description": "`Bearer <seat token>`; omitted: a spectator (reads only).",
    "schema": {"type": "string"},
}
ACT_AUTH_PARAM = {**AUTH_PARAM, "required": True, "description": "`Bearer <seat token>`."}
AUTH_FROM_CREATE = "Bearer {$response.body#/seats/0/token}"


def _links_from_create() -> dict[str, Any]:
    params = {"path.matchId": "$response.body#/matchId", "header.Authorization": AUTH_FROM_CREATE}
    return {
        name: {"operationId": op, "parameters": params}
        for name, op in [
            ("GetMatch", "getMatch"), ("GetLegalMoves", "getLegalMoves"),
            ("Act", "act"), ("GetLog", "getLog"),
        ]
    }


def _links_same_seat(*targets: str) -> dict[str, Any]:
    params = {
        "path.matchId": "$request.path.matchId",
        "header.Authorization": "$request.header.Authorization",
    }
    return {
        target[0].upper() + target[1:]: {"operationId": target, "parameters": params}
        for target in targets
    }


def _paths() -> dict[str, Any]:
    act_link = {
        "PlayALegalMove": {
            "operationId": "act",
            "parameters": {
                "path.matchId": "$request.path.matchId",
                "header.Authorization": "$request.header.Authorization",
            },
            "requestBody": {"action": "$response.body#/moves/0",
                            "expectedVersion": "$response.body#/version"},
        }
    }
    return {
        "/v1/games": {"get": {
            "operationId": "listGames", "summary": "The catalogue of games.", "tags": ["games"],
            "responses": {"200": {"description": "Every hosted game.", "content": {
                "application/json": {"schema": {"type": "array", "items": {
                    "$ref": "#/components/schemas/GameInfo"}}}}}},
        }},
        "/v1/matches": {"post": {
            "operationId": "createMatch", "summary": "Create a match.", "tags": ["matches"],
            "description": "Returns one secret bearer token per human seat, shown only once.",
            "requestBody": {"required": True, "content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/CreateMatchRequest"}}}},
            "responses": {
                "201": _json("CreateMatchResponse", "Created.", headers={
                    "Location": {"description": "The match URL.", "required": True,
                                 "schema": {"type": "string"}}},
                    links=_links_from_create()),
                **_problems(400, 413, 415, 422, 503),
            },
        }},
        "/v1/matches/{matchId}": {"get": {
            "operationId": "getMatch", "summary": "The match as the caller may see it.",
            "tags": ["matches"],
            "description": "Without a token: the spectator's view.",
            "parameters": [MATCH_ID_PARAM, AUTH_PARAM, {
                "name": "If-None-Match", "in": "header", "required": False,
                "description": "A previous ETag: 304 while the version is unchanged.",
                "schema": {"type": "string"}}],
            "responses": {
                "200": _json("MatchState", "The caller's state.", headers=ETAG,
                             links=_links_same_seat("getLegalMoves", "getLog")),
                "304": {"description": "Not modified.", "headers": ETAG},
                **_problems(401, 404, 410, 503),
            },
        }},
        "/v1/matches/{matchId}/legal-moves": {"get": {
            "operationId": "getLegalMoves", "summary": "The caller's legal moves now.",
            "tags": ["matches"],
            "description": "A spectator (no token) has no moves.",
            "parameters": [MATCH_ID_PARAM, AUTH_PARAM],
            "responses": {
                "200": _json("LegalMoves", "Legal moves.", headers=ETAG, links=act_link),
                **_problems(401, 404, 410, 503),
            },
        }},
        "/v1/matches/{matchId}/actions": {"post": {
            "operationId": "act", "summary": "Play a move.", "tags": ["matches"],
            "parameters": [MATCH_ID_PARAM, ACT_AUTH_PARAM, {
                "name": "If-Match", "in": "header", "required": False,
                "description": "Pin the version (an ETag): 412 when the match moved on.",
                "schema": {"type": "string"}}, {
                "name": "Idempotency-Key", "in": "header", "required": False,
                "description": "A retry with the same key returns the first result.",
                "schema": {"type": "string", "minLength": 1, "maxLength": 255}}],
            "requestBody": {"required": True, "content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/ActRequest"}}}},
            "responses": {
                "200": _json("ActResponse", "Applied.", headers=ETAG,
                             links=_links_same_seat("getMatch", "getLegalMoves", "getLog")),
                **_problems(400, 401, 404, 410, 409, 412, 413, 415, 422, 503),
            },
        }},
        "/v1/matches/{matchId}/seats/{seat}/bot": {"post": {
            "operationId": "handSeatToBot", "summary": "Hand your seat to a bot (you leave).",
            "tags": ["matches"],
            "description": "Authorized by that seat's token, which stops working: from now on "
            "the bot worker plays the seat. Answers the match as a spectator sees it. The "
            "hand-over is a version of its own (a log entry with `seat: null`).",
            "parameters": [MATCH_ID_PARAM, {
                "name": "seat", "in": "path", "required": True, "description": "Your seat.",
                "schema": {"type": "integer", "minimum": 0, "maximum": 15}}, ACT_AUTH_PARAM],
            "requestBody": {"required": True, "content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/HandSeatRequest"}}}},
            "responses": {
                "200": _json("MatchState", "Handed over.", headers=ETAG),
                **_problems(400, 401, 404, 410, 409, 413, 415, 422, 503),
            },
        }},
        "/v1/matches/{matchId}/log": {"get": {
            "operationId": "getLog", "summary": "Versions after `after`, as the caller may see "
            "them.", "tags": ["matches"],
            "parameters": [MATCH_ID_PARAM, AUTH_PARAM, {
                "name": "after", "in": "query", "required": False,
                "schema": {"type": "integer", "minimum": 0, "maximum": MAX_SEED, "default": 0}}],
            "responses": {"200": _json("LogPage", "Log entries."),
                          **_problems(400, 401, 404, 410, 503)},
        }},
        "/v1/matches/{matchId}/events": {"get": {
            "operationId": "streamEvents", "tags": ["matches"],
            "summary": "Server-Sent Events: the caller's state at each new version.",
            "description": "Each event: `event: state`, `id: <version>`, `data: <MatchState "
            "JSON>`. A fresh stream starts with the current state; `Last-Event-ID` (or "
            "`?after=`) replays every later version first. The stream ends after the final "
            "state; 204 when nothing can follow.",
            "parameters": [MATCH_ID_PARAM, AUTH_PARAM, {
                "name": "after", "in": "query", "required": False,
                "schema": {"type": "integer", "minimum": 0, "maximum": MAX_SEED, "default": 0}}, {
                "name": "Last-Event-ID", "in": "header", "required": False,
                "schema": {"type": "string", "pattern": r"^[0-9]{0,15}$"}}],
            "responses": {
                "200": {"description": "An event stream.",
                        "content": {"text/event-stream": {"schema": {"type": "string"}}}},
                "204": {"description": "The match is finished and the caller has seen it all."},
                **_problems(400, 401, 404, 410, 503),
            },
        }},
        **_board_svg_path(),
        "/healthz": {"get": {
            "operationId": "healthz", "summary": "Liveness.", "tags": ["ops"],
            "responses": {"200": {"description": "Alive.", "content": {"application/json": {
                "schema": {"type": "object", "properties": {"status": {"type": "string"}},
                           "required": ["status"]}}}}},
        }},
        "/readyz": {"get": {
            "operationId": "readyz", "summary": "Readiness: the store answers.", "tags": ["ops"],
            "responses": {"200": {"description": "Ready.", "content": {"application/json": {
                "schema": {"type": "object", "properties": {"status": {"type": "string"}},
                           "required": ["status"]}}}}, **_problems(503)},
        }},
        "/metrics": {"get": {
            "operationId": "metrics", "summary": "Prometheus metrics.", "tags": ["ops"],
            "responses": {"200": {"description": "Prometheus text format.", "content": {
                "text/plain": {"schema": {"type": "string"}}}}},
        }},
    }


def build_openapi() -> dict[str, Any]:
    """The OpenAPI 3.1 document for the engines registered now (deterministic)."""
    models = document_models()
    _, top = models_json_schema(list(models.values()), ref_template=REF)
    schemas: dict[str, Any] = dict(top.get("$defs", {}))
    # The create body is a union of variants: publish it under a stable name.
    wrapper = schemas.pop("CreateMatchRequestBody")
    schemas["CreateMatchRequest"] = wrapper["properties"]["body"]
    schemas["CreateMatchRequest"]["title"] = "CreateMatchRequest"
    _require_discriminators(schemas, schemas)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Skyline",
            "version": "1",
            "description": "Matches of New York 1901 and Ginkgopolis over REST. Errors are "
            "RFC 9457 problem details with a stable `code`. See docs/api.md.",
        },
        "servers": [{"url": "/"}],
        "paths": _paths(),
        "components": {
            "schemas": schemas,
        },
    }


def _board_svg_path() -> dict[str, Any]:
    """The path item of ``GET /v1/matches/{matchId}/board.svg`` (an SVG, not JSON)."""
    return {
        "/v1/matches/{matchId}/board.svg": {"get": {
            "operationId": "getBoardSvg", "tags": ["matches"],
            "summary": "The board as an SVG picture of the caller's view.",
            "description": "Drawn from the caller's view only (no token: a spectator's). "
            "`highlight` draws the caller's legal move of that index (as listed by "
            "legal-moves at the same version) distinctly; out of range: 422 "
            "`bad_highlight`.",
            "parameters": [MATCH_ID_PARAM, AUTH_PARAM, {
                "name": "highlight", "in": "query", "required": False,
                "description": "Index of one of the caller's legal moves.",
                "schema": {"type": "integer", "minimum": 0, "maximum": 999_999_999}}, {
                "name": "If-None-Match", "in": "header", "required": False,
                "description": "A previous ETag: 304 while unchanged.",
                "schema": {"type": "string"}}],
            "responses": {
                "200": {
                    "description": "The SVG document.",
                    "headers": {"ETag": {
                        "description": 'The version and highlight, quoted ("7-x", "7-3").',
                        "required": True, "schema": {"type": "string"}}},
                    "content": {SVG_MEDIA_TYPE: {"schema": {"type": "string"}}},
                },
                "304": {"description": "Not modified."},
                **_problems(400, 401, 404, 410, 422, 503),
            },
        }},
    }
