"""Board pictures over HTTP: ``getBoardSvg``, ``GET /v1/matches/{id}/board.svg
[?highlight=<move index>]`` (``service.matches.board`` draws them)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from service.errors import ApiError
from service.matches.board import BoardPicture, board_svg
from service.pictures import SVG_MEDIA_TYPE

from ..languages import none_match, tagged
from ..rest.http import ascii_int
from . import codes
from .base import (
    MATCH_ID,
    READ_SECURITY,
    Context,
    Operation,
    Param,
    Reply,
    if_none_match,
    query,
)


def parse_highlight(request: Request, name: str) -> int | None:
    """The ``highlight`` query value: None when absent, else a non-negative integer (400)."""
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return None
    index = ascii_int(raw.strip(), 9)
    if index is None:
        raise ApiError.of("malformed", "highlight must be a move index (a non-negative integer).")
    return index


async def board_picture(context: Context) -> BoardPicture:
    """GraphQL's answer: the picture itself (``BoardSvg``: its version and SVG text)."""
    return await board_svg(context.state.match_service, context.path["match_id"],
                           context.caller, context.query["highlight"])


GRAPHQL_DESCRIPTION = (
    "The board as an SVG picture drawn from the caller's view only (the same document as "
    "`GET /v1/matches/{id}/board.svg`). `highlight`: the index of one of the caller's legal "
    "moves (as listed by `legalMoves`) to draw distinctly; an index out of range is a "
    "`BadRequest` with code `bad_highlight`."
)


async def get_board_svg(context: Context) -> Response:
    """The picture, tagged with its version and highlight (304 while unchanged)."""
    highlight = context.query["highlight"]
    picture = await board_svg(context.state.match_service, context.path["match_id"],
                              context.caller, highlight)
    etag = tagged(f"{picture.version}-{'x' if highlight is None else highlight}", context.lang)
    headers = {
        "ETag": etag,
        "Vary": "Authorization",
        "Cache-Control": "private, no-cache",
        "X-Match-Version": str(picture.version),
    }
    if none_match(context.request.headers.get("if-none-match"), etag):
        return Response(status_code=304, headers=headers)
    return Response(picture.svg, media_type=f"{SVG_MEDIA_TYPE}; charset=utf-8", headers=headers)


OPERATIONS = (
    Operation(
        id="getBoardSvg", method="GET", path="/v1/matches/{matchId}/board.svg",
        tag="matches", summary="The board as an SVG picture of the caller's view.",
        description="Drawn from the caller's view only (no token: a spectator's). "
        "`highlight` draws the caller's legal move of that index (as listed by legal-moves "
        "at the same version) distinctly; out of range: 422 `bad_highlight`.",
        codes=("malformed", *codes.READ, "bad_highlight", "no_picture"), budget="read",
        security=READ_SECURITY,
        graphql=query("boardSvg", description=GRAPHQL_DESCRIPTION,
                      result_description="The board picture, or why not.",
                      returns=BoardPicture, resolve=board_picture),
        params=(
            MATCH_ID,
            Param("highlight", "query", {"type": "integer", "minimum": 0,
                                         "maximum": 999_999_999},
                  "Index of one of the caller's legal moves.", parse=parse_highlight),
            if_none_match("A previous ETag: 304 while unchanged."),
        ),
        reply=Reply(None, "The SVG document.", headers={"ETag": {
            "description": 'The version and highlight, quoted ("7-x", "7-3").',
            "required": True, "schema": {"type": "string"}}},
            content={SVG_MEDIA_TYPE: {"schema": {"type": "string"}}}),
        more={"304": {"description": "Not modified."}},
        call=get_board_svg,
    ),
)
