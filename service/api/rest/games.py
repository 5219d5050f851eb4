"""``GET /v1/games``: the catalogue."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .http import service_of


async def list_games(request: Request) -> Response:
    games = await service_of(request).catalogue()
    return JSONResponse([g.to_json() for g in games])
