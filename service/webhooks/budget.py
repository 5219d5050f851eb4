"""What anonymous players may cause to be delivered (issue 31: two guests drove 3,070
deliveries in 30 s to an app with 10 endpoints).

A guest is minted by anyone, for nothing, so the deliveries that concern guests -- every
event told to a guest's seat, to each of the app's endpoints -- are counted against two
budgets, fixed windows counted by the ``limits`` library in storage every process shares
(the store's Redis; memory on the one-process embedded store): one per guest and one per app
for all its guests together. The deliveries a version would make about a guest go, all of
them, only while both budgets have room for them; past either, they are not stored (counted
in ``dropped`` and logged at most once a minute). Deliveries about an app's own users (signed
in with its JWTs) are never counted: every one of them is sent. When the counting storage
fails, deliveries go through uncounted (the budget is a safeguard, not a gate).
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass

from limits import RateLimitItemPerSecond
from limits.aio.strategies import FixedWindowRateLimiter

from service.store.counting import close_counting, counting_storage

log = logging.getLogger("skyline.webhooks")

FAILURE_LOG_SECONDS = 60.0
MAX_CONNECTIONS = 4
"""Redis connections the guest budgets of one process use at most (per node on a cluster)."""
DROP_LOG_SECONDS = 60.0
KEY_PREFIX = "limits"


@dataclass(frozen=True)
class Window:
    """``quota`` deliveries per ``seconds``."""

    quota: int
    seconds: int

    def spec(self) -> str:
        return f"{self.quota}/{self.seconds}"


GUEST_DEFAULT = Window(120, 60)
"""Deliveries about one guest per minute: a guest playing a built-in bot as fast as it can
click, told ``your_turn`` at each of a few endpoints."""
GUEST_APP_DEFAULT = Window(1200, 60)
"""Deliveries about all of one app's guests per minute (20 a second)."""


def parse_window(raw: str) -> Window | None:
    """``"120/60"`` -> the window; ``"0"`` or ``"off"``: None (no budget); ValueError
    otherwise."""
    text = raw.strip().lower()
    if text in ("0", "off"):
        return None
    quota, slash, seconds = text.partition("/")
    if not slash or not (quota.isascii() and quota.isdigit()
                         and seconds.isascii() and seconds.isdigit()):
        raise ValueError(f"{raw!r} is not DELIVERIES/SECONDS (e.g. 120/60), 0 or off")
    window = Window(int(quota), int(seconds))
    if window.quota <= 0 or window.seconds <= 0:
        raise ValueError(f"{raw!r}: both numbers must be positive")
    return window


class GuestBudget:
    """The per-guest and per-app budgets of deliveries about guests (module doc)."""

    def __init__(self, uri: str, *, per_guest: Window | None, per_app: Window | None,
                 key_prefix: str = "") -> None:
        storage = counting_storage(uri, key_prefix=f"{key_prefix}{KEY_PREFIX}",
                                   what="webhook-budget", max_connections=MAX_CONNECTIONS)
        self.storage = storage
        self.limiter = FixedWindowRateLimiter(storage)
        self.per_guest = None if per_guest is None else RateLimitItemPerSecond(
            per_guest.quota, per_guest.seconds, namespace="skyline-wh-guest")
        self.per_app = None if per_app is None else RateLimitItemPerSecond(
            per_app.quota, per_app.seconds, namespace="skyline-wh-guests")
        self.dropped = 0
        """Deliveries not stored for want of budget (tests, metrics)."""
        self._failed_at = -math.inf
        self._dropped_logged: dict[str, tuple[float, int]] = {}

    async def admit(self, app: str, guest: str, deliveries: int) -> bool:
        """Whether ``deliveries`` more deliveries about ``guest`` of ``app`` fit both
        budgets (counted when they do, and against the guest's when they do not)."""
        if deliveries <= 0:
            return True
        try:
            if self.per_guest is not None and not await self.limiter.hit(
                    self.per_guest, app, guest, cost=deliveries):
                return self._drop(app, deliveries)
            if self.per_app is not None and not await self.limiter.hit(
                    self.per_app, app, cost=deliveries):
                return self._drop(app, deliveries)
        except Exception as error:
            now = time.monotonic()
            if now - self._failed_at >= FAILURE_LOG_SECONDS:
                self._failed_at = now
                log.warning("webhook guest budgets not counted (their storage failed: %r); "
                            "deliveries go through uncounted", error)
        return True

    def _drop(self, app: str, deliveries: int) -> bool:
        self.dropped += deliveries
        now = time.monotonic()
        since, count = self._dropped_logged.get(app, (-math.inf, 0))
        count += deliveries
        if now - since >= DROP_LOG_SECONDS:
            log.warning("webhooks of app %s: %d deliveries about guests over their budget "
                        "not sent", app, count)
            count, since = 0, now
        if len(self._dropped_logged) > 4096:
            self._dropped_logged.clear()
        self._dropped_logged[app] = (since, count)
        return False

    async def aclose(self) -> None:
        """Close the storage's connections (Redis)."""
        await close_counting(self.storage, "webhook budgets")
