"""Due signals: telling the bot workers that a bot seat of a match may have to act.

Bot seats are not played in a request: after every write that leaves a bot seat active, the
service signals the match as due (``store.signal_due``) and a worker (``service/workers``)
plays the bot through ``act_as_bot``. A read of a match whose active seats include a bot
signals it again (a signal lost between a write and its signal, e.g. when a replica died
there, is recovered by the next read).
"""

from __future__ import annotations

import logging
from typing import Any

from service.games.base import Engine
from service.store import StoreUnavailable

from .records import MatchRecord
from .storage import MatchStorage

log = logging.getLogger("skyline.service")

RESIGNAL_AFTER_SECONDS = 2.0
"""A read signals a match whose bot is to move again only after this long without a write."""


class DueSignals:
    def __init__(self, storage: MatchStorage) -> None:
        self.storage = storage
        self.resignal_after = RESIGNAL_AFTER_SECONDS

    async def signal_if_due(
        self, match_id: str, engine: Engine[Any], record: MatchRecord, state: Any,
        *, read: bool = False,
    ) -> None:
        """Signal the match as due when a bot seat is active (only then: a match without
        bots costs nothing). Best effort: the write is stored; a lost signal is sent again
        by a later read of the match (``read``): once the bot's turn has waited
        ``resignal_after`` seconds since the last write, so that clients polling while a
        bot thinks do not flood the workers with duplicates."""
        if not record.bots or record.finished:
            return
        if read and self.storage.clock() - record.updated < self.resignal_after:
            return
        if not set(record.bots) & engine.active_seats(state):
            return
        try:
            await self.storage.store.signal_due(match_id)
        except StoreUnavailable:
            log.warning("could not signal match %s as due; the next read will", match_id)
