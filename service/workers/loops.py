"""``WorkerLoops``: the worker loops one process runs -- bot seats, webhook deliveries, the
deadlines of timed matches, idle guests -- and the heartbeat that says they run. Built by
``service.composition`` for ``skyline worker`` and for the loops ``skyline serve`` runs
itself, so both get the same loops with the same settings."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, cast

from service.matches import MatchService
from service.players import PlayerService
from service.store import Schedules
from service.webhooks import WebhookService

from .bots import BotWorker
from .clocks import ClockWorker
from .guests import GuestWorker
from .heartbeat import BEAT_SECONDS, Heartbeat, member_name
from .webhooks import WebhookWorker

log = logging.getLogger("skyline.worker")


class WorkerLoops:
    """The loops of one process; ``kind`` names it in the heartbeats (``serve``,
    ``worker``); ``bot_options``: ``BotWorker``'s keyword arguments."""

    def __init__(self, matches: MatchService, players: PlayerService,
                 webhooks: WebhookService, *, kind: str, bot_options: dict[str, Any],
                 heartbeat_seconds: float = BEAT_SECONDS) -> None:
        self.bots = BotWorker(matches, **bot_options)
        self.webhooks = WebhookWorker(webhooks)
        self.clocks = ClockWorker(matches.timeouts)
        self.guests = GuestWorker(players.expiry)  # idle guests expire (docs/players.md)
        self.store = matches.store
        self.member = member_name(kind, self.bots.consumer if kind == "worker" else None)
        self.heartbeat_seconds = heartbeat_seconds
        self.heartbeat: Heartbeat | None = None
        self.tasks: dict[str, asyncio.Task[None]] = {}

    @property
    def loops(self) -> dict[str, BotWorker | WebhookWorker | ClockWorker | GuestWorker]:
        return {"bots": self.bots, "webhooks": self.webhooks, "clocks": self.clocks,
                "guests": self.guests}

    def start(self) -> None:
        """Start every loop, then the heartbeat that beats while they all run."""
        for name, loop in self.loops.items():
            self.tasks[name] = asyncio.create_task(loop.run(), name=name)
        self.heartbeat = Heartbeat(cast(Schedules, self.store), self.member,
                                   list(self.tasks.values()), interval=self.heartbeat_seconds)
        self.tasks["heartbeat"] = asyncio.create_task(self.heartbeat.run(), name="heartbeat")

    def stop(self) -> None:
        """Ask every loop to stop (a signal handler may call it)."""
        if self.heartbeat is not None:
            self.heartbeat.stop()
        for loop in self.loops.values():
            loop.stop()

    async def close(self, *, cancel_bots: bool = False) -> None:
        """Stop and wait: the heartbeat first (no beat for loops that are stopping), the
        bots last; ``cancel_bots``: do not wait for the bots' moves in flight."""
        self.stop()
        for name in ("heartbeat", "guests", "clocks", "webhooks", "bots"):
            task = self.tasks.get(name)
            if task is None:
                continue
            if name == "bots" and cancel_bots:
                task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
            except Exception:  # a loop that died: said, and the others still stop
                log.exception("worker loop %s ended with an error", name)
