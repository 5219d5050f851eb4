"""Rebuilding past versions: the store keeps the latest state and, per version, only the seat
and the action; every earlier state and every event is re-derived by replaying the logged
actions from the seed (the engines are deterministic, so replaying yields exactly the first
ones)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from service.games.base import Engine, Event, parse_action

from .records import LogRecord, MatchRecord
from .storage import MatchStorage

Replayed = list[tuple[int, LogRecord, tuple[Event, ...]]]
"""(version, logged move, the events it produced) per version."""


def replay_step(
    engine: Engine[Any], state: Any, logged: LogRecord
) -> tuple[Any, tuple[Event, ...]]:
    """The state after one logged move, and its events."""
    if logged.seat is None:
        return state, ()  # a seat handed to a bot: the game state does not change
    new_state, events = engine.apply(state, logged.seat, parse_action(engine, logged.action))
    return new_state, tuple(events)


def with_handover(record: MatchRecord, logged: LogRecord) -> MatchRecord:
    """``record`` with the bot seat a hand-over log entry added (others: unchanged)."""
    action = logged.action
    if logged.seat is None and isinstance(action, dict) and action.get("type") == "seat_to_bot":
        seat, kind = action.get("seat"), action.get("kind")
        if isinstance(seat, int) and isinstance(kind, str):
            return replace(record, bots=dict(sorted({**record.bots, seat: kind}.items())))
    return record


async def replay(
    storage: MatchStorage, match_id: str, engine: Engine[Any], record: MatchRecord, upto: int
) -> tuple[Any, Replayed]:
    """The state at version ``upto``, rebuilt from the seed and the logged actions, and every
    logged move up to it with the events it produced."""
    options = engine.Options.model_validate(record.options) if record.options else None
    state = engine.setup(record.players, options, record.seed, record.rules_version)
    moves: Replayed = []
    if upto == 0:
        return state, moves
    for entry in await storage.entries(match_id, 0):
        if entry.version > upto:
            break
        logged = LogRecord.decode(record.game, record.log_dict, entry.data)
        state, events = replay_step(engine, state, logged)
        moves.append((entry.version, logged, events))
    return state, moves
