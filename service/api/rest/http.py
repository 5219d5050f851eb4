"""What every REST handler shares: reading the body, the caller's token and the services,
query values, and ``If-Match`` entity tags (the match version)."""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel
from starlette.requests import Request

from service.errors import ApiError
from service.i18n import T
from service.identity.callers import Credential
from service.matches import MatchService
from service.matches.models import MAX_SEED
from service.matches.wire import validate_wire
from service.players import PlayerService

from ..bodies import MAX_JSON_DEPTH, is_json_media, too_deep
from ..credentials import bearer_token
from ..languages import LANGUAGE_SUFFIX

M = TypeVar("M", bound=BaseModel)

# One element of an entity-tag list (RFC 9110 5.6.1 and 8.8.3): OWS, an optional
# ``[W/] DQUOTE *etagc DQUOTE`` (empty elements are allowed), OWS, then a comma or the end.
_LIST_ELEMENT = re.compile(r'[ \t]*(?:(W/)?"([!#-~\x80-\xff]*)")?[ \t]*(?:,|\Z)')
_ASCII_DIGITS = re.compile(r"[0-9]+")
_VERSION_TAG = re.compile(r"([0-9]{1,18})" + LANGUAGE_SUFFIX)  # "7", or "7;lang=cs"
NEVER_MATCHES = -1
"""The ``If-Match`` pin of tags that can match no version (weak, or not a version)."""


def service_of(request: Request) -> MatchService:
    service: MatchService = request.app.state.match_service
    return service


def players_of(request: Request) -> PlayerService:
    players: PlayerService = request.app.state.player_service
    return players


async def token_of(request: Request) -> Credential:
    """The caller: its bearer credential checked (a seat token as it is, a player token,
    app key or JWT as a ``Caller``); None without ``Authorization``."""
    token = bearer_token(request.headers.get("authorization"))
    if token is None:
        return None
    return await players_of(request).authenticate(token)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


async def read_body(request: Request, model: type[M]) -> M:
    """The request body as ``model``: 415 for a body not declared JSON (no ``Content-Type``
    is not JSON; an empty body needs none), 400 for anything malformed, JSON nested deeper
    than ``MAX_JSON_DEPTH`` included (refused before it is parsed)."""
    raw = await request.body()
    if raw and not is_json_media(request.headers.get("content-type")):
        raise ApiError.of("unsupported_media_type", "Send the body as application/json.")
    if not raw:
        raise ApiError.of("malformed", "The body must be a JSON object.")
    if too_deep(raw):
        raise ApiError.of("malformed", T("The body nests JSON more than {limit} levels deep.",
                                         limit=MAX_JSON_DEPTH))
    try:
        data = json.loads(raw, parse_constant=_reject_constant)
    except (ValueError, UnicodeDecodeError, RecursionError) as error:
        detail = T("The body is not valid JSON: {error}", error=error)
        raise ApiError.of("malformed", detail) from None
    if not isinstance(data, dict):
        raise ApiError.of("malformed", "The body must be a JSON object.")
    value, errors = validate_wire(
        model.model_validate, lambda raw: model.model_validate_json(raw, strict=True), data
    )
    if value is None:
        first = errors[0]
        where = ".".join(first["loc"]) or "body"
        raise ApiError.of("malformed", f"{where}: {first['msg']}", errors=errors)
    return value


def ascii_int(text: str, max_digits: int) -> int | None:
    """``text`` as a non-negative integer when it is 1 to ``max_digits`` ASCII digits, else
    None. ``str.isdigit`` and ``int`` also take other scripts' digits (``"٣"`` is 3 to
    ``int``; ``"²"`` is a digit to ``isdigit`` and no number to ``int``), signs, spaces and
    underscores: no query value or header is read with them."""
    if 0 < len(text) <= max_digits and _ASCII_DIGITS.fullmatch(text) is not None:
        return int(text)
    return None


def non_negative_int(value: str | None, name: str) -> int:
    if value is None or value == "":
        return 0
    number = ascii_int(value, 16)
    if number is None or number > MAX_SEED:
        raise ApiError.of("malformed", T("{name} must be a non-negative integer.", name=name))
    return number


def query_count(request: Request, name: str) -> int | None:
    """A non-negative integer query parameter given at most once; None when absent."""
    values = request.query_params.getlist(name)
    if not values:
        return None
    if len(values) > 1:
        raise ApiError.of("malformed", T("Give {name} once.", name=name))
    return non_negative_int(values[0] or "x", name)


def entity_tags(header: str) -> list[tuple[bool, str]]:
    """The ``(weak, opaque tag)`` pairs of an entity-tag list (``#entity-tag``: possibly
    empty); 400 when it is not one (an unquoted ``7`` is not an entity tag)."""
    tags: list[tuple[bool, str]] = []
    position = 0
    while position < len(header):
        found = _LIST_ELEMENT.match(header, position)
        if found is None:
            raise ApiError.of(
                "malformed", 'If-Match must be "*" or entity tags as received, quoted: "7".'
            )
        if found.group(2) is not None:
            tags.append((found.group(1) is not None, found.group(2)))
        position = found.end()
    return tags


def parse_if_match(header: str | None) -> int | None:
    """The version pinned by ``If-Match``; None when absent or ``*``; 400 when malformed.

    If-Match compares strongly (RFC 9110 13.1.1): a weak tag never matches, nor does a tag
    that is no version (nor an empty list); such a list pins ``NEVER_MATCHES`` (answered
    with 412).
    """
    if header is None or header == "*":
        return None
    for weak, tag in entity_tags(header):
        if not weak and (version := _VERSION_TAG.fullmatch(tag)) is not None:
            return int(version.group(1))
    return NEVER_MATCHES


def query_once(request: Request, name: str) -> str | None:
    """A query parameter given at most once (400 ``malformed`` when repeated); None when
    absent."""
    values = request.query_params.getlist(name)
    if len(values) > 1:
        raise ApiError.of("malformed", T("Give {name} once.", name=name))
    return values[0] if values else None
