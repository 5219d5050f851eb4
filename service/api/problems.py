"""Problem rendering: an ``ApiError`` as an RFC 9457 ``application/problem+json`` response,
its title and detail in the request's language (with ``Retry-After`` when the problem says
when to retry) and the request's id (``requestId``, issue 20)."""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

from service.errors import ApiError
from service.i18n import DEFAULT_LANGUAGE, Lang

from .request_ids import current_request_id

PROBLEM_JSON = "application/problem+json"


def problem_body(error: ApiError, lang: Lang = DEFAULT_LANGUAGE) -> dict[str, Any]:
    """The problem document, naming the request being handled."""
    body = error.to_json(lang)
    request_id = current_request_id.get()
    if request_id is not None:
        body["requestId"] = request_id
    return body


def problem_response(error: ApiError, lang: Lang = DEFAULT_LANGUAGE) -> JSONResponse:
    headers = {}
    retry_after = error.extra.get("retryAfter")
    if retry_after is not None:
        headers["Retry-After"] = str(retry_after)
    return JSONResponse(
        problem_body(error, lang), status_code=error.status, headers=headers,
        media_type=PROBLEM_JSON,
    )
