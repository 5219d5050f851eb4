"""Operations: health, readiness, metrics and the OpenAPI document."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from service.errors import ApiError

from ..languages import lang_of
from ..problems import problem_response
from .http import service_of


async def healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


async def readyz(request: Request) -> Response:
    if await service_of(request).ready():
        return JSONResponse({"status": "ready"})
    return problem_response(
        ApiError.of("store_unavailable", "The match store does not answer.", retryAfter=1),
        lang_of(request),
    )


async def metrics(request: Request) -> Response:
    text = service_of(request).metrics.render()
    return PlainTextResponse(text, media_type="text/plain; version=0.0.4; charset=utf-8")


async def openapi(request: Request) -> Response:
    return JSONResponse(request.app.state.openapi)
