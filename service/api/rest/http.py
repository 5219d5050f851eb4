"""What every REST resource shares: reading the body, the caller's token and the service,
query numbers, and entity tags (the match version)."""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel
from starlette.requests import Request

from service.errors import ApiError
from service.matches import MatchService
from service.matches.wire import validate_wire

from ..credentials import bearer_token

M = TypeVar("M", bound=BaseModel)

_ETAG = re.compile(r'^\s*(?:W/)?"(\d{1,18})"\s*$')


def service_of(request: Request) -> MatchService:
    service: MatchService = request.app.state.match_service
    return service


def token_of(request: Request) -> str | None:
    return bearer_token(request.headers.get("authorization"))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


async def read_body(request: Request, model: type[M]) -> M:
    """The request body as ``model``; 415 for a non-JSON type, 400 for anything malformed."""
    content_type = request.headers.get("content-type", "application/json")
    media = content_type.split(";")[0].strip().lower()
    if media != "application/json" and not media.endswith("+json"):
        raise ApiError.of("unsupported_media_type", "Send the body as application/json.")
    raw = await request.body()
    try:
        data = json.loads(raw, parse_constant=_reject_constant)
    except (ValueError, UnicodeDecodeError) as error:
        raise ApiError.of("malformed", f"The body is not valid JSON: {error}") from None
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


def non_negative_int(value: str | None, name: str) -> int:
    if value is None or value == "":
        return 0
    if not value.isdigit() or len(value) > 18:
        raise ApiError.of("malformed", f"{name} must be a non-negative integer.")
    return int(value)


def query_count(request: Request, name: str) -> int | None:
    """A non-negative integer query parameter given at most once; None when absent."""
    values = request.query_params.getlist(name)
    if not values:
        return None
    if len(values) > 1:
        raise ApiError.of("malformed", f"Give {name} once.")
    return non_negative_int(values[0] or "x", name)


def parse_if_match(header: str | None) -> int | None:
    """The version pinned by ``If-Match``; None when absent or ``*``.

    An entity tag we never issue can never match: -1 (answered with 412).
    """
    if header is None or header.strip() == "*":
        return None
    for candidate in header.split(","):
        found = _ETAG.match(candidate)
        if found:
            return int(found.group(1))
    return -1


def etag_matches(header: str | None, version: int) -> bool:
    if header is None:
        return False
    if header.strip() == "*":
        return True
    return any(
        (found := _ETAG.match(tag)) is not None and int(found.group(1)) == version
        for tag in header.split(",")
    )


def etag(version: int) -> str:
    return f'"{version}"'


# Per-seat answers: caches must key them on the token, and revalidate.
PRIVATE = {"Vary": "Authorization", "Cache-Control": "private, no-cache"}
