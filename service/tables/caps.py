"""Per-creator caps on public tables waiting in an app's lobby (issue 31 item 9: one address
filled 99 of the 100 entries of the lobby's first page).

Each creator's waiting public tables are a document of the store (``tables:<digest>``: match
id -> when it was counted), changed by compare-and-set, so replicas counting at once cannot
both take the last slot. A slot is taken before anything of the match is written (the
creation's ``before_write``, before its lobby entry): a refused creation leaves no entry. A
table that started, was cancelled or vanished frees its slot: when a creator is at its cap
the tables it holds are looked up and those no longer waiting dropped. A table counted a
moment ago but not yet written keeps its slot for ``GRACE_SECONDS``.

Who is counted: a player (guest or an app's user) per player, and a guest -- whose token
anyone can mint -- also per client address, all of that address's guests together. An app's
own key is not capped: the app fills its own lobby.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from service.errors import ApiError
from service.i18n import T
from service.store import DocStore, StoreUnavailable

R = TypeVar("R")
GRACE_SECONDS = 60.0
RETRIES = 16
DEFAULT_PER_PLAYER = 5
DEFAULT_PER_ADDRESS = 20

WaitingCheck = Callable[[Sequence[str]], Awaitable[list[bool | None]]]
"""Of each match: True while it is a public table waiting for players, False once not, None
when it does not exist (expired, or not written yet)."""


def too_many(limit: int) -> ApiError:
    return ApiError.of(
        "too_many_waiting_tables",
        T("At most {limit} public tables waiting for players per creator: start, fill or "
          "cancel one first.", limit=limit),
        limit=limit,
    )


class WaitingTablesCap:
    def __init__(self, store: DocStore, waiting: WaitingCheck, *, per_player: int,
                 per_address: int, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.waiting = waiting
        self.limits = {"player": per_player, "address": per_address}
        self.clock = clock

    async def take(self, kind: str, who: str, match_id: str) -> None:
        """Count ``match_id`` against ``who``'s cap (``kind``: ``player`` or ``address``);
        429 ``too_many_waiting_tables`` when it already has that many waiting."""
        limit = self.limits[kind]
        if limit <= 0:
            return
        digest = hashlib.sha256(f"{kind}:{who}".encode()).hexdigest()[:40]
        key = f"tables:{digest}"
        for _ in range(RETRIES):
            doc = await _guard(self.store.get_doc(key))
            version = doc.version if doc is not None else 0
            held: dict[str, float] = json.loads(doc.data) if doc is not None else {}
            if len(held) >= limit:
                held = await self._still_waiting(held)
            if len(held) >= limit:
                raise too_many(limit)
            held[match_id] = round(self.clock(), 3)
            data = json.dumps(held, separators=(",", ":"), sort_keys=True).encode()
            if await _guard(self.store.put_doc(key, version, data)):
                return
        raise ApiError.of("busy", "Too many creations at once; retry.", retryAfter=1)

    async def _still_waiting(self, held: dict[str, float]) -> dict[str, float]:
        ids = sorted(held)
        waiting = await _guard(self.waiting(ids))
        recent = self.clock() - GRACE_SECONDS
        return {match_id: held[match_id]
                for match_id, still in zip(ids, waiting, strict=True)
                if still or (still is None and held[match_id] >= recent)}


async def _guard(call: Awaitable[R]) -> R:
    try:
        return await call
    except StoreUnavailable:
        raise ApiError.of("store_unavailable", "The store is not answering; retry shortly.",
                          retryAfter=1) from None
