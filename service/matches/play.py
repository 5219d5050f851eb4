"""The rules' part of a write, shared by human and bot moves, and the version pins."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from service.errors import ApiError
from service.games.base import Engine, Event, IllegalAction

from .records import MatchRecord


def check_pins(version: int, expected_version: int | None, if_match: int | None) -> None:
    """409 ``version_conflict`` (body pin) / 412 ``precondition_failed`` (``If-Match``) when
    the match is not at the pinned version."""
    if expected_version is not None and expected_version != version:
        raise ApiError.of(
            "version_conflict",
            f"The match is at version {version}, not {expected_version}.",
            currentVersion=version,
        )
    if if_match is not None and if_match != version:
        raise ApiError.of(
            "precondition_failed",
            f"The match is at version {version}, not {if_match}.",
            currentVersion=version,
        )


def play(
    engine: Engine[Any], version: int, record: MatchRecord, seat: int, action: Any, now: int
) -> tuple[Any, list[Event], MatchRecord]:
    """Refuse a finished match or a seat that may not act, apply the move (the engine's
    refusal becomes 422 with its code), and return the new state, its events and the record
    to store."""
    state = engine.loads(record.state)
    if record.finished or engine.result(state) is not None:
        raise ApiError.of("match_finished", "The match is over.", currentVersion=version)
    if seat not in engine.active_seats(state):
        raise ApiError.of(
            "not_your_turn", f"Seat {seat} may not act now.", currentVersion=version
        )
    try:
        new_state, events = engine.apply(state, seat, action)
    except IllegalAction as refusal:
        raise ApiError(422, refusal.code, "Illegal move", refusal.message) from None
    new_record = replace(
        record,
        state=engine.dumps(new_state),
        finished=engine.result(new_state) is not None,
        updated=now,
    )
    return new_state, events, new_record
