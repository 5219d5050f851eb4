"""Deadlines fired: a seat whose clock ran out is handed to a bot or forfeits, by the match's
timeout policy, as a version of its own (a ``timeout`` service entry, ``seat: null``).

Exactly once, however many workers: the schedule ``clocking.DEADLINES`` holds each match with
a running clock at its earliest deadline; a worker claims it with a lease (another worker
takes it over when the lease runs out), loads the match and stores the timeout by
compare-and-set at the version it judged. A move that lands first makes that write lose, and
the reloaded match no longer has the deadline (the move met it); a second worker that fired
the same deadline loses the same way. "Due" is judged by the store's clock (Redis ``TIME``),
never a replica's own, so a drifting replica cannot fire early.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from service.errors import ApiError
from service.games import get as get_engine

from . import absence
from .clocking import DEADLINES
from .due import DueSignals
from .records import LogRecord, MatchRecord
from .storage import MatchStorage

log = logging.getLogger("skyline.clocks")

MAX_ATTEMPTS = 16


@dataclass(frozen=True, slots=True)
class Fired:
    """One timeout stored: the match, the version that holds it, the seat, its deadline and
    when the write had landed (``fired_at``, ms of the store's clock: how late it fired)."""

    match_id: str
    version: int
    seat: int
    deadline: int
    fired_at: int


def timed_out(record: MatchRecord, seat: int, version: int, now_ms: int,
              updated: int) -> tuple[MatchRecord, dict[str, Any]]:
    """The record after ``seat`` ran out of time at ``version``, and its log entry."""
    policy = record.on_timeout
    deadline = record.deadlines()[seat]
    if policy is not None and policy.policy == "bot" and policy.bot is not None:
        after = absence.to_bot(record, seat, policy.bot, absence.TIMEOUT, version, now_ms,
                               updated)
        action: dict[str, Any] = {"type": absence.TIMEOUT, "seat": seat, "policy": "bot",
                                  "kind": policy.bot, "deadline": deadline}
    else:
        after = absence.forfeit(record, seat, absence.TIMEOUT, version, now_ms, updated)
        action = {"type": absence.TIMEOUT, "seat": seat, "policy": "forfeit",
                  "kind": absence.FORFEIT_BOT, "deadline": deadline}
    return after, action


class Timeouts:
    def __init__(self, storage: MatchStorage, due: DueSignals) -> None:
        self.storage = storage
        self.due = due

    async def fire(self, match_id: str, claimed_ms: int, now_ms: int) -> list[Fired]:
        """Fire every deadline of ``match_id`` passed at ``now_ms`` (the store's time of the
        claim), then put the match back in the schedule at its next deadline (or take it
        out). ``claimed_ms``: the lease the claim set (the settle's compare-and-set)."""
        storage = self.storage
        fired: list[Fired] = []
        for _ in range(MAX_ATTEMPTS):
            try:
                version, record = await storage.load(match_id)
            except ApiError as error:
                if error.code != "match_not_found":
                    raise
                await storage.schedule().schedule_settle(DEADLINES, match_id, claimed_ms, None)
                return fired
            deadlines = record.deadlines()
            due = sorted((at, seat) for seat, at in deadlines.items() if at <= now_ms)
            if not due:
                await self._settle(match_id, claimed_ms, deadlines)
                return fired
            deadline, seat = due[0]
            after, action = timed_out(record, seat, version + 1, now_ms, storage.now())
            stored = await storage.write(match_id, version, after,
                                         LogRecord(seat=None, action=action), before=record)
            if stored is None:
                storage.metrics.cas_conflict()
                continue  # a move (or another worker) came first: judge again
            fired.append(Fired(match_id, version + 1, seat, deadline,
                               await storage.store_clock.now_ms()))
            log.info("match %s: seat %d timed out (deadline %d, %s)", match_id, seat,
                     deadline, action["policy"])
            if stored.bots and not stored.finished:
                engine = get_engine(stored.game)
                await self.due.signal_if_due(match_id, engine, stored,
                                             engine.loads(stored.state))
        log.warning("match %s: deadlines not settled after %d attempts; the lease brings "
                    "them back", match_id, MAX_ATTEMPTS)
        return fired

    async def _settle(self, match_id: str, claimed_ms: int, deadlines: dict[int, int]) -> None:
        """The match back in the schedule at its next deadline. A write that lowered the
        entry meanwhile wins (the settle's compare-and-set fails); a write that landed after
        our load but could not lower the entry (it was leased later than its deadline) is
        caught by looking once more after the settle."""
        schedules = self.storage.schedule()
        at = min(deadlines.values(), default=None)
        await schedules.schedule_settle(DEADLINES, match_id, claimed_ms, at)
        try:
            _, record = await self.storage.load(match_id)
        except ApiError:
            return
        newest = record.deadlines()
        if newest and (at is None or min(newest.values()) < at):
            await schedules.schedule_lower(DEADLINES, match_id, min(newest.values()))
