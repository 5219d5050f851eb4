"""Board pictures over HTTP: ``GET /v1/matches/{id}/board.svg[?highlight=<move index>]``.

The picture is drawn from the caller's view only (``MatchService.get_state`` with the Bearer
token of the request; no token: the spectator's view), so a seat never sees more in the SVG
than in ``GET /v1/matches/{id}``. ``highlight`` indexes the caller's legal moves at the same
version (``GET /v1/matches/{id}/legal-moves``); a bad index is a 400 / 422 problem, never a 500.

``board_svg`` is the one function REST, GraphQL and ``skyline show`` share.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import strawberry
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from service.pictures import SVG_MEDIA_TYPE, render_view, supported

from .auth import bearer_token
from .errors import ApiError
from .service import MatchService

MAX_CONSISTENT_READS = 5


@dataclass(frozen=True)
class BoardPicture:
    match_id: str
    version: int
    svg: str


def parse_highlight(raw: str | None) -> int | None:
    """The ``highlight`` query value: None when absent, else a non-negative integer (400)."""
    if raw is None or raw == "":
        return None
    text = raw.strip()
    if not text.isdigit() or len(text) > 9:
        raise ApiError.of("malformed", "highlight must be a move index (a non-negative integer).")
    return int(text)


async def board_svg(
    service: MatchService, match_id: str, token: str | None, highlight: int | None = None
) -> BoardPicture:
    """The SVG of the caller's view, with legal move number ``highlight`` drawn on it.

    The view and the legal moves are read at one version (re-read if a move lands between
    the two reads), so the highlighted move always belongs to the drawn position.
    """
    if highlight is not None and highlight < 0:
        raise ApiError.of("malformed", "highlight must be a move index (a non-negative integer).")
    for _ in range(MAX_CONSISTENT_READS):
        state = await service.get_state(match_id, token)
        if not supported(state.game):
            raise ApiError(
                422, "no_picture", "No picture", f"No board picture for game {state.game!r}."
            )
        move: Any = None
        if highlight is not None:
            moves = await service.legal_moves(match_id, token)
            if moves.version != state.version:
                continue
            if highlight >= len(moves.moves):
                raise ApiError(
                    422,
                    "bad_highlight",
                    "Invalid highlight",
                    f"highlight={highlight} is not a legal move index: the caller has "
                    f"{len(moves.moves)} legal moves at version {state.version}.",
                    currentVersion=state.version,
                )
            move = moves.moves[highlight]
        svg = render_view(state.view, highlight=move)
        return BoardPicture(match_id=match_id, version=state.version, svg=svg)
    raise ApiError.of("busy", "The match keeps changing; retry.", retryAfter=1)


async def board_svg_route(request: Request) -> Response:
    match_id = request.path_params["match_id"]
    token = bearer_token(request.headers.get("authorization"))
    highlight = parse_highlight(request.query_params.get("highlight"))
    service: MatchService = request.app.state.match_service
    picture = await board_svg(service, match_id, token, highlight)
    etag = f'"{picture.version}-{"x" if highlight is None else highlight}"'
    headers = {
        "ETag": etag,
        "Vary": "Authorization",
        "Cache-Control": "private, no-cache",
        "X-Match-Version": str(picture.version),
    }
    if_none_match = request.headers.get("if-none-match")
    if if_none_match is not None and etag in [t.strip() for t in if_none_match.split(",")]:
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


BOARD_SVG_DESCRIPTION = (
    "The board as an SVG picture drawn from the caller's view only (the same document as "
    "`GET /v1/matches/{id}/board.svg`). `highlight`: the index of one of the caller's legal "
    "moves (as listed by `legalMoves`) to draw distinctly; an index out of range is a "
    "`BadRequest` with code `bad_highlight`."
)


def graphql_board_field() -> Any:
    """The ``boardSvg`` field of the GraphQL ``Query`` (used in ``graphql/queries.py``).

    ``boardSvg(matchId: ID!, highlight: Int): BoardSvgResult!`` where the result is
    ``BoardSvg {matchId, version, svg}`` or a read failure (``NotFound``, ``Unauthorized``,
    ``BadRequest``, ``Unavailable``). Built per schema, like the other operations.
    """
    from .graphql.context import Info
    from .graphql.results import READ_FAILURES, answer, result_union

    @strawberry.type(name="BoardSvg", description="A board picture (SVG) of one version.")
    class BoardSvgType:
        match_id: strawberry.ID
        version: int = strawberry.field(description="The match version drawn.")
        svg: str = strawberry.field(description="The SVG document (image/svg+xml).")

    result = result_union(
        "BoardSvgResult", BoardSvgType, READ_FAILURES, "The board picture, or why not."
    )

    async def board_svg_resolver(
        info: Any, match_id: Any, highlight: int | None = None
    ) -> Any:
        ctx = info.context
        return await answer(
            READ_FAILURES,
            lambda: board_svg(ctx.service, str(match_id), ctx.credentials(), highlight),
            lambda picture: BoardSvgType(
                match_id=strawberry.ID(picture.match_id), version=picture.version,
                svg=picture.svg,
            ),
        )

    board_svg_resolver.__annotations__ = {
        "info": Info, "match_id": strawberry.ID, "highlight": int | None, "return": result,
    }
    return strawberry.field(resolver=board_svg_resolver, description=BOARD_SVG_DESCRIPTION)
