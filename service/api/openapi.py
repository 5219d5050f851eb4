"""The OpenAPI 3.1 document, built from the operation table (``service.api.operations``:
each operation's path item), the wire models and the registered engines; here only what is
not per operation: components (schemas, security schemes, headers), info, and what every
operation shares (problems, languages, rate-limit headers).

The service models hold per-game values as ``Any``; here they are narrowed to the union of
every registered engine's ``View`` / ``Action``, and match creation becomes one variant per
(game, player count), so views, moves and options are typed in the document and any request
the schema admits is one the server accepts (except moves the rules refuse at that moment).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, Field, create_model
from pydantic.json_schema import models_json_schema

from service import games
from service.api import problem_codes
from service.api.operations import OPERATIONS, Operation
from service.api.operations.base import (
    APP_KEY,
    PLAYER_JWT,
    PLAYER_TOKEN,
    SEAT_TOKEN,
)
from service.catalogue import catalogue_models
from service.errors import Problem
from service.games.base import Engine
from service.invitations.models import (
    Invitation as InvitationOut,
)
from service.invitations.models import (
    InvitationInfo,
    InvitationRequest,
    PlayerInvitationsPage,
    SpectatorToken,
)
from service.matches.models import (
    MAX_SEED,
    SEED_DESCRIPTION,
    ActRequest,
    ActResponse,
    CreateMatchBase,
    CreateMatchRequest,
    CreateMatchResponse,
    GameInfo,
    HandSeatRequest,
    InputModel,
    LegalMoves,
    LogEntryOut,
    LogPage,
    MatchState,
    ReclaimSeatResponse,
    SeatRequest,
    SeatToken,
    StreamPatch,
    StreamTicket,
    Version,
)
from service.players.models import (
    FEED_KINDS,
    CreatePlayerRequest,
    DeletedPlayer,
    FeedEvent,
    MyMatchesPage,
    PlayerCreated,
    PlayerOut,
)
from service.queue.models import EnqueueRequest, QueueTicket
from service.tables.models import (
    JoinRequest,
    LivePage,
    LobbyPage,
    StartRequest,
)
from service.webhooks.models import (
    CreateWebhookRequest,
    DeliveriesPage,
    PingQueued,
    UpdateWebhookRequest,
    WebhookCreated,
    WebhookList,
    WebhookSecret,
)
from service.webhooks.models import Webhook as WebhookOut

REF = "#/components/schemas/{model}"
PROBLEM = "application/problem+json"

REVOKED_CODE_DESCRIPTION = (
    "The problem code: `seat_handed_to_bot` (the seat went to a bot: a hand-over, a timeout, "
    "a resignation), `credential_revoked` (the seat's token renewed, its player gone), or "
    "`token_expired` for a stream opened with an app-signed JWT that expired since (more may "
    "be added; docs/codes.md)."
)


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


PER_VARIANT = frozenset({"game", "players", "options", "seed", "bots", "seats"})
"""The create fields each variant types itself (per game and player count); every other
field of ``CreateMatchRequest`` is copied into each variant as the server has it."""


def _shared_create_fields() -> dict[str, Any]:
    """Every field the server accepts on a new match beyond those typed per variant
    (``visibility``, ``name``, ``labels``, ``timeControl``, ``onTimeout``, and any added
    later), as the request model has them."""
    fields = CreateMatchRequest.model_fields
    return {name: (field.annotation, field)
            for name, field in fields.items() if name not in PER_VARIANT}


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
                __base__=CreateMatchBase,
                __doc__=f"Create a {engine.title} match for {players} players.",
                game=(game, Field(description="The game id.")),
                players=(count, Field(description="Number of seats.")),
                options=(options, Field(default=None)),
                seed=(
                    Annotated[int, Field(ge=0, le=MAX_SEED)] | None,
                    Field(default=None, description=SEED_DESCRIPTION),
                ),
                bots=(
                    bots,
                    Field(
                        default=None,
                        description="Bot seats: seat number (a string) -> bot kind; "
                        "no token, a worker plays them.",
                    ),
                ),
                **_shared_create_fields(),
            )
        )
        variants.append(
            create_model(
                f"Create{_camel_id(engine.id)}SeatedMatch{players}",
                __base__=InputModel,
                __doc__=f"Create a {engine.title} match for {players} players, naming who "
                "sits in each seat (players, an app's users, bots).",
                game=(game, Field(description="The game id.")),
                players=(count | None, Field(default=None, description="Number of seats "
                                             "(optional: the length of seats).")),
                options=(options, Field(default=None)),
                seed=(
                    Annotated[int, Field(ge=0, le=MAX_SEED)] | None,
                    Field(default=None, description=SEED_DESCRIPTION),
                ),
                seats=(
                    list[SeatRequest],
                    Field(min_length=players, max_length=players,
                          description="Who sits in each seat, in seat order: a player "
                          "(`me`: the caller), an app's user, a bot, or an open seat (the "
                          "match then waits for players: docs/lobby.md)."),
                ),
                **_shared_create_fields(),
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
        view=(view | None, Field(description="What the caller may see (the game's view); "
                                 "null while the match waits for players and once it is "
                                 "cancelled.")),
    )
    moves = create_model(
        "LegalMoves", __base__=LegalMoves,
        moves=(list[action], Field(description="Every legal move, postable as `action`.")),
    )
    # Events: the union of each game's typed events, then UnknownEvent (an open list).
    from service.games.events import any_event

    event: Any = any_event("EventOut", engines)
    entry: Any = create_model(
        "LogEntryOut", __base__=LogEntryOut,
        action=(action | None, Field(description=LogEntryOut.model_fields["action"].description)),
        events=(list[event], Field(description="What the move caused, as the caller may see "
                                   "it (docs/events.md).")),
    )
    page: Any = create_model("LogPage", __base__=LogPage, entries=(list[entry], ...))
    act_response = create_model(
        "ActResponse", __base__=ActResponse,
        state=(state, Field(description="The caller's view right after the caller's move, "
                            "before any bot moves it lets come (those follow as new "
                            "versions).")),
        events=(list[event], Field(description="What the caller's move caused, as the caller "
                                   "may see it (docs/events.md).")),
    )
    act_request = create_model(
        "ActRequest", __base__=ActRequest,
        action=(action, Field(description="One of the moves from legal-moves.")),
        expected_version=(
            Version | None,
            Field(default=None, description="Act only at this version (else 409)."),
        ),
    )
    reclaim_response = create_model(
        "ReclaimSeatResponse", __base__=ReclaimSeatResponse,
        state=(state, Field(description="The match as the seat sees it.")),
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
        "StreamTicket": (StreamTicket, "serialization"),
        "SeatToken": (SeatToken, "serialization"),
        "ReclaimSeatResponse": (reclaim_response, "serialization"),
        "CreatePlayerRequest": (CreatePlayerRequest, "validation"),
        "PlayerCreated": (PlayerCreated, "serialization"),
        "PlayerOut": (PlayerOut, "serialization"),
        "DeletedPlayer": (DeletedPlayer, "serialization"),
        "MyMatchesPage": (MyMatchesPage, "serialization"),
        "PlayerFeedEventBody": (_feed_event_body(), "serialization"),
        "EnqueueRequest": (EnqueueRequest, "validation"),
        "QueueTicket": (QueueTicket, "serialization"),
        "JoinRequest": (JoinRequest, "validation"),
        "StartRequest": (StartRequest, "validation"),
        "LobbyPage": (LobbyPage, "serialization"),
        "InvitationRequest": (InvitationRequest, "validation"),
        "Invitation": (InvitationOut, "serialization"),
        "InvitationInfo": (InvitationInfo, "serialization"),
        "SpectatorToken": (SpectatorToken, "serialization"),
        "PlayerInvitationsPage": (PlayerInvitationsPage, "serialization"),
        "LivePage": (LivePage, "serialization"),
        "CreateWebhookRequest": (CreateWebhookRequest, "validation"),
        "UpdateWebhookRequest": (UpdateWebhookRequest, "validation"),
        "Webhook": (WebhookOut, "serialization"),
        "WebhookCreated": (WebhookCreated, "serialization"),
        "WebhookList": (WebhookList, "serialization"),
        "WebhookSecret": (WebhookSecret, "serialization"),
        "PingQueued": (PingQueued, "serialization"),
        "DeliveriesPage": (DeliveriesPage, "serialization"),
        "LogPage": (page, "serialization"),
        "StreamPatch": (StreamPatch, "serialization"),
        "Problem": (Problem, "serialization"),
        **{m.__name__: (m, "serialization") for m in catalogue_models()},
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


def _problems(codes: tuple[str, ...], *, refuses: bool = False) -> dict[str, Any]:
    """The problem responses of an operation answering ``codes``: per status, its codes,
    in the description and as ``x-problem-codes``; on an operation that asks the rules
    (``refuses``), 422 adds the games' ``x-refusal-codes``."""
    out: dict[str, Any] = {}
    for status in problem_codes.statuses_of(codes, refuses):
        listed = problem_codes.codes_of(codes, status)
        description = "Problem: " + ", ".join(f"`{c}`" for c in listed) if listed else "Problem"
        if status == 422 and refuses:
            description += (
                "; or the rules refuse the move: the game's refusal code (`x-refusal-codes`, "
                "docs/codes.md)"
            )
        description += ". Tolerate codes not listed here (docs/api.md)."
        response = _json("Problem", description, media=PROBLEM)
        if status == 503:
            response["headers"] = {
                "Retry-After": {"description": "Seconds to wait.", "schema": {"type": "string"}}
            }
        response["x-problem-codes"] = listed
        if status == 422 and refuses:
            response["x-refusal-codes"] = problem_codes.refusal_extension()
        out[str(status)] = response
    return out


def operation_item(operation: Operation) -> dict[str, Any]:
    """The OpenAPI operation object of ``operation``, from its declaration."""
    item: dict[str, Any] = {
        "operationId": operation.id, "summary": operation.summary, "tags": [operation.tag],
        "security": [dict(s) for s in operation.security],
        "responses": {str(operation.status): operation.reply.document(),
                      **operation.more,
                      **_problems(problem_codes.with_rate_limited(operation.codes),
                                  refuses=operation.refusals)},
    }
    if operation.description:
        item["description"] = operation.description
    if operation.params:
        item["parameters"] = [p.document() for p in operation.params]
    if operation.body is not None:
        item["requestBody"] = {"required": operation.body_required, "content": {
            "application/json": {"schema": {"$ref": REF.format(model=operation.body.__name__)}}}}
    return item


def operation_paths(operations: Sequence[Operation]) -> dict[str, Any]:
    """The path items of ``operations``."""
    paths: dict[str, Any] = {}
    for operation in operations:
        paths.setdefault(operation.path, {})[operation.method.lower()] = operation_item(operation)
    return paths


def _problem_schema(schemas: dict[str, Any]) -> None:
    """``Problem.code``: a string (never an ``enum``: a new code must not break a generated
    client), its known values in the description and in ``x-extensible-enum``."""
    code = schemas["Problem"]["properties"]["code"]
    known = problem_codes.known_codes()
    code["description"] = (
        "Stable, machine-readable; branch on it. Known values (more may be added: tolerate "
        "unknown ones; docs/codes.md): " + ", ".join(f"`{c}`" for c in known) + "."
    )
    code["x-extensible-enum"] = known


SECURITY_SCHEMES = {
    SEAT_TOKEN: {
        "type": "http",
        "scheme": "bearer",
        "bearerFormat": "opaque",
        "description": "A seat token `sky_…` from `POST /v1/matches` (`seats[].token`, shown "
        "once), sent as `Authorization: Bearer <token>`. It grants one seat of one match. "
        "Reads accept no token (a spectator's view); a header that is not `Bearer <token>`, "
        "or a token that is no seat of the match, is 401 `unauthorized`.",
    },
    PLAYER_TOKEN: {
        "type": "http",
        "scheme": "bearer",
        "bearerFormat": "opaque",
        "description": "A guest player's token `skp_…` from `POST /v1/players` (shown once). "
        "It acts for the player's seat in every match the player sits in; in a match "
        "without its seat it reads as a spectator and writes get 403 `forbidden`. A deleted "
        "player's token is 401 `credential_revoked`.",
    },
    PLAYER_JWT: {
        "type": "http",
        "scheme": "bearer",
        "bearerFormat": "JWT",
        "description": "A JWT the app's backend signs for one of its users: `iss` = the "
        "app's `appId`, `sub` = the user id, `aud` = the deployment's audience (default "
        "`skyline`), `exp`, `iat` (at most 24 h apart), optional `name`, and `kid` in the "
        "header; HS256 with the app's secret or RS256/ES256/EdDSA against its JWKS. It "
        "acts like a player token for that user's player (created on first use). Refusals: "
        "`token_expired`, `token_not_yet_valid`, `token_bad_signature`, `token_unknown_key`, "
        "`token_bad_audience`, `token_bad_issuer`, `token_too_long_lived`, "
        "`malformed_token` (docs/players.md).",
    },
    APP_KEY: {
        "type": "http",
        "scheme": "bearer",
        "bearerFormat": "opaque",
        "description": "An app's server-side API key `ska_…` (`skyline apps add`; never ship "
        "it in a browser or a mobile app). It creates matches for the app's players, reads "
        "any of the app's matches as a spectator, and reaches `/v1/apps/me/...`. A revoked "
        "key is 401 `credential_revoked`.",
    },
}

def _feed_event_body() -> type[BaseModel]:
    """A wrapper whose one field is the player feed's event union (published under the
    union's own name, ``PlayerFeedEvent``)."""
    event: Any = Annotated[FeedEvent, Field(discriminator="kind")]
    return create_model("PlayerFeedEventBody", __base__=BaseModel, body=(event, ...))


def build_openapi(operations: Sequence[Operation] = OPERATIONS) -> dict[str, Any]:
    """The OpenAPI 3.1 document of ``operations`` for the engines registered now
    (deterministic)."""
    models = document_models()
    _, top = models_json_schema(list(models.values()), ref_template=REF)
    schemas: dict[str, Any] = dict(top.get("$defs", {}))
    # The create body is a union of variants: publish it under a stable name.
    wrapper = schemas.pop("CreateMatchRequestBody")
    schemas["CreateMatchRequest"] = wrapper["properties"]["body"]
    schemas["CreateMatchRequest"]["title"] = "CreateMatchRequest"
    _require_discriminators(schemas, schemas)
    _problem_schema(schemas)
    paths = operation_paths(operations)
    paths = _declare_languages(_declare_rate_limits(paths))
    _optional_without_default(schemas, request_bodies(paths))
    schemas.update(_stream_event_schemas())
    feed = schemas.pop("PlayerFeedEventBody")["properties"]["body"]
    feed["title"] = "PlayerFeedEvent"
    feed["description"] = ("An event of the player feed; `kind` names it (an open list: "
                           "ignore kinds you do not know).")
    schemas["PlayerFeedEvent"] = feed
    schemas.update(_player_stream_schemas())
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Skyline",
            "version": "1",
            "description": "Matches of New York 1901 and Ginkgopolis over REST. Errors are "
            "RFC 9457 problem details with a stable `code`. See docs/api.md.",
        },
        "servers": [{"url": "/"}],
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": SECURITY_SCHEMES,
            "headers": RATE_LIMIT_HEADER_DOCS,
        },
    }


LANGUAGE_PARAMETERS: list[dict[str, Any]] = [
    {"name": "lang", "in": "query", "required": False,
     "description": "The language of texts and problem messages: `en`, `cs` or `de` (a "
     "regional tag counts as its language; anything else is English). Wins over "
     "Accept-Language. docs/api.md, Languages.",
     "schema": {"type": "string", "examples": ["en", "cs", "de"]}},
    {"name": "Accept-Language", "in": "header", "required": False,
     "description": "The languages the caller reads, with q-values (RFC 9110): the best of "
     "en, cs, de is answered, English when none fits.",
     "schema": {"type": "string", "examples": ["cs-CZ, cs;q=0.9, en;q=0.5"]}},
]
LANGUAGE_HEADERS: dict[str, Any] = {
    "Content-Language": {
        "description": "The language of the answer's texts and messages (en, cs, de).",
        "required": True, "schema": {"type": "string", "enum": ["en", "cs", "de"]}},
    "Vary": {
        "description": "Names Accept-Language (and, for an answer per seat, the credentials "
        "header).",
        "required": True, "schema": {"type": "string"}},
}
REQUEST_ID_HEADERS: dict[str, Any] = {
    "X-Request-Id": {
        "description": "This request's id (32 hex digits, or the one a trusted proxy sent): "
        "every problem names it as `requestId`, and every server log line about the request; "
        "quote it when reporting a problem (docs/security.md).",
        "required": True, "schema": {"type": "string", "maxLength": 128}},
}


def _declare_languages(paths: dict[str, Any]) -> dict[str, Any]:
    """Every operation takes ``lang`` and ``Accept-Language`` and every answer says its
    language (``Content-Language``, ``Vary``); ``service/api/languages.py``. Every answer
    names its request (``X-Request-Id``, ``service/api/request_ids.py``)."""
    for item in paths.values():
        for operation in item.values():
            parameters = operation.setdefault("parameters", [])
            names = {(p.get("name"), p.get("in")) for p in parameters}
            parameters += [p for p in LANGUAGE_PARAMETERS
                           if (p["name"], p["in"]) not in names]
            for response in operation.get("responses", {}).values():
                response["headers"] = {**response.get("headers", {}), **LANGUAGE_HEADERS,
                                       **REQUEST_ID_HEADERS}
    return paths


RATE_LIMIT_HEADER_DOCS: dict[str, Any] = {
    "RateLimit-Policy": {
        "description": "The budget this operation is charged to (IETF httpapi RateLimit "
        "draft): its name, quota `q` and window `w` in seconds, e.g. "
        '`"create";q=60;w=60`. Absent when limits are off. docs/api.md, Rate limits.',
        "schema": {"type": "string"},
    },
    "RateLimit": {
        "description": "What is left of that budget for this client: remaining requests `r` "
        'and seconds `t` until the window resets, e.g. `"create";r=12;t=30`.',
        "schema": {"type": "string"},
    },
}
RATE_LIMIT_HEADERS = {name: {"$ref": f"#/components/headers/{name}"}
                      for name in RATE_LIMIT_HEADER_DOCS}
RETRY_AFTER = {"description": "Seconds to wait.", "schema": {"type": "string"}}


def _declare_rate_limits(paths: dict[str, Any]) -> dict[str, Any]:
    """Every answer may carry its budget's ``RateLimit-Policy`` / ``RateLimit``; a 429 says
    when to retry (``Retry-After``); ``service/api/rate_limits.py``."""
    for item in paths.values():
        for operation in item.values():
            for status, response in operation["responses"].items():
                headers = {**response.get("headers", {}), **RATE_LIMIT_HEADERS}
                if status == "429":
                    headers["Retry-After"] = {
                        **RETRY_AFTER,
                        "description": "Seconds to wait (always with `rate_limited`).",
                    }
                response["headers"] = headers
    return paths


STATE_EVENT = "MatchStateEvent"
PATCH_EVENT = "MatchPatchEvent"
OTHER_STREAM_EVENT = "OtherStreamEvent"
REVOKED_EVENT = "MatchRevokedEvent"
STREAM_EVENT = "MatchStreamEvent"


def request_bodies(paths: dict[str, Any]) -> list[str]:
    """The schemas every operation's request body names (read from the paths, so that a
    body added later is covered too)."""
    return sorted({ref.rsplit("/", 1)[-1]
                   for item in paths.values() for operation in item.values()
                   for ref in _refs_in(operation.get("requestBody", {}))})


def _optional_without_default(schemas: dict[str, Any], bodies: list[str]) -> None:
    """An optional property of a request body (or of any schema it uses) is published
    without ``default``.

    Generators read a ``default`` as "always present": openapi-typescript 7 types such a
    property as required (``options: Ny1901Options | null``), so a body that leaves it out --
    as the docs' own examples do -- would not type-check. The server applies the default;
    the description states it (when it is not null).
    """
    names: set[str] = set()
    todo = [*bodies]
    while todo:
        name = todo.pop()
        if name in names or name not in schemas:
            continue
        names.add(name)
        todo += [ref.rsplit("/", 1)[-1] for ref in _refs_in(schemas[name])]
    for name in sorted(names):
        _drop_optional_defaults(schemas[name])


def _refs_in(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return found + [ref for value in node.values() for ref in _refs_in(value)]
    if isinstance(node, list):
        return [ref for value in node for ref in _refs_in(value)]
    return []


def _drop_optional_defaults(node: Any) -> None:
    if isinstance(node, list):
        for value in node:
            _drop_optional_defaults(value)
        return
    if not isinstance(node, dict):
        return
    required = set(node.get("required", ()))
    for name, prop in node.get("properties", {}).items():
        if isinstance(prop, dict) and name not in required and "default" in prop:
            default = prop.pop("default")
            if default is not None:
                text = f"Default: `{json.dumps(default)}`."
                prop["description"] = f"{prop['description']} {text}" if prop.get(
                    "description") else text
    for key, value in node.items():
        if key != "properties":
            _drop_optional_defaults(value)
    for prop in node.get("properties", {}).values():
        _drop_optional_defaults(prop)


STREAM_EVENT_KINDS = ("state", "snapshot", "patch", "revoked")
"""The event names of a match's stream (an open list: clients ignore names they do not know)."""


def _stream_event_schemas() -> dict[str, Any]:
    """One event of ``GET /v1/matches/{id}/events``, as an SSE parser sees it (the fields
    of the event; ``data`` is JSON text whose schema is ``contentSchema``): a whole state
    (``state``, ``snapshot``), a patch, or an event of a kind added later."""
    def event(title: str, names: dict[str, Any], about: str, data: dict[str, Any]) -> Any:
        return {
            "title": title,
            "type": "object",
            "description": about,
            "properties": {
                "event": {**names, "description": "The event name."},
                "id": {"type": "string", "pattern": "^[0-9]+$",
                       "description": "The version; send the last one seen as "
                       "`Last-Event-ID` to resume."},
                "data": data,
                "retry": {"type": "integer", "minimum": 0,
                          "description": "Reconnection delay in milliseconds, when the "
                          "server suggests one."},
            },
            "required": ["event", "id", "data"],
        }

    state = event(
        STATE_EVENT, {"enum": ["state", "snapshot"]},
        "The caller's whole state at one version: `state` for each version in full mode "
        "(and first on a fresh stream); `snapshot` first in patch mode, every "
        "`snapshotEvery` versions there, whenever no patch can be made, and after a gap (a "
        "stream resumed further behind than the server's resume window: the versions in "
        "between are skipped; the log has them). (Comment lines -- `: ping` -- carry no "
        "event.)",
        {"type": "string", "contentMediaType": "application/json",
         "contentSchema": {"$ref": "#/components/schemas/MatchState"},
         "description": "The caller's `MatchState` as JSON text (the same document as "
         "`GET /v1/matches/{matchId}`)."},
    )
    patch = event(
        PATCH_EVENT, {"const": "patch"},
        "Patch mode (`?mode=patch`): the change from the previous event's state to this "
        "version's, as RFC 6902 operations on its JSON.",
        {"type": "string", "contentMediaType": "application/json",
         "contentSchema": {"$ref": "#/components/schemas/StreamPatch"},
         "description": "A `StreamPatch` as JSON text."},
    )
    revoked = event(
        REVOKED_EVENT, {"const": "revoked"},
        "The last event of a seat's stream whose credential stopped reading the seat (the "
        "seat handed to a bot, its token renewed, its player gone for good): checked at "
        "every version, before anything of it is sent. No `id`; the stream then ends. A "
        "reconnection with the same credential is refused (401).",
        {"type": "string", "contentMediaType": "application/json",
         "contentSchema": {
             "type": "object", "required": ["code"],
             "properties": {"code": {
                 "type": "string", "description": REVOKED_CODE_DESCRIPTION,
                 "examples": ["seat_handed_to_bot", "credential_revoked"]}}},
         "description": "`{\"code\": \"seat_handed_to_bot\"}` as JSON text."},
    )
    revoked["required"] = ["event", "data"]
    del revoked["properties"]["id"]
    other = event(
        OTHER_STREAM_EVENT, {"type": "string", "not": {"enum": list(STREAM_EVENT_KINDS)}},
        "An event of a kind this document does not know yet: ignore it.",
        {"type": "string"},
    )
    stream = {
        "title": STREAM_EVENT,
        "description": "One event of a match's stream. Known kinds (`event`): "
        + ", ".join(f"`{k}`" for k in STREAM_EVENT_KINDS)
        + "; more may be added: ignore unknown ones.",
        "anyOf": [{"$ref": "#/components/schemas/" + name}
                  for name in (STATE_EVENT, PATCH_EVENT, REVOKED_EVENT, OTHER_STREAM_EVENT)],
        "x-extensible-enum": list(STREAM_EVENT_KINDS),
    }
    return {STATE_EVENT: state, PATCH_EVENT: patch, REVOKED_EVENT: revoked,
            OTHER_STREAM_EVENT: other, STREAM_EVENT: stream}


def _player_stream_schemas() -> dict[str, Any]:
    """One event of ``GET /v1/me/events`` as an SSE parser sees it: ``event`` the kind,
    ``id`` the feed's number, ``data`` a ``PlayerFeedEvent`` as JSON text; or a kind added
    later."""
    known = [*FEED_KINDS, "reset"]
    fields = {
        "id": {"type": "string", "pattern": "^[0-9]+$",
               "description": "The event's number; send the last one seen as "
               "`Last-Event-ID` to resume."},
        "retry": {"type": "integer", "minimum": 0,
                  "description": "Reconnection delay in milliseconds, when the server "
                  "suggests one."},
    }
    known_event = {
        "title": "PlayerStreamKnownEvent", "type": "object",
        "description": "An event of a kind this document names.",
        "properties": {
            "event": {"enum": known, "description": "The event's kind."},
            **fields,
            "data": {"type": "string", "contentMediaType": "application/json",
                     "contentSchema": {"$ref": "#/components/schemas/PlayerFeedEvent"},
                     "description": "A `PlayerFeedEvent` as JSON text."},
        },
        "required": ["event", "id", "data"],
    }
    other = {
        "title": "PlayerStreamOtherEvent", "type": "object",
        "description": "An event of a kind this document does not know yet: ignore it.",
        "properties": {"event": {"type": "string", "not": {"enum": [*known, "revoked"]}},
                       **fields,
                       "data": {"type": "string"}},
        "required": ["event", "id", "data"],
    }
    revoked = {
        "title": "PlayerStreamRevokedEvent", "type": "object",
        "description": "The last event of a feed whose player left for good (or was deleted "
        "by its app): checked before every event. No `id`; the stream then ends.",
        "properties": {
            "event": {"const": "revoked", "description": "The event's kind."},
            "data": {"type": "string", "contentMediaType": "application/json",
                     "contentSchema": {
                         "type": "object", "required": ["code"],
                         "properties": {"code": {
                             "type": "string",
                             "description": REVOKED_CODE_DESCRIPTION}}},
                     "description": "`{\"code\": \"credential_revoked\"}` as JSON text."},
        },
        "required": ["event", "data"],
    }
    stream = {
        "title": "PlayerStreamEvent",
        "description": "One event of the player's feed. Known kinds (`event`): "
        + ", ".join(f"`{k}`" for k in [*known, "revoked"])
        + "; more may be added: ignore unknown ones.",
        "anyOf": [{"$ref": "#/components/schemas/PlayerStreamKnownEvent"},
                  {"$ref": "#/components/schemas/PlayerStreamRevokedEvent"},
                  {"$ref": "#/components/schemas/PlayerStreamOtherEvent"}],
        "x-extensible-enum": [*known, "revoked"],
    }
    return {"PlayerStreamKnownEvent": known_event, "PlayerStreamRevokedEvent": revoked,
            "PlayerStreamOtherEvent": other, "PlayerStreamEvent": stream}
