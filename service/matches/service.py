"""``MatchService``: every match operation REST and GraphQL offer, behind one object.

The transports only translate: they parse a request, call one of these methods and render
the result or the ``ApiError``. The work is done by the modules beside this one, each with
one concern -- ``create`` (catalogue and new matches), ``read`` (views, legal moves, log),
``act`` (a player's write path), ``bot_seats`` (the workers' writes and hand-overs),
``watch`` (live versions), ``replay``, ``due`` (signals to the bot workers) and ``storage``
(records in the store). This class composes them; it decides nothing itself: its
operations are the parts' own methods (``create_match``, ``get_state``, ``legal_moves``,
``log``, ``act``, ``act_as_bot``, ``hand_seat_to_bot``), plus ``catalogue``, ``watch`` and
``ready``.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable

from service.metrics import Metrics
from service.store import MatchStore

from . import create, watch
from .act import Acting
from .bot_seats import BotSeats
from .due import DueSignals
from .models import GameInfo, MatchState
from .read import Reads
from .storage import MatchStorage


class MatchService:
    """Hosts matches of every registered engine on a ``MatchStore``.

    ``ttl_finished`` / ``ttl_idle``: seconds a finished / an active match is kept after its
    last write (None: forever).
    """

    def __init__(
        self,
        store: MatchStore,
        *,
        ttl_finished: int | None,
        ttl_idle: int | None,
        metrics: Metrics | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.storage = MatchStorage(
            store, ttl_finished=ttl_finished, ttl_idle=ttl_idle,
            metrics=metrics or Metrics(), clock=clock,
        )
        self.due = DueSignals(self.storage)
        creation = create.Creation(self.storage, self.due)
        reads = Reads(self.storage, self.due)
        bots = BotSeats(self.storage, self.due)
        self.create_match = creation.create_match
        self.get_state = reads.get_state
        self.legal_moves = reads.legal_moves
        self.log = reads.log
        self.act = Acting(self.storage, self.due).act
        self.act_as_bot = bots.act_as_bot
        self.hand_seat_to_bot = bots.hand_seat_to_bot

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

    def watch(self, match_id: str, token: str | None, after: int) -> AsyncIterator[MatchState]:
        """Every version > ``after`` as the caller sees it (``watch.watch``)."""
        return watch.watch(self.storage, match_id, token, after)

    async def ready(self) -> bool:
        return await self.storage.ready()
