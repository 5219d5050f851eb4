"""Worker heartbeats: every process that runs the worker loops (bots, clocks, webhooks) --
``skyline worker``, and ``skyline serve`` unless ``--no-worker`` -- says so in the store
every ``BEAT_SECONDS`` while all its loops run (``Heartbeat``); ``/readyz`` reads the
beats (``worker_check``) and reports ``degraded``, with the reason, when none came for
``--worker-stale-seconds``: bot seats, deadlines and webhooks then wait for nobody.

A beat is one atomic store step (``Schedules.beat``): the member's time is set by the
store's clock, members silent for ``KEEP_MS`` are dropped, and the whole group expires
``KEEP_MS`` after the last beat, so the beats of workers long gone never pile up.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import socket
from collections.abc import Sequence
from typing import Any

from service.errors import ApiError
from service.store import Schedules, StoreUnavailable

log = logging.getLogger("skyline.heartbeat")

GROUP = "workers"
"""The heartbeat group every worker beats in (Redis: ``{prefix}beats:workers``)."""
BEAT_SECONDS = 5.0
"""Seconds between two beats of a worker (``--heartbeat-seconds``)."""
DEFAULT_STALE_SECONDS = 30.0
"""``/readyz`` says ``degraded`` when no worker has beaten for this long
(``--worker-stale-seconds``)."""
KEEP_MS = 24 * 3600 * 1000
"""Beats are kept (and the group lives) this long after a worker's last beat."""
READ_SECONDS = 1.0
"""How long ``/readyz`` waits for the beats before it says it could not read them."""


def member_name(kind: str, name: str | None = None) -> str:
    """A worker's name in the group: ``kind:name`` (default ``kind:host:pid``), with any
    character a store key may not hold replaced by ``_``."""
    raw = f"{kind}:{name or f'{socket.gethostname()}:{os.getpid()}'}"
    return re.sub(r"[^A-Za-z0-9:._-]", "_", raw)[:200]


class Heartbeat:
    """Beats for ``member`` every ``interval`` seconds while every task of ``loops`` runs;
    stops beating (and says why) as soon as one of them ends, so a worker whose loop died
    is seen as gone. A store that does not answer is logged and tried again next beat."""

    def __init__(self, store: Schedules, member: str, loops: Sequence[asyncio.Task[Any]], *,
                 interval: float = BEAT_SECONDS) -> None:
        self.store = store
        self.member = member
        self.loops = list(loops)
        self.interval = max(0.05, interval)
        self.count = 0
        """Beats stored so far."""
        self._stopping = asyncio.Event()

    def stop(self) -> None:
        self._stopping.set()

    async def run(self) -> None:
        while not self._stopping.is_set():
            ended = [task for task in self.loops if task.done()]
            if ended:
                log.error("worker %s: a worker loop ended (%s); no more heartbeats, so "
                          "/readyz reports degraded once they are stale", self.member,
                          ", ".join(task.get_name() for task in ended))
                return
            try:
                await self.store.beat(GROUP, self.member, KEEP_MS)
                self.count += 1
            except (ApiError, StoreUnavailable) as error:
                log.warning("worker %s: could not write its heartbeat (%s)", self.member,
                            error)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), self.interval)


async def worker_check(store: Schedules, stale_seconds: float) -> dict[str, Any]:
    """The ``worker`` entry of ``/readyz``'s ``checks``: ``status`` ``ok`` when a worker
    beat within ``stale_seconds``, else ``degraded`` with a ``reason``; ``workers``: how
    many beat within it; ``lastBeatSecondsAgo``: the newest beat's age (None: none kept)."""
    try:
        now, beats = await asyncio.wait_for(store.beats(GROUP), READ_SECONDS)
    except (TimeoutError, ApiError, StoreUnavailable):
        return {"status": "degraded", "workers": None, "lastBeatSecondsAgo": None,
                "reason": "the worker heartbeats could not be read from the store in time"}
    stale_ms = stale_seconds * 1000
    alive = sum(1 for _, at in beats if now - at <= stale_ms)
    last = round(max(0, now - beats[0][1]) / 1000, 1) if beats else None
    check: dict[str, Any] = {"status": "ok" if alive else "degraded", "workers": alive,
                             "lastBeatSecondsAgo": last}
    if not alive:
        since = ("no worker has ever beaten (or none in the last day)" if last is None
                 else f"the last heartbeat was {last:g} s ago")
        check["reason"] = (
            f"no worker has written a heartbeat for {stale_seconds:g} s ({since}): bot "
            "seats, deadlines of timed matches and webhooks wait until one runs -- run "
            "`skyline worker`, or `skyline serve` without --no-worker")
    return check
