"""The recent versions of a watched match, rendered once for every local watcher.

One ``Timeline`` per match with local watchers (``Timelines`` counts them): it advances one
logged move at a time -- the log is read once per new version, not once per watcher -- and
keeps the last ``FRAMES`` versions as ``Frame``s. A frame renders each visibility (a seat,
or ``None`` for spectators) at most once: the ``MatchState``, its JSON, and the JSON Patch
from the previous version of the same view. So N spectators of a version cost one view and
one encoding, and each seat's private view is rendered once.
"""

from __future__ import annotations

import asyncio
import json
import random
import weakref
from dataclasses import dataclass, field
from typing import Any

from service.errors import ApiError
from service.games.base import Engine

from . import patches
from .headers import Versions, view_of
from .models import MatchState
from .play import game_state
from .records import LogRecord, MatchRecord
from .replay import SeatChange, replay_step, seat_change, with_handover
from .storage import StoredMatches
from .views import state_of

FRAMES = 16
"""Versions a timeline keeps rendered; a watcher further behind catches up on its own."""
READ_PATIENCE = 10.0
"""Seconds a timeline retries a failed log read before its watchers see the failure."""
JUMP = 64
"""A timeline that falls this far behind the store starts again from the stored state
instead of replaying every move in between."""


def encode(value: Any) -> str:
    """Compact JSON: the bytes every watcher of a version receives."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@dataclass
class Frame:
    """One version of the match, and its renders per visibility (computed on first use).

    A frame keeps each visibility's JSON and patch: the bytes its watchers receive, small.
    The ``MatchState`` itself (the game's whole view as objects: about 200 KB for a New York
    spectator, 15 times its JSON) is shared, not kept: weakly, while its consumers hold it
    (the GraphQL subscriptions' conversion cache holds the newest 64); the JSON is encoded
    from a render it does not keep, and a patch diffs the two versions' JSON. So a watched
    match costs its JSON, not its objects; one watched both ways renders a version's
    visibility twice (once per form)."""

    match_id: str
    version: int
    engine: Engine[Any]
    state: Any
    record: MatchRecord
    previous: Frame | None = None
    exact: bool = False
    """``record`` is the stored record of this version (loaded whole), not one rebuilt by
    replaying the log: its seat tokens, players and clocks are the true ones."""
    versioned: bool = False
    """``record`` is this version's as its log entry's header keeps it (``headers.py``):
    what a view shows of it is the true one (its tokens are the newest record's). A frame
    neither exact nor versioned (a log written before headers) shows no ``clock`` and no
    ``updatedAt``."""
    view: dict[str, Any] | None = None
    """This version's header (``headers.view_of``), where known: the next version's
    entry's header applies to it."""
    change: SeatChange | None = None
    """The seat-credential change this version's log entry made (a replayed frame)."""
    _states: weakref.WeakValueDictionary[int | None, MatchState] = field(
        default_factory=weakref.WeakValueDictionary
    )
    """Renders held by someone else (the GraphQL conversion cache): shared while alive."""
    _json: dict[int | None, str] = field(default_factory=dict)
    _patches: dict[int | None, str] = field(default_factory=dict)
    _finished: bool | None = None

    @property
    def finished(self) -> bool:
        if self._finished is None:
            # Over by the rules, or ended by the service (a stored record says so).
            self._finished = (self.record.cancelled if self.state is None
                              else self.engine.result(self.state) is not None
                              or (self.true_record and self.record.finished))
        return self._finished

    @property
    def true_record(self) -> bool:
        """Whether what a view reads of ``record`` is this version's."""
        return self.exact or self.versioned

    def state_for(self, seat: int | None) -> MatchState:
        found = self._states.get(seat)
        if found is None:
            found = self._states[seat] = state_of(
                self.match_id, self.version, self.engine, self.state, seat, self.record,
                timed=self.true_record,
            )
        return found

    def json_for(self, seat: int | None) -> str:
        """The ``MatchState`` JSON ``seat`` receives for this version."""
        found = self._json.get(seat)
        if found is None:
            state = self._states.get(seat)
            if state is None:
                state = state_of(self.match_id, self.version, self.engine, self.state, seat,
                                 self.record, timed=self.true_record)
            found = self._json[seat] = encode(state.to_json())
        return found

    def patch_for(self, seat: int | None, base: Frame | None = None) -> str | None:
        """``{version, baseVersion, operations}`` from the previous version of the same view
        (RFC 6902; ``base``: that version's frame, else the one this frame follows), or None
        when that version is no longer here (send a snapshot). Every frame of a version
        holds the same state (the engines are deterministic), so one patch serves all."""
        found = self._patches.get(seat)
        if found is None:
            base = base or self.previous
            if base is None or base.version != self.version - 1:
                return None
            operations = patches.diff(json.loads(base.json_for(seat)),
                                      json.loads(self.json_for(seat)))
            found = self._patches[seat] = encode(
                {"version": self.version, "baseVersion": base.version,
                 "operations": operations}
            )
        return found

    def forget_renders(self) -> None:
        """Drop the renders of a version no watcher will ask for again."""
        self._states.clear()
        self._json.clear()
        self._patches.clear()


class Timeline:
    """The last ``FRAMES`` versions of one match on this replica."""

    def __init__(self, storage: StoredMatches, match_id: str, engine: Engine[Any],
                 version: int, record: MatchRecord) -> None:
        self.storage = storage
        self.match_id = match_id
        self.engine = engine
        self.frames: dict[int, Frame] = {}
        self._lock = asyncio.Lock()
        self._add(stored_frame(match_id, version, engine, record))
        self.watchers = 0

    @property
    def newest(self) -> Frame:
        return self.frames[max(self.frames)]

    def frame(self, version: int) -> Frame | None:
        return self.frames.get(version)

    def _add(self, frame: Frame) -> None:
        self.frames[frame.version] = frame
        while len(self.frames) > FRAMES:
            oldest = self.frames.pop(min(self.frames))
            oldest.forget_renders()
            self.frames[min(self.frames)].previous = None  # let the evicted one go

    async def advance(self, upto: int) -> None:
        """Read and replay the moves up to version ``upto`` (once, whoever asks first). A
        store that fails to answer is asked again for up to ``READ_PATIENCE`` seconds before
        every watcher of the match gets the failure (a busy replica reads replies late)."""
        if self.newest.version >= upto:
            return
        delay, waited = 0.1, 0.0
        while True:
            try:
                await self._advance(upto)
                return
            except ApiError as error:
                if error.code != "store_unavailable" or waited >= READ_PATIENCE:
                    raise
            pause = delay * random.uniform(0.5, 1.0)
            await asyncio.sleep(pause)
            waited += pause
            delay = min(delay * 2, 2.0)

    async def _advance(self, upto: int) -> None:
        async with self._lock:
            newest = self.newest
            if newest.version >= upto:
                return
            if upto - newest.version > JUMP:
                version, record = await self.storage.load(self.match_id)
                self._add(stored_frame(self.match_id, version, self.engine, record))
                return
            # The stored record first: the version it is at gets its true record (its seat
            # tokens); the versions before it get theirs from their log entries' headers.
            current_version, current = await self.storage.load(self.match_id)
            entries = await self.storage.entries(self.match_id, newest.version)
            state = newest.state
            versions = Versions(
                self.engine, current, newest.record, newest.view,
                lambda previous, logged: with_handover(previous, logged, current))
            previous = newest
            for entry in entries:
                logged = LogRecord.decode(current.game, current.log_dict, entry.data)
                before = state
                state, _ = replay_step(self.engine, state, logged, current)
                record, versioned = versions.step(entry.version, logged, before, state)
                exact = entry.version == current_version
                if exact:
                    record = current
                frame = Frame(self.match_id, entry.version, self.engine, state, record,
                              previous=previous, change=seat_change(logged), exact=exact,
                              versioned=versioned,
                              view=view_of(current) if exact else versions.view)
                self._add(frame)
                previous = frame


def stored_frame(match_id: str, version: int, engine: Engine[Any],
                 record: MatchRecord) -> Frame:
    """The frame of the stored record (the newest version)."""
    return Frame(match_id, version, engine, game_state(engine, record), record, exact=True,
                 view=view_of(record))


class Timelines:
    """The timelines of the matches watched on this replica (shared, counted)."""

    def __init__(self, storage: StoredMatches) -> None:
        self.storage = storage
        self._open: dict[str, Timeline] = {}

    def acquire(self, match_id: str, engine: Engine[Any], version: int,
                record: MatchRecord) -> Timeline:
        timeline = self._open.get(match_id)
        if timeline is None or timeline.engine is not engine:
            timeline = Timeline(self.storage, match_id, engine, version, record)
            self._open[match_id] = timeline
        timeline.watchers += 1
        return timeline

    def release(self, timeline: Timeline) -> None:
        timeline.watchers -= 1
        if timeline.watchers <= 0 and self._open.get(timeline.match_id) is timeline:
            del self._open[timeline.match_id]

    def __len__(self) -> int:
        return len(self._open)
