"""``MemoryStore``: the old embedded, in-process store -- kept only as the benchmarks' baseline.

Skyline's embedded store is SQLite (``service/store/sqlite.py``) since issue 12; this copy of
the store it replaced lives in ``bench/`` so that ``bench.store`` and ``bench.load`` can
measure the SQLite store against it in the same run (the issue's "at most 25 % slower"). It
is not part of the service and no test relies on it.

The old docstring:

Same contract as the Redis store (``base.py``), for one process and one event loop:

- Every operation runs without awaiting between its read and its write, so it is atomic
  with respect to other tasks of the loop; no lock is needed for the data itself.
- ``watch`` sleeps on an ``asyncio.Event`` that each write of the match sets and replaces
  (no polling): a watcher takes the current event *before* it looks at the log, so a write
  that lands between the look and the wait still wakes it.
- TTLs are honoured against an injectable clock (``clock=``, seconds, monotonic), so tests
  can move time forward instead of sleeping. Expired matches vanish on access and are swept
  periodically (every ``SWEEP_EVERY`` creates) so the process does not keep them; watchers of
  an expired match end when it vanishes.
- ``round_trips`` counts operations, for parity with the Redis store's counter -- except
  ``claim_due`` / ``resume_due``: the in-process bot worker polls them, and the counter
  measures what requests cost.
- Due signals (bot seats) are an in-process queue: a signal for a match already waiting in
  the queue is not queued twice; claimed signals stay pending until acknowledged and are
  reclaimed after ``reclaim_idle_ms`` on the store's clock.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import deque
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass, field

from service.store.base import (
    DUE_RECLAIM_IDLE_MS,
    DueSignal,
    LogEntry,
    MatchExists,
    MatchNotFound,
    write_tag,
)

__all__ = ["MemoryStore"]


@dataclass(slots=True)
class _Match:
    version: int
    record: bytes
    create_id: str | None
    expires_at: float | None
    log: list[LogEntry] = field(default_factory=list)  # log[i].version == i + 1
    # Set (and replaced) on every write and on deletion: wakes the watchers.
    changed: asyncio.Event = field(default_factory=asyncio.Event)


class MemoryStore:
    """In-process ``MatchStore``. ``clock`` returns seconds (``time.monotonic`` by default)."""

    #: Sweep expired matches after this many creates.
    SWEEP_EVERY = 256

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._matches: dict[str, _Match] = {}
        self._creates_since_sweep = 0
        self.round_trips = 0
        self._due: deque[DueSignal] = deque()  # signalled, not delivered yet
        self._due_queued: set[str] = set()  # match ids in ``_due``
        # token -> (signal, consumer, delivered at): delivered, not acknowledged yet
        self._due_pending: dict[str, tuple[DueSignal, str, float]] = {}
        self._due_serial = 0
        self._due_waiters: set[asyncio.Event] = set()  # one per blocked claim_due

    # -- helpers ---------------------------------------------------------------------------

    def _expires_at(self, ttl_seconds: int | None) -> float | None:
        if ttl_seconds is None:
            return None
        if ttl_seconds <= 0:
            raise ValueError("ttl_seconds must be positive or None")
        return self._clock() + ttl_seconds

    def _get(self, match_id: str) -> _Match | None:
        match = self._matches.get(match_id)
        if match is not None and match.expires_at is not None and match.expires_at <= self._clock():
            self._drop(match_id, match)
            return None
        return match

    def _require(self, match_id: str) -> _Match:
        match = self._get(match_id)
        if match is None:
            raise MatchNotFound(match_id)
        return match

    def _drop(self, match_id: str, match: _Match) -> None:
        del self._matches[match_id]
        match.changed.set()  # watchers see the match gone and end

    def _sweep(self) -> None:
        now = self._clock()
        for match_id, match in list(self._matches.items()):
            if match.expires_at is not None and match.expires_at <= now:
                self._drop(match_id, match)

    def ttl(self, match_id: str) -> float | None:
        """Seconds left before the match expires; None when it never does (test helper).
        Raises ``MatchNotFound``."""
        match = self._require(match_id)
        return None if match.expires_at is None else match.expires_at - self._clock()

    # -- the contract ----------------------------------------------------------------------

    async def create(
        self,
        match_id: str,
        record: bytes,
        ttl_seconds: int | None = None,
        *,
        write_id: str | None = None,
    ) -> None:
        self.round_trips += 1
        expires_at = self._expires_at(ttl_seconds)
        existing = self._get(match_id)
        if existing is not None:
            if write_id and existing.create_id == write_id:
                return
            raise MatchExists(match_id)
        self._creates_since_sweep += 1
        if self._creates_since_sweep >= self.SWEEP_EVERY:
            self._creates_since_sweep = 0
            self._sweep()
        self._matches[match_id] = _Match(0, bytes(record), write_id, expires_at)

    async def load(self, match_id: str) -> tuple[int, bytes]:
        self.round_trips += 1
        match = self._require(match_id)
        return match.version, match.record

    async def compare_and_set(
        self,
        match_id: str,
        expected_version: int,
        record: bytes,
        entry: bytes,
        ttl_seconds: int | None = None,
        *,
        write_id: str | None = None,
    ) -> bool:
        self.round_trips += 1
        expires_at = self._expires_at(ttl_seconds)
        match = self._require(match_id)
        if match.version != expected_version:
            # Idempotent retry: version expected+1 written by this very call (tag and bytes).
            # An empty write id counts as none, as on Redis.
            if not write_id or not 0 <= expected_version < len(match.log):
                return False
            landed = match.log[expected_version]
            return landed.write_tag == write_tag(write_id) and landed.data == entry
        new_version = expected_version + 1
        match.version = new_version
        match.record = bytes(record)
        match.log.append(
            LogEntry(new_version, bytes(entry), write_tag(write_id or uuid.uuid4().hex))
        )
        match.expires_at = expires_at
        changed, match.changed = match.changed, asyncio.Event()
        changed.set()
        return True

    async def log(self, match_id: str, after: int = 0) -> list[LogEntry]:
        self.round_trips += 1
        match = self._require(match_id)
        return match.log[max(after, 0) :]

    async def watch(self, match_id: str, after: int) -> AsyncGenerator[int, None]:
        match = self._require(match_id)
        last = max(after, 0)
        while True:
            changed = match.changed  # taken before looking: no lost wake-up
            current = self._get(match_id)
            if current is not match:
                return  # expired or gone (a re-created match is another history)
            while last < match.version:
                last += 1
                yield last
            if changed is match.changed:
                await changed.wait()

    async def signal_due(self, match_id: str, *, all_bots: bool = False) -> None:
        self.round_trips += 1
        if match_id in self._due_queued:
            return  # one undelivered signal per match is enough
        self._due_serial += 1
        self._due.append(DueSignal(f"{self._due_serial}-0", match_id, all_bots))
        self._due_queued.add(match_id)
        for waiter in self._due_waiters:
            waiter.set()

    async def claim_due(
        self,
        consumer: str,
        count: int = 16,
        block_ms: int = 1000,
        *,
        reclaim_idle_ms: int | None = DUE_RECLAIM_IDLE_MS,
        all_bots_first: int = 0,
    ) -> list[DueSignal]:
        now = self._clock()
        out: list[DueSignal] = []
        if reclaim_idle_ms is not None:
            for token, (signal, _, since) in list(self._due_pending.items()):
                if len(out) >= count:
                    break
                if (now - since) * 1000 >= reclaim_idle_ms:
                    self._due_pending[token] = (signal, consumer, now)
                    out.append(signal)
            if out:
                return out
        if not self._due and block_ms > 0:
            # An event per call, made on the caller's loop: the store may outlive a loop.
            arrived = asyncio.Event()
            self._due_waiters.add(arrived)
            try:
                await asyncio.wait_for(arrived.wait(), block_ms / 1000)
            except TimeoutError:
                return []
            finally:
                self._due_waiters.discard(arrived)
        now = self._clock()
        # Lanes: up to ``all_bots_first`` all-bot signals, then the human lane, then the rest.
        bots = [s for s in self._due if s.all_bots]
        humans = [s for s in self._due if not s.all_bots]
        first = bots[:max(0, min(all_bots_first, count))]
        chosen = first + [s for s in humans + bots if s not in first][:count - len(first)]
        for signal in chosen:
            self._due.remove(signal)
            self._due_queued.discard(signal.match_id)
            self._due_pending[signal.token] = (signal, consumer, now)
            out.append(signal)
        return out

    async def resume_due(self, consumer: str, count: int = 256) -> list[DueSignal]:
        mine = [s for s, owner, _ in self._due_pending.values() if owner == consumer]
        return mine[:count]

    async def ack_due(self, tokens: Sequence[str]) -> None:
        self.round_trips += 1
        for token in tokens:
            self._due_pending.pop(token, None)

    async def ping(self) -> bool:
        return True

    async def close(self) -> None:
        """Nothing to release; the data stays (the store object may be reused)."""
