"""Match records in the store: loading, writing and creating them, as service problems.

``StoredMatches`` is the one place that talks to the ``MatchStore``: it decodes records
(``records.py``), applies the TTLs, and turns the store's failures into ``ApiError``s
(``store_unavailable`` with ``retryAfter``, ``store_full`` when it refuses a write for want
of room, ``match_not_found``).
"""

from __future__ import annotations

import asyncio
import logging
import re
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar, cast

from service import games
from service.errors import ApiError
from service.i18n import N_, T
from service.metrics import Metrics
from service.store import (
    LogEntry,
    MatchExists,
    MatchNotFound,
    MatchStore,
    Schedules,
    StoreFull,
    StoreUnavailable,
)

from . import clocking, headers, logdict
from .records import LogRecord, MatchRecord, OutdatedRecord, checkpointed

log = logging.getLogger("skyline.matches")

Result = TypeVar("Result")

MATCH_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""Ids we hand out are 16 url-safe characters; anything else cannot exist (and never reaches
the store, where braces would break the Redis Cluster hash tag)."""

RETRY_AFTER_SECONDS = 1
DEFAULT_WAITING_TTL = 7 * 86400
FULL_RETRY_AFTER_SECONDS = 30
"""``Retry-After`` of ``503 store_full``: room comes back when matches expire or the operator
adds memory or disk -- not within a second, and a second's retries from every client would
only add load to a store that refuses them all."""


def busy(detail: str = N_("Too many concurrent writes to this match; retry.")) -> ApiError:
    return ApiError.of("busy", detail, retryAfter=RETRY_AFTER_SECONDS)


def _readable(record: MatchRecord) -> bool:
    """Whether this build plays the record's game under its rules version."""
    try:
        return record.rules_version in games.get(record.game).rules_versions
    except games.UnknownGame:
        return False


def check_rules(record: MatchRecord) -> None:
    """A match is played under its own rules version for its whole life: one this build
    does not have is refused, never replayed under other rules -- a newer one (a rolling
    upgrade: another replica serves it) is 503 ``rules_version_unavailable``, one this build
    no longer has is 410 ``rules_version_retired``."""
    try:
        versions = games.get(record.game).rules_versions
    except games.UnknownGame:
        raise ApiError.of(
            "store_unavailable", T("This server does not host {game} matches; retry shortly.",
              game=repr(record.game[:32])), retryAfter=RETRY_AFTER_SECONDS,
        ) from None
    if record.rules_version in versions:
        return
    if record.rules_version > versions[-1]:
        raise ApiError.of(
            "rules_version_unavailable",
            T("This match is played under rules version {version} of {game}, which this "
              "server does not have yet; retry shortly.",
              version=record.rules_version, game=record.game),
            retryAfter=RETRY_AFTER_SECONDS,
        )
    raise ApiError.of(
        "rules_version_retired",
        T("This match is played under rules version {version} of {game}, which this server "
          "no longer plays (it plays {versions}).",
          version=record.rules_version, game=record.game, versions=", ".join(map(str, versions))),
    )


@dataclass(frozen=True, slots=True)
class Written:
    """A write that landed: the match at ``version`` is ``after``; ``before`` is the record it
    replaced (None for a new match, version 0), ``entry`` its log entry (None at version 0)."""

    match_id: str
    version: int
    before: MatchRecord | None
    after: MatchRecord
    entry: LogRecord | None


class StoredMatches:
    """Records of matches on ``store``. ``ttl_finished`` / ``ttl_idle``: seconds a finished /
    an active match is kept after its last write (None: forever); ``clock``: wall seconds."""

    def __init__(
        self,
        store: MatchStore,
        *,
        ttl_finished: int | None,
        ttl_idle: int | None,
        metrics: Metrics,
        clock: Callable[[], float],
    ) -> None:
        self.store = store
        self.listeners: list[Callable[[Written], Awaitable[None]]] = []
        """Told of every write that landed (the player feed, ``service.players``)."""
        self.ttl_finished = ttl_finished
        self.ttl_idle = ttl_idle
        self.metrics = metrics
        self.clock = clock
        self.store_clock = clocking.StoreClock(cast(Schedules, store))
        """Milliseconds of the store's clock (Redis ``TIME``), for seat clocks and
        deadlines: replicas whose own clocks drift agree on them."""
        self.waiting_ttl: int | None = DEFAULT_WAITING_TTL
        """Seconds a match waiting for players may go untouched before it is cancelled
        (None: never)."""

    def now(self) -> int:
        return int(self.clock())

    def ttl(self, record: MatchRecord) -> int | None:
        return self.ttl_finished if record.finished else self.ttl_idle

    async def create(
        self, record: MatchRecord, *,
        before_write: Callable[[str, MatchRecord], Awaitable[None]] | None = None,
        match_id: str | None = None,
    ) -> str:
        """Store ``record`` under a new random id and return the id; ``before_write`` runs
        with the id chosen, before the match is written (and again with another id in the
        2**-96 case of a taken one). ``match_id``: store it under this id instead, once
        (a caller that derives the id to create a match idempotently: queue, rematch);
        the store's ``MatchExists`` is raised when it is taken."""
        record = self._clocked(None, record, None, 0, await self._now_ms(record))
        if match_id is not None:
            if before_write is not None:
                await before_write(match_id, record)
            await self._schedule_deadline(match_id, record)
            await self.guard(self.store.create(match_id, record.encode(), self.ttl(record)))
            await self.tell(Written(match_id, 0, None, record, None))
            return match_id
        for _ in range(8):
            match_id = secrets.token_urlsafe(12)
            if match_id.startswith("-"):
                continue  # a command line would read it as an option (`skyline show -x…`)
            if before_write is not None:
                await before_write(match_id, record)
            await self._schedule_deadline(match_id, record)
            try:
                await self.guard(self.store.create(match_id, record.encode(), self.ttl(record)))
            except MatchExists:
                continue
            await self.tell(Written(match_id, 0, None, record, None))
            return match_id
        raise busy("Could not allocate a match id; retry.")

    async def load(self, match_id: str) -> tuple[int, MatchRecord]:
        if not MATCH_ID.match(match_id):
            raise ApiError.of("match_not_found", "No such match.")
        try:
            version, data = await self.guard(self.store.load(match_id))
        except MatchNotFound:
            raise ApiError.of("match_not_found", "No such match (or it expired).") from None
        try:
            record = MatchRecord.decode(data)
        except OutdatedRecord:
            raise ApiError.of(
                "match_not_found",
                "This match was stored by an older version of Skyline, in a format this one "
                "does not read.",
            ) from None
        check_rules(record)
        if not logdict.known(record.game, record.log_dict):
            # A newer replica created it (a rolling upgrade added a dictionary): another
            # replica can serve it, and this one can once it is upgraded.
            raise ApiError.of(
                "store_unavailable", "This server cannot read this match's log format yet; "
                "retry shortly.", retryAfter=RETRY_AFTER_SECONDS,
            )
        if self.stale(record):
            return await self.expire(match_id, version, record)
        return version, record

    def stale(self, record: MatchRecord) -> bool:
        """Whether a waiting match went untouched for ``waiting_ttl`` seconds."""
        return (record.waiting and self.waiting_ttl is not None
                and self.now() - record.updated >= self.waiting_ttl)

    async def expire(
        self, match_id: str, version: int, record: MatchRecord
    ) -> tuple[int, MatchRecord]:
        """Cancel a stale waiting match (reason ``expired``) -- lazily, by whichever read
        finds it first, with the same compare-and-set as any write: the match is cancelled
        once, at one version, and every reader sees it cancelled."""
        for _ in range(8):
            cancelled = replace(record, phase="cancelled", cancel_reason="expired",
                                updated=self.now())
            entry = LogRecord(seat=None, action={"type": "match_cancelled",
                                                 "reason": "expired"})
            if await self.write(match_id, version, cancelled, entry, before=record):
                return version + 1, cancelled
            version, data = await self.guard(self.store.load(match_id))
            record = MatchRecord.decode(data)
            if not self.stale(record):
                return version, record
        raise busy()

    async def load_many(
        self, match_ids: Sequence[str]
    ) -> list[tuple[int, MatchRecord] | None]:
        """``load`` of several matches in one store round trip; None for one that does not
        exist, expired, or cannot be read by this build (its own ``load`` says why)."""
        wanted = [m if MATCH_ID.match(m) else "" for m in match_ids]
        found = await self.guard(self.store.load_many([m for m in wanted if m]))
        answers = iter(found)
        out: list[tuple[int, MatchRecord] | None] = []
        for match_id in wanted:
            loaded = next(answers) if match_id else None
            if loaded is None:
                out.append(None)
                continue
            try:
                record = MatchRecord.decode(loaded[1])
            except OutdatedRecord:
                out.append(None)
                continue
            if not logdict.known(record.game, record.log_dict) or not _readable(record):
                out.append(None)
                continue
            if self.stale(record):
                try:
                    out.append(await self.expire(match_id, loaded[0], record))
                except (ApiError, MatchNotFound):
                    out.append(None)
                continue
            out.append((loaded[0], record))
        return out

    async def write(
        self, match_id: str, version: int, record: MatchRecord, entry: LogRecord, *,
        before: MatchRecord | None = None, write_id: str | None = None,
    ) -> MatchRecord | None:
        """Compare-and-set ``record`` as version ``version + 1`` with its log ``entry``; a
        ``checkpointed`` version's entry carries the record's state (the state after it).
        ``write_id``: the write id whose tag the log keeps (a keyed move's, derived from its
        Idempotency-Key; None: a random one). Once it landed, every ``listeners`` hears of
        it (``before``: the record it replaced). Answers the record as stored (its seat
        clocks moved by the write), None when the compare-and-set lost."""
        given = record
        now_ms = await self._now_ms(record)
        record = self._clocked(before, record, entry, version + 1, now_ms)
        entry = replace(entry, header=headers.entry_header(
            before, record, version + 1,
            clocks_derived=self._clocks_derived(before, given, record, entry, version + 1,
                                                now_ms)))
        # Index first: the deadline is in the schedule before the write that sets it (a
        # replica dying between the two leaves an early entry, which the clock worker
        # finds not due and moves on), and again after it (a worker that settled the
        # entry from the version before meanwhile cannot have moved it later).
        await self._schedule_deadline(match_id, record)
        if checkpointed(version + 1) and entry.checkpoint is None and record.started:
            # Re-dumped, so that the checkpoint is what replaying would rebuild even when the
            # record's state is an older build's bytes (a hand-over leaves it unchanged).
            engine = games.get(record.game)
            entry = replace(entry, checkpoint=engine.dumps(engine.loads(record.state)))
        try:
            landed = await self.guard(
                self.store.compare_and_set(
                    match_id, version, record.encode(),
                    entry.encode(record.game, record.log_dict), self.ttl(record),
                    write_id=write_id,
                )
            )
        except MatchNotFound:
            raise ApiError.of("match_not_found", "No such match (or it expired).") from None
        if not landed:
            return None
        await self._schedule_deadline(match_id, record)
        await self.tell(Written(match_id, version + 1, before, record, entry))
        return record

    async def _now_ms(self, record: MatchRecord) -> int:
        """The time of a write: the store's clock (a started match's seat clocks move by
        it; a match without a game keeps only the time, from the estimate at hand)."""
        if record.started:
            return await self.store_clock.now_ms()
        return self.store_clock.peek_ms()

    @staticmethod
    def _clocked(before: MatchRecord | None, record: MatchRecord, entry: LogRecord | None,
                 version: int, now_ms: int) -> MatchRecord:
        """``record`` with its seat clocks moved by this write (untimed matches keep when each
        active seat's turn began) and the write's time."""
        if record.started:
            record = clocking.clocked(before, record, entry, version, now_ms)
        return replace(record, written_ms=now_ms)

    @staticmethod
    def _clocks_derived(before: MatchRecord | None, given: MatchRecord, stored: MatchRecord,
                        entry: LogRecord, version: int, now_ms: int) -> bool:
        """Whether replaying the write derives the clocks it stored: the writer left them
        as they were (``clocking.clocked`` moved them), or set them to what it would have
        (``headers.py``)."""
        if before is None:
            return False
        if given.clocks == before.clocks:
            return True
        derived = clocking.clocked(before, replace(given, clocks=before.clocks), entry,
                                   version, now_ms)
        return derived.clocks == stored.clocks

    def schedule(self) -> Schedules:
        """The store's schedules (deadlines: ``clocking.DEADLINES``)."""
        return cast(Schedules, self.store)

    async def _schedule_deadline(self, match_id: str, record: MatchRecord) -> None:
        """Put the match's next wake-up (a warning or a deadline) in the deadline schedule,
        or move it earlier."""
        if not record.deadlines():
            return
        at = clocking.wake_at(record, await self.store_clock.now_ms())
        if at is not None:
            await self.guard(self.schedule().schedule_lower(clocking.DEADLINES, match_id, at))

    async def tell(self, written: Written) -> None:
        """Every listener hears of a write that landed; a listener's failure is logged, never
        the writer's (the write is stored: the player feed repairs what it missed)."""
        for listener in self.listeners:
            try:
                await listener(written)
            except Exception:  # a listener must not undo a stored write
                log.exception("a write listener failed for %s v%d", written.match_id,
                              written.version)

    async def entries(self, match_id: str, after: int) -> list[LogEntry]:
        """The stored log after version ``after``; raises the store's ``MatchNotFound``."""
        return await self.guard(self.store.log(match_id, after))

    async def guard(self, call: Awaitable[Result]) -> Result:
        try:
            return await call
        except StoreFull:
            raise ApiError.of(
                "store_full", "The match store is full and refuses new writes; retry later.",
                retryAfter=FULL_RETRY_AFTER_SECONDS,
            ) from None
        except StoreUnavailable:
            raise ApiError.of(
                "store_unavailable", "The match store is unavailable; retry shortly.",
                retryAfter=RETRY_AFTER_SECONDS,
            ) from None

    async def guard_iter(self, iterator: AsyncIterator[int]) -> AsyncIterator[int]:
        try:
            async for value in iterator:
                yield value
        except MatchNotFound:
            return
        except StoreUnavailable:
            raise ApiError.of(
                "store_unavailable", "The match store is unavailable; retry shortly.",
                retryAfter=RETRY_AFTER_SECONDS,
            ) from None

    async def ready(self) -> bool:
        """Whether the store answers. A ping that times out while other commands of the
        store complete means a busy replica (its event loop reads replies late, e.g. under
        thousands of streams), not a store that is gone: still ready, so that load never
        takes a replica out of rotation -- let alone every replica at once."""
        before = _completed(self.store)
        try:
            return bool(await asyncio.wait_for(self.store.ping(), timeout=2))
        except TimeoutError:
            after = _completed(self.store)
            down = bool(getattr(self.store, "known_down", False))
            return before is not None and after is not None and after > before and not down
        except (StoreUnavailable, OSError):
            return False


def _completed(store: MatchStore) -> int | None:
    """Commands the store has completed so far, where it counts them (Redis)."""
    count = getattr(store, "completed_commands", None)
    return count if isinstance(count, int) else None
