"""The store contract (DESIGN.md): versioned match records with an atomic compare-and-set.

The store knows nothing of games: a record and a log entry are opaque bytes written by the
service layer. A match starts at version 0 with ``create``; every successful
``compare_and_set`` advances the version by exactly one and appends exactly one log entry
numbered with the new version, atomically, so the version history can never fork or skip.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol


class MatchNotFound(KeyError):
    """No match under that id (never created, or expired)."""


class MatchExists(KeyError):
    """``create`` was called for an id that is taken."""


class StoreUnavailable(ConnectionError):
    """The backing store cannot be reached now; the caller may retry later (HTTP 503)."""


@dataclass(frozen=True, slots=True)
class LogEntry:
    version: int
    data: bytes


class MatchStore(Protocol):
    async def create(self, match_id: str, record: bytes, ttl_seconds: int | None = None) -> None:
        """Store a new match at version 0. Raises ``MatchExists``."""

    async def load(self, match_id: str) -> tuple[int, bytes]:
        """``(version, record)``. Raises ``MatchNotFound``."""

    async def compare_and_set(
        self,
        match_id: str,
        expected_version: int,
        record: bytes,
        entry: bytes,
        ttl_seconds: int | None = None,
    ) -> bool:
        """If the stored version is ``expected_version``: store ``record`` as version
        ``expected_version + 1``, append ``entry`` to the log under that version, set the
        TTL (``None``: keep forever) and return True -- all or nothing. Otherwise change
        nothing and return False. Raises ``MatchNotFound``."""

    async def log(self, match_id: str, after: int = 0) -> list[LogEntry]:
        """Log entries with ``version > after``, in order. Raises ``MatchNotFound``."""

    def watch(self, match_id: str, after: int) -> AsyncIterator[int]:
        """Yield every version > ``after`` as it is written, in order, without gaps,
        starting with those already written. Runs until the consumer stops iterating."""

    async def ping(self) -> bool:
        """True when the store answers (``/readyz``)."""

    async def close(self) -> None:
        """Release connections."""
