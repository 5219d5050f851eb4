"""``graphql_routes``: one Strawberry ASGI app on ``/graphql`` for HTTP and WebSockets.

Authentication: HTTP reads ``Authorization: Bearer <seat token>``; a WebSocket reads the same
value from the ``connection_init`` payload (``{"authorization": "Bearer <token>"}``) and falls
back to the upgrade request's header (for non-browser clients). A payload whose credentials
cannot be a seat token is refused at ``connection_init`` (close code 4403); when the payload
also names the match (``"matchId"``), the token is checked against that match there and then.
A token is otherwise checked by each operation, which answers ``Unauthorized`` on its own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import strawberry
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL
from strawberry.exceptions import ConnectionRejectionError
from strawberry.subscriptions import GRAPHQL_TRANSPORT_WS_PROTOCOL

from service.errors import ApiError
from service.identity.seats import TOKEN_PREFIX
from service.matches import MatchService

from .context import Context, authorization_of

_TOKEN_SHAPE = re.compile(re.escape(TOKEN_PREFIX) + r"[A-Za-z0-9_-]{32,128}")


class SkylineGraphQL(GraphQL):
    """Strawberry's ASGI app with our context and WebSocket authentication."""

    def __init__(
        self,
        schema: strawberry.Schema,
        service: MatchService,
        *,
        allowed_origins: Sequence[str] = (),
    ) -> None:
        super().__init__(
            schema,
            graphql_ide=None,
            subscription_protocols=(GRAPHQL_TRANSPORT_WS_PROTOCOL,),
            connection_init_wait_timeout=timedelta(seconds=10),
            max_subscriptions_per_connection=16,
            allowed_origins=allowed_origins,
        )
        self.service = service

    async def get_context(  # type: ignore[override]
        self, request: Request | WebSocket, response: Response | WebSocket
    ) -> Context:
        context = Context(service=self.service, request=request, response=response)
        context.authenticate(request.headers.get("authorization"))
        return context

    async def on_ws_connect(self, context: Context) -> Any:  # type: ignore[override]
        params = context.connection_params or {}
        authorization = authorization_of(params)
        if authorization is None:
            if context.auth_error is not None:
                raise ConnectionRejectionError()
            return strawberry.UNSET  # a spectator, or a token from the upgrade headers
        context.authenticate(authorization)
        token = context.token
        if context.auth_error is not None or token is None or not _TOKEN_SHAPE.fullmatch(token):
            raise ConnectionRejectionError()
        match_id = params.get("matchId")
        if isinstance(match_id, str):
            try:
                await self.service.get_state(match_id, token)
            except ApiError as error:
                raise ConnectionRejectionError({"code": error.code}) from None
        return strawberry.UNSET


def graphql_app(
    match_service: MatchService, *, allowed_origins: Sequence[str] = ()
) -> SkylineGraphQL:
    from .schema import build_schema

    return SkylineGraphQL(build_schema(), match_service, allowed_origins=allowed_origins)


def graphql_routes(
    match_service: MatchService, *, allowed_origins: list[str]
) -> list[BaseRoute]:
    """``/graphql`` over HTTP (POST, and GET for queries) and WebSocket."""
    app = graphql_app(match_service, allowed_origins=allowed_origins)
    return [
        Route("/graphql", app, methods=["GET", "POST"], name="graphql"),
        WebSocketRoute("/graphql", app, name="graphql-ws"),
    ]
