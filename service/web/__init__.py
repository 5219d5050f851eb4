"""The reference web client: plain static files served at ``/play`` (no build step), and the
server's front door ``/``: a short page that leads a person to ``/play`` and the API, or the
same links as JSON for a program."""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

STATIC = Path(__file__).resolve().parent / "static"


async def _to_client(request: Request) -> Response:
    query = request.url.query
    return RedirectResponse("/play/" + (f"?{query}" if query else ""), status_code=308)


LINKS: dict[str, dict[str, str]] = {
    "play": {"href": "/play/", "title": "Play in the browser (the reference web client)"},
    "games": {"href": "/v1/games", "title": "The games hosted here (REST)"},
    "openapi": {"href": "/openapi.json", "title": "The REST API's OpenAPI 3.1 document"},
    "graphql": {"href": "/graphql", "title": "GraphQL (GraphiQL in a browser; subscriptions "
                "over a WebSocket, graphql-transport-ws)"},
    "health": {"href": "/readyz", "title": "Readiness"},
}
"""Where a newcomer goes from ``/``: the same links in the page and in the JSON."""
DOCS = ("docs/api.md (REST), docs/graphql.md, docs/players.md, docs/lobby.md and "
        "docs/clocks-and-notifications.md in the server's source")

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Skyline</title></head>
<body>
<h1>Skyline</h1>
<p>A game server for New York 1901 and Ginkgopolis.</p>
<p><a href="/play/"><strong>Play in the browser</strong></a></p>
<h2>Build a client</h2>
<ul>
{items}
</ul>
<p>Documentation: {docs}.</p>
</body></html>
"""


def _page() -> str:
    from html import escape

    items = "\n".join(f'<li><a href="{escape(link["href"])}">{escape(link["title"])}</a> '
                      f"<code>{escape(link['href'])}</code></li>"
                      for name, link in LINKS.items() if name != "play")
    return _PAGE.format(items=items, docs=escape(DOCS))


async def _home(request: Request) -> Response:
    """``GET /``: a page for a browser (``Accept: text/html``), JSON links for anything
    else -- never a 404 for the server's own address."""
    headers = {"Vary": "Accept", "Cache-Control": "public, max-age=300"}
    if "text/html" in request.headers.get("accept", "").lower():
        return HTMLResponse(_page(), headers=headers)
    return JSONResponse({"service": "skyline", "links": LINKS, "docs": DOCS},
                        headers=headers)


def web_routes() -> list[BaseRoute]:
    """``/`` (the front door), ``/play`` (redirect) and ``/play/...`` (index.html, app.js,
    style.css, ...)."""
    return [
        Route("/", _home, methods=["GET", "HEAD"], name="home"),
        Route("/play", _to_client, methods=["GET", "HEAD"], name="play_redirect"),
        Mount("/play", app=StaticFiles(directory=STATIC, html=True), name="play"),
    ]
