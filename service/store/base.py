"""The store contract (docs/architecture.md): versioned match records with an atomic
compare-and-set.

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

Signals come in two *lanes*, each first in, first out: matches with a human seat (the
default) and all-bot matches (``signal_due(..., all_bots=True)``). ``claim_due`` takes the
human lane first, then the all-bot lane -- except the first ``all_bots_first`` signals,
which come from the all-bot lane when it has any (a worker asks for one of those every few
claims, so all-bot matches are scheduled last but never starved). ``DueSignal.all_bots``
tells which lane a signal came from.

Schedules (deadlines, retries)
------------------------------
A *schedule* is a named set of members, each with a due time in milliseconds of the store's
own clock (``store_time_ms``: Redis ``TIME``, so that replicas whose clocks drift agree on
when something is due). ``schedule_lower`` adds a member or moves it earlier (never later);
``schedule_claim`` takes the members due by the store's clock now, oldest first, and moves
each ``lease_ms`` into the future in the same atomic step (the *claim*: another worker does
not take it meanwhile; a worker that dies leaves it to be claimed again once the lease runs
out); ``schedule_settle`` sets a claimed member's next due time (None: removes it) only if
its time is still the claim's -- a writer that moved it earlier meanwhile wins. On Redis a
schedule is one sorted set ``{prefix}sched:{name}`` (one hash slot on a cluster).

Documents, indexes and feeds (``DocStore``)
-------------------------------------------
What the player layer keeps besides matches, under *keys* (``DOC_KEY``: 1-200 characters of
``A-Z a-z 0-9 : . _ -``; anything else raises ``ValueError``). Everything belonging to one
key lives together (on Redis Cluster: in one hash slot), so every operation below is one
atomic step:

* a *document*: opaque bytes with a version (1 after the first ``put_doc``), written by
  compare-and-set. ``put_doc`` is idempotent by data equality: when the stored version is
  already ``expected_version + 1`` with byte-identical data (a retry whose first reply was
  lost, or another writer that wrote the very same bytes), it returns True without writing.
* *indexes* of the key: named sets of strings (index names as keys), read in pages in
  ascending byte-wise order of their UTF-8 encoding after an exclusive cursor, so members
  added between two pages are neither repeated nor skipped when they sort after the cursor.
  ``put_doc`` can change them in the same atomic step as the document (removals first, then
  additions: a pair in both ends up present).
* a *feed*: items numbered 1, 2, 3, ... (never reused) with *marks*: the newest version
  appended per *source* (a match id). ``feed_append(key, source, version, items)`` lands only
  when ``version`` is above the source's mark, so several replicas appending the events of
  the same match version put them in the feed exactly once. False means "not by this call":
  another writer's, or this very call's whose reply was lost and which the store retried --
  either way the items are there once. Old items are trimmed: an item goes when it is beyond
  the newest ``keep`` *and* was appended before ``now - keep_seconds``; trimming takes the
  oldest first and stops at the first that must stay, so the items kept are always
  ``trimmed + 1 .. last``. A reader with ``after < trimmed`` missed items
  (``FeedPage.trimmed``). Marks are never trimmed (one small entry per source).
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
import threading
import time
from collections.abc import AsyncGenerator, Callable, Sequence
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


class StoreFull(StoreUnavailable):
    """The store refused a write for want of room: Redis at ``maxmemory`` under the
    ``noeviction`` policy (``OOM command not allowed``), SQLite on a full disk
    (``SQLITE_FULL``). Nothing of the refused write landed (a Redis script is refused at its
    first write, a SQLite transaction is rolled back), reads still work, and the same call
    may succeed once room is made (keys expire, the operator adds memory or disk).

    A ``StoreUnavailable``: code that knows only that one treats a full store as an outage
    (a 503, a bot worker that pauses); the service answers it as ``503 store_full``."""


FULL_REPORT_INTERVAL = 60.0
"""Seconds between two log warnings about a full store (each names how many writes were
refused since the one before)."""


class FullReports:
    """Counts the writes a store refused for want of room (``count``, exposed on
    ``/metrics``) and logs a warning at most once per ``interval`` seconds, however many
    writes are refused: a full store refuses every write, and one line per refusal would fill
    the logs (and the disk) too. Thread-safe (the SQLite store refuses on its own thread)."""

    def __init__(
        self, logger: logging.Logger, what: str, *, interval: float = FULL_REPORT_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.logger = logger
        self.what = what
        self.interval = interval
        self.clock = clock
        self.count = 0
        """Writes refused so far."""
        self.reports = 0
        """Warnings logged so far."""
        self._reported = 0
        self._last: float | None = None
        self._lock = threading.Lock()

    def refused(self, reason: object) -> StoreFull:
        """Count one refused write and return the ``StoreFull`` to raise; log a warning when
        none was logged in the last ``interval`` seconds."""
        refused = 0
        with self._lock:
            self.count += 1
            now = self.clock()
            due = self._last is None or now - self._last >= self.interval
            if due:
                self._last = now
                refused, self._reported = self.count - self._reported, self.count
                self.reports += 1
        if due:
            self.logger.warning(
                "%s is full: %d write(s) refused since the last report (%s); answering 503 "
                "store_full until room is made (at most one such warning per %g s; "
                "skyline_store_full_total counts them all)",
                self.what, refused, reason, self.interval,
            )
        return StoreFull(f"{self.what} is full: {reason}")


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
    all_bots: bool = False
    """From the all-bot lane (every seat of the match is a bot)."""


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

    async def load_many(self, match_ids: Sequence[str]) -> list[tuple[int, bytes] | None]:
        """``load`` of each match (None: not found), in one round trip where the store can
        (a pipeline on Redis: one batch per node on a cluster)."""

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

    async def signal_due(self, match_id: str, *, all_bots: bool = False) -> None:
        """Queue a due signal for ``match_id`` (a bot seat may have to act) at the back of
        its lane: the all-bot lane when ``all_bots`` (every seat is a bot), else the human
        lane."""

    async def claim_due(
        self,
        consumer: str,
        count: int = 16,
        block_ms: int = 1000,
        *,
        reclaim_idle_ms: int | None = DUE_RECLAIM_IDLE_MS,
        all_bots_first: int = 0,
    ) -> list[DueSignal]:
        """Up to ``count`` signals for ``consumer``: first those left unacknowledged by any
        consumer for at least ``reclaim_idle_ms`` (None: never reclaim), else new ones --
        up to ``all_bots_first`` from the all-bot lane, then the human lane, then the
        all-bot lane, each lane oldest first -- waiting up to ``block_ms`` (0: do not wait)
        for one to arrive; [] when none came. A wait that ends with signals in both lanes
        may return one more than ``count`` (one per lane). Each returned signal stays
        pending until ``ack_due``."""
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


class Schedules(Protocol):
    """Named schedules of due members (see the module docstring). Names and members are
    ``DOC_KEY`` strings (else ``ValueError``); times are integer milliseconds of the store's
    clock."""

    async def store_time_ms(self) -> int:
        """The store's clock now, in milliseconds since the Unix epoch."""

    async def schedule_lower(self, name: str, member: str, at_ms: int) -> None:
        """Add ``member`` due at ``at_ms``, or move it to ``at_ms`` when that is earlier
        than its due time (a later time changes nothing)."""

    async def schedule_claim(
        self, name: str, limit: int, lease_ms: int
    ) -> tuple[int, list[tuple[str, int]]]:
        """``(store now, claimed)``: up to ``limit`` members due at or before the store's
        clock now, earliest first, each moved to ``now + lease_ms`` in the same atomic
        step; ``claimed`` pairs each member with that new time (its claim, for
        ``schedule_settle``)."""

    async def schedule_settle(
        self, name: str, member: str, claimed_ms: int, at_ms: int | None
    ) -> bool:
        """If ``member`` is still due at ``claimed_ms`` (nobody moved it since the claim):
        make it due at ``at_ms`` (None: remove it) and return True; else change nothing and
        return False."""

    async def schedule_remove(self, name: str, member: str) -> None:
        """Remove ``member`` whatever its time."""

    async def schedule_next(self, name: str) -> int | None:
        """The earliest due time in the schedule (None: it is empty)."""

    async def schedule_due_at(self, name: str, member: str) -> int | None:
        """``member``'s due time (None: not in the schedule)."""

    async def schedule_size(self, name: str) -> int:
        """How many members the schedule holds."""

    async def beat(self, name: str, member: str, keep_ms: int) -> int:
        """A heartbeat: record that ``member`` of the group ``name`` is alive at the store's
        clock now, drop the members that have not beaten for ``keep_ms`` and let the whole
        group expire ``keep_ms`` after this beat -- one atomic step. Returns the store's
        now. On Redis the group is one sorted set ``{prefix}beats:{name}`` with a TTL."""

    async def beats(self, name: str) -> tuple[int, list[tuple[str, int]]]:
        """``(store now, members)``: the group's members with the time of their last beat
        (newest first, at most ``PAGE_LIMIT``), read with the store's clock in one step."""


def check_ms(value: int, what: str = "time") -> int:
    """A time in milliseconds: a non-negative int below 2**53 (exact as a Redis score)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**53:
        raise ValueError(f"{what} must be an integer in 0..2**53-1 milliseconds: {value!r}")
    return value


# -- documents, indexes, feeds (DocStore) ---------------------------------------------------

DOC_KEY = re.compile(r"[A-Za-z0-9:._-]{1,200}")
"""What a document key, an index name and a feed source must match (whole string)."""

PAGE_LIMIT = 1000
"""The most members (``index_page``) or items (``feed_read``) one page may ask for."""

FEED_KEEP = 1000
"""Default: the newest items of a feed that are never trimmed."""

FEED_KEEP_SECONDS = 7 * 86400.0
"""Default: items appended less than this long ago are never trimmed."""


@dataclass(frozen=True, slots=True)
class Doc:
    """A stored document: its version (1 after the first ``put_doc``) and its bytes."""

    version: int
    data: bytes


@dataclass(frozen=True, slots=True)
class FeedItem:
    """One feed item: its number (1, 2, 3, ... per key, never reused) and its bytes."""

    seq: int
    data: bytes


@dataclass(frozen=True, slots=True)
class FeedPage:
    """What ``feed_read`` found: ``items`` with ``seq > after``, ascending, at most the
    limit; ``last`` the newest seq ever written to the feed (0: none); ``trimmed`` the highest
    seq dropped by trimming (0: none) -- ``after < trimmed`` means the reader missed items."""

    items: list[FeedItem]
    last: int
    trimmed: int


def check_name(name: object, what: str = "key") -> str:
    """``name`` when it is a valid key (index name, source), else ``ValueError``."""
    if not isinstance(name, str) or DOC_KEY.fullmatch(name) is None:
        raise ValueError(f"a {what} must be 1-200 characters of A-Z a-z 0-9 : . _ -: {name!r}")
    return name


def check_members(members: Sequence[str]) -> list[str]:
    """Index members as a list: strings with a UTF-8 encoding, else ``ValueError``."""
    if isinstance(members, str | bytes):
        raise ValueError("members must be a sequence of strings, not one string")
    out = list(members)
    for member in out:
        if not isinstance(member, str):
            raise ValueError(f"an index member must be a string: {member!r}")
        member.encode()  # UnicodeEncodeError (a ValueError) for lone surrogates
    return out


def check_pairs(pairs: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """``(index name, member)`` pairs of ``put_doc``, checked."""
    out: list[tuple[str, str]] = []
    for index, member in pairs:
        check_name(index, "index name")
        out.extend((index, m) for m in check_members([member]))
    return out


def check_limit(limit: int) -> int:
    """A page size: an int in 1..``PAGE_LIMIT``, else ``ValueError``."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= PAGE_LIMIT:
        raise ValueError(f"limit must be an integer in 1..{PAGE_LIMIT}: {limit!r}")
    return limit


def check_version(version: int, what: str = "version") -> int:
    """A non-negative int, else ``ValueError``."""
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        raise ValueError(f"{what} must be a non-negative integer: {version!r}")
    return version


def check_feed_append(now: float, keep: int, keep_seconds: float) -> None:
    """The trimming arguments of ``feed_append``: finite times, ``keep >= 0``."""
    if not math.isfinite(now) or not math.isfinite(keep_seconds) or keep_seconds < 0:
        raise ValueError("now and keep_seconds must be finite (keep_seconds >= 0)")
    check_version(keep, "keep")


class DocStore(Protocol):
    """Documents, indexes and feeds per key (see the module docstring). Every operation is
    atomic (on Redis one command); store failures raise ``StoreUnavailable``, a bad key,
    index name, source or limit ``ValueError``."""

    async def get_doc(self, key: str) -> Doc | None:
        """The document under ``key``; None when it was never put."""

    async def get_docs(self, keys: Sequence[str]) -> list[Doc | None]:
        """``get_doc`` of each key, in order, in one round trip (Redis Cluster: one per
        node, in parallel)."""

    async def put_doc(
        self,
        key: str,
        expected_version: int,
        data: bytes,
        *,
        index_add: Sequence[tuple[str, str]] = (),
        index_remove: Sequence[tuple[str, str]] = (),
    ) -> bool:
        """Compare-and-set: when the document's version is ``expected_version`` (0: it does
        not exist), store ``data`` as version ``expected_version + 1`` and, in the same atomic
        step, remove the ``(index name, member)`` pairs of ``index_remove`` from the key's
        indexes, then add those of ``index_add``; True. Otherwise write nothing and return
        False -- except when the stored version is ``expected_version + 1`` with
        byte-identical ``data`` (a retry after a lost reply): True, nothing written."""

    async def index_add(self, key: str, index: str, members: Sequence[str]) -> None:
        """Add ``members`` to the key's index ``index`` (a set: adding twice is once)."""

    async def index_remove(self, key: str, index: str, members: Sequence[str]) -> None:
        """Remove ``members`` from the key's index ``index`` (absent ones are ignored)."""

    async def index_page(
        self, key: str, index: str, *, after: str | None, limit: int
    ) -> list[str]:
        """Members of the index in ascending byte-wise order (of their UTF-8 encoding),
        strictly greater than ``after`` (None: from the start), at most ``limit``
        (1..``PAGE_LIMIT``)."""

    async def feed_append(
        self,
        key: str,
        source: str,
        version: int,
        items: Sequence[bytes],
        *,
        now: float,
        keep: int = FEED_KEEP,
        keep_seconds: float = FEED_KEEP_SECONDS,
    ) -> bool:
        """If ``version`` is above the feed's mark for ``source`` (0 when none): append
        ``items`` (may be empty) with consecutive seqs and append time ``now``, set the mark
        to ``version``, trim (drop the oldest items that are both beyond the newest ``keep``
        and appended before ``now - keep_seconds``), wake the feed's watchers and return
        True -- one atomic step. Otherwise write nothing and return False."""

    async def feed_marks(self, key: str, sources: Sequence[str]) -> list[int]:
        """The feed's mark of each source, in order (0: none), in one round trip."""

    async def feed_read(self, key: str, after: int, limit: int) -> FeedPage:
        """Items with ``seq > after`` (the oldest kept first), at most ``limit``
        (1..``PAGE_LIMIT``), with the feed's ``last`` and ``trimmed``."""

    def watch_feed(self, key: str, after: int) -> AsyncGenerator[int, None]:
        """Yield the feed's ``last`` whenever it is above ``after`` and above the value
        yielded before (values may be skipped: read the items with ``feed_read``), starting
        with the current one if it is above ``after``. Runs until the consumer stops;
        ``aclose()`` it to release what it holds at once."""
