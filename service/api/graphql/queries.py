"""Query: the catalogue and the caller's view of a match (its state, moves and history)."""

from typing import Any

import strawberry

from service.api.graphql.board import graphql_board_field
from service.matches.models import LOG_PAGE_MAX

from .context import Info
from .invitations import InvitationsQuery
from .players import PlayerQuery
from .queue import QueueQuery
from .results import READ_FAILURES, answer, result_union
from .tables import build_tables_query
from .types.match import MatchTypes
from .webhooks import WebhooksQuery


def build_query(types: MatchTypes, generated: dict[str, Any]) -> type:
    """The Query type: the fields ``generated`` from the operation table (``fields.py``),
    then the hand-written ones."""
    match_result = result_union(
        "MatchResult", types.state, READ_FAILURES, "The match as the caller sees it."
    )
    legal_moves_result = result_union(
        "LegalMovesResult", types.legal_moves, READ_FAILURES, "The caller's legal moves."
    )
    log_result = result_union(
        "LogResult", types.log_page, READ_FAILURES, "The match history the caller may see."
    )
    TablesQuery = build_tables_query(types)

    @strawberry.type(description="Reads. Send `Authorization: Bearer <seat token>` to read "
                     "as a seat; without it you are a spectator and see public information. "
                     "Texts and messages come in the request's language (`Accept-Language` "
                     "or `?lang=`: en, cs, de; docs/graphql.md).")
    class Query(PlayerQuery, QueueQuery, TablesQuery,  # type: ignore[valid-type,misc]
                InvitationsQuery, WebhooksQuery):
        locals().update(generated)

        @strawberry.field(description="A match as the caller (a seat, or a spectator) sees it.")
        async def match(self, info: Info, id: strawberry.ID) -> match_result:  # type: ignore[valid-type]
            ctx = info.context
            return await answer(
                READ_FAILURES,
                lambda: ctx.service.get_state(str(id), ctx.credentials()),
                types.from_state,
                ctx.lang,
            )

        @strawberry.field(description="The caller's legal moves now (none for a spectator).")
        async def legal_moves(
            self, info: Info, match_id: strawberry.ID
        ) -> legal_moves_result:  # type: ignore[valid-type]
            ctx = info.context
            return await answer(
                READ_FAILURES,
                lambda: ctx.service.legal_moves(str(match_id), ctx.credentials(), ctx.lang),
                types.from_legal_moves,
                ctx.lang,
            )

        @strawberry.field(
            description="Versions after `after`, with the events the caller may see; the "
            "caller's own moves include the action. At most `limit` entries (1 to "
            f"{LOG_PAGE_MAX}; more is BadRequest `malformed`): `nextAfter` is where the next "
            "page starts."
        )
        async def log(
            self, info: Info, match_id: strawberry.ID, after: int = 0,
            limit: int = LOG_PAGE_MAX,
        ) -> log_result:  # type: ignore[valid-type]
            ctx = info.context
            return await answer(
                READ_FAILURES,
                lambda: ctx.service.log(str(match_id), ctx.credentials(), after, ctx.lang,
                                        limit=limit),
                types.from_log,
                ctx.lang,
            )

        # The board as SVG, the same document as REST's board.svg (service/api/pictures.py).
        board_svg = graphql_board_field()

    return Query
