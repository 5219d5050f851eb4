"""Due signals: telling the bot workers that a bot seat of a match may have to act.

Bot seats are not played in a request: after every write that leaves a bot seat active, the
service signals the match as due (``store.signal_due``) and a worker (``service/workers``)
plays the bot through ``act_as_bot``. A read of a match whose active seats include a bot
signals it again (a signal lost between a write and its signal, e.g. when a replica died
there, is recovered by the next read).

A match every seat of which is a bot's is signalled in the all-bot lane, which workers
serve after the human lane (fair scheduling: ``service/workers/bots.py``).
"""

from __future__ import annotations

import logging
from typing import Any

from service.games.base import Engine
from service.store import StoreUnavailable

from .records import MatchRecord
from .storage import StoredMatches

log = logging.getLogger("skyline.service")

RESIGNAL_AFTER_SECONDS = 2.0
"""A read signals a match whose bot is to move again only after this long without a write."""
ALL_BOTS_RESIGNAL_FACTOR = 30
"""All-bot matches: a read signals them again only after 30 x ``resignal_after`` (60 s).
Their turns are scheduled last (fair scheduling, docs/bots.md), so waiting 2 s is normal for
them, and a duplicate signal on Redis (a stream entry each) would give the match an extra
move per turn of the queue for the rest of its game; their only lost signal (a hand-over
whose replica died before signalling) is rare."""


def all_bots(record: MatchRecord) -> bool:
    """Every seat of the match is a bot's: its signals go to the all-bot lane."""
    return len(record.bots) >= record.players


class DueSignals:
    def __init__(self, storage: StoredMatches) -> None:
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
        lane = all_bots(record)
        wait = self.resignal_after * (ALL_BOTS_RESIGNAL_FACTOR if lane else 1)
        if read and self.storage.clock() - record.updated < wait:
            return
        if not set(record.bots) & engine.active_seats(state):
            return
        try:
            await self.storage.store.signal_due(match_id, all_bots=lane)
        except StoreUnavailable:
            log.warning("could not signal match %s as due; the next read will", match_id)
