"""The store contract (DESIGN.md): versioned match records with an atomic compare-and-set.

The store knows nothing of games: a record and a log entry are opaque bytes written by the
service layer. A match starts at version 0 with ``create``; every successful
``compare_and_set`` advances the version by exactly one and appends exactly one log entry
numbered with the new version, atomically, so the version history can never fork or skip.

Write ids ("did my write land?")
--------------------------------
A write whose reply is lost (connection dropped after the server ran it) has an unknown
outcome. Every ``compare_and_set`` therefore carries a *write id* (the caller's, or a fresh
random one when the caller passes none), stored with the log entry. The CAS is idempotent per
``(expected_version, write_id, entry)``: if version ``expected_version + 1`` already exists
and its log entry carries the same write id and the same bytes, the call returns True without
writing again. The stores
use this to retry internally after a lost reply, and a caller that got ``StoreUnavailable``
(outcome unknown) can ask again later with the same arguments -- it gets True exactly when
its write is in the log, once, and never applies twice. ``create`` works the same way with
its ``write_id``. A store keeps a 32-bit *tag* of each write id (``write_tag``: 4 bytes of
BLAKE2b, written as 8 hex digits) rather than the id itself, to keep a log small;
``LogEntry.write_tag`` exposes it, so the log can be searched with ``write_tag(id)``. A retry
is taken for the write that landed only if tag *and* entry bytes match: a wrong answer needs
another writer's entry at that very version to be byte-identical (the same seat's same move,
so the same outcome) and its tag to collide (2**-32).

Due signals (bot seats)
-----------------------
``signal_due(match_id)`` says "a bot seat of this match may be due to act"; workers
``claim_due`` signals (each is delivered to one consumer), handle them and ``ack_due`` them.
A signal claimed but never acknowledged (its worker died) is delivered again: to any consumer
once it has been pending ``reclaim_idle_ms``, and at once to a consumer of the same name that
asks ``resume_due`` (a restarted worker). Delivery is at least once: signals may repeat and
carry no state, so a worker always reloads the match and checks what is due. On Redis the
signals are a stream ``{prefix}bots:due`` read through the consumer group ``workers``; in
memory, an in-process queue.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from typing import Protocol


class MatchNotFound(KeyError):
    """No match under that id (never created, or expired)."""


class MatchExists(KeyError):
    """``create`` was called for an id that is taken."""


class StoreUnavailable(ConnectionError):
    """The backing store cannot be reached now; the caller may retry later (HTTP 503).

    For a write this means *outcome unknown*: repeat the same call (same ``write_id``) to
    learn whether it landed; the write ids make that repeat safe."""


WRITE_TAG_BYTES = 4


def write_tag(write_id: str) -> str:
    """The tag a store keeps of ``write_id``: 8 hex digits (32 bits of BLAKE2b)."""
    return hashlib.blake2b(write_id.encode(), digest_size=WRITE_TAG_BYTES).hexdigest()


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One log entry: the version it created, the caller's bytes and the tag of the write
    id that wrote it (``write_tag``)."""

    version: int
    data: bytes
    write_tag: str


@dataclass(frozen=True, slots=True)
class DueSignal:
    """A claimed due signal: ``token`` acknowledges it (``ack_due``)."""

    token: str
    match_id: str


DUE_RECLAIM_IDLE_MS = 30_000
"""Default: a signal pending this long with a silent worker is handed to another one."""


class MatchStore(Protocol):
    async def create(
        self,
        match_id: str,
        record: bytes,
        ttl_seconds: int | None = None,
        *,
        write_id: str | None = None,
    ) -> None:
        """Store a new match at version 0 with an empty log. Raises ``MatchExists`` -- unless
        the match was created by a call with the same non-empty ``write_id`` (a retry whose
        first reply was lost), which then succeeds without writing again."""

    async def load(self, match_id: str) -> tuple[int, bytes]:
        """``(version, record)``. Raises ``MatchNotFound``."""

    async def compare_and_set(
        self,
        match_id: str,
        expected_version: int,
        record: bytes,
        entry: bytes,
        ttl_seconds: int | None = None,
        *,
        write_id: str | None = None,
    ) -> bool:
        """If the stored version is ``expected_version``: store ``record`` as version
        ``expected_version + 1``, append ``entry`` to the log under that version, set the
        TTL (``None``: keep forever) and return True -- all or nothing. Otherwise change
        nothing and return False -- except when version ``expected_version + 1`` was written
        by this very ``write_id`` with this very ``entry`` (see the module docstring): then
        True, nothing written.
        Raises ``MatchNotFound``; ``StoreUnavailable`` means the outcome is unknown."""

    async def log(self, match_id: str, after: int = 0) -> list[LogEntry]:
        """Log entries with ``version > after``, in order. Raises ``MatchNotFound``."""

    def watch(self, match_id: str, after: int) -> AsyncGenerator[int, None]:
        """Yield every version > ``after`` as it is written, in order, without gaps,
        starting with those already written. Raises ``MatchNotFound`` when the match does
        not exist at the start; ends when the match disappears (expired). Runs until the
        consumer stops iterating; ``aclose()`` it (e.g. in a ``finally``) to release the
        connection it holds at once."""

    async def signal_due(self, match_id: str) -> None:
        """Queue a due signal for ``match_id`` (a bot seat may have to act)."""

    async def claim_due(
        self,
        consumer: str,
        count: int = 16,
        block_ms: int = 1000,
        *,
        reclaim_idle_ms: int | None = DUE_RECLAIM_IDLE_MS,
    ) -> list[DueSignal]:
        """Up to ``count`` signals for ``consumer``: first those left unacknowledged by any
        consumer for at least ``reclaim_idle_ms`` (None: never reclaim), else new ones,
        waiting up to ``block_ms`` (0: do not wait) for one to arrive; [] when none came.
        Each returned signal stays pending until ``ack_due``."""
        ...

    async def resume_due(self, consumer: str, count: int = 256) -> list[DueSignal]:
        """Signals delivered to ``consumer`` and not yet acknowledged (a worker restarted
        under the same name takes back what it held when it died)."""
        ...

    async def ack_due(self, tokens: Sequence[str]) -> None:
        """Acknowledge handled signals: they are never delivered again."""

    async def ping(self) -> bool:
        """True when the store answers (``/readyz``)."""

    async def close(self) -> None:
        """Release connections."""
