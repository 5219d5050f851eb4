"""The reference web client: plain static files served at ``/play`` (no build step)."""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

STATIC = Path(__file__).resolve().parent / "static"


async def _to_client(request: Request) -> Response:
    query = request.url.query
    return RedirectResponse("/play/" + (f"?{query}" if query else ""), status_code=308)


def web_routes() -> list[BaseRoute]:
    """``/play`` (redirect) and ``/play/...`` (index.html, app.js, style.css, ...)."""
    return [
        Route("/play", _to_client, methods=["GET", "HEAD"], name="play_redirect"),
        Mount("/play", app=StaticFiles(directory=STATIC, html=True), name="play"),
    ]
