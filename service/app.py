"""The ASGI application factory: the services from ``service.composition.build_services``,
REST and GraphQL routes, the middleware, and the worker loops in the lifespan."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Sequence

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import BaseRoute
from starlette.types import ASGIApp

from service.api.compression import Compression
from service.api.graphql import graphql_routes
from service.api.languages import ContentLanguage, lang_of
from service.api.logs import install as redact_logged_credentials
from service.api.middleware import BodyLimit, RequestMetrics
from service.api.openapi import build_openapi
from service.api.operations import OPERATIONS, Operation
from service.api.problems import problem_response
from service.api.proxies import TrustedProxyHeaders
from service.api.rate_limits import Budgets, RateLimits, build_limits, formed_quota
from service.api.request_ids import RequestIds
from service.api.rest import rest_routes
from service.composition import (
    EMBEDDED_WORKER,
    Services,
    build_services,
    open_store,
    replay_budget,
)
from service.errors import ApiError
from service.i18n import N_
from service.limits.ticket_claims import TicketClaims
from service.settings import Settings, default_of
from service.store import MatchStore
from service.workers.loops import WorkerLoops

log = logging.getLogger("skyline")

DEFAULT_MAX_BODY_BYTES: int = default_of("max_body_bytes")
__all__ = ["EMBEDDED_WORKER", "Settings", "create_app", "open_store", "replay_budget"]


EXPOSED_HEADERS = (
    "ETag", "Location", "Retry-After", "Content-Language", "X-Match-Version",
    # Rate limits (IETF httpapi draft: RateLimit / RateLimit-Policy, and the older
    # RateLimit-Limit / -Remaining / -Reset trio).
    "RateLimit", "RateLimit-Policy", "RateLimit-Limit", "RateLimit-Remaining",
    "RateLimit-Reset",
    "X-Request-Id",  # every answer's id (service.api.request_ids, issue 20)
)
"""Response headers browser code may read on a cross-origin answer."""


def cors_methods(routes: list[BaseRoute]) -> list[str]:
    """The methods the routes answer (a new DELETE or PATCH route is allowed as it
    appears), and OPTIONS."""
    methods = {"OPTIONS"}
    for route in routes:
        methods |= set(getattr(route, "methods", None) or ())
    return sorted(methods)


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return problem_response(exc, lang_of(request))


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    code = {404: "not_found", 405: "method_not_allowed", 413: "body_too_large"}.get(
        exc.status_code, "malformed"
    )
    error = ApiError(exc.status_code, code, str(exc.detail), str(exc.detail))
    response = problem_response(error, lang_of(request))
    for name, value in (exc.headers or {}).items():
        response.headers[name] = value
    return response


async def _unexpected(request: Request, exc: Exception) -> Response:
    if isinstance(exc, ClientDisconnect):
        # The client left (or was cut for sending too slowly, service.api.serving) before its
        # request was read: nothing to answer, no error of ours.
        log.info("client gone before its request was read: %s %s", request.method,
                 request.url.path)
        return Response(status_code=400)  # never sent: the connection is closed
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    # Sent by Starlette's outermost middleware: the language headers are set here.
    lang = lang_of(request)
    response = problem_response(
        ApiError(500, "internal", N_("Internal error"), N_("An unexpected error.")), lang
    )
    response.headers["Content-Language"] = lang
    response.headers["Vary"] = "Accept-Language"
    return response


class SkylineApp(Starlette):
    """Starlette with ``RequestIds`` outside its whole stack, error middleware included: a
    500 from any middleware, a 404 and a 405 carry the request id too."""

    trusted_proxies: tuple[str, ...] = ()

    def build_middleware_stack(self) -> ASGIApp:
        return RequestIds(super().build_middleware_stack(), trusted=self.trusted_proxies)


def expose_services(app: Starlette, services: Services) -> None:
    """Put ``services`` in ``app.state``, under the names the handlers read them by."""
    app.state.services = services
    app.state.match_service = services.matches
    app.state.player_service = services.players
    app.state.queue_service = services.queue
    app.state.table_service = services.tables
    app.state.invitation_service = services.invitations
    app.state.rematch = services.rematch
    app.state.webhook_service = services.webhooks
    app.state.settings = services.settings


def create_app(store: MatchStore | None = None, *, settings: Settings | None = None,
               operations: Sequence[Operation] = OPERATIONS) -> Starlette:
    """The Skyline ASGI app. ``store``: an open store (tests); else one from ``settings``.
    ``operations``: the REST operations served (routes, OpenAPI document, budgets)."""
    settings = settings or Settings()
    redact_logged_credentials()  # ?ticket= never in the access log (issue 15)
    own_store = store is None
    the_store = store if store is not None else open_store(settings)
    services = build_services(settings, the_store)
    # Stream and feed tickets are single-use (service.limits.ticket_claims).
    ticket_claims = TicketClaims(settings.counting_uri, key_prefix=settings.redis_prefix)
    limits = build_limits(settings.limit_settings(), the_store, uri=settings.counting_uri,
                          key_prefix=settings.redis_prefix)
    services.queue.count_formed = formed_quota(limits)  # quick match counts quotas (issue 31)
    routes: list[BaseRoute] = [
        *rest_routes(operations),
        *graphql_routes(services.matches, allowed_origins=list(settings.cors_origins),
                        players=services.players, operations=operations),
    ]
    from service.web import web_routes  # the reference client at /play (issue 6)

    routes += web_routes()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        app.state.worker = app.state.webhook_worker = app.state.clock_worker = None
        app.state.guest_worker = app.state.heartbeat = None
        loops: WorkerLoops | None = None
        if settings.worker:
            # The same loops, with the same settings, as `skyline worker` (composition).
            loops = services.worker_loops("serve")
            loops.start()
            app.state.worker, app.state.webhook_worker = loops.bots, loops.webhooks
            app.state.clock_worker, app.state.guest_worker = loops.clocks, loops.guests
            app.state.heartbeat = loops.heartbeat
        try:
            yield
        finally:
            if loops is not None:
                await loops.close(cancel_bots=True)
            await services.aclose()
            await limits.aclose()
            await ticket_claims.aclose()
            if own_store:
                await the_store.close()

    middleware = [
        # First: everything after it sees the client's address (service.api.proxies).
        Middleware(TrustedProxyHeaders, trusted=settings.trusted_proxies),
        Middleware(RequestMetrics, metrics=services.metrics),
        Middleware(Compression),  # zstd/br/gzip as accepted; SSE flushed per event (issue 15)
        Middleware(ContentLanguage),  # Content-Language and Vary on every answer
        Middleware(
            CORSMiddleware,
            allow_origins=list(settings.cors_origins),
            allow_methods=cors_methods(routes),
            allow_headers=[
                "Authorization", "Content-Type", "If-Match", "If-None-Match",
                "Idempotency-Key", "Last-Event-ID",
            ],
            expose_headers=list(EXPOSED_HEADERS),
            max_age=600,
        ),
        # Inside CORS (a browser may read a 429's headers), before anything reads a body.
        Middleware(RateLimits, limits=limits, budgets=Budgets.of(operations)),
        Middleware(BodyLimit, max_bytes=settings.max_body_bytes),
    ]
    app = SkylineApp(
        routes=routes,
        middleware=middleware,
        exception_handlers={
            ApiError: _api_error,
            HTTPException: _http_error,
            Exception: _unexpected,
        },
        lifespan=lifespan,
    )
    app.trusted_proxies = settings.trusted_proxies
    expose_services(app, services)
    app.state.store = the_store
    app.state.limits = limits
    app.state.ticket_claims = ticket_claims
    from service.workers.heartbeat import worker_check

    app.state.worker_check = worker_check  # /readyz's worker check (api.rest.ops)
    app.state.openapi = build_openapi(operations)
    return app
