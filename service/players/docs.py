"""Reading and writing the player layer's documents: a store failure is 503
``store_unavailable`` (like a match's; ``store_full`` when it refuses a write for want of
room), and every change is a compare-and-set retried on a
lost race, so two replicas changing one document never lose either change."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from service.errors import ApiError
from service.matches.storage import FULL_RETRY_AFTER_SECONDS
from service.store import Doc, DocStore, StoreFull, StoreUnavailable

T = TypeVar("T")
MAX_ATTEMPTS = 16
RETRY_AFTER_SECONDS = 1


async def guard(call: Awaitable[T]) -> T:
    try:
        return await call
    except StoreFull:
        raise ApiError.of(
            "store_full", "The store is full and refuses new writes; retry later.",
            retryAfter=FULL_RETRY_AFTER_SECONDS,
        ) from None
    except StoreUnavailable:
        raise ApiError.of(
            "store_unavailable", "The store is not answering; retry shortly.",
            retryAfter=RETRY_AFTER_SECONDS,
        ) from None


class Docs:
    def __init__(self, store: DocStore) -> None:
        self.store = store

    async def get(self, key: str) -> Doc | None:
        return await guard(self.store.get_doc(key))

    async def get_many(self, keys: Sequence[str]) -> list[Doc | None]:
        return await guard(self.store.get_docs(keys)) if keys else []

    async def put(
        self, key: str, expected: int, data: bytes, *,
        index_add: Sequence[tuple[str, str]] = (),
    ) -> bool:
        return await guard(self.store.put_doc(key, expected, data, index_add=index_add))

    async def update(
        self, key: str, change: Callable[[bytes | None], bytes | None]
    ) -> bytes | None:
        """Apply ``change`` (the current bytes, None when absent -> the new bytes, None to
        leave it) by compare-and-set until it lands; returns what is stored after."""
        for _ in range(MAX_ATTEMPTS):
            doc = await self.get(key)
            current = doc.data if doc is not None else None
            new = change(current)
            if new is None or new == current:
                return current
            if await self.put(key, doc.version if doc is not None else 0, new):
                return new
        raise ApiError.of("busy", "Too many concurrent changes; retry.")
