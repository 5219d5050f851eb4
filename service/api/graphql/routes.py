"""``graphql_routes``: one Strawberry ASGI app on ``/graphql`` for HTTP and WebSockets.

Authentication: HTTP reads ``Authorization: Bearer <seat token>``; a WebSocket reads the same
value from the ``connection_init`` payload (``{"authorization": "Bearer <token>"}``) and falls
back to the upgrade request's header (for non-browser clients). ``connection_init`` is
refused by closing the socket with a code of its own and the problem ``code`` as the reason:
4400 ``malformed`` (the payload is not an object, or a member has the wrong type), 4401
``unauthorized`` (credentials that are not a seat token, or no seat of the named match), 4403
(a valid credential that may not read the named match), 4404 ``match_not_found`` (the payload
names a match, ``"matchId"``, that does not exist). A token is otherwise checked by each
operation, which answers ``Unauthorized`` on its own.

HTTP: ``GET /graphql`` without a query serves GraphiQL to a browser (``Accept: text/html``)
and a 405 problem to anything else; a request the transport refuses (a body that is not JSON,
an unsupported media type, no query) is an ``application/problem+json`` document with its
``code``, like every REST refusal, never plain text. A subscription sent over HTTP is such a
refusal (400 ``malformed``) whose detail names the WebSocket URL and protocol to use instead.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from datetime import timedelta
from typing import Any, cast

import strawberry
from cross_web import HTTPException
from graphql import GraphQLError
from graphql import parse as parse_graphql
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL
from strawberry.http.base import BaseRequestProtocol
from strawberry.http.exceptions import WebSocketDisconnected
from strawberry.subscriptions import GRAPHQL_TRANSPORT_WS_PROTOCOL
from strawberry.subscriptions.protocols.graphql_transport_ws.handlers import (
    BaseGraphQLTransportWSHandler,
)
from strawberry.subscriptions.protocols.graphql_transport_ws.types import (
    ConnectionInitMessage,
)
from strawberry.types.graphql import OperationType
from strawberry.utils.operation import get_operation_type

from service.errors import ApiError
from service.i18n import T, negotiate
from service.identity.seats import TOKEN_PREFIX
from service.matches import MatchService
from service.players import PlayerService

from ..bodies import MAX_JSON_DEPTH, is_json_media, too_deep
from ..languages import lang_of
from ..operations.base import Operation
from ..problems import problem_response
from .context import Context

_log = logging.getLogger(__name__)

_TOO_DEEP = f"The JSON nests more than {MAX_JSON_DEPTH} levels deep."
_TOKEN_SHAPE = re.compile(re.escape(TOKEN_PREFIX) + r"[A-Za-z0-9_-]{32,128}")
ALLOW = "GET, POST"


class Rejected(Exception):
    """``connection_init`` refused: the socket closes with ``close_code`` and the problem
    ``code`` as the reason."""

    def __init__(self, error: ApiError) -> None:
        super().__init__(error.detail)
        self.error = error

    @property
    def close_code(self) -> int:
        status = self.error.status
        if 400 <= status < 500:
            return 4000 + status
        return 1013 if status == 503 else 1011  # try again later / internal error


def client_went_away(error: BaseException) -> bool:
    """Whether ``error`` (or an exception it was raised from) is the client's WebSocket
    closing under a send: the client's choice, not the server's failure."""
    seen: BaseException | None = error
    for _ in range(16):
        if seen is None:
            return False
        if isinstance(seen, WebSocketDisconnected):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


class TransportWS(BaseGraphQLTransportWSHandler[Any, Any]):
    """graphql-transport-ws with our close codes for a refused ``connection_init``, and
    without an ERROR traceback when a subscriber closes its socket while a message is being
    sent to it (found by the soak test: Strawberry logs that as "Exception in worker
    task")."""

    async def handle_task_exception(self, error: Exception) -> None:
        if client_went_away(error):
            _log.debug("A subscriber closed its WebSocket during a send.")
            return
        await super().handle_task_exception(error)

    async def handle_connection_init(self, message: ConnectionInitMessage) -> None:
        payload = message.get("payload")
        if payload is None:  # the protocol allows a missing or null payload
            message = cast("ConnectionInitMessage", {**message, "payload": {}})
        elif not isinstance(payload, dict):
            await self.websocket.close(code=4400, reason="malformed")
            return
        try:
            await super().handle_connection_init(message)
        except Rejected as rejection:
            await self.websocket.close(code=rejection.close_code, reason=rejection.error.code)


def _malformed(detail: str) -> Rejected:
    return Rejected(ApiError.of("malformed", detail))


def _problem_of(error: HTTPException) -> ApiError:
    """A transport refusal of Strawberry's as the problem REST would answer."""
    status, reason = error.status_code, str(error.reason)
    if reason == "Unsupported content type":
        return ApiError.of("unsupported_media_type", "Send the request as application/json.")
    code = {400: "malformed", 404: "not_found", 405: "method_not_allowed",
            413: "body_too_large", 415: "unsupported_media_type"}.get(status)
    if code is None:
        return ApiError(status, "malformed" if status < 500 else "internal", reason, reason)
    return ApiError.of(code, reason)


class SkylineGraphQL(GraphQL):
    """Strawberry's ASGI app with our context, WebSocket authentication and problem
    documents for transport errors."""

    graphql_transport_ws_handler_class = TransportWS

    def __init__(
        self,
        schema: strawberry.Schema,
        service: MatchService,
        *,
        allowed_origins: Sequence[str] = (),
    ) -> None:
        super().__init__(
            schema,
            graphql_ide="graphiql",
            subscription_protocols=(GRAPHQL_TRANSPORT_WS_PROTOCOL,),
            connection_init_wait_timeout=timedelta(seconds=10),
            max_subscriptions_per_connection=16,
            allowed_origins=allowed_origins,
        )
        self.service = service
        self.players: PlayerService | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        request = Request(scope=_content_type_normalized(scope), receive=receive)
        response: Response
        if request.method == "GET" and "query" not in request.query_params and not (
            _wants_html(request.headers.get("accept", ""))
        ):
            response = problem_response(ApiError.of(
                "method_not_allowed",
                "Send GraphQL as POST (application/json), or a query as GET ?query=...; "
                "a browser (Accept: text/html) gets GraphiQL here.",
            ))
            response.headers["Allow"] = ALLOW
        elif request.method == "POST" and not is_json_media(request.headers.get("content-type")):
            # Strawberry would take any type that contains "application/json"; a body must
            # be declared JSON exactly as on REST, and an empty one needs no type.
            if await request.body():
                response = problem_response(ApiError.of(
                    "unsupported_media_type", "Send the request as application/json."))
            else:
                response = problem_response(ApiError.of(
                    "malformed", "Send the operation as a JSON object with a query."))
        else:
            try:
                response = await self.run(request)
            except ApiError as error:  # a client's mistake found before execution
                response = problem_response(error, lang_of(request))
            except HTTPException as error:
                response = problem_response(_problem_of(error))
                if error.status_code == 405:
                    response.headers["Allow"] = ALLOW
        await response(scope, receive, send)

    async def execute_single(
        self, request: Any, request_adapter: Any, sub_response: Any, context: Any,
        root_value: Any, request_data: Any,
    ) -> Any:
        """An HTTP operation; a subscription is refused before execution (it needs a
        WebSocket: over HTTP it used to run as a query and fail with "Unexpected error.")."""
        if _is_subscription(request_data.query, request_data.operation_name):
            raise subscription_over_http(request)
        return await super().execute_single(request, request_adapter, sub_response, context,
                                            root_value, request_data)

    def parse_json(self, data: str | bytes) -> Any:
        """A request body or the ``variables`` of a GET, refused (400 ``malformed``) when
        nested deeper than ``MAX_JSON_DEPTH``, before it is parsed."""
        if too_deep(data):
            raise HTTPException(400, _TOO_DEEP)
        return super().parse_json(data)

    def decode_json(self, data: str | bytes) -> object:
        """A body or WebSocket message: JSON nested too deep, or bytes that are not text, are
        not JSON to the protocol (400 ``malformed``; on a WebSocket the connection closes
        with 4400, as for any message that cannot be read)."""
        if too_deep(data):
            raise json.JSONDecodeError(_TOO_DEEP, "", 0)
        try:
            return super().decode_json(data)
        except UnicodeDecodeError as error:
            # Bytes that are not UTF-8 (or UTF-16/32) are no JSON either: 400 malformed on
            # HTTP, 4400 on a WebSocket, as any unreadable body (json.loads raises this one
            # instead of JSONDecodeError).
            raise json.JSONDecodeError("The body is not UTF-8 text.", "", 0) from error

    def should_render_graphql_ide(self, request: BaseRequestProtocol) -> bool:
        return (
            request.method == "GET"
            and request.query_params.get("query") is None
            and _wants_html(request.headers.get("accept", ""))
        )

    async def get_context(  # type: ignore[override]
        self, request: Request | WebSocket, response: Response | WebSocket
    ) -> Context:
        context = Context(service=self.service, request=request, response=response,
                          lang=lang_of(request), players=self.players)
        context.authenticate(request.headers.get("authorization"))
        await context.resolve()
        return context

    async def on_ws_connect(self, context: Context) -> Any:  # type: ignore[override]
        params = context.connection_params or {}
        authorization: str | None = None
        for key, value in params.items():
            if key.lower() == "authorization":
                if not isinstance(value, str):
                    raise _malformed("connection_init: authorization must be a string.")
                authorization = value
        match_id = params.get("matchId")
        if match_id is not None and not isinstance(match_id, str):
            raise _malformed("connection_init: matchId must be a string.")
        lang = params.get("lang")  # the texts' language: en, cs, de (else English)
        if lang is not None and not isinstance(lang, str):
            raise _malformed("connection_init: lang must be a string.")
        if lang is not None:
            context.lang = negotiate(None, lang)
        if authorization is not None:
            context.authenticate(authorization)
            token = context.token
            if context.auth_error is None and token is None:
                context.auth_error = ApiError.of("unauthorized", "Not a bearer credential.")
            await context.resolve()
        # else: a spectator, or a token from the upgrade request's headers
        if context.auth_error is not None:
            raise Rejected(context.auth_error)
        if match_id is not None:
            try:
                await self.service.get_state(match_id, context.token)
            except ApiError as error:
                raise Rejected(error) from None
        return strawberry.UNSET


def _is_subscription(query: object, operation_name: str | None) -> bool:
    """Whether the operation ``query`` runs (by ``operation_name``) is a subscription; a
    query that does not parse, or names no operation, is left to the executor's own
    errors."""
    if not isinstance(query, str):
        return False
    try:
        document = parse_graphql(query)
        return get_operation_type(document, operation_name) == OperationType.SUBSCRIPTION
    except (GraphQLError, RuntimeError, RecursionError):
        return False


def websocket_url(request: Request) -> str:
    """``ws://`` (``wss://`` behind TLS) + the host the request named + this path."""
    scheme = "wss" if request.url.scheme in ("https", "wss") else "ws"
    return f"{scheme}://{request.url.netloc}{request.url.path}"


def subscription_over_http(request: Request) -> ApiError:
    """400 ``malformed``: subscriptions are served over a WebSocket only."""
    return ApiError.of("malformed", T(
        "A subscription needs a WebSocket: connect to {url} with the {protocol} protocol "
        "(Sec-WebSocket-Protocol: {protocol}, e.g. the graphql-ws client) and send it as a "
        "subscribe message. HTTP serves queries and mutations only (docs/graphql.md).",
        url=websocket_url(request), protocol=GRAPHQL_TRANSPORT_WS_PROTOCOL))


def _content_type_normalized(scope: Scope) -> Scope:
    """``scope`` with a JSON ``Content-Type`` (any case, ``+json``, parameters) as
    ``application/json``, the one spelling Strawberry reads as JSON."""
    headers = scope["headers"]
    for index, (name, value) in enumerate(headers):
        if name == b"content-type" and value != b"application/json" and is_json_media(
            value.decode("latin-1")
        ):
            headers = [*headers[:index], (name, b"application/json"), *headers[index + 1:]]
            return {**scope, "headers": headers}
    return scope


def _wants_html(accept: str) -> bool:
    return "text/html" in accept.lower()


def graphql_app(
    match_service: MatchService, *, allowed_origins: Sequence[str] = (),
    players: PlayerService | None = None, operations: Sequence[Operation] | None = None,
) -> SkylineGraphQL:
    from .schema import build_schema

    app = SkylineGraphQL(build_schema(operations), match_service,
                         allowed_origins=allowed_origins)
    app.players = players
    return app


def graphql_routes(
    match_service: MatchService, *, allowed_origins: list[str],
    players: PlayerService | None = None, operations: Sequence[Operation] | None = None,
) -> list[BaseRoute]:
    """``/graphql`` over HTTP (POST, and GET for queries) and WebSocket; ``operations``:
    the table its Query and Mutation fields are generated from (default: the whole)."""
    app = graphql_app(match_service, allowed_origins=allowed_origins, players=players,
                      operations=operations)
    return [
        Route("/graphql", app, methods=["GET", "POST"], name="graphql"),
        WebSocketRoute("/graphql", app, name="graphql-ws"),
    ]
