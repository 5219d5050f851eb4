"""Query: the capabilities' hand-written fields and those generated from the operation
table (``fields.py``: the games, a match, its legal moves, log and board, ...)."""

from typing import Any

import strawberry

from .players import PlayerQuery
from .queue import QueueQuery
from .tables import build_tables_query
from .types.match import MatchTypes


def build_query(types: MatchTypes, generated: dict[str, Any]) -> type:
    """The Query type: the capability mixins' hand-written fields, then the fields
    ``generated`` from the operation table (in its order)."""
    TablesQuery = build_tables_query(types)

    @strawberry.type(description="Reads. Send `Authorization: Bearer <seat token>` to read "
                     "as a seat; without it you are a spectator and see public information. "
                     "Texts and messages come in the request's language (`Accept-Language` "
                     "or `?lang=`: en, cs, de; docs/graphql.md).")
    class Query(PlayerQuery, QueueQuery, TablesQuery):  # type: ignore[valid-type,misc]
        locals().update(generated)  # the class body's namespace: generated fields first

    return Query
