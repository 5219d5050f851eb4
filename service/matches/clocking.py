"""Seat clocks as the match service writes: the store's time and how a write moves them.

``StoredMatches`` calls ``clocked`` on every write of a started match, so every path that
stores a version (moves, bots, hand-overs, joins that set the game up, timeouts) keeps the
clocks right without knowing of them. The time is the store's (``StoreClock``: Redis
``TIME``, SQLite the host's), never a replica's own, so replicas whose clocks drift agree on
every deadline. The rules never see any of it (``service.clocks`` is pure).
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from service import games
from service.clocks import start_clocks, step_clocks
from service.store import Schedules

from .records import LogRecord, MatchRecord

DEADLINES = "deadlines"
"""The store schedule of matches with a running clock: member = match id, due at its next
wake-up (``wake_at``: a deadline, or the time to warn a seat of one;
``service/workers/clocks.py`` fires them)."""

REFRESH_SECONDS = 10.0
"""How long a ``StoreClock`` trusts its offset before it asks the store again."""


class StoreClock:
    """Milliseconds of the store's clock, read from the store at most every
    ``REFRESH_SECONDS`` and extrapolated with the local clock in between.

    The offset is taken as ``store time - local time before asking``: the store read its
    clock after we read ours, so the estimate is never behind the store's clock -- a stamp
    (a clock's start) is never early and a deadline computed from it never fires before its
    time; it may be late by the round trip (a millisecond or two)."""

    def __init__(self, store: Schedules, local: Callable[[], float] = time.time) -> None:
        self.store = store
        self.local = local
        self.offset_ms: int | None = None
        self.checked = float("-inf")

    async def now_ms(self) -> int:
        local = self.local()
        stale = local - self.checked >= REFRESH_SECONDS or local < self.checked
        if self.offset_ms is None or stale:
            before = self.local()
            store_ms = await self.store.store_time_ms()
            self.offset_ms = store_ms - int(before * 1000)
            self.checked = before
            local = self.local()
        return int(local * 1000) + self.offset_ms

    def peek_ms(self) -> int:
        """The store's time as last estimated, without asking the store (views' ``serverTime``:
        before the first write, the local clock)."""
        return int(self.local() * 1000) + (self.offset_ms or 0)


def warn_at(record: MatchRecord, deadline: int) -> int:
    """When the seat whose clock runs out at ``deadline`` is warned (``timeout_soon``)."""
    if record.time_control is None:
        return deadline  # no time control, no warning window
    return deadline - record.time_control.warn_before_ms


def wake_at(record: MatchRecord, now_ms: int) -> int | None:
    """When the clock worker must next look at the match: the earliest of each running
    seat's warning time (while it is still ahead) or else its deadline; None: never."""
    times = []
    for deadline in record.deadlines().values():
        warn = warn_at(record, deadline)
        times.append(warn if warn > now_ms else deadline)
    return min(times, default=None)


def warnings_due(record: MatchRecord, now_ms: int) -> dict[int, int]:
    """seat -> deadline of each seat inside its warning window at ``now_ms``."""
    return {seat: deadline for seat, deadline in record.deadlines().items()
            if warn_at(record, deadline) <= now_ms < deadline}


_ACTIVE: OrderedDict[tuple[str, bytes], frozenset[int]] = OrderedDict()
_ACTIVE_SIZE = 512


def active_seats(record: MatchRecord) -> frozenset[int]:
    """The seats that may act in ``record`` (none once finished); remembered by the state's
    digest, since the write before computed the same state's."""
    if not record.started or record.finished:
        return frozenset()
    key = (record.game, hashlib.blake2b(record.state, digest_size=16).digest())
    found = _ACTIVE.get(key)
    if found is not None:
        _ACTIVE.move_to_end(key)
        return found
    engine: Any = games.get(record.game)
    state = engine.loads(record.state)
    seats = frozenset() if engine.result(state) is not None else frozenset(
        engine.active_seats(state))
    _ACTIVE[key] = seats
    if len(_ACTIVE) > _ACTIVE_SIZE:
        _ACTIVE.popitem(last=False)
    return seats


def clocked(before: MatchRecord | None, after: MatchRecord, entry: LogRecord | None,
            version: int, now_ms: int,
            actives: Callable[[MatchRecord], frozenset[int]] = active_seats) -> MatchRecord:
    """``after`` (to be stored as ``version``) with its seat clocks moved by this write.

    A match whose game is set up by this write (or stored before clocks) gets its clocks
    started; a write that set the clocks itself (a timeout, a resignation, a reclaim) keeps
    them; otherwise they step from the active seats before to those after, the mover being
    the entry's seat (a service entry, ``seat: null``, moves nobody). ``actives``: the seats
    that may act in a record (a replay, ``headers.py``, knows them from its replayed
    states)."""
    if not after.started:
        return after
    if before is None or not before.started or not before.clocks:
        if after.clocks:
            return after
        return replace(after, clocks=start_clocks(
            after.time_control, after.players, actives(after), now_ms, version))
    if after.clocks != before.clocks:
        return after
    mover = entry.seat if entry is not None else None
    if after.state == before.state and after.finished == before.finished and mover is None:
        return after
    clocks = step_clocks(after.time_control, after.clocks, actives(before),
                         actives(after), mover, now_ms, version)
    return after if clocks == after.clocks else replace(after, clocks=clocks)
