"""What a caller sees of a match: its seat (from its token), its view and its events (with
their sentences, said from what the caller may see)."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from service import texts
from service.clocks import remaining_of
from service.errors import ApiError
from service.games.base import Engine, Event
from service.i18n import DEFAULT_LANGUAGE, Lang, T
from service.identity import checked, seats
from service.identity.callers import Caller, Credential

from . import invites, seeds
from .models import EventOut, MatchClock, MatchState, SeatClockState, SeatHolder
from .outcome import outcome_of
from .records import MatchRecord


def no_seat() -> ApiError:
    """A player (or app) writing to a match it has no seat in."""
    return ApiError.of("forbidden", "You have no seat in this match.")


def hidden() -> ApiError:
    """The answer to an outsider asking for a private match: the very one a missing match
    gets, so that its existence is not revealed."""
    return ApiError.of("match_not_found", "No such match (or it expired).")


def away_seat(record: MatchRecord, token: Credential) -> int | None:
    """The seat a bot took from ``token`` (its old seat token, or the player once bound to
    it: ``record.away``), or None."""
    if isinstance(token, Caller):
        if token.player is None or token.app != record.app:
            return None
        return next((s for s, a in record.away.items()
                     if a.player is not None and a.player.player == token.player), None)
    if token is None or invites.is_spectator_token(token) or not record.away:
        return None
    digest = seats.digest(token)
    return next((s for s, a in record.away.items() if a.digest == digest), None)


def handed_to_bot(record: MatchRecord, seat: int) -> ApiError:
    """401 ``seat_handed_to_bot``: the credential's seat is played by a bot now."""
    gone = record.away[seat]
    if seat in record.forfeited:
        return ApiError.of(
            "seat_handed_to_bot",
            T("Seat {seat} forfeited at version {version} ({reason}): a bot plays it on and "
              "it cannot be taken back.", seat=seat, version=gone.version, reason=gone.reason),
        )
    return ApiError.of(
        "seat_handed_to_bot",
        T("Seat {seat} was handed to a bot at version {version} ({reason}): take it back with "
          "POST .../seats/{seat}/reclaim.", seat=seat,
          version=gone.version, reason=gone.reason),
    )


def may_read_private(record: MatchRecord, token: Credential) -> bool:
    """Whether ``token`` may read a private match: one of its players (seat token or
    player credential; a seat a bot took over too: the player reads it as a spectator, the
    old token is told why it stopped working) or its app's key."""
    if isinstance(token, Caller):
        if token.is_app:
            return token.app == record.app
        return token.player is not None and (
            record.player_seat(token.app, token.player) is not None
            or away_seat(record, token) is not None)
    if token is None:
        return False
    if invites.is_spectator_token(token):
        return invites.reads(token, record)
    return seats.seat_of(token, record.tokens) is not None or away_seat(record, token) is not None


def seat_of(record: MatchRecord, token: Credential, *, required: bool) -> int | None:
    """The seat ``token`` holds in the match (None: a spectator, unless ``required``). A
    player (``Caller``) holds the seat bound to it; a player without a seat here, or an app,
    reads as a spectator and is refused a write (403 ``forbidden``). A private match is
    read by its players and its app only: anyone else gets ``hidden()``. A credential whose
    seat a bot took over (``record.away``) gets 401 ``seat_handed_to_bot``: an old seat token
    always, a player credential on a write (it reads the match as a spectator)."""
    if isinstance(token, str) and invites.is_spectator_token(token) \
            and invites.revoked(token, record):  # proven ours: no oracle for anyone else
        raise view_revoked()
    if record.visibility == "private" and not may_read_private(record, token):
        raise hidden()
    if token is None:
        if required:
            raise ApiError.of("unauthorized", "This needs a seat token.")
        return None
    if isinstance(token, Caller):
        held = None if token.player is None else record.player_seat(token.app, token.player)
        if held is None and required:
            gone = away_seat(record, token)
            if gone is not None:
                raise handed_to_bot(record, gone)
            raise no_seat()
        return held
    if invites.is_spectator_token(token):
        if not invites.reads(token, record):  # "that one match": never another, public or not
            raise ApiError.of("unauthorized", "The token is not valid for this match.")
        checked.note(token, own=False)  # minted by anyone holding a spectator code
        if required:
            raise no_seat()  # a spectator token reads the match; it plays no seat
        return None
    seat = seats.seat_of(token, record.tokens)
    if seat is None:
        gone = away_seat(record, token)
        if gone is not None:
            raise handed_to_bot(record, gone)
        raise ApiError.of("unauthorized", "The token is not valid for this match.")
    checked.note(token, own=minted_by_app(record))
    return seat


def view_revoked() -> ApiError:
    """A spectator token redeemed with a code revoked since (``invites.revoke_view``)."""
    return ApiError.of("credential_revoked", T("The spectator code this token was redeemed "
                                               "with was revoked."))


def minted_by_app(record: MatchRecord) -> bool:
    """Whether the match's seat tokens were paid for by an app: created with its app key
    (a match created anonymously or by a guest or player mints them for nothing: they draw
    from their sender's address, ``service.identity.checked``)."""
    return record.app is not None and record.creator is None


def events_for(
    seat: int | None, events: tuple[Event, ...] | list[Event], game: str | None = None,
    *, lang: Lang = DEFAULT_LANGUAGE, view: Any = None,
) -> list[EventOut]:
    """Events of ``game`` as ``seat`` (None: a spectator) may see them, each with its
    sentence in ``lang``. The sentence is said from the seen data only (and the names of the
    seats in ``view``, the caller's view), so it tells no more than ``data``."""
    names = texts.seat_names(game, view)
    out = []
    for event in events:
        seen = event.for_seat(seat)
        seen.pop("kind", None)
        text = texts.event_text(game, event.kind, seen, names, lang)
        out.append(EventOut.of(event.kind, seen, game, text))
    return out


def state_of(
    match_id: str, version: int, engine: Engine[Any], state: Any, seat: int | None,
    record: MatchRecord | None = None, now_ms: int | None = None, *, timed: bool = True,
) -> MatchState:
    """The match at ``version`` as ``seat`` (None: a spectator) sees it (``state`` None: a
    match that waits for players or was cancelled: no game, no view). ``now_ms``: the
    store's time, for the clocks (``StoredMatches.store_clock``; None: this host's).
    ``timed``: ``record`` is the version's stored record (False: one rebuilt from the log,
    whose clocks and latest write time are not this version's: shown as null)."""
    if state is None:
        assert record is not None
        return lobby_state(match_id, version, engine, record, seat)
    rules_result = engine.result(state)
    # A match the service ended before the rules did (a timeout or resignation left fewer
    # than two seats in) is over too: nobody may act.
    over = rules_result is not None or (record is not None and record.finished)
    result = None
    if over:
        result = outcome_of(rules_result, engine_players(state, record),
                            record.forfeited if record is not None else (),
                            record.termination if record is not None else None)
    return MatchState(
        match_id=match_id,
        game=engine.id,
        version=version,
        rules_version=engine.rules_version(state),
        status="finished" if over else "active",
        seat=seat,
        active_seats=[] if over else sorted(engine.active_seats(state)),
        bots={str(s): k for s, k in record.bots.items()} if record is not None else {},
        view=engine.view(state, seat),
        result=result,
        players=holders(record) if record is not None else [],
        **(seed_fields(record, finished=over) if record is not None else {}),
        **(table_fields(record) if record is not None else {}),
        **(clock_fields(record, now_ms, over=over, timed=timed)
           if record is not None else {}),
    )


def engine_players(state: Any, record: MatchRecord | None) -> int:
    """The number of seats (the record's; else the view's seat list)."""
    if record is not None:
        return record.players
    return len(getattr(state, "players", ()) or ())


def _time(ms: int | None) -> datetime | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, UTC)


def clock_fields(record: MatchRecord, now_ms: int | None, *, over: bool = False,
                 timed: bool = True) -> dict[str, Any]:
    """The state's times: creation, latest write, the time control and every seat's clock
    (when its turn began; with a time control, what is left and the deadline). ``over``: the
    match is finished (by the rules or the service); ``timed``: ``record`` holds this
    version's clocks (else no clock, no ``updatedAt``)."""
    fields: dict[str, Any] = {
        "created_at": datetime.fromtimestamp(record.created, UTC) if record.created else None,
        "updated_at": (datetime.fromtimestamp(record.updated, UTC)
                       if record.updated and timed else None),
        "time_control": (None if record.time_control is None
                         else record.time_control.wire()),
        "on_timeout": None if record.on_timeout is None else record.on_timeout.wire(),
    }
    if not record.started or not timed:
        return fields
    over = over or record.finished
    now = int(time.time() * 1000) if now_ms is None else now_ms
    control = record.time_control
    deadlines = {} if over else record.deadlines()
    fields["clock"] = MatchClock(server_time=_time(now), seats=[
        SeatClockState(
            seat=seat,
            remaining_ms=remaining_of(control, clock, now),
            deadline=_time(deadlines.get(seat)),
            running=clock.running and not over,
            turn_started_at=_time(clock.since) if not over else None,
        )
        for seat, clock in enumerate(record.clocks)
    ])
    return fields


def lobby_state(
    match_id: str, version: int, engine: Engine[Any], record: MatchRecord, seat: int | None
) -> MatchState:
    """A match without a game: waiting for players or cancelled. No seed, no view, no
    commitment yet (it is drawn when the match starts)."""
    return MatchState(
        match_id=match_id,
        game=engine.id,
        version=version,
        rules_version=engine.rules_versions[-1],
        status="cancelled" if record.cancelled else "waiting",
        seat=seat,
        active_seats=[],
        bots={str(s): k for s, k in record.bots.items()},
        view=None,
        result=None,
        players=holders(record),
        options=record.options,
        seed_chosen=record.chosen_seed is not None,
        seed_commitment=None,
        **table_fields(record),
        **clock_fields(record, None),
    )


def table_fields(record: MatchRecord) -> dict[str, Any]:
    """The state's lobby fields: visibility, name, labels, open seats, start version."""
    return {
        "visibility": record.visibility,
        "name": record.name,
        "labels": dict(record.labels),
        "open_seats": record.free_seats() if record.waiting else [],
        "start_version": record.start_version,
        "cancel_reason": record.cancel_reason,
        "creator_seat": (None if record.creator is None or record.app is None
                         else record.player_seat(record.app, record.creator)),
        "rematch_of": record.rematch_of,
        "rematch": record.rematch,
    }


def seed_fields(record: MatchRecord, *, finished: bool) -> dict[str, Any]:
    """The state's options and seed fields: the commitment from the start, the seed and its
    salt only once the match is finished (docs/security.md, "Verifiable seeds (item 8)")."""
    fields: dict[str, Any] = {
        "options": record.options,
        "seed_chosen": seeds.chosen(record),
        "seed_commitment": seeds.commitment_of(record),
    }
    if finished:
        fields["seed"] = record.seed
        fields["seed_salt"] = None if record.seed_salt is None else record.seed_salt.hex()
    return fields


def holders(record: MatchRecord) -> list[SeatHolder]:
    """Who sits in each seat: the bot, else the bound player's name (None: anonymous)."""
    out = []
    for seat in range(record.players):
        kind = record.bots.get(seat)
        bound = record.seat_players[seat] if seat < len(record.seat_players) else None
        name = bound.name if bound is not None and kind is None else None
        is_open = record.waiting and seat in record.open_seats and bound is None and kind is None
        out.append(SeatHolder(seat=seat, name=name, bot=kind, open=is_open))
    return out
