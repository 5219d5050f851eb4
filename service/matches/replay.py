"""Rebuilding past versions: the store keeps the latest state and, per version, only the seat
and the action; every earlier state and every event is re-derived by replaying the logged
actions (the engines are deterministic, so replaying yields exactly the first ones).

Replaying from the seed stays the truth, but no read has to: every ``CHECKPOINT_EVERY``-th
log entry carries the state after it (``records.checkpointed``), so the state at any version
is the newest checkpoint at or before it plus at most ``CHECKPOINT_EVERY - 1`` moves. A match
whose log predates checkpoints (or whose checkpoint is missing) is replayed from the seed.
``STATS`` counts the moves replayed, so that tests (and a curious operator) can hold the
bound.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from service.games.base import Engine, Event, parse_action
from service.store import LogEntry

from . import absence, headers, records
from .records import LogRecord, MatchRecord, SeatPlayer
from .storage import StoredMatches

Replayed = list[tuple[int, LogRecord, tuple[Event, ...]]]
"""(version, logged move, the events it produced) per version."""


@dataclass
class ReplayStats:
    """What replaying has cost in this process since it started (never reset but by tests,
    which read differences)."""

    moves: int = 0
    """Logged moves replayed (hand-overs included: each is a version stepped through)."""
    from_seed: int = 0
    """Replays that started from the seed (no checkpoint at or before the version)."""
    from_checkpoint: int = 0
    """Replays that started from a checkpoint."""


STATS = ReplayStats()


class PastTheLog(ValueError):
    """A version after the match's latest was asked for (a caller's bug: the versions a
    caller knows come from a record it loaded, and the log only grows)."""


LOBBY_ENTRIES = ("player_joined", "player_left", "match_started", "match_cancelled")
"""Service entries of a match that waited for players (``waiting.py``): each a version of
its own, seat null, before the game exists -- except the one that starts it."""


def starts(logged: LogRecord) -> bool:
    """Whether this entry set the game up: an early start, or the join that took the last
    open seat (``"starts": true``)."""
    action = logged.action
    if logged.seat is not None or not isinstance(action, dict):
        return False
    return action.get("type") == "match_started" or action.get("starts") is True


def replay_step(
    engine: Engine[Any], state: Any, logged: LogRecord, newest: MatchRecord | None = None,
) -> tuple[Any, tuple[Event, ...]]:
    """The state after one logged move, and its events. ``state`` None: the match had no
    game yet (it waited for players); the entry that starts it sets the game up from
    ``newest`` (the stored record: the seed is drawn at the start and never changes)."""
    if state is None:
        if starts(logged) and newest is not None and newest.started:
            return initial_state(engine, newest), ()
        return None, ()
    if logged.seat is None:
        return state, ()  # a service entry: the game state does not change
    new_state, events = engine.apply(state, logged.seat, parse_action(engine, logged.action))
    return new_state, tuple(events)


def with_handover(
    record: MatchRecord, logged: LogRecord, newest: MatchRecord | None = None
) -> MatchRecord:
    """``record`` with a service entry applied: the bot seat a hand-over added, the name a
    ``seat_renamed`` entry gave, a lobby entry's change (``with_lobby_entry``; others:
    unchanged)."""
    action = logged.action
    if logged.seat is not None or not isinstance(action, dict):
        return record
    if action.get("type") in LOBBY_ENTRIES:
        return with_lobby_entry(record, action, newest)
    seat = action.get("seat")
    if not isinstance(seat, int):
        return record
    if action.get("type") in (absence.TIMEOUT, absence.RESIGN, absence.RECLAIMED):
        return absence.replayed(record, action)
    if action.get("type") == "seat_to_bot":
        kind = action.get("kind")
        if isinstance(kind, str):
            return replace(record, bots=dict(sorted({**record.bots, seat: kind}.items())))
    if action.get("type") == "seat_renamed":
        name = action.get("name")
        if isinstance(name, str) and seat < len(record.seat_players):
            bound = record.seat_players[seat]
            if bound is not None:
                renamed = list(record.seat_players)
                renamed[seat] = SeatPlayer(bound.player, name)
                return replace(record, seat_players=tuple(renamed))
    return record


def with_lobby_entry(
    record: MatchRecord, action: dict[str, Any], newest: MatchRecord | None
) -> MatchRecord:
    """``record`` (as it was before a lobby entry) after it: a seat taken or freed, the
    match started (its setup taken from ``newest``, the stored record) or cancelled."""
    kind, seat = action.get("type"), action.get("seat")
    players = list(record.seat_players) or [None] * record.players
    if kind == "player_joined" and isinstance(seat, int) and seat < len(players):
        player, name = action.get("player"), action.get("name")
        if isinstance(player, str) and isinstance(name, str):
            players[seat] = SeatPlayer(player, name)
    if kind == "player_left" and isinstance(seat, int) and seat < len(players):
        players[seat] = None
    record = replace(record, seat_players=tuple(players))
    if kind == "match_cancelled":
        reason = action.get("reason")
        return replace(record, phase="cancelled",
                       cancel_reason=reason if isinstance(reason, str) else None)
    if (kind == "match_started" or action.get("starts") is True) and newest is not None:
        raw_bots = action.get("bots")
        added = ({int(s): str(k) for s, k in raw_bots.items()}
                 if isinstance(raw_bots, dict) else {})
        return replace(
            newest, seat_players=record.seat_players, bots=dict(sorted(
                {**record.bots, **added}.items())), finished=False,
            idempotency=(), state=newest.state if newest.started else b"",
        )
    return record


SeatChange = tuple[str, int]
"""A service entry's change to who may read a seat: ``(type, seat)`` (``seat_credentials``)."""

SEAT_CREDENTIAL_CHANGES = ("seat_to_bot", "seat_token_renewed", "seat_renamed",
                           absence.TIMEOUT, absence.RESIGN, absence.RECLAIMED)
"""Service entries that change a seat's credentials: the seat handed to a bot (its token and
its player stop reading it), its token renewed (the old token and its stream tickets stop),
its player renamed (``SeatPlayers.rename_player``: the player left for good, its player
credential is revoked), a bot taking it at a timeout or resignation, its player taking it
back (``absence.py``)."""


def seat_change(logged: LogRecord) -> SeatChange | None:
    """The seat-credential change a logged entry makes, or None (moves, other entries)."""
    action = logged.action
    if logged.seat is not None or not isinstance(action, dict):
        return None
    seat, kind = action.get("seat"), action.get("type")
    if isinstance(seat, int) and kind in SEAT_CREDENTIAL_CHANGES:
        return str(kind), seat
    return None


def initial_state(engine: Engine[Any], record: MatchRecord) -> Any:
    """The state at version 0, set up from the record's seed, options and rules version."""
    options = engine.Options.model_validate(record.options) if record.options else None
    return engine.setup(record.players, options, record.seed, record.rules_version)


async def state_at(
    storage: StoredMatches, match_id: str, engine: Engine[Any], record: MatchRecord,
    version: int,
) -> Any:
    """The state at ``version`` (at most the latest: else ``PastTheLog``), replayed from the
    newest checkpoint at or before it -- at most ``CHECKPOINT_EVERY - 1`` moves -- or from the
    seed where there is none."""
    walk = await _walk(storage, match_id, engine, record, version, version)
    return walk.at_after


async def moves_between(
    storage: StoredMatches, match_id: str, engine: Engine[Any], record: MatchRecord,
    after: int, upto: int,
) -> tuple[Any, Replayed]:
    """The state at version ``after`` and every logged move in ``(after, upto]`` with the
    events it produced, replaying only from the newest checkpoint at or before ``after``
    (else from the seed): at most ``CHECKPOINT_EVERY - 1 + upto - after`` moves, reading the
    log from that checkpoint on. ``after`` must be at most the latest version (else
    ``PastTheLog``); the moves stop at the latest."""
    walk = await _walk(storage, match_id, engine, record, after, upto)
    return walk.at_after, walk.moves


async def versions_between(
    storage: StoredMatches, match_id: str, engine: Engine[Any], record: MatchRecord,
    after: int, upto: int,
) -> list[Version]:
    """Every version in ``(after, upto]`` with its state and its record (``Version``), as
    ``moves_between`` replays them (``record``: the stored one)."""
    walk = await _walk(storage, match_id, engine, record, after, upto, records_too=True)
    return walk.versions


async def replay(
    storage: StoredMatches, match_id: str, engine: Engine[Any], record: MatchRecord, upto: int
) -> tuple[Any, Replayed]:
    """The state at version ``upto`` and every logged move up to it with the events it
    produced: the whole history, replayed from the seed (for callers that want all of it;
    a read of a part uses ``moves_between`` or ``state_at``)."""
    walk = await _walk(storage, match_id, engine, record, 0, upto)
    return walk.at_upto, walk.moves


@dataclass(frozen=True, slots=True)
class Version:
    """A replayed version: its log entry, its state (None: no game yet) and its record
    (``versioned``: the version's own, from its entry's header; else rebuilt from the
    newest record and the entries, without clocks or times: ``headers.py``)."""

    version: int
    logged: LogRecord
    state: Any
    record: MatchRecord
    versioned: bool


@dataclass
class _Walked:
    at_after: Any
    at_upto: Any
    moves: Replayed
    versions: list[Version]


def rebuilt_start(newest: MatchRecord) -> MatchRecord:
    """Best effort at a record before the versions a log without headers replays: the
    newest one, not yet finished (the entries replayed re-add forfeits and bots)."""
    return replace(newest, finished=False, termination=None, forfeited=())


async def _walk(
    storage: StoredMatches, match_id: str, engine: Engine[Any], record: MatchRecord,
    after: int, upto: int, *, records_too: bool = False,
) -> _Walked:
    """The state at ``after``, the moves in ``(after, upto]`` (and, ``records_too``, the
    versions with their records) and the state at ``upto``."""
    after = max(after, 0)
    upto = max(upto, after)
    base = after - after % records.CHECKPOINT_EVERY
    state: Any = None
    entries: list[LogEntry] = []
    versions = headers.Versions(
        engine, record, rebuilt_start(record), None,
        lambda previous, logged: with_handover(previous, logged, record)) \
        if records_too else None
    if base > 0:
        entries = await storage.entries(match_id, base - 1)
        if not entries:
            raise PastTheLog(f"version {after} of {match_id} is past the end of its log")
        if entries[0].version == base:
            first = LogRecord.decode(record.game, record.log_dict, entries[0].data)
            if first.checkpoint is not None:
                state = engine.loads(first.checkpoint)
                entries = entries[1:]
                if versions is not None:
                    versions.step(base, first, state, state)
    state_from_checkpoint = state is not None
    if state is None:
        # A log written before checkpoints (or none yet): the seed is the only start. A
        # match without a game (waiting, cancelled) has no state at any version.
        STATS.from_seed += 1
        state = (initial_state(engine, record)
                 if record.started and record.start_version == 0 else None)
        entries = await storage.entries(match_id, 0) if upto > 0 else []
    else:
        STATS.from_checkpoint += 1
    at_after = state
    reached = base if state_from_checkpoint else 0
    moves: Replayed = []
    out: list[Version] = []
    for entry in entries:
        if entry.version > upto:
            break
        logged = LogRecord.decode(record.game, record.log_dict, entry.data)
        before = state
        state, events = replay_step(engine, state, logged, record)
        STATS.moves += 1
        reached = entry.version
        if versions is not None:
            at, versioned = versions.step(entry.version, logged, before, state)
        if entry.version <= after:
            at_after = state
        else:
            moves.append((entry.version, logged, events))
            if versions is not None:
                out.append(Version(entry.version, logged, state, at, versioned))
    if reached < after:
        raise PastTheLog(f"version {after} of {match_id} is past the end of its log")
    return _Walked(at_after, state, moves, out)
