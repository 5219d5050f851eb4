"""A signal claimed while the worker acknowledges the ones it handled is not dropped: the
worker looks at the match again for it (found by the killed-worker test: such a signal was
acknowledged unplayed, or left to the 30 s reclaim, and a bot stalled)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from service.matches import MatchService
from service.store import SqliteStore
from service.store.base import DueSignal
from service.workers.bots import BotWorker


class Worker(BotWorker):
    """Plays nothing; counts the looks, and has a new signal claimed during its first ack."""

    def __init__(self, service: MatchService) -> None:
        super().__init__(service, consumer="w")
        self.looks = 0
        self.acked: list[list[str]] = []

    async def play(self, match_id: str) -> bool:
        self.looks += 1
        return True


async def test_a_signal_claimed_during_the_ack_is_played() -> None:
    store = SqliteStore(":memory:")
    worker = Worker(MatchService(store, ttl_finished=None, ttl_idle=None))

    async def ack_due(tokens: Sequence[str]) -> None:
        worker.acked.append(list(tokens))
        if len(worker.acked) == 1:
            # The claim loop runs while the ack is on its way and claims the match again.
            worker._dispatch([DueSignal(match_id="m", token="t2")])
            await asyncio.sleep(0)

    store.ack_due = ack_due  # type: ignore[method-assign]
    worker._dispatch([DueSignal(match_id="m", token="t1")])
    for _ in range(50):
        await asyncio.sleep(0)
        if not worker._running:
            break
    assert worker.looks == 2  # once for t1, once more for t2
    assert worker.acked == [["t1"], ["t2"]]
    assert worker._running == {}
    await store.close()
