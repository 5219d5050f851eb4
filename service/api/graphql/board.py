"""The ``boardSvg`` query field: the board picture of ``service.matches.board``."""

from __future__ import annotations

from typing import Any

import strawberry

from service.matches.board import BoardPicture, board_svg

from .context import Info
from .convert import Shape
from .results import READ_FAILURES, answer, result_union
from .types.wire import WIRE

WIRE.shape(BoardPicture, Shape(
    name="BoardSvg", description="A board picture (SVG) of one version.", ids=("match_id",),
    notes={"version": "The match version drawn.",
           "svg": "The SVG document (image/svg+xml)."},
))
PICTURE = WIRE.output(BoardPicture)

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
    result = result_union(
        "BoardSvgResult", PICTURE.annotation, READ_FAILURES, "The board picture, or why not."
    )

    async def board_svg_resolver(
        info: Any, match_id: Any, highlight: int | None = None
    ) -> Any:
        ctx = info.context
        return await answer(
            READ_FAILURES,
            lambda: board_svg(ctx.service, str(match_id), ctx.credentials(), highlight),
            PICTURE.convert,
            ctx.lang,
        )

    board_svg_resolver.__annotations__ = {
        "info": Info, "match_id": strawberry.ID, "highlight": int | None, "return": result,
    }
    return strawberry.field(resolver=board_svg_resolver, description=BOARD_SVG_DESCRIPTION)
