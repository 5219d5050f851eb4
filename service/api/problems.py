"""Problem rendering: an ``ApiError`` as an RFC 9457 ``application/problem+json`` response,
its title and detail in the request's language (with ``Retry-After`` when the problem says
when to retry)."""

from __future__ import annotations

from starlette.responses import JSONResponse

from service.errors import ApiError
from service.i18n import DEFAULT_LANGUAGE, Lang

PROBLEM_JSON = "application/problem+json"


def problem_response(error: ApiError, lang: Lang = DEFAULT_LANGUAGE) -> JSONResponse:
    headers = {}
    retry_after = error.extra.get("retryAfter")
    if retry_after is not None:
        headers["Retry-After"] = str(retry_after)
    return JSONResponse(
        error.to_json(lang), status_code=error.status, headers=headers, media_type=PROBLEM_JSON
    )
