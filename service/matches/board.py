"""The board picture of a match as a caller sees it: ``board_svg``.

The picture is drawn from the caller's view only (``MatchService.get_state`` with the
caller's token; none: the spectator's view), so a seat never sees more in the SVG than in
``GET /v1/matches/{id}``. ``highlight`` indexes the caller's legal moves at the same version;
a bad index is a 422 problem (``bad_highlight``), never a 500.

``board_svg`` is the one function REST, GraphQL and ``skyline show`` share.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from service.errors import ApiError
from service.i18n import T
from service.identity.callers import Credential
from service.pictures import render_view, supported

from .service import MatchService

MAX_CONSISTENT_READS = 5


@dataclass(frozen=True)
class BoardPicture:
    match_id: str
    version: int
    svg: str


async def board_svg(
    service: MatchService, match_id: str, token: Credential, highlight: int | None = None
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
            raise ApiError.of(
                "no_picture", T("No board picture for game {game}.", game=repr(state.game))
            )
        move: Any = None
        if highlight is not None:
            moves = await service.legal_moves(match_id, token)
            if moves.version != state.version:
                continue
            if highlight >= len(moves.moves):
                raise ApiError.of(
                    "bad_highlight",
                    T("highlight={highlight} is not a legal move index: the caller has "
                      "{count} legal moves at version {version}.", highlight=highlight,
                      count=len(moves.moves), version=state.version),
                    currentVersion=state.version,
                )
            move = moves.moves[highlight]
        svg = render_view(state.view, highlight=move)
        return BoardPicture(match_id=match_id, version=state.version, svg=svg)
    raise ApiError.of("busy", "The match keeps changing; retry.", retryAfter=1)
