"""``SqliteStore``: the embedded match store in one SQLite file (stdlib ``sqlite3``).

The store contract (``base.py``) in a file that survives a restart of the process: the
embedded default of ``skyline serve`` (one process; Redis is the way to scale out).
``SqliteStore(path, clock=time.time)`` opens (or creates) the database at ``path``;
``path=":memory:"`` gives a private in-memory database (tests). The service's default file
name under its data folder is ``DEFAULT_FILENAME``.

File format
-----------
A SQLite 3 database identified by ``PRAGMA application_id = 0x536B794C`` ("SkyL") with its
schema version in ``PRAGMA user_version`` (``SCHEMA_VERSION``). On open, a file that is not
SQLite, a SQLite file of another program (another application id, or tables but no id) or a
newer schema is refused with ``StoreFileError``, and nothing in it is changed. Tables:

``matches(serial INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT UNIQUE, version, record BLOB,
create_id TEXT NULL, expires_at REAL NULL)``
    One row per live match: its version, record, the ``write_id`` of its ``create`` (for the
    create retry) and its absolute expiry time on the store's clock (NULL: never).
    ``serial`` is never reused, so a match re-created under an expired id is another history
    (a watcher of the old one ends).
``log(match_id TEXT REFERENCES matches(id) ON DELETE CASCADE, version, data BLOB,
write_tag TEXT, PRIMARY KEY(match_id, version)) WITHOUT ROWID``
    One row per compare-and-set: the entry created with that version and the 8-hex-digit tag
    of its write id (``base.write_tag``). Deleting a match deletes its log.
``due(seq INTEGER PRIMARY KEY AUTOINCREMENT, match_id, consumer TEXT NULL,
delivered_at REAL NULL, lane INTEGER NOT NULL DEFAULT 0)``
    Due signals. ``consumer IS NULL``: queued, not delivered yet (a partial unique index keeps
    one queued signal per match); otherwise pending: delivered to ``consumer`` at
    ``delivered_at`` (store clock) and not acknowledged. The token of a signal is ``"<seq>-0"``;
    ``ack_due`` deletes the row. Pending signals survive a restart: the same consumer name
    ``resume_due``s them, any consumer reclaims them after ``reclaim_idle_ms``. ``lane``: 0
    for a match with a human seat, 1 for an all-bot match (``claim_due`` takes lane 0 first).
    The column was added without a new schema version: a file that lacks it gets it when
    opened (``ALTER TABLE ... ADD COLUMN``, in the opening transaction), and an older Skyline
    that writes such a file queues every signal in lane 0, as it always did.

Since schema version 2, the ``DocStore`` (``base.py``) of the player layer:

``docs(doc_key TEXT PRIMARY KEY, version, data BLOB)``
    One row per document: its version (1 after the first ``put_doc``) and bytes.
``doc_index(doc_key, index_name, member TEXT COLLATE BINARY, PRIMARY KEY(doc_key,
index_name, member)) WITHOUT ROWID``
    One row per member of an index of a key. The BINARY collation compares the UTF-8 bytes
    (SQLite's default text encoding, which a Skyline file never changes) with ``memcmp``: the
    byte-wise order of ``index_page``, the same as Redis's ``ZRANGE BYLEX``.
``feeds(doc_key TEXT PRIMARY KEY, last_seq, trimmed) WITHOUT ROWID``
    One row per feed: the newest seq ever written and the highest seq dropped by trimming.
``feed_items(doc_key, seq, appended_at REAL, data BLOB, PRIMARY KEY(doc_key, seq))
WITHOUT ROWID``
    The items kept, ``trimmed + 1 .. last_seq``, with the ``now`` of the append that wrote
    them.
``feed_marks(doc_key, source, version, PRIMARY KEY(doc_key, source)) WITHOUT ROWID``
    The newest version appended per source (a match id): ``feed_append`` lands only above it.

Upgrades: a file of an older schema version is upgraded in place when it is opened, in
the same transaction that checks it (a crash midway leaves it as it was). Version 1 -> 2
only creates the tables above (every ``CREATE`` is ``IF NOT EXISTS``); the matches, logs and
due signals stay as they are. A file upgraded to version 2 is refused by a Skyline that reads
only version 1 ("written by a newer Skyline"): upgrade every process together.

Execution and durability
------------------------
One connection, used only from one dedicated worker thread fed by a queue: the blocking
calls stay off the event loop and every operation is serialised in-process, so a
compare-and-set cannot lose a race. The thread takes every job waiting (up to
``MAX_BATCH``) and runs them in one ``BEGIN IMMEDIATE ... COMMIT`` transaction, each job in a
savepoint (group commit: concurrent writes share one fsync), and answers each caller's loop
with one ``call_soon_threadsafe``. A job that fails is rolled back to its savepoint; when
SQLite itself fails (a full disk) the batch is rolled back whole and run again job by job,
so only the failing write gets the error. Nothing is answered before the commit, so a match
is never half-written: the record, the version and the log entry land together or not at
all -- nor a document (its data and its index changes) or a feed append (items, mark,
trimming). The database runs in WAL mode
with ``synchronous=FULL``: an acknowledged write is in the fsynced WAL and survives kill -9
and power loss.

The store is single-process: opening a file takes an exclusive ``flock`` on ``<path>.lock``
(holding the owner's pid); a second process gets ``StoreFileError`` naming that pid. Run
several replicas on Redis instead. ``close()`` releases the lock; the lock file stays.

Errors at run time (disk full, I/O error, read-only or locked database, a file damaged
under us) roll back and raise ``StoreUnavailable`` (HTTP 503): the write did not land, and a
retry with the same write id is safe as everywhere. A full disk (``SQLITE_FULL``) raises
its subclass ``StoreFull`` (HTTP 503 ``store_full``), counted in ``full_refusals`` and logged
at most once a minute.

TTL and wake-ups
----------------
Expiry times are absolute, on ``clock`` (wall clock ``time.time`` by default, so they
survive a restart; a fake clock in tests). Expired matches vanish on access and are swept at
open and every ``SWEEP_EVERY`` creates. ``watch`` sleeps on an ``asyncio.Event`` per match,
set by every write and deletion done through this object (the only writer: one process),
and re-reads every ``WATCH_TICK`` seconds to notice an expiry; ``watch_feed`` likewise on an
event per feed key, set by every ``feed_append`` that lands; ``claim_due`` sleeps on an
event set by ``signal_due``. ``round_trips`` counts operations (not ``claim_due`` /
``resume_due``: the in-process bot worker polls them, and the counter measures what
requests cost).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import fcntl
import logging
import os
import queue
import sqlite3
import threading
import time
import uuid
import weakref
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar, cast

from .base import (
    DUE_RECLAIM_IDLE_MS,
    FEED_KEEP,
    FEED_KEEP_SECONDS,
    PAGE_LIMIT,
    Doc,
    DueSignal,
    FeedItem,
    FeedPage,
    FullReports,
    LogEntry,
    MatchExists,
    MatchNotFound,
    StoreUnavailable,
    check_feed_append,
    check_limit,
    check_members,
    check_ms,
    check_name,
    check_pairs,
    check_version,
    write_tag,
)

__all__ = [
    "APPLICATION_ID", "DEFAULT_FILENAME", "SCHEMA_VERSION", "SqliteStore", "StoreFileError",
    "StoreInUse",
]

log = logging.getLogger("skyline.store")

DEFAULT_FILENAME = "skyline.sqlite3"
APPLICATION_ID = 0x536B794C  # "SkyL": PRAGMA application_id of a Skyline database
SCHEMA_VERSION = 2  # PRAGMA user_version (1: matches, log, due; 2: + documents, feeds)
# The schedules table came later without a new version, like the due lane: an older Skyline
# still opens and writes such a file (it only leaves the schedules alone).
MEMORY = ":memory:"
_SQLITE_HEADER = b"SQLite format 3\x00"

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS matches (
        serial INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        version INTEGER NOT NULL,
        record BLOB NOT NULL,
        create_id TEXT,
        expires_at REAL
    )""",
    """CREATE INDEX IF NOT EXISTS matches_by_expiry ON matches (expires_at)
        WHERE expires_at IS NOT NULL""",
    """CREATE TABLE IF NOT EXISTS log (
        match_id TEXT NOT NULL REFERENCES matches (id) ON DELETE CASCADE,
        version INTEGER NOT NULL,
        data BLOB NOT NULL,
        write_tag TEXT NOT NULL,
        PRIMARY KEY (match_id, version)
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS due (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        match_id TEXT NOT NULL,
        consumer TEXT,
        delivered_at REAL,
        lane INTEGER NOT NULL DEFAULT 0
    )""",
    """CREATE UNIQUE INDEX IF NOT EXISTS due_queued ON due (match_id)
        WHERE consumer IS NULL""",
    """CREATE INDEX IF NOT EXISTS due_pending ON due (consumer, seq)
        WHERE consumer IS NOT NULL""",
    # Version 2: the DocStore (an upgrade from version 1 adds just these).
    """CREATE TABLE IF NOT EXISTS docs (
        doc_key TEXT NOT NULL PRIMARY KEY,
        version INTEGER NOT NULL,
        data BLOB NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS doc_index (
        doc_key TEXT NOT NULL,
        index_name TEXT NOT NULL,
        member TEXT NOT NULL COLLATE BINARY,
        PRIMARY KEY (doc_key, index_name, member)
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS feeds (
        doc_key TEXT NOT NULL PRIMARY KEY,
        last_seq INTEGER NOT NULL,
        trimmed INTEGER NOT NULL
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS feed_items (
        doc_key TEXT NOT NULL,
        seq INTEGER NOT NULL,
        appended_at REAL NOT NULL,
        data BLOB NOT NULL,
        PRIMARY KEY (doc_key, seq)
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS feed_marks (
        doc_key TEXT NOT NULL,
        source TEXT NOT NULL,
        version INTEGER NOT NULL,
        PRIMARY KEY (doc_key, source)
    ) WITHOUT ROWID""",
    # Schedules (deadlines, retries): added by IF NOT EXISTS to older files.
    """CREATE TABLE IF NOT EXISTS schedules (
        name TEXT NOT NULL,
        member TEXT NOT NULL,
        at INTEGER NOT NULL,
        PRIMARY KEY (name, member)
    ) WITHOUT ROWID""",
    """CREATE INDEX IF NOT EXISTS schedules_due ON schedules (name, at)""",
    f"PRAGMA application_id = {APPLICATION_ID}",
    f"PRAGMA user_version = {SCHEMA_VERSION}",
)

def _add_due_lane(conn: sqlite3.Connection) -> None:
    """The ``lane`` of due signals (fair bot scheduling): added to a file made before it,
    with the index ``claim_due`` reads the queue by."""
    columns = {str(row[1]) for row in conn.execute("PRAGMA table_info(due)")}
    if "lane" not in columns:
        conn.execute("ALTER TABLE due ADD COLUMN lane INTEGER NOT NULL DEFAULT 0")
    conn.execute(
        "CREATE INDEX IF NOT EXISTS due_lanes ON due (lane, seq) WHERE consumer IS NULL"
    )


# Programming errors: re-raised as they are (after the rollback), never a 503.
_BUGS = (
    sqlite3.IntegrityError,
    sqlite3.ProgrammingError,
    sqlite3.InterfaceError,
    sqlite3.NotSupportedError,
)

T = TypeVar("T")


class StoreFileError(Exception):
    """The database file cannot be used: not a Skyline database, a newer schema, in use by
    another process, or its folder not writable. The message names the path and the cause."""


class StoreInUse(StoreFileError):
    """Another process holds the database file (the embedded store is single-process)."""


@dataclass(slots=True)
class _Wake:
    """What a committed transaction changed: matches and feeds to wake watchers of, new due
    signals."""

    matches: set[str] = field(default_factory=set)
    feeds: set[str] = field(default_factory=set)
    due: bool = False


_Body = Callable[[sqlite3.Connection, _Wake], T]


@dataclass(slots=True, eq=False)
class _Job:
    """One operation for the worker thread: ``fn(conn, wake)`` in a transaction, or
    ``fn(conn)`` outside one (``raw``); its caller waits on ``future`` (on ``loop``) or, from
    synchronous code, on ``sync``."""

    fn: Callable[..., object]
    raw: bool
    loop: asyncio.AbstractEventLoop | None = None
    future: asyncio.Future[object] | None = None
    sync: concurrent.futures.Future[object] | None = None
    outcome: tuple[object, BaseException | None] = (None, None)


def _serve(ref: weakref.ref[SqliteStore], jobs: queue.SimpleQueue[_Job | None]) -> None:
    """The worker thread: take every job queued (up to ``MAX_BATCH``) and run them together,
    so that concurrent writes share one transaction and one fsync (group commit). It holds
    the store only while it works: a store nobody closed is collected, and the thread ends."""
    while True:
        try:
            first = jobs.get(timeout=1.0)
        except queue.Empty:
            if ref() is None:
                return
            continue
        batch = [first]
        while len(batch) < SqliteStore.MAX_BATCH:
            try:
                batch.append(jobs.get_nowait())
            except queue.Empty:
                break
        store = ref()
        if store is None:
            return
        store._run_batch([job for job in batch if job is not None])
        if any(job is None for job in batch):
            store._close_connection()
            return
        del store


def _settle(
    jobs: list[_Job], wake_up: Callable[[_Wake], None] | None, wake: _Wake
) -> None:
    """On a caller's loop: wake the watchers (once per batch), then answer the callers."""
    if wake_up is not None and (wake.matches or wake.feeds or wake.due):
        wake_up(wake)
    for job in jobs:
        future = job.future
        if future is None or future.done():  # the caller was cancelled: the work stands
            continue
        result, error = job.outcome
        if error is None:
            future.set_result(result)
        else:
            future.set_exception(error)


class SqliteStore:
    """``MatchStore`` and ``DocStore`` in a SQLite file. See the module docstring for the
    format.

    ``clock`` returns seconds (``time.time`` by default: expiry times are stored as absolute
    times and must mean the same after a restart). ``max_pages`` caps the database size in
    pages (``PRAGMA max_page_count``; tests use it to simulate a full disk)."""

    #: Sweep expired matches after this many creates (and at open).
    SWEEP_EVERY = 256
    #: Seconds an idle watcher waits before it looks again (to notice an expiry).
    WATCH_TICK = 2.0
    #: Jobs the worker thread runs together at most (one transaction, one fsync).
    MAX_BATCH = 64
    #: Seconds a statement waits for a lock held by another connection before failing.
    BUSY_TIMEOUT = 5.0

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        clock: Callable[[], float] = time.time,
        max_pages: int | None = None,
    ) -> None:
        self.path = os.fspath(path)
        self._clock = clock
        self.round_trips = 0
        self._lock_fd: int | None = None
        self._conn: sqlite3.Connection | None = None
        self._closed = False
        self._creates_since_sweep = 0  # touched in the worker thread only
        # Loop side: one event per watched match (set and dropped by each write), the
        # number of watchers of each match, one event per blocked claim_due.
        self._events: dict[str, asyncio.Event] = {}
        self._watchers: dict[str, int] = {}
        self._due_waiters: set[asyncio.Event] = set()
        # The same for watched feeds (DocStore), by feed key.
        self._feed_events: dict[str, asyncio.Event] = {}
        self._feed_watchers: dict[str, int] = {}
        #: As on ``RedisStore``: no pub/sub connection here (wake-ups are in-process);
        #: ``wakeups`` counts the matches whose watchers a write woke.
        self.pubsub_connections = 0
        self.wakeups = 0
        #: Writes refused on a full disk (``SQLITE_FULL``: ``StoreFull``), logged once a
        #: minute.
        self.full = FullReports(log, f"The SQLite store {self.path} (disk full)")
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        try:
            self._conn = self._open(max_pages)
        except BaseException:
            self._release_lock()
            raise
        self._thread = threading.Thread(
            target=_serve, args=(weakref.ref(self), self._jobs), name="skyline-sqlite",
            daemon=True,
        )
        self._thread.start()

    @property
    def full_refusals(self) -> int:
        """Writes refused so far because the disk (or ``max_pages``) is full."""
        return self.full.count

    # -- opening ---------------------------------------------------------------------------

    def _open(self, max_pages: int | None) -> sqlite3.Connection:
        in_memory = self.path == MEMORY
        if not in_memory:
            self._check_location()
            self._take_lock()
            self._check_header()
        try:
            conn = sqlite3.connect(
                self.path,
                timeout=self.BUSY_TIMEOUT,
                isolation_level=None,  # transactions are explicit: BEGIN IMMEDIATE
                check_same_thread=False,  # opened here, then used by the worker thread only
            )
        except sqlite3.Error as exc:
            raise self._file_error(exc) from exc
        try:
            found = self._check_identity(conn)
            if not in_memory:
                mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if str(mode).lower() != "wal":
                    raise StoreFileError(
                        f"{self.path}: SQLite refused WAL mode (journal mode {mode}); "
                        "put the data folder on a local file system"
                    )
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
            if max_pages is not None:
                conn.execute(f"PRAGMA max_page_count = {int(max_pages)}")
            conn.execute("BEGIN IMMEDIATE")
            try:
                # A new file, or an upgrade in place: what an older version lacks is created
                # (IF NOT EXISTS), nothing else is touched; user_version goes last.
                for statement in _SCHEMA:
                    conn.execute(statement)
                _add_due_lane(conn)
                self._sweep(conn, _Wake(), self._clock())
                conn.execute("COMMIT")
                if 0 < found < SCHEMA_VERSION:
                    log.info("SQLite store %s upgraded from schema version %d to %d",
                             self.path, found, SCHEMA_VERSION)
            except BaseException:
                _rollback(conn)
                raise
        except sqlite3.Error as exc:
            conn.close()
            raise self._file_error(exc) from exc
        except BaseException:
            conn.close()
            raise
        return conn

    def _check_location(self) -> None:
        path = self.path
        folder = os.path.dirname(os.path.abspath(path))
        if os.path.isdir(path):
            raise StoreFileError(f"{path} is a folder, not a database file")
        if os.path.exists(folder) and not os.path.isdir(folder):
            raise StoreFileError(
                f"cannot open {path}: {folder} is not a folder; pass another --data-dir"
            )
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as exc:
            raise StoreFileError(
                f"cannot create the data folder {folder} for {path}: {exc.strerror}; "
                "pass another --data-dir"
            ) from exc
        if not os.access(folder, os.W_OK | os.X_OK):
            raise StoreFileError(
                f"the data folder {folder} is not writable, so {path} cannot be opened; "
                "fix its permissions or pass another --data-dir"
            )
        if os.path.exists(path) and not os.access(path, os.R_OK | os.W_OK):
            raise StoreFileError(
                f"{path} is not readable and writable; fix its permissions or pass another "
                "--data-dir"
            )

    def _take_lock(self) -> None:
        lock_path = self.path + ".lock"
        try:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise StoreFileError(
                f"cannot create the lock file {lock_path}: {exc.strerror}; the data folder "
                "must be writable (or pass another --data-dir)"
            ) from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                owner = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            finally:
                os.close(fd)
            raise StoreInUse(
                f"{self.path} is in use by another Skyline process (pid {owner}); the embedded "
                "store is single-process — use Redis to run several replicas"
            ) from None
        except OSError as exc:
            os.close(fd)
            raise StoreFileError(f"cannot lock {lock_path}: {exc.strerror}") from exc
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._lock_fd = fd

    def _release_lock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing the descriptor drops the flock
            self._lock_fd = None

    def _check_header(self) -> None:
        """A non-empty file must start as SQLite files do (before SQLite touches it)."""
        try:
            with open(self.path, "rb") as file:
                header = file.read(len(_SQLITE_HEADER))
        except FileNotFoundError:
            return
        except OSError as exc:
            raise StoreFileError(f"cannot read {self.path}: {exc.strerror}") from exc
        if header and header != _SQLITE_HEADER:
            raise StoreFileError(
                f"{self.path} is not a Skyline database (not a SQLite file); move it away "
                "or pass another --data-dir"
            )

    def _check_identity(self, conn: sqlite3.Connection) -> int:
        """The file's schema version (0: a new database); ``StoreFileError`` when it is not
        ours or newer than ``SCHEMA_VERSION``."""
        app_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
        schema = int(conn.execute("PRAGMA user_version").fetchone()[0])
        tables = [
            str(name)
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' "
                "AND name NOT LIKE 'sqlite_%' ORDER BY name"
            )
        ]
        if app_id == 0 and not tables:
            return 0  # a new (empty) database: ours from now on
        if app_id != APPLICATION_ID:
            what = (
                f"application_id {app_id:#x}"
                if app_id
                else "tables " + ", ".join(tables[:5]) + (", ..." if len(tables) > 5 else "")
            )
            raise StoreFileError(
                f"{self.path} is not a Skyline database (foreign SQLite file: {what}); "
                "move it away or pass another --data-dir"
            )
        if schema > SCHEMA_VERSION:
            raise StoreFileError(
                f"{self.path} was written by a newer Skyline (schema version {schema}; this "
                f"one reads up to {SCHEMA_VERSION}); upgrade Skyline or pass another --data-dir"
            )
        return schema

    def _file_error(self, exc: sqlite3.Error) -> StoreFileError:
        name = getattr(exc, "sqlite_errorname", "") or ""
        if name.startswith("SQLITE_NOTADB"):
            return StoreFileError(
                f"{self.path} is not a Skyline database (not a SQLite file); move it away "
                "or pass another --data-dir"
            )
        if name.startswith("SQLITE_CORRUPT"):
            return StoreFileError(
                f"{self.path} is damaged (malformed SQLite file: {exc}); restore it from a "
                "backup, move it away or pass another --data-dir"
            )
        if name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH")):
            return StoreFileError(
                f"{self.path} cannot be opened for writing ({exc}); the file and its folder "
                "must be writable (or pass another --data-dir)"
            )
        if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
            return StoreFileError(f"{self.path} is locked by another program ({exc})")
        return StoreFileError(f"cannot open {self.path}: {name or type(exc).__name__}: {exc}")

    # -- the worker thread ---------------------------------------------------------------

    def _run_batch(self, batch: list[_Job]) -> None:
        raw = [job for job in batch if job.raw]
        for job in raw:
            try:
                job.outcome = (self._raw(job.fn), None)
            except BaseException as exc:  # handed to the caller
                job.outcome = (None, exc)
        transactional = [job for job in batch if not job.raw]
        wake = _Wake()
        if transactional and not self._together(transactional, wake):
            wake = _Wake()
            for job in transactional:  # one by one: a failing job fails alone
                self._together([job], wake)
        self._deliver(batch, wake)

    def _together(self, jobs: list[_Job], wake: _Wake) -> bool:
        """Run ``jobs`` in one ``BEGIN IMMEDIATE ... COMMIT``, each in a savepoint. A domain
        error (``MatchNotFound``, ``MatchExists``) keeps what its job did before it (dropping
        an expired match); any other exception rolls its job back. False (and everything
        rolled back, no outcome kept) when SQLite itself failed -- then the caller runs the
        jobs one by one, so that only the one that fails gets the error."""
        conn = self._conn
        if conn is None:
            for job in jobs:
                job.outcome = (None, StoreUnavailable(f"the SQLite store {self.path} is closed"))
            return True
        done: list[tuple[_Job, object, BaseException | None, _Wake]] = []
        try:
            conn.execute("BEGIN IMMEDIATE")
            for job in jobs:
                conn.execute("SAVEPOINT job")
                mine = _Wake()
                try:
                    result = job.fn(conn, mine)
                except (MatchNotFound, MatchExists) as exc:
                    conn.execute("RELEASE job")
                    done.append((job, None, exc, mine))
                    continue
                except sqlite3.Error:
                    raise
                except BaseException as exc:  # a bug in a body: it alone fails
                    conn.execute("ROLLBACK TO job")
                    conn.execute("RELEASE job")
                    done.append((job, None, exc, _Wake()))
                    continue
                conn.execute("RELEASE job")
                done.append((job, result, None, mine))
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            _rollback(conn)
            if len(jobs) > 1:
                return False
            jobs[0].outcome = (None, self._runtime_error(exc))
            return True
        for job, result, error, mine in done:
            job.outcome = (result, error)
            wake.matches |= mine.matches
            wake.feeds |= mine.feeds
            wake.due = wake.due or mine.due
        return True

    def _deliver(self, batch: list[_Job], wake: _Wake) -> None:
        """Results to their callers: one ``call_soon_threadsafe`` per loop; the wake-ups of
        the batch go with the first loop's results (one process serves one loop)."""
        by_loop: dict[asyncio.AbstractEventLoop, list[_Job]] = {}
        for job in batch:
            if job.loop is None:
                assert job.sync is not None
                result, error = job.outcome
                if error is None:
                    job.sync.set_result(result)
                else:
                    job.sync.set_exception(error)
            else:
                by_loop.setdefault(job.loop, []).append(job)
        for n, (loop, jobs) in enumerate(by_loop.items()):
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
                loop.call_soon_threadsafe(_settle, jobs, self._wake if n == 0 else None, wake)

    def _raw(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` outside a transaction (worker thread): pragmas, single reads."""
        try:
            return fn(self._connection())
        except sqlite3.Error as exc:
            raise self._runtime_error(exc) from exc

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreUnavailable(f"the SQLite store {self.path} is closed")
        return self._conn

    def _runtime_error(self, exc: sqlite3.Error) -> Exception:
        if isinstance(exc, _BUGS):
            return exc
        name = getattr(exc, "sqlite_errorname", "") or type(exc).__name__
        if name.startswith("SQLITE_FULL"):
            # Rolled back: nothing of the write landed. Counted, logged once a minute.
            return self.full.refused(f"{name}: {exc}")
        if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
            log.error("SQLite store %s is damaged: %s: %s", self.path, name, exc)
        else:
            log.warning("SQLite store %s failed: %s: %s", self.path, name, exc)
        return StoreUnavailable(f"SQLite store unavailable ({name}: {exc})")

    def _submit(self, job: _Job) -> None:
        if self._closed:
            raise StoreUnavailable(f"the SQLite store {self.path} is closed")
        self._jobs.put(job)

    async def _run(self, body: _Body[T]) -> T:
        """``body`` in a transaction of the worker thread (batched with whatever else is
        queued)."""
        return cast(T, await self._await(_Job(fn=body, raw=False)))

    async def _run_raw(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        return cast(T, await self._await(_Job(fn=fn, raw=True)))

    async def _await(self, job: _Job) -> object:
        job.loop = asyncio.get_running_loop()
        job.future = job.loop.create_future()
        self._submit(job)
        return await job.future

    def _blocking(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """``fn`` on the worker thread, waited for here (sync helpers for tests and tools)."""
        job = _Job(fn=fn, raw=True, sync=concurrent.futures.Future())
        self._submit(job)
        assert job.sync is not None
        return cast(T, job.sync.result())

    def _wake(self, wake: _Wake) -> None:
        """On the loop: wake the watchers of the changed matches and the blocked claims."""
        for match_id in wake.matches:
            event = self._events.pop(match_id, None)
            if event is not None:
                self.wakeups += 1
                event.set()
        for key in wake.feeds:
            event = self._feed_events.pop(key, None)
            if event is not None:
                self.wakeups += 1
                event.set()
        if wake.due:
            for waiter in self._due_waiters:
                waiter.set()

    # -- transaction bodies (worker thread) ------------------------------------------------

    @staticmethod
    def _expires_at(now: float, ttl_seconds: int | None) -> float | None:
        return None if ttl_seconds is None else now + ttl_seconds

    def _live(
        self, conn: sqlite3.Connection, wake: _Wake, match_id: str, now: float
    ) -> tuple[int, int] | None:
        """``(serial, version)`` of the match, None when absent; drops it when expired."""
        row = conn.execute(
            "SELECT serial, version, expires_at FROM matches WHERE id = ?", (match_id,)
        ).fetchone()
        if row is None:
            return None
        serial, version, expires_at = row
        if expires_at is not None and expires_at <= now:
            conn.execute("DELETE FROM matches WHERE serial = ?", (serial,))  # log: cascade
            wake.matches.add(match_id)
            return None
        return int(serial), int(version)

    def _sweep(self, conn: sqlite3.Connection, wake: _Wake, now: float) -> None:
        gone = conn.execute(
            "DELETE FROM matches WHERE expires_at IS NOT NULL AND expires_at <= ? RETURNING id",
            (now,),
        ).fetchall()
        wake.matches.update(str(match_id) for (match_id,) in gone)

    def _tx_create(
        self,
        conn: sqlite3.Connection,
        wake: _Wake,
        match_id: str,
        record: bytes,
        ttl_seconds: int | None,
        write_id: str | None,
    ) -> None:
        now = self._clock()
        expires_at = self._expires_at(now, ttl_seconds)
        if self._live(conn, wake, match_id, now) is not None:
            (create_id,) = conn.execute(
                "SELECT create_id FROM matches WHERE id = ?", (match_id,)
            ).fetchone()
            if write_id and create_id == write_id:
                return  # the retry of the create that made it
            raise MatchExists(match_id)
        self._creates_since_sweep += 1
        if self._creates_since_sweep >= self.SWEEP_EVERY:
            self._creates_since_sweep = 0
            self._sweep(conn, wake, now)
        conn.execute(
            "INSERT INTO matches (id, version, record, create_id, expires_at)"
            " VALUES (?, 0, ?, ?, ?)",
            (match_id, record, write_id, expires_at),
        )

    def _tx_load(self, conn: sqlite3.Connection, wake: _Wake, match_id: str) -> tuple[int, bytes]:
        live = self._live(conn, wake, match_id, self._clock())
        if live is None:
            raise MatchNotFound(match_id)
        version, record = conn.execute(
            "SELECT version, record FROM matches WHERE serial = ?", (live[0],)
        ).fetchone()
        return int(version), bytes(record)

    def _tx_load_many(
        self, conn: sqlite3.Connection, wake: _Wake, match_ids: Sequence[str]
    ) -> list[tuple[int, bytes] | None]:
        out: list[tuple[int, bytes] | None] = []
        for match_id in match_ids:
            try:
                out.append(self._tx_load(conn, wake, match_id))
            except MatchNotFound:
                out.append(None)
        return out

    def _tx_cas(
        self,
        conn: sqlite3.Connection,
        wake: _Wake,
        match_id: str,
        expected_version: int,
        record: bytes,
        entry: bytes,
        ttl_seconds: int | None,
        write_id: str | None,
    ) -> bool:
        now = self._clock()
        expires_at = self._expires_at(now, ttl_seconds)
        live = self._live(conn, wake, match_id, now)
        if live is None:
            raise MatchNotFound(match_id)
        serial, version = live
        if version != expected_version:
            # Idempotent retry: version expected+1 written by this very call (tag and bytes).
            # An empty write id counts as none, as on Redis.
            if not write_id or not 0 <= expected_version < version:
                return False
            landed = conn.execute(
                "SELECT data, write_tag FROM log WHERE match_id = ? AND version = ?",
                (match_id, expected_version + 1),
            ).fetchone()
            return landed is not None and landed[1] == write_tag(write_id) and landed[0] == entry
        new_version = expected_version + 1
        conn.execute(
            "UPDATE matches SET version = ?, record = ?, expires_at = ? WHERE serial = ?",
            (new_version, record, expires_at, serial),
        )
        conn.execute(
            "INSERT INTO log (match_id, version, data, write_tag) VALUES (?, ?, ?, ?)",
            (match_id, new_version, entry, write_tag(write_id or uuid.uuid4().hex)),
        )
        wake.matches.add(match_id)
        return True

    def _tx_log(
        self, conn: sqlite3.Connection, wake: _Wake, match_id: str, after: int
    ) -> list[LogEntry]:
        if self._live(conn, wake, match_id, self._clock()) is None:
            raise MatchNotFound(match_id)
        rows = conn.execute(
            "SELECT version, data, write_tag FROM log WHERE match_id = ? AND version > ?"
            " ORDER BY version",
            (match_id, max(after, 0)),
        )
        return [LogEntry(int(v), bytes(data), str(tag)) for v, data, tag in rows]

    def _tx_watch_state(
        self, conn: sqlite3.Connection, wake: _Wake, match_id: str
    ) -> tuple[int, int] | None:
        return self._live(conn, wake, match_id, self._clock())

    def _tx_signal(
        self, conn: sqlite3.Connection, wake: _Wake, match_id: str, lane: int
    ) -> None:
        # One undelivered signal per match is enough: the partial unique index ignores more.
        queued = conn.execute(
            "INSERT OR IGNORE INTO due (match_id, lane) VALUES (?, ?)", (match_id, lane)
        )
        wake.due = queued.rowcount > 0

    def _tx_claim(
        self,
        conn: sqlite3.Connection,
        wake: _Wake,
        consumer: str,
        count: int,
        reclaim_idle_ms: int | None,
        all_bots_first: int = 0,
    ) -> list[DueSignal]:
        now = self._clock()
        limit = max(count, 0)
        rows: list[tuple[int, str, int]] = []
        if reclaim_idle_ms is not None:
            rows = conn.execute(
                "SELECT seq, match_id, lane FROM due WHERE consumer IS NOT NULL"
                " AND (? - delivered_at) * 1000 >= ? ORDER BY seq LIMIT ?",
                (now, reclaim_idle_ms, limit),
            ).fetchall()
        if not rows:
            queued = "SELECT seq, match_id, lane FROM due WHERE consumer IS NULL AND lane = ?"
            first = conn.execute(
                queued + " ORDER BY seq LIMIT ?", (1, min(max(all_bots_first, 0), limit))
            ).fetchall()
            taken = {seq for seq, _, _ in first}
            rest = conn.execute(
                "SELECT seq, match_id, lane FROM due WHERE consumer IS NULL"
                " ORDER BY lane, seq LIMIT ?", (limit,),
            ).fetchall()
            rows = first + [row for row in rest if row[0] not in taken][:limit - len(first)]
        conn.executemany(
            "UPDATE due SET consumer = ?, delivered_at = ? WHERE seq = ?",
            [(consumer, now, seq) for seq, _, _ in rows],
        )
        return [DueSignal(f"{seq}-0", str(match_id), bool(lane)) for seq, match_id, lane in rows]

    def _tx_resume(
        self, conn: sqlite3.Connection, wake: _Wake, consumer: str, count: int
    ) -> list[DueSignal]:
        rows = conn.execute(
            "SELECT seq, match_id, lane FROM due WHERE consumer = ? ORDER BY lane, seq LIMIT ?",
            (consumer, max(count, 0)),
        )
        return [DueSignal(f"{seq}-0", str(match_id), bool(lane)) for seq, match_id, lane in rows]

    def _tx_ack(self, conn: sqlite3.Connection, wake: _Wake, seqs: list[int]) -> None:
        conn.executemany(
            "DELETE FROM due WHERE seq = ? AND consumer IS NOT NULL", [(s,) for s in seqs]
        )

    # -- documents, indexes, feeds (worker thread) ----------------------------------------

    @staticmethod
    def _tx_get_docs(conn: sqlite3.Connection, wake: _Wake, keys: list[str]) -> list[Doc | None]:
        out: list[Doc | None] = []
        for key in keys:
            row = conn.execute(
                "SELECT version, data FROM docs WHERE doc_key = ?", (key,)
            ).fetchone()
            out.append(None if row is None else Doc(int(row[0]), bytes(row[1])))
        return out

    @staticmethod
    def _tx_put_doc(
        conn: sqlite3.Connection,
        wake: _Wake,
        key: str,
        expected_version: int,
        data: bytes,
        additions: list[tuple[str, str]],
        removals: list[tuple[str, str]],
    ) -> bool:
        row = conn.execute("SELECT version, data FROM docs WHERE doc_key = ?", (key,)).fetchone()
        version = 0 if row is None else int(row[0])
        if version != expected_version:
            # Idempotent retry: this very data already stored as the version it would make.
            return row is not None and version == expected_version + 1 and bytes(row[1]) == data
        if row is None:
            conn.execute(
                "INSERT INTO docs (doc_key, version, data) VALUES (?, 1, ?)", (key, data)
            )
        else:
            conn.execute(
                "UPDATE docs SET version = ?, data = ? WHERE doc_key = ?",
                (expected_version + 1, data, key),
            )
        SqliteStore._tx_index_remove(conn, wake, key, removals)
        SqliteStore._tx_index_add(conn, wake, key, additions)
        return True

    @staticmethod
    def _tx_index_add(
        conn: sqlite3.Connection, wake: _Wake, key: str, pairs: list[tuple[str, str]]
    ) -> None:
        conn.executemany(
            "INSERT OR IGNORE INTO doc_index (doc_key, index_name, member) VALUES (?, ?, ?)",
            [(key, index, member) for index, member in pairs],
        )

    @staticmethod
    def _tx_index_remove(
        conn: sqlite3.Connection, wake: _Wake, key: str, pairs: list[tuple[str, str]]
    ) -> None:
        conn.executemany(
            "DELETE FROM doc_index WHERE doc_key = ? AND index_name = ? AND member = ?",
            [(key, index, member) for index, member in pairs],
        )

    @staticmethod
    def _tx_index_page(
        conn: sqlite3.Connection, wake: _Wake, key: str, index: str, after: str | None,
        limit: int,
    ) -> list[str]:
        if after is None:
            rows = conn.execute(
                "SELECT member FROM doc_index WHERE doc_key = ? AND index_name = ?"
                " ORDER BY member LIMIT ?",
                (key, index, limit),
            )
        else:
            rows = conn.execute(
                "SELECT member FROM doc_index WHERE doc_key = ? AND index_name = ?"
                " AND member > ? ORDER BY member LIMIT ?",
                (key, index, after, limit),
            )
        return [str(member) for (member,) in rows]

    @staticmethod
    def _feed_state(conn: sqlite3.Connection, key: str) -> tuple[int, int]:
        """``(last, trimmed)`` of a feed; ``(0, 0)`` when nothing was ever appended."""
        row = conn.execute(
            "SELECT last_seq, trimmed FROM feeds WHERE doc_key = ?", (key,)
        ).fetchone()
        return (0, 0) if row is None else (int(row[0]), int(row[1]))

    @staticmethod
    def _tx_feed_append(
        conn: sqlite3.Connection,
        wake: _Wake,
        key: str,
        source: str,
        version: int,
        items: list[bytes],
        now: float,
        keep: int,
        cutoff: float,
    ) -> bool:
        row = conn.execute(
            "SELECT version FROM feed_marks WHERE doc_key = ? AND source = ?", (key, source)
        ).fetchone()
        if version <= (0 if row is None else int(row[0])):
            return False
        last, trimmed = SqliteStore._feed_state(conn, key)
        conn.executemany(
            "INSERT INTO feed_items (doc_key, seq, appended_at, data) VALUES (?, ?, ?, ?)",
            [(key, last + 1 + i, now, item) for i, item in enumerate(items)],
        )
        last += len(items)
        conn.execute(
            "INSERT INTO feed_marks (doc_key, source, version) VALUES (?, ?, ?)"
            " ON CONFLICT (doc_key, source) DO UPDATE SET version = excluded.version",
            (key, source, version),
        )
        # Trim: the oldest first, while beyond the newest `keep` and older than the cutoff.
        excess = last - trimmed - keep
        if excess > 0:
            oldest = conn.execute(
                "SELECT seq, appended_at FROM feed_items WHERE doc_key = ? AND seq > ?"
                " ORDER BY seq LIMIT ?",
                (key, trimmed, excess),
            ).fetchall()
            cut = trimmed
            for seq, appended_at in oldest:
                if not appended_at < cutoff:
                    break
                cut = int(seq)
            if cut > trimmed:
                conn.execute(
                    "DELETE FROM feed_items WHERE doc_key = ? AND seq <= ?", (key, cut)
                )
                trimmed = cut
        conn.execute(
            "INSERT INTO feeds (doc_key, last_seq, trimmed) VALUES (?, ?, ?)"
            " ON CONFLICT (doc_key) DO UPDATE SET last_seq = excluded.last_seq,"
            " trimmed = excluded.trimmed",
            (key, last, trimmed),
        )
        wake.feeds.add(key)
        return True

    @staticmethod
    def _tx_feed_marks(
        conn: sqlite3.Connection, wake: _Wake, key: str, sources: list[str]
    ) -> list[int]:
        out: list[int] = []
        for source in sources:
            row = conn.execute(
                "SELECT version FROM feed_marks WHERE doc_key = ? AND source = ?", (key, source)
            ).fetchone()
            out.append(0 if row is None else int(row[0]))
        return out

    @staticmethod
    def _tx_feed_read(
        conn: sqlite3.Connection, wake: _Wake, key: str, after: int, limit: int
    ) -> FeedPage:
        last, trimmed = SqliteStore._feed_state(conn, key)
        rows = conn.execute(
            "SELECT seq, data FROM feed_items WHERE doc_key = ? AND seq > ? ORDER BY seq LIMIT ?",
            (key, after, limit),
        )
        return FeedPage([FeedItem(int(seq), bytes(data)) for seq, data in rows], last, trimmed)

    @staticmethod
    def _tx_feed_last(conn: sqlite3.Connection, wake: _Wake, key: str) -> int:
        return SqliteStore._feed_state(conn, key)[0]

    # -- schedules (worker thread) ----------------------------------------------------------

    def _now_ms(self) -> int:
        return int(self._clock() * 1000)

    @staticmethod
    def _tx_schedule_lower(
        conn: sqlite3.Connection, wake: _Wake, name: str, member: str, at: int
    ) -> None:
        conn.execute(
            "INSERT INTO schedules (name, member, at) VALUES (?, ?, ?)"
            " ON CONFLICT (name, member) DO UPDATE SET at = excluded.at"
            " WHERE excluded.at < schedules.at", (name, member, at),
        )

    def _tx_schedule_claim(
        self, conn: sqlite3.Connection, wake: _Wake, name: str, limit: int, lease: int
    ) -> tuple[int, list[tuple[str, int]]]:
        now = self._now_ms()
        rows = conn.execute(
            "SELECT member FROM schedules WHERE name = ? AND at <= ? ORDER BY at, member"
            " LIMIT ?", (name, now, limit),
        ).fetchall()
        till = now + lease
        conn.executemany("UPDATE schedules SET at = ? WHERE name = ? AND member = ?",
                         [(till, name, member) for (member,) in rows])
        return now, [(str(member), till) for (member,) in rows]

    @staticmethod
    def _tx_schedule_settle(
        conn: sqlite3.Connection, wake: _Wake, name: str, member: str, claimed: int,
        at: int | None,
    ) -> bool:
        if at is None:
            done = conn.execute(
                "DELETE FROM schedules WHERE name = ? AND member = ? AND at = ?",
                (name, member, claimed))
        else:
            done = conn.execute(
                "UPDATE schedules SET at = ? WHERE name = ? AND member = ? AND at = ?",
                (at, name, member, claimed))
        return done.rowcount > 0

    async def store_time_ms(self) -> int:
        return self._now_ms()

    async def schedule_lower(self, name: str, member: str, at_ms: int) -> None:
        check_name(name, "schedule name")
        check_name(member, "member")
        check_ms(at_ms)
        self.round_trips += 1
        await self._run(lambda c, w: self._tx_schedule_lower(c, w, name, member, at_ms))

    async def schedule_claim(
        self, name: str, limit: int, lease_ms: int
    ) -> tuple[int, list[tuple[str, int]]]:
        check_name(name, "schedule name")
        check_limit(limit)
        check_ms(lease_ms, "lease")
        self.round_trips += 1
        return await self._run(
            lambda c, w: self._tx_schedule_claim(c, w, name, limit, lease_ms))

    async def schedule_settle(
        self, name: str, member: str, claimed_ms: int, at_ms: int | None
    ) -> bool:
        check_name(name, "schedule name")
        check_name(member, "member")
        check_ms(claimed_ms, "claim")
        if at_ms is not None:
            check_ms(at_ms)
        self.round_trips += 1
        return await self._run(
            lambda c, w: self._tx_schedule_settle(c, w, name, member, claimed_ms, at_ms))

    async def schedule_remove(self, name: str, member: str) -> None:
        self.round_trips += 1
        await self._run(lambda c, w: c.execute(
            "DELETE FROM schedules WHERE name = ? AND member = ?", (name, member)) and None)

    async def schedule_next(self, name: str) -> int | None:
        row = await self._run(lambda c, w: c.execute(
            "SELECT MIN(at) FROM schedules WHERE name = ?", (name,)).fetchone())
        return None if row is None or row[0] is None else int(row[0])

    async def schedule_due_at(self, name: str, member: str) -> int | None:
        row = await self._run(lambda c, w: c.execute(
            "SELECT at FROM schedules WHERE name = ? AND member = ?", (name, member)
        ).fetchone())
        return None if row is None else int(row[0])

    async def schedule_size(self, name: str) -> int:
        row = await self._run(lambda c, w: c.execute(
            "SELECT COUNT(*) FROM schedules WHERE name = ?", (name,)).fetchone())
        return int(row[0])

    # -- heartbeats (kept in the schedules table, under "beats:" + the group's name) -----

    def _tx_beat(self, conn: sqlite3.Connection, wake: _Wake, group: str, member: str,
                 keep: int) -> int:
        now = self._now_ms()
        conn.execute(
            "INSERT INTO schedules (name, member, at) VALUES (?, ?, ?)"
            " ON CONFLICT (name, member) DO UPDATE SET at = excluded.at", (group, member, now))
        conn.execute("DELETE FROM schedules WHERE name = ? AND at < ?", (group, now - keep))
        return now

    async def beat(self, name: str, member: str, keep_ms: int) -> int:
        group = "beats:" + check_name(name, "heartbeat group")
        check_name(member, "member")
        if check_ms(keep_ms, "keep") <= 0:
            raise ValueError("keep must be positive")
        self.round_trips += 1
        return await self._run(lambda c, w: self._tx_beat(c, w, group, member, keep_ms))

    async def beats(self, name: str) -> tuple[int, list[tuple[str, int]]]:
        group = "beats:" + check_name(name, "heartbeat group")

        def read(conn: sqlite3.Connection, wake: _Wake) -> tuple[int, list[tuple[str, int]]]:
            rows = conn.execute(
                "SELECT member, at FROM schedules WHERE name = ? ORDER BY at DESC LIMIT ?",
                (group, PAGE_LIMIT)).fetchall()
            return self._now_ms(), [(str(m), int(at)) for m, at in rows]

        return await self._run(read)

    def _read_ttl(self, conn: sqlite3.Connection, match_id: str) -> float | None:
        row = conn.execute("SELECT expires_at FROM matches WHERE id = ?", (match_id,)).fetchone()
        now = self._clock()
        if row is None or (row[0] is not None and row[0] <= now):
            raise MatchNotFound(match_id)
        return None if row[0] is None else float(row[0]) - now

    # -- helpers (loop side) ---------------------------------------------------------------

    @staticmethod
    def _check_ttl(ttl_seconds: int | None) -> None:
        if ttl_seconds is not None and ttl_seconds <= 0:
            raise ValueError("ttl_seconds must be positive or None")

    def ttl(self, match_id: str) -> float | None:
        """Seconds left before the match expires; None when it never does (test helper; it
        blocks until the worker thread answers). Raises ``MatchNotFound``."""
        if self._closed:
            raise StoreUnavailable(f"the SQLite store {self.path} is closed")
        return self._blocking(lambda c: self._read_ttl(c, match_id))

    def counts(self) -> dict[str, int]:
        """Rows stored: ``{"matches": …, "log": …, "due": …}`` (expired matches not yet swept
        included). For tests and tools: it blocks until the worker thread answers."""
        if self._closed:
            raise StoreUnavailable(f"the SQLite store {self.path} is closed")

        def count(conn: sqlite3.Connection) -> dict[str, int]:
            return {
                table: int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
                for table in ("matches", "log", "due")
            }

        return self._blocking(count)

    async def _set_max_pages(self, pages: int) -> int:
        """Cap the database at ``pages`` pages (``PRAGMA max_page_count``: never below its
        current size; 0 changes nothing); returns the cap now in force. Test hook:
        ``_set_max_pages(1)`` caps it at its current size, as if the disk were full."""
        n = int(pages)

        def apply(conn: sqlite3.Connection) -> int:
            return int(conn.execute(f"PRAGMA max_page_count = {n}").fetchone()[0])

        return await self._run_raw(apply)

    # -- the contract ----------------------------------------------------------------------

    async def create(
        self,
        match_id: str,
        record: bytes,
        ttl_seconds: int | None = None,
        *,
        write_id: str | None = None,
    ) -> None:
        self.round_trips += 1
        self._check_ttl(ttl_seconds)
        data = bytes(record)
        await self._run(lambda c, w: self._tx_create(c, w, match_id, data, ttl_seconds, write_id))

    async def load(self, match_id: str) -> tuple[int, bytes]:
        self.round_trips += 1
        return await self._run(lambda c, w: self._tx_load(c, w, match_id))

    async def load_many(self, match_ids: Sequence[str]) -> list[tuple[int, bytes] | None]:
        """``load`` of several matches in one operation; None for a missing one."""
        ids = list(match_ids)
        if not ids:
            return []
        self.round_trips += 1
        return await self._run(lambda c, w: self._tx_load_many(c, w, ids))

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
        self.round_trips += 1
        self._check_ttl(ttl_seconds)
        rec, ent = bytes(record), bytes(entry)
        return await self._run(
            lambda c, w: self._tx_cas(
                c, w, match_id, expected_version, rec, ent, ttl_seconds, write_id
            )
        )

    async def log(self, match_id: str, after: int = 0) -> list[LogEntry]:
        self.round_trips += 1
        return await self._run(lambda c, w: self._tx_log(c, w, match_id, after))

    @property
    def subscribed_channels(self) -> int:
        """Matches watched now (as on ``RedisStore``: one wake-up channel per match)."""
        return len(self._watchers)

    async def watch(self, match_id: str, after: int) -> AsyncGenerator[int, None]:
        last = max(after, 0)
        serial: int | None = None
        self._watchers[match_id] = self._watchers.get(match_id, 0) + 1
        try:
            while True:
                # Taken before looking: a write landing between the look and the wait
                # still wakes us (it pops and sets this very event).
                changed = self._events.setdefault(match_id, asyncio.Event())
                state = await self._run(lambda c, w: self._tx_watch_state(c, w, match_id))
                if state is None:
                    if serial is None:
                        raise MatchNotFound(match_id)
                    return  # expired or gone
                if serial is None:
                    serial = state[0]
                elif state[0] != serial:
                    return  # re-created under the same id: another history
                while last < state[1]:
                    last += 1
                    yield last
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(changed.wait(), self.WATCH_TICK)
        finally:
            left = self._watchers.get(match_id, 1) - 1
            if left > 0:
                self._watchers[match_id] = left
            else:
                self._watchers.pop(match_id, None)
                self._events.pop(match_id, None)

    # -- documents, indexes, feeds (DocStore) ----------------------------------------------

    async def get_doc(self, key: str) -> Doc | None:
        name = check_name(key)
        self.round_trips += 1
        return (await self._run(lambda c, w: self._tx_get_docs(c, w, [name])))[0]

    async def get_docs(self, keys: Sequence[str]) -> list[Doc | None]:
        names = [check_name(key) for key in keys]
        if not names:
            return []
        self.round_trips += 1
        return await self._run(lambda c, w: self._tx_get_docs(c, w, names))

    async def put_doc(
        self,
        key: str,
        expected_version: int,
        data: bytes,
        *,
        index_add: Sequence[tuple[str, str]] = (),
        index_remove: Sequence[tuple[str, str]] = (),
    ) -> bool:
        name = check_name(key)
        expected = check_version(expected_version, "expected_version")
        value, additions, removals = bytes(data), check_pairs(index_add), check_pairs(index_remove)
        self.round_trips += 1
        return await self._run(
            lambda c, w: self._tx_put_doc(c, w, name, expected, value, additions, removals)
        )

    async def index_add(self, key: str, index: str, members: Sequence[str]) -> None:
        name, index = check_name(key), check_name(index, "index name")
        pairs = [(index, member) for member in check_members(members)]
        if pairs:
            self.round_trips += 1
            await self._run(lambda c, w: self._tx_index_add(c, w, name, pairs))

    async def index_remove(self, key: str, index: str, members: Sequence[str]) -> None:
        name, index = check_name(key), check_name(index, "index name")
        pairs = [(index, member) for member in check_members(members)]
        if pairs:
            self.round_trips += 1
            await self._run(lambda c, w: self._tx_index_remove(c, w, name, pairs))

    async def index_page(
        self, key: str, index: str, *, after: str | None, limit: int
    ) -> list[str]:
        name, index, count = check_name(key), check_name(index, "index name"), check_limit(limit)
        cursor = None if after is None else check_members([after])[0]
        self.round_trips += 1
        return await self._run(lambda c, w: self._tx_index_page(c, w, name, index, cursor, count))

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
        name, source = check_name(key), check_name(source, "source")
        check_version(version)
        check_feed_append(now, keep, keep_seconds)
        given, at = [bytes(item) for item in items], float(now)
        cutoff = at - float(keep_seconds)
        self.round_trips += 1
        return await self._run(
            lambda c, w: self._tx_feed_append(c, w, name, source, version, given, at, keep, cutoff)
        )

    async def feed_marks(self, key: str, sources: Sequence[str]) -> list[int]:
        name = check_name(key)
        wanted = [check_name(source, "source") for source in sources]
        if not wanted:
            return []
        self.round_trips += 1
        return await self._run(lambda c, w: self._tx_feed_marks(c, w, name, wanted))

    async def feed_read(self, key: str, after: int, limit: int) -> FeedPage:
        name, start, count = check_name(key), max(int(after), 0), check_limit(limit)
        self.round_trips += 1
        return await self._run(lambda c, w: self._tx_feed_read(c, w, name, start, count))

    async def watch_feed(self, key: str, after: int) -> AsyncGenerator[int, None]:
        name = check_name(key)
        last = max(int(after), 0)
        self._feed_watchers[name] = self._feed_watchers.get(name, 0) + 1
        try:
            while True:
                # Taken before looking: an append landing between the look and the wait
                # still wakes us (it pops and sets this very event).
                changed = self._feed_events.setdefault(name, asyncio.Event())
                newest = await self._run(lambda c, w: self._tx_feed_last(c, w, name))
                if newest > last:
                    last = newest
                    yield newest
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(changed.wait(), self.WATCH_TICK)
        finally:
            left = self._feed_watchers.get(name, 1) - 1
            if left > 0:
                self._feed_watchers[name] = left
            else:
                self._feed_watchers.pop(name, None)
                self._feed_events.pop(name, None)

    async def signal_due(self, match_id: str, *, all_bots: bool = False) -> None:
        self.round_trips += 1
        lane = 1 if all_bots else 0
        await self._run(lambda c, w: self._tx_signal(c, w, match_id, lane))

    async def claim_due(
        self,
        consumer: str,
        count: int = 16,
        block_ms: int = 1000,
        *,
        reclaim_idle_ms: int | None = DUE_RECLAIM_IDLE_MS,
        all_bots_first: int = 0,
    ) -> list[DueSignal]:
        # Registered before the first look, so a signal committed meanwhile still wakes us.
        # An event per call, made on the caller's loop.
        arrived = asyncio.Event()
        self._due_waiters.add(arrived)
        try:
            out = await self._run(
                lambda c, w: self._tx_claim(c, w, consumer, count, reclaim_idle_ms,
                                            all_bots_first)
            )
            if out or block_ms <= 0:
                return out
            loop = asyncio.get_running_loop()
            deadline = loop.time() + block_ms / 1000
            while not out:
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                try:
                    await asyncio.wait_for(arrived.wait(), remaining)
                except TimeoutError:
                    break
                arrived.clear()
                out = await self._run(
                    lambda c, w: self._tx_claim(c, w, consumer, count, None, all_bots_first)
                )
            return out
        finally:
            self._due_waiters.discard(arrived)

    async def resume_due(self, consumer: str, count: int = 256) -> list[DueSignal]:
        return await self._run(lambda c, w: self._tx_resume(c, w, consumer, count))

    async def ack_due(self, tokens: Sequence[str]) -> None:
        self.round_trips += 1
        seqs: list[int] = []
        for token in tokens:
            with contextlib.suppress(ValueError):
                seqs.append(int(token.split("-", 1)[0]))
        await self._run(lambda c, w: self._tx_ack(c, w, seqs))

    async def ping(self) -> bool:
        try:
            return await self._run_raw(lambda c: c.execute("SELECT 1").fetchone() == (1,))
        except StoreUnavailable:
            return False

    async def close(self) -> None:
        """Close the connection, stop the worker thread and release the file lock. The
        object cannot be used afterwards (calls raise ``StoreUnavailable``); the data stays
        in the file. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._jobs.put(None)  # after everything queued: the thread closes the connection
        await asyncio.to_thread(self._thread.join)
        self._release_lock()
        # Watchers and blocked claims look again and learn that the store is closed.
        for event in [*self._events.values(), *self._feed_events.values(), *self._due_waiters]:
            event.set()
        self._events.clear()
        self._feed_events.clear()

    def _close_connection(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            _rollback(conn)
            conn.close()


def _rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
