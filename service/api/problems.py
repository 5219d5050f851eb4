"""Problem rendering: an ``ApiError`` as an RFC 9457 ``application/problem+json`` response
(with ``Retry-After`` when the problem says when to retry)."""

from __future__ import annotations

from starlette.responses import JSONResponse

from service.errors import ApiError

PROBLEM_JSON = "application/problem+json"


def problem_response(error: ApiError) -> JSONResponse:
    headers = {}
    retry_after = error.extra.get("retryAfter")
    if retry_after is not None:
        headers["Retry-After"] = str(retry_after)
    return JSONResponse(
        error.to_json(), status_code=error.status, headers=headers, media_type=PROBLEM_JSON
    )
