"""The games: ``listGames`` (the games hosted) and ``getGame`` (one game's component
catalogue, ``service.catalogue``, in the request's language; cacheable, immutable under
``?rulesVersion=N``)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from service.catalogue import catalogue_models, catalogue_of
from service.errors import ApiError
from service.matches.models import GameInfo

from ..languages import LANG_PARAM, none_match, tagged
from ..rest.http import ascii_int
from .base import PUBLIC, Context, Operation, Param, Reply, if_none_match, query

IMMUTABLE = "public, max-age=31536000, immutable"
"""A versioned catalogue never changes: caches keep it for a year."""
CURRENT = "public, max-age=300"
"""The unversioned URL follows the current rules version: caches revalidate it soon."""
MAX_RULES_VERSION_DIGITS = 9
REF = "#/components/schemas/{model}"


def rules_version_param(request: Request, name: str) -> int | None:
    """The ``rulesVersion`` query parameter: None when absent, else a positive integer (400
    ``malformed`` otherwise)."""
    values = request.query_params.getlist(name)
    if not values:
        return None
    version = ascii_int(values[0].strip(), MAX_RULES_VERSION_DIGITS)
    if len(values) > 1 or version is None or version < 1:
        raise ApiError.of(
            "malformed", "rulesVersion must be given once, as a positive integer (one of the "
            "game's rulesVersions in GET /v1/games)."
        )
    return version


async def catalogue_model(context: Context) -> Any:
    """GraphQL's answer: the catalogue's model (typed by its game's generated type)."""
    return catalogue_of(context.path["game_id"], context.query["rulesVersion"],
                        context.lang).model


GAME_DESCRIPTION = (
    "A game's component catalogue: everything a client draws or explains (board, tiles, "
    "cards and their texts), the same document as `GET /v1/games/{id}`. `rulesVersion`: one "
    "of the game's rulesVersions (a match's rulesVersion); omitted: the current one. No such "
    "game, or no such version: `NotFound` (codes not_found, unknown_rules_version)."
)


async def get_game(context: Context) -> Response:
    """The catalogue's bytes as stored, with its own caching (versioned or current)."""
    request, version, lang = context.request, context.query["rulesVersion"], context.lang
    document = catalogue_of(context.path["game_id"], version, lang)
    etag = tagged(document.digest, lang)
    headers = {"ETag": etag, "Cache-Control": IMMUTABLE if version is not None else CURRENT}
    if version is None:
        chosen = f"&{LANG_PARAM}={lang}" if LANG_PARAM in request.query_params else ""
        headers["Content-Location"] = (
            f"/v1/games/{document.game}?rulesVersion={document.rules_version}{chosen}"
        )
    if none_match(request.headers.get("if-none-match"), etag):
        return Response(status_code=304, headers=headers)
    return Response(document.body, media_type="application/json", headers=headers)


def _catalogue_schema() -> dict[str, Any]:
    """One schema per game's catalogue, told apart by ``game``."""
    models = catalogue_models()
    refs = [{"$ref": REF.format(model=m.__name__)} for m in models]
    tags = {m.model_fields["game"].default: REF.format(model=m.__name__) for m in models}
    if not refs:
        return {"type": "object"}
    return {"oneOf": refs, "discriminator": {"propertyName": "game", "mapping": tags}}


def _game_ids() -> list[str]:
    return sorted(m.model_fields["game"].default for m in catalogue_models())


CACHE_HEADER = {"Cache-Control": {
    "description": "`public, max-age=31536000, immutable` with `rulesVersion`; "
    "`public, max-age=300` without.", "required": True, "schema": {"type": "string"}}}
DIGEST_ETAG = {"ETag": {"description": "A hash of the document, quoted: equal documents, "
                        "equal tags.", "required": True, "schema": {"type": "string"}}}

OPERATIONS = (
    Operation(
        id="listGames", method="GET", path="/v1/games", tag="games",
        summary="The catalogue of games.",
        codes=(), budget="read", security=PUBLIC,
        graphql=query("games", description="The games this build hosts.",
                      returns=list[GameInfo]),
        reply=Reply(None, "Every hosted game.", content={"application/json": {"schema": {
            "type": "array", "items": {"$ref": "#/components/schemas/GameInfo"}}}}),
        call=lambda c: c.state.match_service.catalogue(),
    ),
    Operation(
        id="getGame", method="GET", path="/v1/games/{gameId}", tag="games",
        summary="A game's component catalogue: board, tiles, cards and their texts.",
        description="Everything a client draws or explains, for one rules version; every id "
        "is the one views, moves, events and results use. With `rulesVersion` (a match's "
        "`rulesVersion`) the document never changes: cache it for good. Without it: the "
        "current rules version (`Content-Location` names its versioned URL), cacheable for 5 "
        "minutes. `If-None-Match` with the `ETag`: 304. A game that is not hosted: 404 "
        "`not_found`; a version the game lacks: 404 `unknown_rules_version`; a "
        "`rulesVersion` that is no positive integer: 400 `malformed`.",
        codes=("malformed", "not_found", "unknown_rules_version"), budget="read",
        security=PUBLIC,
        graphql=query("game", description=GAME_DESCRIPTION, result="GameCatalogueResult",
                      result_description="A game's catalogue, or why not.",
                      args={"gameId": "id"}, strings=("gameId",), returns=catalogue_models,
                      resolve=catalogue_model),
        params=(
            Param("gameId", "path", {"type": "string", "minLength": 1, "maxLength": 64,
                                     "examples": _game_ids()},
                  "A game id from GET /v1/games."),
            Param("rulesVersion", "query",
                  {"type": "integer", "minimum": 1, "maximum": 999_999_999},
                  "One of the game's rulesVersions (GET /v1/games); omitted: the current one.",
                  parse=rules_version_param),
            if_none_match("A previous ETag: 304 while the document is the same."),
        ),
        reply=Reply(
            None, "The catalogue: one schema per game (tag `game`).",
            headers={**DIGEST_ETAG, **CACHE_HEADER, "Content-Location": {
                "description": "Without rulesVersion: the versioned URL of the document.",
                "schema": {"type": "string"}}},
            content={"application/json": {"schema": _catalogue_schema()}},
        ),
        more={"304": {"description": "Not modified.",
                      "headers": {**DIGEST_ETAG, **CACHE_HEADER}}},
        call=get_game,
    ),
)
