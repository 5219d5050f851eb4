"""Per-client replay budgets: what one client's resumed streams may cost a replica.

A resumed stream (``Last-Event-ID``, GraphQL ``matchUpdated(after:)``) whose versions are no
longer among the match's shared frames is replayed for that watcher alone: the engine
re-runs the moves, and each version is rendered. That is the one thing a watcher can make a
replica compute on its own (live versions are framed once per match and shared), so it is
what a client is budgeted on (issue 31, item 8: 60 concurrent replays of the 100-version
resume window pushed unrelated GETs to 5 s).

Each client -- the key its streams are counted under (``LiveHub.admit``: a verified
credential of its own, else the sender's address) -- has a token bucket of replayed
versions: ``burst`` at most, refilled at ``rate`` per second. A replay within the bucket
starts at once; one beyond it waits until the bucket has refilled enough (the stream is
paced, nothing is lost); one that would wait more than ``max_wait`` seconds is not replayed
at all: the watcher gets a snapshot of the current version instead (a ``snapshot`` event
after a gap, as for a watcher further behind than the resume window; docs/api.md section 5).
Buckets live in this process's memory (each replica spends its own CPU), at most
``capacity`` of them (the least recently used forgotten: a forgotten bucket is full).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

DEFAULT_RATE = 200
"""Replayed versions per second per client (a full resume window every half second)."""
DEFAULT_BURST = 400
"""Replayed versions a client may use at once (four resume windows)."""
DEFAULT_MAX_WAIT = 10.0
"""Seconds a replay may wait for its client's bucket; beyond it, a snapshot instead."""
CAPACITY = 50_000


@dataclass(slots=True)
class _Bucket:
    tokens: float
    at: float


class ReplayBudget:
    """Token buckets of replayed versions, one per client (module doc). ``rate`` <= 0:
    unlimited (``--replay-budget off``)."""

    def __init__(self, *, rate: float = DEFAULT_RATE, burst: int = DEFAULT_BURST,
                 max_wait: float = DEFAULT_MAX_WAIT, capacity: int = CAPACITY,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self.burst = max(burst, 1)
        self.max_wait = max_wait
        self.capacity = capacity
        self.clock = clock
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()
        self.paced = 0
        """Replays that waited for their client's bucket (metrics, tests)."""
        self.refused = 0
        """Replays answered with a snapshot instead (metrics, tests)."""

    @property
    def enabled(self) -> bool:
        return self.rate > 0

    def charge(self, client: str, versions: int) -> float | None:
        """Take ``versions`` from ``client``'s bucket: the seconds to wait before replaying
        them (0: at once), or None when that would be longer than ``max_wait`` (nothing is
        taken then: replay nothing, send a snapshot)."""
        if not self.enabled or versions <= 0:
            return 0.0
        now = self.clock()
        bucket = self._buckets.get(client)
        if bucket is None:
            bucket = _Bucket(float(self.burst), now)
            self._buckets[client] = bucket
            while len(self._buckets) > self.capacity:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(client)
            bucket.tokens = min(float(self.burst), bucket.tokens + (now - bucket.at) * self.rate)
            bucket.at = now
        # A replay larger than the bucket is charged as a full bucket (it waits for one).
        cost = float(min(versions, self.burst))
        wait = max(0.0, (cost - bucket.tokens) / self.rate)
        if wait > self.max_wait:
            self.refused += 1
            return None
        bucket.tokens -= cost  # may go below 0: later replays wait behind this one
        if wait > 0:
            self.paced += 1
        return wait
