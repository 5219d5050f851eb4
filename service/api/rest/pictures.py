"""Board pictures over HTTP: ``GET /v1/matches/{id}/board.svg[?highlight=<move index>]``
(``service.matches.board`` draws them)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from service.errors import ApiError
from service.matches import MatchService
from service.matches.board import board_svg
from service.pictures import SVG_MEDIA_TYPE

from ..languages import lang_of, none_match, tagged
from .http import ascii_int, token_of


def parse_highlight(raw: str | None) -> int | None:
    """The ``highlight`` query value: None when absent, else a non-negative integer (400)."""
    if raw is None or raw == "":
        return None
    index = ascii_int(raw.strip(), 9)
    if index is None:
        raise ApiError.of("malformed", "highlight must be a move index (a non-negative integer).")
    return index


async def board_svg_route(request: Request) -> Response:
    match_id = request.path_params["match_id"]
    token = await token_of(request)
    highlight = parse_highlight(request.query_params.get("highlight"))
    service: MatchService = request.app.state.match_service
    picture = await board_svg(service, match_id, token, highlight)
    etag = tagged(f"{picture.version}-{'x' if highlight is None else highlight}", lang_of(request))
    headers = {
        "ETag": etag,
        "Vary": "Authorization",
        "Cache-Control": "private, no-cache",
        "X-Match-Version": str(picture.version),
    }
    if none_match(request.headers.get("if-none-match"), etag):
        return Response(status_code=304, headers=headers)
    return Response(
        picture.svg, media_type=f"{SVG_MEDIA_TYPE}; charset=utf-8", headers=headers
    )


def picture_routes() -> list[Route]:
    return [
        Route(
            "/v1/matches/{match_id}/board.svg", board_svg_route, methods=["GET"],
            name="board_svg",
        ),
    ]
