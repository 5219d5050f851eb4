"""Unfinished matches per creator: a player, an app, or (without a credential) an address.

Each creator's matches are kept in up to ``MAX_SHARDS`` documents of the store (its shards:
``quota:<digest>``, ``quota:<digest>.1``, ...: match id -> when it was counted), each with a
cap of its own that add up to the creator's quota, each changed by compare-and-set. A
creation reads every shard in one round trip and takes a slot in one that has room (a
random one, so concurrent creations by one creator mostly write different documents:
issue 31, item 10 -- one app's burst of 32 creations at once once lost a quarter of them to
``503 busy``); a lost compare-and-set reads again and tries another shard. Replicas counting
at once cannot both take a shard's last slot, so the creator never holds more than its
quota. A slot is taken before the match is written (the service's ``before_write``), and
given back (``release``) when that write fails. A finished or expired match frees its slot:
when the shards are full, the matches they hold are looked up (``active``) and the finished
or vanished ones dropped. A match counted a moment ago but not yet written keeps its slot
for ``GRACE_SECONDS``.

Only what a client asks for is counted: matches the service creates itself are not
refused here (it does not call this).
"""

from __future__ import annotations

import hashlib
import json
import random
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
RETRIES = 32
MAX_SHARDS = 16
"""Documents one creator's quota is spread over (fewer for a quota under 16)."""
RETRY_AFTER_SECONDS = 1

Active = Callable[[Sequence[str]], Awaitable[list[bool | None]]]
"""Of each match: True while it is unfinished, False once finished, None when it does not
exist (expired, or not written yet)."""


@dataclass(frozen=True)
class Creator:
    """Who creates a match, for its quota: a player, an app (its key), or an address."""

    kind: Literal["player", "app", "address"]
    id: str

    def key(self, shard: int = 0) -> str:
        """The document of shard ``shard`` (shard 0: the one unsharded document of old)."""
        digest = hashlib.sha256(f"{self.kind}:{self.id}".encode()).hexdigest()[:40]
        return f"quota:{digest}" if shard == 0 else f"quota:{digest}.{shard}"


def shard_caps(limit: int) -> list[int]:
    """The cap of each shard of a quota of ``limit``: they add up to ``limit``."""
    shards = max(1, min(MAX_SHARDS, limit))
    return [limit // shards + (1 if n < limit % shards else 0) for n in range(shards)]


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
        caps = shard_caps(limit)
        keys = [creator.key(n) for n in range(len(caps))]
        pruned: set[int] = set()
        for _ in range(RETRIES):
            docs = await self._guard(self.store.get_docs(keys))
            shards = [(d.version, json.loads(d.data)) if d is not None else (0, {})
                      for d in docs]
            roomy = [n for n, (_, held) in enumerate(shards) if len(held) < caps[n]]
            if not roomy:
                # Every shard full: drop what finished from each (once per take), then
                # write the one with the most room back.
                full = [n for n in range(len(caps)) if n not in pruned]
                if not full:
                    raise self._exceeded(limit)
                n = random.choice(full)
                pruned.add(n)
                version, held = shards[n]
                held = await self._still_counting(held)
                if len(held) >= caps[n]:
                    continue
            else:
                n = random.choice(roomy)
                version, held = shards[n]
            held[match_id] = round(self.clock(), 3)
            if await self._guard(self.store.put_doc(keys[n], version, _encode(held))):
                return
        raise ApiError.of("busy", "Too many creations at once; retry.",
                          retryAfter=RETRY_AFTER_SECONDS)

    async def check(self, creator: Creator) -> None:
        """429 ``quota_exceeded`` when ``creator`` holds its cap of unfinished matches
        (before quick match: the match is formed later, by whichever request completes it,
        and then ``count``-ed)."""
        limit = self.limit_of(creator)
        if limit <= 0:
            return
        keys = [creator.key(n) for n in range(len(shard_caps(limit)))]
        docs = await self._guard(self.store.get_docs(keys))
        held: dict[str, float] = {}
        for doc in docs:
            if doc is not None:
                held.update(json.loads(doc.data))
        if len(held) >= limit and len(await self._still_counting(held)) >= limit:
            raise self._exceeded(limit)

    async def count(self, creator: Creator, match_id: str) -> None:
        """Count ``match_id`` against ``creator``'s quota without refusing it (a quick
        match formed for players whose room ``check`` saw): at its cap, the fullest shard
        takes it beyond its cap, and the next ``take`` or ``check`` prunes."""
        limit = self.limit_of(creator)
        if limit <= 0:
            return
        caps = shard_caps(limit)
        keys = [creator.key(n) for n in range(len(caps))]
        for _ in range(RETRIES):
            docs = await self._guard(self.store.get_docs(keys))
            shards = [(d.version, json.loads(d.data)) if d is not None else (0, {})
                      for d in docs]
            if any(match_id in held for _, held in shards):
                return
            roomy = [n for n, (_, held) in enumerate(shards) if len(held) < caps[n]]
            n = random.choice(roomy or list(range(len(caps))))
            version, held = shards[n]
            held[match_id] = round(self.clock(), 3)
            if await self._guard(self.store.put_doc(keys[n], version, _encode(held))):
                return

    async def release(self, creator: Creator, match_id: str) -> None:
        """Give back the slot ``match_id`` took (its creation was not written)."""
        limit = self.limit_of(creator)
        if limit <= 0:
            return
        keys = [creator.key(n) for n in range(len(shard_caps(limit)))]
        for _ in range(RETRIES):
            docs = await self._guard(self.store.get_docs(keys))
            found = next(((k, d) for k, d in zip(keys, docs, strict=True)
                          if d is not None and match_id in json.loads(d.data)), None)
            if found is None:
                return
            key, doc = found
            held = json.loads(doc.data)
            del held[match_id]
            if await self._guard(self.store.put_doc(key, doc.version, _encode(held))):
                return

    @staticmethod
    def _exceeded(limit: int) -> ApiError:
        return ApiError.of(
            "quota_exceeded",
            T("At most {limit} unfinished matches per creator: finish one first.",
              limit=limit),
            limit=limit,
        )

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


def _encode(held: dict[str, float]) -> bytes:
    return json.dumps(held, separators=(",", ":"), sort_keys=True).encode()
