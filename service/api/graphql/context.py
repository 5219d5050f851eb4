"""The typed context every resolver receives, and how a request's token gets into it.

HTTP requests carry ``Authorization: Bearer <seat token>``; WebSocket connections
(``graphql-transport-ws``) carry it in the ``connection_init`` payload instead
(``{"authorization": "Bearer <seat token>"}``), because browsers cannot set headers on a
WebSocket. No token means a spectator. A malformed one is remembered as ``auth_error`` so
that every operation answers ``Unauthorized`` instead of silently treating the caller as a
spectator.

The language of the answers' texts (``lang``) is the HTTP request's (``lang`` query
parameter, else ``Accept-Language``); a WebSocket takes the upgrade request's, or a ``lang``
member of the ``connection_init`` payload (``{"lang": "cs"}``), which wins.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeAlias

import strawberry
from starlette.requests import Request
from starlette.responses import Response
from starlette.websockets import WebSocket

from service.api.credentials import bearer_token
from service.errors import ApiError
from service.i18n import DEFAULT_LANGUAGE, Lang
from service.identity.callers import Credential
from service.matches import MatchService
from service.players import PlayerService


@dataclass
class Context:
    service: MatchService
    request: Request | WebSocket
    response: Response | WebSocket | None = None
    token: Credential = None
    """The caller: a seat token, a checked player or app (``resolve``); None for a
    spectator."""
    players: PlayerService | None = None
    """Checks player tokens, JWTs and app keys (None: only seat tokens are known)."""
    auth_error: ApiError | None = None
    """Set when the caller sent credentials that are not a bearer token."""
    connection_params: dict[str, Any] | None = field(default=None)
    """The ``connection_init`` payload of a WebSocket connection (set by Strawberry)."""
    lang: Lang = DEFAULT_LANGUAGE
    """The language of texts and problem messages in the answers."""

    def authenticate(self, authorization: str | None) -> None:
        """Take the token from an ``Authorization`` value (header or connection_init)."""
        try:
            self.token = bearer_token(authorization)
            self.auth_error = None
        except ApiError as error:
            self.token, self.auth_error = None, error

    async def resolve(self) -> None:
        """Check a player token, JWT or app key taken by ``authenticate`` (a seat token is
        checked by the match itself); a refusal is remembered like a malformed header."""
        token = self.token
        if self.auth_error is not None or not isinstance(token, str):
            return
        if self.players is None:
            if not token.startswith("sky_"):
                self.token, self.auth_error = None, ApiError.of(
                    "unauthorized", "Not a seat token.")
            return
        try:
            self.token = await self.players.authenticate(token)
        except ApiError as error:
            self.token, self.auth_error = None, error

    def credentials(self) -> Credential:
        """The caller's token (None: spectator); raises the ``ApiError`` of bad credentials."""
        if self.auth_error is not None:
            raise self.auth_error
        return self.token


Info: TypeAlias = strawberry.Info[Context, None]

