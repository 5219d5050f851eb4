"""Operations: health, readiness, metrics and the OpenAPI document."""

from __future__ import annotations

from typing import Any, cast

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from service.errors import ApiError
from service.store import Schedules

from ..languages import lang_of
from ..problems import problem_response
from .http import service_of


async def healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


async def readyz(request: Request) -> Response:
    """200 ``ready`` when the store answers and a worker beats; 200 ``degraded`` (with each
    check's reason in ``checks``) when the store answers but no worker has beaten for
    ``--worker-stale-seconds``: the replica serves, only bots, clocks and webhooks wait, so
    it stays in rotation; 503 ``store_unavailable`` when the store does not answer."""
    if await service_of(request).ready():
        checks: dict[str, Any] = {"store": {"status": "ok"}}
        stale = request.app.state.settings.worker_stale_seconds
        # The worker heartbeats' check (service.workers.heartbeat), given by the app.
        worker_check = getattr(request.app.state, "worker_check", None)
        if stale and worker_check is not None:
            checks["worker"] = await worker_check(
                cast(Schedules, request.app.state.store), stale)
        degraded = any(check["status"] != "ok" for check in checks.values())
        return JSONResponse({"status": "degraded" if degraded else "ready",
                             "checks": checks})
    return problem_response(
        ApiError.of("store_unavailable", "The match store does not answer.", retryAfter=1),
        lang_of(request),
    )


async def metrics(request: Request) -> Response:
    text = service_of(request).metrics.render()
    return PlainTextResponse(text, media_type="text/plain; version=0.0.4; charset=utf-8")


async def openapi(request: Request) -> Response:
    return JSONResponse(request.app.state.openapi)
