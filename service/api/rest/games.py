"""``GET /v1/games``: the games hosted; ``GET /v1/games/{id}``: one game's component
catalogue (``service.catalogue``) in the request's language, cacheable: immutable under
``?rulesVersion=N``."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from service.catalogue import catalogue_of
from service.errors import ApiError

from ..languages import LANG_PARAM, lang_of, none_match, tagged
from .http import ascii_int, service_of

IMMUTABLE = "public, max-age=31536000, immutable"
"""A versioned catalogue never changes: caches keep it for a year."""
CURRENT = "public, max-age=300"
"""The unversioned URL follows the current rules version: caches revalidate it soon."""
MAX_RULES_VERSION_DIGITS = 9


async def list_games(request: Request) -> Response:
    games = await service_of(request).catalogue()
    return JSONResponse([g.to_json() for g in games])


def rules_version_param(request: Request) -> int | None:
    """The ``rulesVersion`` query parameter: None when absent, else a positive integer (400
    ``malformed`` otherwise)."""
    values = request.query_params.getlist("rulesVersion")
    if not values:
        return None
    version = ascii_int(values[0].strip(), MAX_RULES_VERSION_DIGITS)
    if len(values) > 1 or version is None or version < 1:
        raise ApiError.of(
            "malformed", "rulesVersion must be given once, as a positive integer (one of the "
            "game's rulesVersions in GET /v1/games)."
        )
    return version


async def get_game(request: Request) -> Response:
    version = rules_version_param(request)
    lang = lang_of(request)
    document = catalogue_of(request.path_params["game_id"], version, lang)
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
