"""The player feed: one stream per player of everything that concerns it across all its
matches (``your_turn``, ``match_started``, ``match_finished``, ``seat_changed``).

Events are derived from stored match versions (``feed_events.derive``) and kept per player
in the store's feed under the player's key (``DocStore.feed_append``: numbered, trimmed to
the newest ``KEEP`` or the last ``KEEP_SECONDS``). Each match has a *mark* in the player's
feed: versions ``0 .. mark - 1`` of it are in. A version is appended only right after the
one before it, so the events of a match come in version order, each once:

- after every write that landed, its writer appends that version for each bound player
  (``on_write``); a writer that finds versions missing before its own (a replica died between
  a match's compare-and-set and its feed append) fills them first, replayed from the log;
- ``repair`` does the same for the player's newest matches when its feed is opened and about
  every ``REPAIR_SECONDS`` (jittered) while it is open, so a version whose writer died is
  delivered even when nothing is written to that match again (a lost ``your_turn`` would
  stall it);
- two replicas appending the same version race on the store's mark: one lands, the other is
  refused, so every event is delivered exactly once.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from service.games import get as get_engine
from service.matches import MatchService
from service.matches.records import LogRecord, MatchRecord
from service.matches.replay import initial_state, replay_step, state_at, with_handover
from service.matches.storage import Written
from service.store import DocStore

from .docs import guard
from .feed_events import derive
from .records import MATCHES_INDEX, player_key

log = logging.getLogger("skyline.players")

KEEP = 1000
"""Events kept per player at least (and every event of the last ``KEEP_SECONDS``)."""
KEEP_SECONDS = 7 * 86400
REPAIR_MATCHES = 100
"""How many of the player's newest matches a repair looks at."""
REPAIR_SECONDS = 60.0
READ_PAGE = 200


@dataclass(frozen=True, slots=True)
class FeedItem:
    """One event as delivered: its number, kind and JSON (``seq`` included)."""

    seq: int
    kind: str
    data: str


@dataclass(frozen=True, slots=True)
class FeedReset:
    """The reader asked to resume from before what the feed still keeps (or from a number
    it never gave): it missed events and should re-read its matches."""

    last: int


class Feed:
    def __init__(self, store: DocStore, matches: MatchService,
                 clock: Callable[[], float]) -> None:
        self.store = store
        self.matches = matches
        self.clock = clock
        self.appended = 0
        """Versions this replica appended to some player's feed (a metric, and for tests)."""
        self.filled = 0
        """Versions appended for a writer that did not (gaps filled, repairs)."""

    # -- writing --------------------------------------------------------------------------

    async def on_write(self, written: Written) -> None:
        """A match version landed: append it to the feed of every player bound to it."""
        per_player = derive(written.match_id, written.version, written.before, written.after,
                            written.entry)
        await asyncio.gather(*(
            self._advance(player, written.match_id, written.version, items, written.after)
            for player, items in per_player.items()
        ))

    async def warn(self, match_id: str, version: int, record: MatchRecord, seat: int,
                   deadline: int) -> None:
        """``timeout_soon`` for the player of ``seat``, whose clock runs out at ``deadline``
        (the clock worker's ``Timeouts.warners``): once per activation of the seat -- its
        own source in the feed, ``<match>.soon.<seat>``, marked with the activation."""
        held = record.holder(seat)
        if held is None or seat >= len(record.clocks):
            return
        stamp = datetime.fromtimestamp(deadline / 1000, UTC).isoformat(timespec="milliseconds")
        item = {"matchId": match_id, "version": version, "game": record.game, "seat": seat,
                "kind": "timeout_soon", "deadline": stamp.replace("+00:00", "Z")}
        data = json.dumps(item, separators=(",", ":"), sort_keys=True).encode()
        await guard(self.store.feed_append(
            player_key(held.player), f"{match_id}.soon.{seat}",
            record.clocks[seat].activation + 1, [data], now=self.clock(), keep=KEEP,
            keep_seconds=KEEP_SECONDS,
        ))

    async def _advance(self, player: str, match_id: str, version: int, items: list[bytes],
                       newest: MatchRecord) -> None:
        key = player_key(player)
        (mark,) = await guard(self.store.feed_marks(key, [match_id]))
        if mark > version:
            return  # another replica was first
        if mark < version:
            await self._fill(player, match_id, mark, version - 1, newest)
        if await self._append(key, match_id, version, items):
            self.appended += 1

    async def _append(self, key: str, match_id: str, version: int, items: list[bytes]) -> bool:
        return await guard(self.store.feed_append(
            key, match_id, version + 1, items, now=self.clock(), keep=KEEP,
            keep_seconds=KEEP_SECONDS,
        ))

    async def _fill(self, player: str, match_id: str, mark: int, upto: int,
                    newest: MatchRecord) -> None:
        """Append versions ``mark .. upto`` of the match, replayed from its log."""
        if mark > upto:
            return
        storage = self.matches.storage
        engine = get_engine(newest.game)
        key = player_key(player)
        lobby = not newest.started or newest.start_version > 0
        if mark == 0:
            state = None if lobby else initial_state(engine, newest)
            record = _at(_before_start(newest) if lobby else newest, engine, state)
            items = [] if lobby else derive(match_id, 0, None, record, None).get(player, [])
            if await self._append(key, match_id, 0, items):
                self.filled += 1
            mark = 1
        else:
            state = await state_at(storage, match_id, engine, newest, mark - 1)
            record = _at(_before_start(newest) if state is None else newest, engine, state)
        for entry in await storage.entries(match_id, mark - 1):
            if entry.version > upto:
                break
            logged = LogRecord.decode(newest.game, newest.log_dict, entry.data)
            state, _ = replay_step(engine, state, logged, newest)
            after = _at(with_handover(record, logged, newest), engine, state)
            # Versions before the start (joins, leaves) are told on the write path only:
            # who sat where then is not rebuilt here.
            items = ([] if state is None else
                     derive(match_id, entry.version, record, after, logged).get(player, []))
            if await self._append(key, match_id, entry.version, items):
                self.filled += 1
            record = after

    async def repair(self, player: str) -> None:
        """Append what the player's newest matches have and its feed lacks."""
        key = player_key(player)
        members = await guard(self.store.index_page(key, MATCHES_INDEX, after=None,
                                                    limit=REPAIR_MATCHES))
        ids = [m.partition(".")[2] for m in members]
        if not ids:
            return
        marks = await guard(self.store.feed_marks(key, ids))
        loaded = await self.matches.load_records(ids)
        for match_id, mark, found in zip(ids, marks, loaded, strict=True):
            if found is None:
                continue
            version, record = found
            if mark <= version:
                await self._fill(player, match_id, mark, version, record)

    # -- reading --------------------------------------------------------------------------

    async def read(self, player: str, after: int) -> tuple[list[FeedItem | FeedReset], int]:
        """What follows event ``after`` (a reset first when the reader missed some), and the
        number to read after next."""
        page = await guard(self.store.feed_read(player_key(player), after, READ_PAGE))
        out: list[FeedItem | FeedReset] = []
        if after < page.trimmed or after > page.last:
            out.append(FeedReset(last=page.last))
            if after > page.last:
                return out, page.last
            page = await guard(self.store.feed_read(player_key(player), page.trimmed,
                                                    READ_PAGE))
        for item in page.items:
            raw: dict[str, Any] = json.loads(item.data)
            raw["seq"] = item.seq
            out.append(FeedItem(item.seq, str(raw.get("kind")),
                                json.dumps(raw, separators=(",", ":"), ensure_ascii=False)))
        return out, (page.items[-1].seq if page.items else max(after, page.trimmed))

    async def follow(
        self, player: str, after: int | None, *, repair_seconds: float = REPAIR_SECONDS,
    ) -> AsyncGenerator[FeedItem | FeedReset, None]:
        """The player's events after ``after`` (None: from now on), then each new one as it
        is appended, until the consumer stops."""
        await self.repair(player)
        key = player_key(player)
        if after is None:
            after = (await guard(self.store.feed_read(key, 0, 1))).last
        repairing = asyncio.create_task(self._repair_every(player, repair_seconds))
        watch = self.store.watch_feed(key, after)
        try:
            while True:
                items, after = await self.read(player, after)
                for item in items:
                    yield item
                if items and len(items) >= READ_PAGE:
                    continue
                async for last in watch:
                    if last > after:
                        break
        finally:
            repairing.cancel()
            try:
                await repairing
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise  # the reader itself is being cancelled: let it be
            finally:
                await watch.aclose()

    async def _repair_every(self, player: str, seconds: float) -> None:
        while True:
            # Jittered: feeds opened together (a replica's restart) do not repair together.
            await asyncio.sleep(seconds * (0.5 + random.random()))
            try:
                await self.repair(player)
            except Exception:  # a failed repair is retried next time; the feed goes on
                log.exception("repairing the feed of a player failed")


def _at(record: MatchRecord, engine: Any, state: Any) -> MatchRecord:
    """``record`` holding ``state`` (a past version rebuilt for deriving its events)."""
    if state is None:
        return record
    return replace(record, state=engine.dumps(state),
                   finished=engine.result(state) is not None)


def _before_start(newest: MatchRecord) -> MatchRecord:
    """A record standing for a version before the match started (a lobby version)."""
    if newest.cancelled:
        return newest
    return replace(newest, phase="waiting", state=b"", finished=False)
