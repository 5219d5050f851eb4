"""What only the SQLite store has (service/store/sqlite.py): data that survives a restart,
the single-process file lock, refusing files that are not Skyline's, full-disk failures
without half-written matches, serialised compare-and-sets, sweeping of expired matches.
The contract itself runs on SQLite in test_contract.py and test_due.py."""

from __future__ import annotations

import asyncio
import fcntl
import os
import sqlite3
import sys
import uuid
from pathlib import Path

import pytest

from service.store import (
    LogEntry,
    MatchExists,
    MatchNotFound,
    StoreFull,
    StoreUnavailable,
    write_tag,
)
from service.store.sqlite import APPLICATION_ID, SqliteStore, StoreFileError

from .conftest import FakeClock

REPO = Path(__file__).resolve().parents[2]
WAIT = 60.0  # bounds every wait on another process or task

# Opens the store at argv[1]: prints "refused: <message>" and exits 3 on StoreFileError,
# else prints "ready" and holds the store until a line arrives on stdin.
HOLDER = """
import asyncio, sys
from service.store.sqlite import SqliteStore, StoreFileError
try:
    store = SqliteStore(sys.argv[1])
except StoreFileError as exc:
    print("refused:", exc, flush=True)
    sys.exit(3)
print("ready", flush=True)
sys.stdin.readline()
asyncio.run(store.close())
"""


def mid() -> str:
    return uuid.uuid4().hex[:16]


def raw_count(path: Path, table: str) -> int:
    """Rows of ``table``, read through a connection of our own (WAL: readers coexist)."""
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    finally:
        conn.close()


def assert_unlocked(path: Path) -> None:
    """Nobody holds the store's lock on ``path`` (a refused open released it)."""
    fd = os.open(f"{path}.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError when held
    finally:
        os.close(fd)


async def start_holder(path: Path) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        HOLDER,
        str(path),
        cwd=REPO,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


# -- restart ---------------------------------------------------------------------------------


async def test_data_survives_close_and_reopen(tmp_path: Path) -> None:
    clock = FakeClock()
    path = tmp_path / "data" / "skyline.sqlite3"  # the data folder is created
    first = SqliteStore(path, clock=clock)
    try:
        await first.create("a", b"a0", write_id="create-a")
        assert await first.compare_and_set("a", 0, b"a1", b"e1", write_id="w-1")
        assert await first.compare_and_set("a", 1, b"a2", b"e2", ttl_seconds=600)
        await first.create("b", b"b0", ttl_seconds=100)
        await first.signal_due("a")
        await first.signal_due("b")
        (held,) = await first.claim_due("w-1", count=1, block_ms=0)
        assert held.match_id == "a"
        log_before = await first.log("a")
    finally:
        await first.close()

    clock.advance(50)
    second = SqliteStore(path, clock=clock)
    try:
        assert await second.load("a") == (2, b"a2")
        assert await second.log("a") == log_before
        assert log_before[0] == LogEntry(1, b"e1", write_tag("w-1"))
        assert second.ttl("a") == 550 and second.ttl("b") == 50  # absolute expiry times
        await second.create("a", b"a0", write_id="create-a")  # the create's retry: still it
        with pytest.raises(MatchExists):
            await second.create("a", b"x", write_id="create-other")
        # The write-id retry rule holds across the restart too.
        assert await second.compare_and_set("a", 0, b"a1", b"e1", write_id="w-1")
        # The pending signal goes back to the same consumer name; the queued one waits.
        assert await second.resume_due("w-1") == [held]
        (queued,) = await second.claim_due("w-2", count=5, block_ms=0, reclaim_idle_ms=None)
        assert queued.match_id == "b"
        await second.signal_due("c")
        (new,) = await second.claim_due("w-2", count=5, block_ms=0, reclaim_idle_ms=None)
        assert new.token not in {held.token, queued.token}  # tokens are never reused
        await second.ack_due([held.token, queued.token, new.token])
        clock.advance(51)
        with pytest.raises(MatchNotFound):
            await second.load("b")
        assert await second.load("a") == (2, b"a2")
    finally:
        await second.close()

    clock.advance(600)  # "a" expires while no process runs
    assert raw_count(path, "matches") == 1 and raw_count(path, "log") == 2
    third = SqliteStore(path, clock=clock)
    try:
        assert raw_count(path, "matches") == 0 and raw_count(path, "log") == 0  # swept at open
        with pytest.raises(MatchNotFound):
            await third.load("a")
        assert await third.resume_due("w-1") == []
    finally:
        await third.close()


async def test_expired_matches_are_swept_every_few_creates(tmp_path: Path) -> None:
    clock, path = FakeClock(), tmp_path / "s.sqlite3"
    store = SqliteStore(path, clock=clock)
    store.SWEEP_EVERY = 5
    try:
        for m in ("x1", "x2", "x3"):
            await store.create(m, b"r0", ttl_seconds=10)
            assert await store.compare_and_set(m, 0, b"r1", b"e1", ttl_seconds=10)
        clock.advance(11)
        await store.create("y1", b"r0")  # 4th create: no sweep yet, nobody touched x*
        assert (raw_count(path, "matches"), raw_count(path, "log")) == (4, 3)
        await store.create("y2", b"r0")  # 5th: sweep
        assert (raw_count(path, "matches"), raw_count(path, "log")) == (2, 0)
    finally:
        await store.close()


async def test_a_watcher_ends_when_its_match_expires_without_other_access() -> None:
    clock = FakeClock()
    store = SqliteStore(":memory:", clock=clock)
    store.WATCH_TICK = 0.02  # the periodic look that notices an expiry
    m = mid()
    try:
        await store.create(m, b"r0", ttl_seconds=30)
        assert await store.compare_and_set(m, 0, b"r1", b"e1", ttl_seconds=30)
        watcher = store.watch(m, 0)
        try:
            assert await anext(watcher) == 1
            pending = asyncio.ensure_future(anext(watcher))
            await store.ping()  # queued behind the watcher's read: it is waiting now
            assert not pending.done()
            clock.advance(31)
            async with asyncio.timeout(WAIT):
                with pytest.raises(StopAsyncIteration):
                    await pending
        finally:
            await watcher.aclose()
    finally:
        await store.close()


# -- one process per file ----------------------------------------------------------------------


async def test_a_second_process_on_the_same_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "skyline.sqlite3"
    holder = await start_holder(path)
    assert holder.stdin is not None and holder.stdout is not None
    try:
        async with asyncio.timeout(WAIT):
            assert await holder.stdout.readline() == b"ready\n"
        with pytest.raises(StoreFileError) as refused:
            SqliteStore(path)
        assert str(refused.value) == (
            f"{path} is in use by another Skyline process (pid {holder.pid}); the embedded "
            "store is single-process — use Redis to run several replicas"
        )
    finally:
        holder.stdin.write(b"stop\n")
        async with asyncio.timeout(WAIT):
            assert await holder.wait() == 0
    store = SqliteStore(path)  # the holder is gone: the lock with it
    try:
        # ... and now the other process is the one refused, naming this one.
        other = await start_holder(path)
        async with asyncio.timeout(WAIT):
            out, _ = await other.communicate()
        assert other.returncode == 3
        assert out.decode().startswith(
            f"refused: {path} is in use by another Skyline process (pid {os.getpid()});"
        )
    finally:
        await store.close()


async def test_the_lock_is_released_on_close_and_in_memory_takes_none(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    store = SqliteStore(path)
    assert (tmp_path / "s.sqlite3.lock").read_text() == f"{os.getpid()}\n"
    with pytest.raises(StoreFileError, match="in use by another Skyline process"):
        SqliteStore(path)  # another store object of this process counts as another owner
    await store.close()
    with pytest.raises(StoreUnavailable):
        await store.load("m")
    assert await store.ping() is False
    again = SqliteStore(path)
    await again.close()
    first, second = SqliteStore(":memory:"), SqliteStore(":memory:")
    try:
        await first.create("m", b"r0")
        with pytest.raises(MatchNotFound):
            await second.load("m")  # each in-memory store is its own database
        assert not Path(":memory:.lock").exists()
    finally:
        await first.close()
        await second.close()


# -- files that are not ours -------------------------------------------------------------------


@pytest.mark.parametrize(
    "setup",
    ["CREATE TABLE users (name TEXT)", "PRAGMA application_id = 1234"],
    ids=["other-tables", "other-application-id"],
)
def test_a_foreign_sqlite_file_is_refused_and_left_alone(tmp_path: Path, setup: str) -> None:
    path = tmp_path / "skyline.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute(setup)
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(StoreFileError) as refused:
        SqliteStore(path)
    message = str(refused.value)
    assert message.startswith(f"{path} is not a Skyline database (foreign SQLite file")
    assert message.endswith("move it away or pass another --data-dir")
    assert path.read_bytes() == before  # not converted to WAL, no tables added
    assert not (tmp_path / "skyline.sqlite3-wal").exists()
    assert_unlocked(path)


async def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "skyline.sqlite3"
    await SqliteStore(path).close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA application_id").fetchone() == (APPLICATION_ID,)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(StoreFileError, match=r"newer Skyline \(schema version 99;"):
        SqliteStore(path)


def test_a_garbage_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "skyline.sqlite3"
    garbage = os.urandom(8192)
    path.write_bytes(garbage)
    with pytest.raises(StoreFileError) as refused:
        SqliteStore(path)
    assert str(refused.value) == (
        f"{path} is not a Skyline database (not a SQLite file); move it away or pass another "
        "--data-dir"
    )
    assert path.read_bytes() == garbage
    assert_unlocked(path)


def test_a_data_folder_that_is_a_regular_file_is_refused(tmp_path: Path) -> None:
    """An unusable folder, in a form that stops root too (the tests run as root, where
    chmod does not stop writes)."""
    (tmp_path / "data").write_text("not a folder")
    path = tmp_path / "data" / "skyline.sqlite3"
    with pytest.raises(StoreFileError) as refused:
        SqliteStore(path)
    assert str(path) in str(refused.value) and "is not a folder" in str(refused.value)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder anyway")
def test_an_unwritable_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(StoreFileError, match="is not writable"):
            SqliteStore(folder / "skyline.sqlite3")
    finally:
        folder.chmod(0o700)


# -- runtime failures --------------------------------------------------------------------------


@pytest.mark.parametrize("big", ["record", "entry"])
async def test_a_full_disk_fails_the_write_and_leaves_the_match_as_it_was(
    tmp_path: Path, big: str
) -> None:
    """A CAS that cannot fit raises StoreFull (a StoreUnavailable) and writes nothing (the
    record update before the log insert is rolled back); the same call succeeds once there
    is room."""
    store = SqliteStore(tmp_path / "s.sqlite3", clock=FakeClock())
    m = mid()
    try:
        await store.create(m, b"r0")
        assert await store.compare_and_set(m, 0, b"r1", b"e1", write_id="w-1")
        await store.signal_due(m)
        assert await store._set_max_pages(1) > 1  # capped at its current size: disk full
        payload = os.urandom(1 << 20)
        record, entry = (payload, b"e2") if big == "record" else (b"r2", payload)
        for _ in range(2):  # and the retry, as a caller that got a 503 would
            with pytest.raises(StoreFull, match="SQLITE_FULL"):
                await store.compare_and_set(m, 1, record, entry, write_id="w-2")
        with pytest.raises(StoreFull):
            await store.create(mid(), payload)
        assert store.full_refusals == 3
        assert await store.load(m) == (1, b"r1")
        assert await store.log(m) == [LogEntry(1, b"e1", write_tag("w-1"))]
        assert [s.match_id for s in await store.claim_due("w", block_ms=0)] == [m]
        await store._set_max_pages(1 << 30)  # room again
        assert await store.compare_and_set(m, 1, record, entry, write_id="w-2")
        assert await store.load(m) == (2, record)
        assert [(e.version, e.data) for e in await store.log(m)] == [(1, b"e1"), (2, entry)]
    finally:
        await store.close()


async def test_concurrent_compare_and_sets_on_one_match_are_serialised(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "s.sqlite3", clock=FakeClock())
    m, tasks = mid(), 16
    try:
        await store.create(m, b"0")
        # Rounds: 16 CAS on the same expected version at once; exactly one wins each.
        winners: list[bytes] = []
        for v in range(8):
            ids = [f"round{v}-t{t}" for t in range(tasks)]
            record = b"%d" % (v + 1)
            results = await asyncio.gather(
                *(store.compare_and_set(m, v, record, i.encode(), write_id=i) for i in ids)
            )
            assert results.count(True) == 1
            winners.append(ids[results.index(True)].encode())
        # Free for all: load + CAS until each task has landed 4 writes.
        landed: list[tuple[str, int]] = []

        async def writer(t: int) -> None:
            for i in range(4):
                write_id = f"t{t}-{i}"
                while True:
                    version, record = await store.load(m)
                    assert int(record) == version
                    new = b"%d" % (version + 1)
                    if await store.compare_and_set(
                        m, version, new, write_id.encode(), write_id=write_id
                    ):
                        landed.append((write_id, version + 1))
                        break

        async with asyncio.timeout(WAIT):
            await asyncio.gather(*(writer(t) for t in range(tasks)))
        total = 8 + tasks * 4
        assert await store.load(m) == (total, b"%d" % total)
        log = await store.log(m)
        assert [e.version for e in log] == list(range(1, total + 1))
        assert [e.data for e in log[:8]] == winners
        assert sorted((e.data.decode(), e.version) for e in log[8:]) == sorted(landed)
        assert all(e.write_tag == write_tag(e.data.decode()) for e in log)
    finally:
        await store.close()


async def test_round_trips_count_requests_not_the_workers_polls(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "s.sqlite3", clock=FakeClock())
    try:
        await store.create("m", b"r0")
        with pytest.raises(MatchExists):
            await store.create("m", b"r0")
        await store.load("m")
        await store.compare_and_set("m", 0, b"r1", b"e1")
        await store.compare_and_set("m", 0, b"r1", b"e1")  # a conflict counts too
        await store.log("m")
        await store.signal_due("m")
        claimed = await store.claim_due("w", block_ms=0)  # not counted
        await store.resume_due("w")  # not counted
        await store.ack_due([s.token for s in claimed])
        await store.ping()  # not counted
        assert store.round_trips == 8
    finally:
        await store.close()
