"""Request ids (issue 20): every response carries ``X-Request-Id``, every problem document
names it (``requestId``) and every log line written while the request is handled names it.

The id is the one a trusted proxy (``service.api.proxies``) sent, when it is sane (1 to
``MAX_LENGTH`` token characters), else a new one (32 hex digits). ``RequestIds`` wraps the
whole app, outside Starlette's error middleware, so that a 500 from any middleware, a 404 and
a WebSocket handshake carry it too. While a request is handled the id is in
``current_request_id`` (a context variable: each request is its own task), which
``service.api.logs`` stamps on every log record and ``service.api.problems`` on every problem.
"""

from __future__ import annotations

import contextlib
import re
import uuid
from collections.abc import Iterable, MutableMapping
from contextvars import ContextVar
from typing import Any, Final

from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .proxies import TrustedProxies, from_trusted_proxy, mark_peer

HEADER: Final = "X-Request-Id"
_HEADER_KEY: Final = b"x-request-id"
SCOPE_KEY: Final = "skyline.request_id"
MAX_LENGTH: Final = 128
SANE: Final = re.compile(rf"[A-Za-z0-9._~:+/=@-]{{1,{MAX_LENGTH}}}")
"""What a proxy's id may hold: token characters a log line and a header carry as they are
(no spaces, quotes, commas, ``%`` or control characters)."""

current_request_id: ContextVar[str | None] = ContextVar("skyline_request_id", default=None)


def new_request_id() -> str:
    return uuid.uuid4().hex


def is_sane(value: str) -> bool:
    return SANE.fullmatch(value) is not None


def request_id_of(scope: MutableMapping[str, Any]) -> str | None:
    """The id given to this request (None before ``RequestIds`` saw it)."""
    found = scope.get(SCOPE_KEY)
    return found if isinstance(found, str) else None


def choose_request_id(scope: MutableMapping[str, Any]) -> str:
    """The trusted proxy's sane ``X-Request-Id``, else a new id."""
    if from_trusted_proxy(scope):
        for name, value in scope.get("headers", ()):
            if name == _HEADER_KEY:
                text = str(value.decode("latin-1")).strip()
                if is_sane(text):
                    return text
                break
    return new_request_id()


def _with_id(headers: Iterable[tuple[bytes, bytes]], request_id: str) -> list[tuple[bytes, bytes]]:
    kept = [(name, value) for name, value in headers if name.lower() != _HEADER_KEY]
    kept.append((_HEADER_KEY, request_id.encode("ascii")))
    return kept


class RequestIds:
    """Gives every HTTP request and WebSocket connection its id (scope, context variable,
    response header). Outermost: it decides for itself whether the peer is a trusted proxy,
    with the same list as ``TrustedProxyHeaders``."""

    def __init__(self, app: ASGIApp, trusted: Iterable[str] = ()) -> None:
        self.app = app
        self.trusted = TrustedProxies(trusted)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        mark_peer(scope, self.trusted)
        request_id = choose_request_id(scope)
        scope[SCOPE_KEY] = request_id

        async def send_with_id(message: Message) -> None:
            kind = message["type"]
            if kind in ("http.response.start", "websocket.accept",
                        "websocket.http.response.start"):
                message = {**message, "headers": _with_id(message.get("headers") or (),
                                                          request_id)}
            await send(message)

        token = current_request_id.set(request_id)
        # A client gone before its request was read: logged (``app._unexpected``), and the
        # server has nobody to answer.
        with contextlib.suppress(ClientDisconnect):
            await self.app(scope, receive, send_with_id)
        # Reset only on the way out of a handled request: when an error escapes, the server's
        # own log line about it still names the id (the request's task ends with it).
        current_request_id.reset(token)
