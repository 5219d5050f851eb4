"""The rules' part of a write, shared by human and bot moves, and the version pins."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from service.errors import ApiError
from service.games.base import Engine, Event, IllegalAction
from service.games.refusals import refusal_codes
from service.i18n import N_, T, Text

from .records import MatchRecord


def check_pins(version: int, expected_version: int | None, if_match: int | None) -> None:
    """409 ``version_conflict`` (body pin) / 412 ``precondition_failed`` (``If-Match``) when
    the match is not at the pinned version."""
    if expected_version is not None and expected_version != version:
        raise ApiError.of(
            "version_conflict",
            T("The match is at version {version}, not {expected}.", version=version,
              expected=expected_version),
            currentVersion=version,
        )
    if if_match is not None and if_match != version:
        detail = (
            T("The match is at version {version}, not {expected}.", version=version,
              expected=if_match) if if_match >= 0 else
            T('If-Match names no tag this match has (it is at version {version}, ETag '
              '"{version}"; weak tags never match: If-Match compares strongly).',
              version=version)
        )
        raise ApiError.of("precondition_failed", detail, currentVersion=version)


def check_started(record: MatchRecord, version: int) -> None:
    """409 ``match_not_started`` for a match still waiting for players, 409
    ``match_cancelled`` for one cancelled before it started: neither has a game to play."""
    if record.waiting:
        raise ApiError.of("match_not_started", "The match is waiting for players: it has no "
                          "game yet.", currentVersion=version)
    if record.cancelled:
        raise ApiError.of("match_cancelled", "This match was cancelled.",
                          currentVersion=version)


def game_state(engine: Engine[Any], record: MatchRecord) -> Any:
    """The record's game state, None for a match without a game (waiting or cancelled)."""
    return engine.loads(record.state) if record.started else None


def play(
    engine: Engine[Any], version: int, record: MatchRecord, seat: int, action: Any, now: int
) -> tuple[Any, list[Event], MatchRecord]:
    """Refuse a finished match or a seat that may not act, apply the move (the engine's
    refusal becomes 422 with its code), and return the new state, its events and the record
    to store."""
    check_started(record, version)
    state = engine.loads(record.state)
    if record.finished or engine.result(state) is not None:
        raise ApiError.of("match_finished", "The match is over.", currentVersion=version)
    if seat not in engine.active_seats(state):
        raise ApiError.of(
            "not_your_turn", T("Seat {seat} may not act now.", seat=seat),
            currentVersion=version,
        )
    try:
        new_state, events = engine.apply(state, seat, action)
    except IllegalAction as refusal:
        # English: the engine's own words; Czech, German: the meaning of its code, translated
        # (the engines' codes.py descriptions are messages: service/i18n/extract.py).
        known = refusal_codes(engine).get(refusal.code)
        detail = (Text(known.description, english=refusal.message) if known is not None
                  else refusal.message)
        raise ApiError(422, refusal.code, N_("Illegal move"), detail) from None
    new_record = replace(
        record,
        state=engine.dumps(new_state),
        finished=engine.result(new_state) is not None,
        updated=now,
    )
    return new_state, events, new_record
