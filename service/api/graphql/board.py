"""The ``boardSvg`` query field: the board picture of ``service.matches.board``."""

from __future__ import annotations

from typing import Any

import strawberry

from service.matches.board import board_svg

from .context import Info
from .results import READ_FAILURES, answer, result_union

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
            ctx.lang,
        )

    board_svg_resolver.__annotations__ = {
        "info": Info, "match_id": strawberry.ID, "highlight": int | None, "return": result,
    }
    return strawberry.field(resolver=board_svg_resolver, description=BOARD_SVG_DESCRIPTION)
