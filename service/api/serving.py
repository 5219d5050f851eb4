"""The uvicorn server of ``skyline serve``: it tells the live streams when it starts stopping,
and it runs the garbage collector so that thousands of streams do not stall the replica.

uvicorn waits for open connections to close before it runs the app's shutdown (for up to
its graceful-shutdown timeout), so an app learns of a SIGTERM too late to say goodbye to its
event streams. This server calls ``on_stopping`` (``LiveHub.shutdown``: every stream ends
with a jittered ``retry:``, issue 15) as soon as the signal arrives, then stops as uvicorn
does.

Garbage collection: a replica holding 5,000 streams tracks about 1.7 million objects, nearly
all of them long-lived (each stream's tasks, coroutines and buffers). CPython's default
thresholds ran a full collection every few seconds while moves were delivered, each one
stopping the replica for about two seconds and finding nothing to free (measured with the
fan-out benchmark, ``docs/performance.md``). ``tune_collector`` freezes what the app holds
once built, keeps the young collections (they free the short-lived cycles of each request)
and leaves full collections to this server: one every ``FULL_COLLECTION_SECONDS``.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import socket
from collections.abc import Callable
from types import FrameType

import uvicorn

YOUNG_THRESHOLD = 20_000
"""New tracked objects between young collections (CPython's default: 700)."""
MIDDLE_THRESHOLD = 5
"""Young collections between middle ones: what a middle collection walks stays small."""
OLD_THRESHOLD = 1_000_000
"""Middle collections between automatic full ones: in effect never; see below."""
FULL_COLLECTION_SECONDS = 600.0


def tune_collector() -> None:
    """Freeze what exists (the app once built: modules, boards, catalogues) and set the
    thresholds above (module doc)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, MIDDLE_THRESHOLD, OLD_THRESHOLD)


async def collect_periodically(seconds: float = FULL_COLLECTION_SECONDS) -> None:
    """A full collection every ``seconds``: what cycles reached the old generation are
    freed, at a pace the server chooses."""
    while True:
        await asyncio.sleep(seconds)
        gc.collect()


class StreamAwareServer(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, on_stopping: Callable[[], None]) -> None:
        super().__init__(config)
        self.on_stopping = on_stopping
        self._loop: asyncio.AbstractEventLoop | None = None

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        collector = self._loop.create_task(collect_periodically())
        try:
            await super().serve(sockets)
        finally:
            collector.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await collector

    def notify_stopping(self) -> None:
        """Run ``on_stopping`` on the server's loop (safe from a signal handler or another
        thread)."""
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self.on_stopping)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.notify_stopping()
        super().handle_exit(sig, frame)
