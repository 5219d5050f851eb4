"""Per-client budgets, counted by the ``limits`` library in storage all replicas share.

Each budget is a fixed window (``limits``' fixed-window counting: one atomic increment with
its expiry per request, then the window's expiry): ``quota`` requests per ``window`` seconds
per client. A client is its credential's digest when it sends one (an app key, a player
token or JWT, a seat token: never the token itself), else its address (the one
``--trusted-proxies`` let through). The counts live in Redis (``async+redis://`` or
``async+redis+cluster://``, keys under the store's prefix) so that every replica charges the
same budget; on the embedded store (one process) in this process's memory.

When the counting storage fails, the request is let through (a budget is a safeguard: the
store's own failure is answered by the operation itself) and the failure logged at most
once a minute.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from dataclasses import dataclass

from limits import RateLimitItemPerSecond

from service.store.counting import close_counting, counting_storage

from .policies import Policy

log = logging.getLogger("skyline.limits")

KEY_PREFIX = "limits"
"""Under the store's Redis prefix: ``skyline:limits:...``."""
FAILURE_LOG_SECONDS = 60.0
MAX_CONNECTIONS = 8
"""Redis connections the rate limits of one process use at most (per node on a cluster)."""


def storage_uri(redis_url: str | None, redis_cluster: str | None) -> str:
    """The ``limits`` storage URI for the store the server uses: the same Redis (single
    node or cluster), else memory (the embedded store is one process)."""
    if redis_cluster:
        return f"async+redis+cluster://{redis_cluster}"
    if redis_url:
        return f"async+{redis_url}"
    return "async+memory://"


def client_key(credential: str | None, address: str) -> str:
    """Whom a request is charged to: its credential's digest, else its address."""
    if credential:
        return "c:" + hashlib.sha256(credential.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return "a:" + address


@dataclass(frozen=True)
class Decision:
    """One request counted against ``policy``: allowed or not, what is left of the window
    and in how many seconds it resets."""

    policy: Policy
    allowed: bool
    remaining: int
    reset: int

    def headers(self) -> list[tuple[str, str]]:
        """``RateLimit-Policy`` and ``RateLimit`` (IETF httpapi RateLimit draft), and
        ``Retry-After`` when refused."""
        headers = [
            ("RateLimit-Policy", self.policy.header()),
            ("RateLimit", f'"{self.policy.name}";r={self.remaining};t={self.reset}'),
        ]
        if not self.allowed:
            headers.append(("Retry-After", str(self.reset)))
        return headers


class RateLimiter:
    """The budgets of one server, in ``limits`` storage named by ``uri``."""

    def __init__(self, uri: str, policies: dict[str, Policy], *, key_prefix: str = "") -> None:
        self.uri = uri
        self.policies = dict(policies)
        storage = counting_storage(uri, key_prefix=f"{key_prefix}{KEY_PREFIX}", what="limits",
                                   max_connections=MAX_CONNECTIONS)
        self.storage = storage
        self.items = {
            name: RateLimitItemPerSecond(policy.quota, policy.window, namespace="skyline")
            for name, policy in self.policies.items()
        }
        self._failed_at = -math.inf

    async def hit(self, budget: str, key: str) -> Decision | None:
        """Charge one request of ``key`` to ``budget``; None when the storage failed (the
        request goes through, uncounted)."""
        return await self._count(budget, key, 1)

    async def peek(self, budget: str, key: str) -> Decision | None:
        """Where ``key`` stands in ``budget``, charging nothing."""
        return await self._count(budget, key, 0)

    async def _count(self, budget: str, key: str, cost: int) -> Decision | None:
        policy = self.policies[budget]
        item = self.items[budget]
        storage_key = item.key_for(budget, key)
        try:
            if cost:
                used = await self.storage.incr(storage_key, item.get_expiry(), amount=cost)
            else:
                used = await self.storage.get(storage_key)
            expires = await self.storage.get_expiry(storage_key) if used else time.time()
        except Exception as error:
            self._storage_failed(error)
            return None
        reset = max(0, math.ceil(expires - time.time()))
        allowed = (used if cost else used + 1) <= policy.quota
        if not allowed:
            reset = max(1, reset)
        return Decision(policy, allowed, max(0, policy.quota - used), reset)

    def _storage_failed(self, error: Exception) -> None:
        now = time.monotonic()
        if now - self._failed_at >= FAILURE_LOG_SECONDS:
            self._failed_at = now
            log.warning("rate limits not counted (their storage failed: %r); requests go "
                        "through uncounted", error)

    async def aclose(self) -> None:
        """Close the storage's connections (Redis)."""
        await close_counting(self.storage, "rate limits")
