"""Unfinished matches per creator: a player, an app, or (without a credential) an address.

Each creator's matches are a document of the store (``quota:<digest>``: match id -> when it
was counted), changed by compare-and-set, so replicas counting at once cannot both take the
last slot. A slot is taken before the match is written (the service's ``before_write``). A
finished or expired match frees its slot: when a creator is at its cap, the matches it
holds are looked up (``active``) and the finished or vanished ones dropped, so the document
never holds more than the cap. A match counted a moment ago but not yet written keeps its
slot for ``GRACE_SECONDS``.

Only what a client asks for is counted: matches the service creates itself are not
refused here (it does not call this).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

from service.errors import ApiError
from service.i18n import T
from service.store import DocStore, StoreUnavailable

from .policies import Quotas

R = TypeVar("R")
GRACE_SECONDS = 60.0
RETRIES = 16
RETRY_AFTER_SECONDS = 1

Active = Callable[[Sequence[str]], Awaitable[list[bool | None]]]
"""Of each match: True while it is unfinished, False once finished, None when it does not
exist (expired, or not written yet)."""


@dataclass(frozen=True)
class Creator:
    """Who creates a match, for its quota: a player, an app (its key), or an address."""

    kind: Literal["player", "app", "address"]
    id: str

    def key(self) -> str:
        digest = hashlib.sha256(f"{self.kind}:{self.id}".encode()).hexdigest()[:40]
        return f"quota:{digest}"


class ActiveMatchQuota:
    def __init__(self, store: DocStore, quotas: Quotas, active: Active,
                 clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.quotas = quotas
        self.active = active
        self.clock = clock

    def limit_of(self, creator: Creator) -> int:
        return int(getattr(self.quotas, creator.kind))

    async def take(self, creator: Creator, match_id: str) -> None:
        """Count ``match_id`` against ``creator``'s quota; 429 ``quota_exceeded`` when the
        creator already has its cap of unfinished matches."""
        limit = self.limit_of(creator)
        if limit <= 0:
            return
        key = creator.key()
        for _ in range(RETRIES):
            doc = await self._guard(self.store.get_doc(key))
            version = doc.version if doc is not None else 0
            held: dict[str, float] = json.loads(doc.data) if doc is not None else {}
            if len(held) >= limit:
                held = await self._still_counting(held)
            if len(held) >= limit:
                raise ApiError.of(
                    "quota_exceeded",
                    T("At most {limit} unfinished matches per creator: finish one first.",
                      limit=limit),
                    limit=limit,
                )
            held[match_id] = round(self.clock(), 3)
            data = json.dumps(held, separators=(",", ":"), sort_keys=True).encode()
            if await self._guard(self.store.put_doc(key, version, data)):
                return
        raise ApiError.of("busy", "Too many creations at once; retry.",
                          retryAfter=RETRY_AFTER_SECONDS)

    async def _still_counting(self, held: dict[str, float]) -> dict[str, float]:
        """``held`` without the matches that finished or vanished (one counted within
        ``GRACE_SECONDS`` and not found may not be written yet: kept)."""
        ids = sorted(held)
        active = await self._guard(self.active(ids))
        recent = self.clock() - GRACE_SECONDS
        return {
            match_id: held[match_id]
            for match_id, unfinished in zip(ids, active, strict=True)
            if unfinished or (unfinished is None and held[match_id] >= recent)
        }

    @staticmethod
    async def _guard(call: Awaitable[R]) -> R:
        try:
            return await call
        except StoreUnavailable:
            raise ApiError.of(
                "store_unavailable", "The store is not answering; retry shortly.",
                retryAfter=RETRY_AFTER_SECONDS,
            ) from None
