"""The composition root: ``build_services(settings, store)`` constructs every service once,
from one ``Settings``, for every command -- ``skyline serve`` (``service.app.create_app``),
``worker``, ``show`` and ``verify`` -- and ``Services.worker_loops`` the worker loops that
``skyline worker`` and ``serve`` run, so both run with the same settings.

Nothing else in ``service`` constructs a ``MatchService`` (tests/test_composition.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from service.invitations import InvitationService
from service.live import LiveHub
from service.live.replays import ReplayBudget
from service.matches import MatchService, live_gauges
from service.metrics import Metrics
from service.players import PlayerService
from service.queue import QueueService
from service.settings import Settings
from service.store import DocStore, MatchStore, SqliteStore
from service.tables import Rematch, TableService
from service.webhooks import WebhookService
from service.workers.loops import WorkerLoops

EMBEDDED_WORKER = "embedded"
"""The bot worker's consumer name inside ``skyline serve`` on the embedded store: one
process owns the file, and a fixed name lets a restarted server take back at once the bot
moves it had claimed when it stopped (``resume_due``)."""


def replay_budget(settings: Settings) -> ReplayBudget:
    """The replay budgets the settings ask for (off with the rate limits)."""
    rate = float(settings.replay_budget) if settings.limit_settings().enabled else 0.0
    return ReplayBudget(rate=rate, burst=max(1, int(2 * rate)))


def open_store(settings: Settings) -> MatchStore:
    """The store the settings name: Redis (single node or cluster), else the embedded one."""
    from service.store import open_store as open_configured

    return open_configured(
        settings.redis_url, settings.redis_cluster, settings.redis_prefix,
        data_dir=settings.data_dir, redis_max_connections=settings.redis_max_connections,
    )


@dataclass
class Services:
    """Every service of one process, each constructed once (``build_services``)."""

    settings: Settings
    store: MatchStore
    metrics: Metrics
    matches: MatchService
    players: PlayerService
    queue: QueueService
    tables: TableService
    invitations: InvitationService
    rematch: Rematch
    webhooks: WebhookService

    def worker_loops(self, kind: str) -> WorkerLoops:
        """The worker loops (bots, webhooks, clocks, guests, heartbeat) of a ``kind``
        process (``serve``, ``worker``), configured by the settings."""
        options: dict[str, Any] = self.settings.bot_options
        if isinstance(self.store, SqliteStore):
            options.setdefault("consumer", EMBEDDED_WORKER)
        return WorkerLoops(self.matches, self.players, self.webhooks, kind=kind,
                           bot_options=options,
                           heartbeat_seconds=self.settings.heartbeat_seconds)

    async def aclose(self) -> None:
        """Close what the services hold besides the store (HTTP clients, counters)."""
        await self.webhooks.aclose()
        await self.players.aclose()


def build_services(settings: Settings, store: MatchStore) -> Services:
    """Every service on ``store``, as ``settings`` configure them. The player feed and the
    webhooks hear of the matches' writes through ``MatchService.subscribe``."""
    metrics = Metrics()
    matches = MatchService(
        store,
        ttl_finished=settings.ttl_finished,
        ttl_idle=settings.ttl_idle,
        metrics=metrics,
        hub=LiveHub(store, max_watchers=settings.max_watchers,
                    max_watchers_per_client=settings.max_watchers_per_client,
                    replays=replay_budget(settings)),
        resume_window=settings.resume_window,
        stream_ticket_seconds=settings.stream_ticket_seconds,
        allow_chosen_seeds=settings.allow_chosen_seeds,
        min_move_seconds=settings.min_seconds_per_move,
        waiting_ttl=settings.waiting_ttl,
    )
    metrics.live = live_gauges(matches)
    docs = cast(DocStore, store)
    players = PlayerService(docs, matches, audience=settings.jwt_audience,
                            guest_ttl=settings.guest_ttl)
    tables = TableService(players, matches)
    return Services(
        settings=settings, store=store, metrics=metrics, matches=matches, players=players,
        queue=QueueService(docs, players, ticket_seconds=settings.queue_ticket_seconds),
        tables=tables, invitations=InvitationService(tables), rematch=Rematch(tables),
        webhooks=WebhookService(docs, players, matches, settings.webhook_settings()),
    )
