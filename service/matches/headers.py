"""Each version's record header, kept in its log entry, so that a past version is rendered
from its own record and not from the newest one.

A view of a match reads more of its record than the game state: the status (a match the
service ended), the bots, the players and their seats, forfeits and how the match ended,
the lobby fields, when it was last written (``updatedAt``) and the seat clocks. The stored
record holds them for the newest version only; the log entry of every version holds them
for its own version (``LogRecord.header``), so that a replayed version (a resumed stream,
a timeline catching up) shows exactly what ``GET /v1/matches/{id}`` answered at that
version (docs/api.md, section 5).

The header is kept small: whole (``"=": 1``) in the first entry, in every checkpointed one
and after an entry without one; elsewhere only what changed since the entry before:

- ``"@"``: the write's time (``MatchRecord.written_ms``, the store's clock in ms) minus the
  previous one's (left out when 0);
- ``"u"``: ``updated`` minus the write's time in whole seconds, only when that offset
  changed (the latest write time is nearly always the write's own second);
- ``"ck"``: the seat clocks, only when replaying cannot derive them: a move steps the
  clocks from the active seats before and after (``clocking.clocked``) at the write's time,
  which the replay knows; a timeout, a resignation or a reclaim sets them itself;
- any other key of ``VIEW_KEYS`` whose value changed, and ``"-"``: the keys it lost.

Log entries written before this (no ``"h"``) and records without ``"tw"`` leave the replay
to rebuild the record from the log entries' own fields (best effort: no clocks, no
``updatedAt``; docs/decisions.md, "Replayed versions are rendered from their own record").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from service.games.base import Engine

from . import clocking
from .records import LogRecord, MatchRecord, checkpointed

VIEW_KEYS = ("f", "b", "p", "ph", "v", "nm", "lb", "so", "cx", "ro", "rn", "u", "ck",
             "tm", "ff", "sv", "cr", "cs", "rs", "tw")
"""The record header keys a view of a version reads (``MatchRecord.header``); the others
(game, seed, options, time control, tokens, ...) are the same at every version a view
shows them at, and are taken from the stored record."""
_PLAIN = tuple(k for k in VIEW_KEYS if k not in ("u", "ck", "tw"))


def view_of(record: MatchRecord) -> dict[str, Any] | None:
    """The version header of a stored ``record`` (None: stored before versioned headers)."""
    if record.written_ms is None:
        return None
    header = record.header()
    return {key: header[key] for key in VIEW_KEYS if key in header}


def _offset(view: dict[str, Any]) -> int:
    return int(view.get("u", 0)) - int(view["tw"]) // 1000


def entry_header(before: MatchRecord | None, after: MatchRecord, version: int, *,
                 clocks_derived: bool) -> dict[str, Any]:
    """The header the log entry of ``version`` keeps: ``after`` (as stored, with its
    ``written_ms``) as a change from ``before``, or whole. ``clocks_derived``: replaying the
    entry derives ``after``'s clocks (``clocking.clocked`` did not keep clocks the writer
    set)."""
    new = view_of(after)
    assert new is not None, "a stored record has its write time"
    old = view_of(before) if before is not None else None
    if old is None or version == 1 or checkpointed(version):
        return {"=": 1, **new}
    out: dict[str, Any] = {}
    if new["tw"] != old["tw"]:
        out["@"] = new["tw"] - old["tw"]
    if _offset(new) != _offset(old):
        out["u"] = _offset(new)
    gone = []
    for key in _PLAIN if clocks_derived else (*_PLAIN, "ck"):
        if new.get(key) != old.get(key):
            if key in new:
                out[key] = new[key]
            else:
                gone.append(key)
    if gone:
        out["-"] = gone
    return out


def applied(previous: dict[str, Any] | None,
            header: dict[str, Any]) -> tuple[dict[str, Any], bool] | None:
    """The version header after an entry's ``header`` and whether it gave the clocks (else
    the caller derives them), or None when there is nothing to apply it to."""
    if header.get("=") == 1:
        return {key: header[key] for key in VIEW_KEYS if key in header}, True
    if previous is None:
        return None
    view = dict(previous)
    view["tw"] = int(previous["tw"]) + int(header.get("@", 0))
    view["u"] = view["tw"] // 1000 + int(header.get("u", _offset(previous)))
    for key in (*_PLAIN, "ck"):
        if key in header:
            view[key] = header[key]
    for key in header.get("-", ()):
        view.pop(key, None)
    return view, "ck" in header or "ck" in header.get("-", ())


class Versions:
    """Steps a match's record along its log: the record at each version (``step``), from
    the entries' headers where they have one, else rebuilt from the entries themselves
    (``replay.with_handover``: no clocks, no times)."""

    def __init__(self, engine: Engine[Any], newest: MatchRecord, record: MatchRecord,
                 view: dict[str, Any] | None,
                 rebuild: Callable[[MatchRecord, LogRecord], MatchRecord]) -> None:
        self.engine = engine
        self.newest = newest
        self.record = record
        """The record at the version reached."""
        self.view = view
        """Its version header (None: not known, the record is a rebuilt one)."""
        self.rebuild = rebuild
        header = newest.header()
        self._base = {key: value for key, value in header.items() if key not in VIEW_KEYS}

    def record_of(self, view: dict[str, Any]) -> MatchRecord:
        """The record at a version of header ``view`` (its state left out: the replay
        holds it)."""
        return MatchRecord.from_header({**self._base, **view}, b"")

    def _actives(self, record: MatchRecord, state: Any) -> frozenset[int]:
        if not record.started or record.finished or state is None \
                or self.engine.result(state) is not None:
            return frozenset()
        return frozenset(self.engine.active_seats(state))

    def step(self, version: int, logged: LogRecord, before: Any,
             after: Any) -> tuple[MatchRecord, bool]:
        """The record at ``version`` (whose entry is ``logged``; ``before`` and ``after``:
        the game states at the version before and at this one) and whether it is this
        version's own (from the entry's header), not a rebuilt one."""
        found = None if logged.header is None else applied(self.view, logged.header)
        if found is None:
            self.view = None
            self.record = self.rebuild(self.record, logged)
            return self.record, False
        view, has_clocks = found
        # Both without state bytes, as the writer's were alike for a service entry (the
        # states are the replay's: ``before`` and ``after``).
        previous = replace(self.record, state=b"") if self.record.state else self.record
        record = self.record_of({**view, "ck": previous.header().get("ck", [])}
                                if not has_clocks else view)
        if not has_clocks:
            active = {id(previous): self._actives(previous, before),
                      id(record): self._actives(record, after)}
            record = clocking.clocked(previous, record, logged, version, int(view["tw"]),
                                      lambda r: active[id(r)])
            clocks = [c.encode() for c in record.clocks]
            view = {**view, "ck": clocks} if clocks else \
                {k: v for k, v in view.items() if k != "ck"}
        self.view, self.record = view, record
        return record, True
