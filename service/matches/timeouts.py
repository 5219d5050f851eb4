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
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from service.errors import ApiError
from service.games import get as get_engine

from . import absence
from .clocking import DEADLINES, wake_at, warnings_due
from .due import DueSignals
from .records import LogRecord, MatchRecord
from .storage import StoredMatches

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


def after_timeout(record: MatchRecord, seat: int, version: int, now_ms: int,
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


Warner = Callable[[str, int, MatchRecord, int, int], Awaitable[None]]
"""``(match_id, version, record, seat, deadline)``: tell the seat's player its deadline is
near (the player feed's ``timeout_soon``); called at every look inside the warning window,
so it must be idempotent (the feed appends once per activation)."""


class Timeouts:
    def __init__(self, storage: StoredMatches, due: DueSignals) -> None:
        self.storage = storage
        self.due = due
        self.warners: list[Warner] = []

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
                await self._warn(match_id, version, record, now_ms)
                await self._settle(match_id, claimed_ms, record, now_ms)
                return fired
            deadline, seat = due[0]
            after, action = after_timeout(record, seat, version + 1, now_ms, storage.now())
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

    async def _warn(self, match_id: str, version: int, record: MatchRecord,
                    now_ms: int) -> None:
        for seat, deadline in warnings_due(record, now_ms).items():
            for warner in self.warners:
                try:
                    await warner(match_id, version, record, seat, deadline)
                except Exception:
                    log.exception("match %s: warning seat %d failed", match_id, seat)

    async def _settle(self, match_id: str, claimed_ms: int, record: MatchRecord,
                      now_ms: int) -> None:
        """The match back in the schedule at its next wake-up. A write that lowered the
        entry meanwhile wins (the settle's compare-and-set fails); a write that landed after
        our load but could not lower the entry (it was leased later than its wake-up) is
        caught by looking once more after the settle."""
        schedules = self.storage.schedule()
        at = wake_at(record, now_ms)
        await schedules.schedule_settle(DEADLINES, match_id, claimed_ms, at)
        try:
            _, newest = await self.storage.load(match_id)
        except ApiError:
            return
        again = wake_at(newest, now_ms)
        if again is not None and (at is None or again < at):
            await schedules.schedule_lower(DEADLINES, match_id, again)
