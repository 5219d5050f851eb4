"""The ASGI application factory: wires the store, the match service, REST and GraphQL."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

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
from service.clocks import MIN_MOVE_SECONDS
from service.errors import ApiError
from service.i18n import N_
from service.limits import LimitSettings, storage_uri
from service.limits.tickets import TicketClaims
from service.live import (
    DEFAULT_MAX_WATCHERS,
    DEFAULT_MAX_WATCHERS_PER_CLIENT,
    DEFAULT_RESUME_WINDOW,
    LiveHub,
)
from service.live.replays import DEFAULT_RATE as DEFAULT_REPLAY_RATE
from service.live.replays import ReplayBudget
from service.lobby import QueueService
from service.lobby.invitations import InvitationService
from service.lobby.rematch import Rematch
from service.lobby.rules import TICKET_SECONDS
from service.lobby.tables import TableService
from service.matches import MatchService, live_gauges
from service.matches.storage import DEFAULT_WAITING_TTL
from service.matches.tickets import DEFAULT_TICKET_SECONDS
from service.metrics import Metrics
from service.notify import WebhookService, WebhookSettings
from service.players import PlayerService
from service.players.service import DEFAULT_AUDIENCE
from service.store import DEFAULT_DATA_DIR, DocStore, MatchStore, Schedules, SqliteStore
from service.workers.heartbeat import BEAT_SECONDS, DEFAULT_STALE_SECONDS

log = logging.getLogger("skyline")

DEFAULT_MAX_BODY_BYTES = 64 * 1024
EMBEDDED_WORKER = "embedded"
"""The bot worker's consumer name inside ``skyline serve`` on the embedded store."""


@dataclass(frozen=True)
class Settings:
    """Everything ``skyline serve`` configures (flags and SKYLINE_* environment)."""

    redis_url: str | None = None
    redis_cluster: str | None = None
    redis_prefix: str = "skyline:"
    redis_max_connections: int = 64
    """Command connections to Redis (per node on a cluster); watchers use one pub/sub
    connection per node besides."""
    allow_evicting_redis: bool = False
    """Start on a Redis whose ``maxmemory-policy`` evicts keys (``--allow-evicting-redis``;
    checked by ``skyline serve`` before the app is built: ``cli.check_redis_memory_policy``)."""
    data_dir: str = DEFAULT_DATA_DIR
    """The embedded store's folder (used without Redis); ``":memory:"``: nothing kept."""
    cors_origins: tuple[str, ...] = ()
    ttl_finished: int | None = 7 * 24 * 3600
    ttl_idle: int | None = 30 * 24 * 3600
    guest_ttl: float = 30 * 24 * 3600.0
    """Seconds a guest may stay idle before it expires (``--guest-ttl``; 0: never;
    ``service.players.expiry``)."""
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    sse_max_seconds: float | None = None
    """An event stream ends after this long (the client reconnects with ``Last-Event-ID``
    and loses nothing); None: only when the match ends."""
    max_watchers: int = DEFAULT_MAX_WATCHERS
    """Event streams and subscriptions one replica holds at once (past it: 503
    ``replica_full``)."""
    max_watchers_per_client: int = DEFAULT_MAX_WATCHERS_PER_CLIENT
    """Streams one client (a credential, else an address) holds on one replica (past it:
    429 ``too_many_streams``)."""
    resume_window: int = DEFAULT_RESUME_WINDOW
    replay_budget: float = DEFAULT_REPLAY_RATE
    """Versions per second one client's resumed streams may have replayed on this replica
    (twice that at once; ``live.replays``); 0, or ``--rate-limits off``: unlimited."""
    """A stream resumed at most this many versions behind gets each one; further behind,
    one snapshot of the current state."""
    stream_ticket_seconds: int = DEFAULT_TICKET_SECONDS
    """How long a stream ticket (``POST /v1/matches/{id}/stream-tickets``) is accepted."""
    queue_ticket_seconds: int = TICKET_SECONDS
    """A quick-match ticket not polled for this long expires (``--queue-ticket-seconds``)."""
    waiting_ttl: int = DEFAULT_WAITING_TTL
    """A match waiting for players that nobody touches for this long is cancelled
    (``--waiting-ttl``)."""
    jwt_audience: str = DEFAULT_AUDIENCE
    """The ``aud`` every app-signed JWT must carry (``--jwt-audience``)."""
    trusted_proxies: tuple[str, ...] = ()
    """Peers (addresses, CIDR ranges) whose ``X-Forwarded-For`` / ``-Proto`` (and
    ``X-Request-Id``) are believed; none by default (``service.api.proxies``)."""
    header_timeout: float | None = 10.0
    """Seconds ``skyline serve`` gives a client to send a request's line and headers (past
    them: 408, connection closed; ``service.api.serving``); None: no limit."""
    body_timeout: float | None = 30.0
    """Seconds ``skyline serve`` gives a client to send a request's body once its headers
    are in; None: no limit."""
    allow_chosen_seeds: bool = False
    """Take a creator's chosen seed whoever sits in the match (``--allow-chosen-seeds``); off,
    the default: refused (400 ``seed_not_allowed``) when players other than the creator sit
    there (docs/security.md, "Verifiable seeds (item 8)")."""
    min_move_seconds: int = MIN_MOVE_SECONDS
    """The shortest correspondence deadline (``secondsPerMove``) a new match may take
    (``--min-seconds-per-move``); shorter ones are 422 ``bad_time_control``."""
    limits: LimitSettings = field(default_factory=LimitSettings)
    """Rate limits per client and quotas of unfinished matches per creator, on by default
    (``--rate-limits``, ``--rate-create`` ..., ``--quota-*``; ``service.limits``)."""
    worker: bool = True
    """Run the worker loops (bots, clocks, webhooks) in this process, on any store (``serve
    --no-worker``: off; then ``skyline worker`` processes must run, or bot seats, deadlines
    and webhooks wait and ``/readyz`` says ``degraded``)."""
    heartbeat_seconds: float = BEAT_SECONDS
    """Seconds between two heartbeats of this process's worker loops (``--heartbeat-seconds``)."""
    worker_stale_seconds: float = DEFAULT_STALE_SECONDS
    """``/readyz`` reports ``degraded`` when no worker (in any process) has beaten for this
    long (``--worker-stale-seconds``; 0: no worker check)."""
    worker_options: dict[str, Any] = field(default_factory=dict)
    """Keyword arguments of ``service.workers.bots.BotWorker`` (concurrency, budget ...)."""
    webhooks: WebhookSettings = field(default_factory=WebhookSettings)
    """Webhook deliveries: the URL policy, timeouts, retries, disabling (``--webhook-*``;
    ``service.notify``). Delivered by the worker that runs the bots (in ``serve`` on the
    embedded store, else ``skyline worker``)."""
    extra: dict[str, Any] = field(default_factory=dict)


def replay_budget(settings: Settings) -> ReplayBudget:
    """The replay budgets the settings ask for (off with the rate limits)."""
    rate = settings.replay_budget if settings.limits.enabled else 0.0
    return ReplayBudget(rate=rate, burst=max(1, int(2 * rate)))


def open_store(settings: Settings) -> MatchStore:
    """The store the settings name: Redis (single node or cluster), else the embedded one."""
    from service.store import open_store as open_configured

    return open_configured(
        settings.redis_url, settings.redis_cluster, settings.redis_prefix,
        data_dir=settings.data_dir, redis_max_connections=settings.redis_max_connections,
    )


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


def create_app(store: MatchStore | None = None, *, settings: Settings | None = None,
               operations: Sequence[Operation] = OPERATIONS) -> Starlette:
    """The Skyline ASGI app. ``store``: an open store (tests); else one from ``settings``.
    ``operations``: the REST operations served (routes, OpenAPI document, budgets)."""
    settings = settings or Settings()
    redact_logged_credentials()  # ?ticket= never in the access log (issue 15)
    own_store = store is None
    the_store = store if store is not None else open_store(settings)
    metrics = Metrics()
    match_service = MatchService(
        the_store,
        ttl_finished=settings.ttl_finished,
        ttl_idle=settings.ttl_idle,
        metrics=metrics,
        hub=LiveHub(
            the_store, max_watchers=settings.max_watchers,
            max_watchers_per_client=settings.max_watchers_per_client,
            replays=replay_budget(settings),
        ),
        resume_window=settings.resume_window,
        stream_ticket_seconds=settings.stream_ticket_seconds,
        allow_chosen_seeds=settings.allow_chosen_seeds,
        min_move_seconds=settings.min_move_seconds,
    )
    match_service.storage.waiting_ttl = settings.waiting_ttl
    metrics.live = live_gauges(match_service)
    player_service = PlayerService(
        cast(DocStore, the_store), match_service, audience=settings.jwt_audience,
        guest_ttl=settings.guest_ttl,
    )
    queue_service = QueueService(
        cast(DocStore, the_store), player_service,
        ticket_seconds=settings.queue_ticket_seconds,
    )
    table_service = TableService(player_service, match_service)
    invitation_service = InvitationService(table_service)
    rematch = Rematch(table_service)
    webhook_service = WebhookService(cast(DocStore, the_store), player_service, match_service,
                                     settings.webhooks)
    # Stream and feed tickets are single-use (service.limits.tickets).
    ticket_claims = TicketClaims(storage_uri(settings.redis_url, settings.redis_cluster),
                                 key_prefix=settings.redis_prefix)
    limits = build_limits(
        settings.limits, the_store,
        uri=storage_uri(settings.redis_url, settings.redis_cluster),
        key_prefix=settings.redis_prefix,
    )
    queue_service.count_formed = formed_quota(limits)  # quick match counts quotas (issue 31)
    routes: list[BaseRoute] = [
        *rest_routes(operations),
        *graphql_routes(match_service, allowed_origins=list(settings.cors_origins),
                        players=player_service),
    ]
    from service.web import web_routes  # the reference client at /play (issue 6)

    routes += web_routes()

    embedded = isinstance(the_store, SqliteStore)
    worker_options = dict(settings.worker_options)
    if embedded:
        # One process owns the file: a fixed name lets a restarted server take back at once
        # the bot moves it had claimed when it stopped (``resume_due``).
        worker_options.setdefault("consumer", EMBEDDED_WORKER)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        app.state.worker = app.state.webhook_worker = app.state.clock_worker = None
        app.state.guest_worker = None
        app.state.heartbeat = None
        loops: list[tuple[Any, asyncio.Task[None]]] = []
        if settings.worker:
            from service.workers.bots import BotWorker
            from service.workers.clocks import ClockWorker
            from service.workers.guests import GuestWorker
            from service.workers.heartbeat import Heartbeat, member_name
            from service.workers.webhooks import WebhookWorker

            worker = BotWorker(match_service, **worker_options)
            app.state.worker = worker
            app.state.webhook_worker = WebhookWorker(webhook_service)
            app.state.clock_worker = ClockWorker(match_service.timeouts)
            # Idle guests expire (issue 31 item 6; docs/players.md).
            app.state.guest_worker = GuestWorker(player_service.expiry)
            for name, loop in (("bots", worker), ("webhooks", app.state.webhook_worker),
                               ("clocks", app.state.clock_worker),
                               ("guests", app.state.guest_worker)):
                loops.append((loop, asyncio.create_task(loop.run(), name=name)))
            heartbeat = Heartbeat(cast(Schedules, the_store), member_name("serve"),
                                  [task for _, task in loops],
                                  interval=settings.heartbeat_seconds)
            app.state.heartbeat = heartbeat
            loops.append((heartbeat, asyncio.create_task(heartbeat.run(), name="heartbeat")))
        try:
            yield
        finally:
            # The heartbeat first (no beat for loops that are stopping), the bots last.
            for loop, task in reversed(loops):
                loop.stop()
                if loop is app.state.worker:
                    task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                if loop is app.state.webhook_worker:
                    await webhook_service.aclose()
            if not loops:
                await webhook_service.aclose()
            await player_service.aclose()
            await limits.aclose()
            await ticket_claims.aclose()
            if own_store:
                await the_store.close()

    middleware = [
        # First: everything after it sees the client's address (service.api.proxies).
        Middleware(TrustedProxyHeaders, trusted=settings.trusted_proxies),
        Middleware(RequestMetrics, metrics=metrics),
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
    app.state.match_service = match_service
    app.state.player_service = player_service
    app.state.queue_service = queue_service
    app.state.table_service = table_service
    app.state.invitation_service = invitation_service
    app.state.rematch = rematch
    app.state.webhook_service = webhook_service
    app.state.store = the_store
    app.state.settings = settings
    app.state.limits = limits
    app.state.ticket_claims = ticket_claims
    from service.workers.heartbeat import worker_check

    app.state.worker_check = worker_check  # /readyz's worker check (api.rest.ops)
    app.state.openapi = build_openapi(operations)
    return app
