"""The GraphQL API (Strawberry): typed per-game views, moves and action inputs generated from
the engines, expected failures as union results, and a ``matchUpdated`` subscription over
``graphql-transport-ws``. See docs/graphql.md.

Entry points: ``build_schema()`` and ``graphql_routes(match_service, allowed_origins=...)``.
"""

from .routes import graphql_routes
from .schema import build_schema, sdl

__all__ = ["build_schema", "graphql_routes", "sdl"]
