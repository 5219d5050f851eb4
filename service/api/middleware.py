"""ASGI middleware of the REST app: request-body limit (413 as a problem) and metrics."""

from __future__ import annotations

import json
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.errors import ApiError
from service.i18n import T
from service.metrics import Metrics

from .languages import lang_of_scope
from .problems import problem_body


class _TooLarge(Exception):
    pass


async def _send_problem(send: Send, error: ApiError, scope: Scope | None = None) -> None:
    body = json.dumps(problem_body(error, lang_of_scope(scope) if scope else "en")).encode()
    await send({
        "type": "http.response.start",
        "status": error.status,
        "headers": [
            (b"content-type", b"application/problem+json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ],
    })
    await send({"type": "http.response.body", "body": body})


def _without_body(scope: Scope) -> bool:
    """A GET or HEAD that declares no body: nothing to limit (and an event stream that
    holds no wrapper of its ``receive`` for as long as it is open)."""
    return scope.get("method") in ("GET", "HEAD") and not any(
        name in (b"content-length", b"transfer-encoding") for name, _ in scope["headers"]
    )


class BodyLimit:
    """Refuse request bodies over ``max_bytes`` with 413 ``body_too_large``, before the
    handler sees them (by ``Content-Length`` up front, or while streaming)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or _without_body(scope):
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = 0
                if declared > self.max_bytes:
                    await _send_problem(send, self._too_large(), scope)
                    return
        received = 0
        started = False

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise _TooLarge
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except _TooLarge:
            if started:
                raise
            await _send_problem(send, self._too_large(), scope)

    def _too_large(self) -> ApiError:
        return ApiError.of(
            "body_too_large",
            T("Request bodies are limited to {limit} bytes.", limit=self.max_bytes),
        )


KNOWN_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
"""Methods that are metric labels as they are; any other method string is ``other``."""
OTHER_METHOD = "other"
UNMATCHED_ROUTE = "unmatched"
"""The one route label of every path no route matches."""


def method_label(method: str) -> str:
    """A bounded label: a known method, else ``other`` (a client may send any token)."""
    return method if method in KNOWN_METHODS else OTHER_METHOD


class RequestMetrics:
    """Count requests by method, route template and status; time them by route.

    Labels come from bounded sets only (issue 20): the known methods (else ``other``) and
    the app's route templates (else ``unmatched``), so no client can grow ``/metrics``."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def recording_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, recording_send)
        finally:
            route = scope.get("route")
            template = getattr(route, "path", None) or UNMATCHED_ROUTE
            self.metrics.observe_request(
                method_label(scope["method"]), template, status, time.perf_counter() - started
            )
