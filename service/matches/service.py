"""``MatchService``: every match operation REST and GraphQL offer, behind one object.

The transports only translate: they parse a request, call one of these methods and render
the result or the ``ApiError``. The work is done by the modules beside this one, each with
one concern -- ``create`` (catalogue and new matches), ``read`` (views, legal moves, log),
``act`` (a player's write path), ``bot_seats`` (the workers' writes and hand-overs),
``watch`` (live versions), ``replay``, ``due`` (signals to the bot workers) and ``storage``
(records in the store). This class composes them; it decides nothing itself: its
operations are the parts' own methods (``create_match``, ``get_state``, ``legal_moves``,
``log``, ``act``, ``act_as_bot``, ``hand_seat_to_bot``, ``resign``, ``reclaim_seat``,
``issue_stream_ticket``, ``seat_of_ticket``), plus ``catalogue``, ``watch`` and ``ready``;
``subscribe`` registers who hears of every landed write and deadline warning.

It is constructed in one place, ``service.composition.build_services`` (tests aside).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable

from service.clocks import MIN_MOVE_SECONDS
from service.identity.callers import Credential
from service.live import DEFAULT_RESUME_WINDOW, LiveHub
from service.metrics import Metrics
from service.store import MatchStore

from . import create
from .act import Acting
from .away_seats import AwaySeats
from .bot_seats import BotSeats
from .due import DueSignals
from .models import GameInfo, MatchState
from .read import Reads
from .seat_players import SeatPlayers
from .seat_tickets import DEFAULT_TICKET_SECONDS, StreamTickets
from .storage import DEFAULT_WAITING_TTL, StoredMatches, Written
from .timeouts import Timeouts, Warner
from .watch import Watching

LiveFigure = tuple[str, str, str, dict[str, str], float]
"""(metric name, type, help, labels, value)."""
WriteListener = Callable[[Written], Awaitable[None]]
"""Hears of a write that landed (``MatchService.subscribe``)."""


class MatchService:
    """Hosts matches of every registered engine on a ``MatchStore``.

    ``ttl_finished`` / ``ttl_idle``: seconds a finished / an active match is kept after its
    last write (None: forever). ``allow_chosen_seeds``: take a creator's seed whoever sits
    in the match (``seeds.check_chosen_seed``; off: refused when other players sit there).
    ``min_move_seconds``: the shortest correspondence deadline a new match may take.
    ``waiting_ttl``: seconds a match waiting for players may go untouched before it is
    cancelled (None: never).
    """

    def __init__(
        self,
        store: MatchStore,
        *,
        ttl_finished: int | None,
        ttl_idle: int | None,
        metrics: Metrics | None = None,
        clock: Callable[[], float] = time.time,
        stream_ticket_seconds: int = DEFAULT_TICKET_SECONDS,
        hub: LiveHub | None = None,
        resume_window: int = DEFAULT_RESUME_WINDOW,
        allow_chosen_seeds: bool = False,
        min_move_seconds: int = MIN_MOVE_SECONDS,
        waiting_ttl: int | None = DEFAULT_WAITING_TTL,
    ) -> None:
        self.storage = StoredMatches(
            store, ttl_finished=ttl_finished, ttl_idle=ttl_idle,
            metrics=metrics or Metrics(), clock=clock,
        )
        self.storage.waiting_ttl = waiting_ttl
        self.due = DueSignals(self.storage)
        creation = create.Creation(self.storage, self.due,
                                   allow_chosen_seeds=allow_chosen_seeds,
                                   min_move_seconds=min_move_seconds)
        reads = Reads(self.storage, self.due)
        bots = BotSeats(self.storage, self.due)
        self.create_match = creation.create_match
        self.get_state = reads.get_state
        self.head = reads.head
        self.seated = reads.seated
        self.legal_moves = reads.legal_moves
        self.log = reads.log
        self.act = Acting(self.storage, self.due).act
        self.act_as_bot = bots.act_as_bot
        self.hand_seat_to_bot = bots.hand_seat_to_bot
        away = AwaySeats(self.storage, self.due)
        self.resign = away.resign
        self.reclaim_seat = away.reclaim
        self.timeouts = Timeouts(self.storage, self.due)
        seat_players = SeatPlayers(self.storage)
        self.rename_player = seat_players.rename_player
        self.renew_seat_token = seat_players.renew_seat_token
        self.load_record = self.storage.load
        self.load_records = self.storage.load_many
        stream_tickets = StreamTickets(self.storage, stream_ticket_seconds)
        self.issue_stream_ticket = stream_tickets.issue_stream_ticket
        self.seat_of_ticket = stream_tickets.seat_of_ticket
        self.hub = hub or LiveHub(store)
        self.watching = Watching(self.storage, self.hub, resume_window=resume_window)
        self.follow = self.watching.follow

    def subscribe(self, on_write: WriteListener | None = None, *,
                  on_warning: Warner | None = None) -> None:
        """Register listeners: ``on_write`` hears of every write that landed, once it is
        stored (its failure is logged, never the writer's: ``StoredMatches.tell``);
        ``on_warning`` of every deadline warning the clock worker fires (``Timeouts``).
        The player feed and the webhooks subscribe so."""
        if on_write is not None:
            self.storage.listeners.append(on_write)
        if on_warning is not None:
            self.timeouts.warners.append(on_warning)

    @property
    def store(self) -> MatchStore:
        return self.storage.store

    @property
    def metrics(self) -> Metrics:
        return self.storage.metrics

    @property
    def resignal_after(self) -> float:
        """Seconds a bot's turn waits after a write before a read signals it again."""
        return self.due.resignal_after

    @resignal_after.setter
    def resignal_after(self, seconds: float) -> None:
        self.due.resignal_after = seconds

    async def catalogue(self) -> list[GameInfo]:
        return create.catalogue()

    async def watch(
        self, match_id: str, token: Credential, after: int
    ) -> AsyncIterator[MatchState]:
        """Every version > ``after`` as the caller sees it, whole (``follow`` in full mode;
        a caller more than the resume window behind gets the current version first)."""
        async for event in self.follow(match_id, token=token, after=after):
            yield event.state

    def live_figures(self) -> list[LiveFigure]:
        """The live side's figures for ``/metrics``: watchers, watched matches, pub/sub
        connections, wake-ups, deliveries, resumes by kind and refused streams; and the
        writes a full store refused."""
        hub, watching = self.hub, self.watching
        pubsub = float(getattr(self.store, "pubsub_connections", 0))
        figures: list[LiveFigure] = [
            ("skyline_live_watchers", "gauge", "Event streams and subscriptions open now.",
             {}, float(hub.watchers)),
            ("skyline_live_matches", "gauge", "Matches with a watcher on this replica.",
             {}, float(hub.topics)),
            ("skyline_live_pubsub_connections", "gauge",
             "Pub/sub connections this replica holds to the store (one per shard node).",
             {}, pubsub),
            ("skyline_live_wakeups_total", "counter",
             "New versions the replica's store watches saw (one per version per watched "
             "match, however many watch it).", {}, float(hub.wakeups)),
            ("skyline_live_deliveries_total", "counter",
             "Events delivered to watchers.", {}, float(watching.deliveries)),
            ("skyline_live_watch_retries_total", "counter",
             "Store watches of watched matches started again after the store failed (the "
             "streams stay open; only a lasting outage ends them).", {},
             float(getattr(hub, "watch_retries", 0))),
            ("skyline_store_full_total", "counter",
             "Writes the store refused for want of room (Redis at maxmemory under "
             "noeviction, a full disk under the embedded store), each answered 503 "
             "store_full.", {}, float(getattr(self.store, "full_refusals", 0))),
        ]
        for kind, count in sorted(watching.resumes.items()):
            figures.append(("skyline_live_resumes_total", "counter",
                            "Streams resumed behind the newest version, by kind (replay: "
                            "each missed version; snapshot: the current state).",
                            {"kind": kind}, float(count)))
        for reason, count in sorted(hub.refused.items()):
            figures.append(("skyline_live_refused_total", "counter",
                            "Streams refused by a cap, by code.", {"code": reason},
                            float(count)))
        return figures

    async def ready(self) -> bool:
        return await self.storage.ready()
