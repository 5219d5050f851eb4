"""A player resigns its seat, or takes back a seat a bot took over (issue 18).

``resign``: the seat is out (ranked last; ``absence.forfeit``): a random bot plays it on, and
with fewer than two seats still in the match ends (``termination: resign``). ``reclaim``: a
seat a bot took over (a hand-over, a timeout under the ``bot`` policy) is taken back by who
held it -- its player's credential (the seat is bound to it again), its revoked seat token (a
new token is answered once) or the match's app key (a new token is answered once); the bot
stops at once. Each is a version of its own: a ``resign`` or ``seat_reclaimed`` service entry
(``seat: null``), stored by compare-and-set with retries.
"""

from __future__ import annotations

from typing import Any

from service.errors import ApiError
from service.games import get as get_engine
from service.games.base import Engine
from service.i18n import T
from service.identity import seats
from service.identity.callers import Caller, Credential

from . import absence
from .due import DueSignals
from .models import MatchState, ReclaimSeatResponse
from .play import check_started
from .records import Away, LogRecord, MatchRecord
from .storage import StoredMatches, busy
from .views import hidden, may_read_private, seat_of, state_of

MAX_ATTEMPTS = 16


def no_such_seat(seat: int) -> ApiError:
    return ApiError.of("not_found", T("No seat {seat} in this match.", seat=seat))


def _forfeited(record: MatchRecord, seat: int) -> ApiError:
    gone = record.away.get(seat)
    return ApiError.of(
        "seat_forfeited",
        T("Seat {seat} forfeited at version {version}: it is out of the match.", seat=seat,
          version=gone.version if gone is not None else 0),
    )


def _held(record: MatchRecord, token: Credential, seat: int) -> bool:
    """Whether ``token`` held ``seat`` before a bot took it (its old token or its player)."""
    gone = record.away.get(seat)
    if gone is None or token is None:
        return False
    if isinstance(token, Caller):
        return (not token.is_app and token.app == record.app and gone.player is not None
                and gone.player.player == token.player)
    return gone.digest is not None and seats.digest(token) == gone.digest


def _over(engine: Engine[Any], record: MatchRecord, version: int) -> Any:
    """The game state; 409 ``match_finished`` when the match is over."""
    state = engine.loads(record.state)
    if record.finished or engine.result(state) is not None:
        raise ApiError.of("match_finished", "The match is over.", currentVersion=version)
    return state


def _claimant(record: MatchRecord, token: Credential, gone: Away) -> str | None:
    """How ``token`` may take the seat back: ``player`` (its player's credential), ``token``
    (its revoked seat token), ``app`` (the match's app key); None: it may not."""
    if isinstance(token, Caller):
        if token.is_app:
            return "app" if record.app is not None and token.app == record.app else None
        if token.app == record.app and gone.player is not None \
                and gone.player.player == token.player:
            return "player"
        return None
    if token is not None and gone.digest is not None and seats.digest(token) == gone.digest:
        return "token"
    return None


class AwaySeats:
    def __init__(self, storage: StoredMatches, due: DueSignals) -> None:
        self.storage = storage
        self.due = due

    async def _load(self, match_id: str, token: Credential,
                    seat: int) -> tuple[int, MatchRecord]:
        """The stored match, if ``token`` may read it (a private match's outsider: 404) and
        ``seat`` is one of its seats."""
        version, record = await self.storage.load(match_id)
        if record.visibility == "private" and not may_read_private(record, token):
            raise hidden()
        if not 0 <= seat < record.players:
            raise no_such_seat(seat)
        return version, record

    async def resign(self, match_id: str, token: Credential, seat: int) -> MatchState:
        """``seat`` resigns (by its token or its player's credential): ranked last, a random
        bot plays on; fewer than two seats still in: the match ends. Returns the match as a
        spectator sees it."""
        if token is None:
            raise ApiError.of("unauthorized", "Resigning needs the seat's token or its "
                              "player's credential.")
        storage = self.storage
        for _ in range(MAX_ATTEMPTS):
            version, record = await self._load(match_id, token, seat)
            if seat in record.forfeited and _held(record, token, seat):
                raise _forfeited(record, seat)
            own = seat_of(record, token, required=True)
            if own != seat:  # a seat of the match, not this one: known, but not allowed
                raise ApiError.of(
                    "not_your_seat", T("Seat {seat} is not yours: a seat resigns only by "
                                       "its own token or its player's credential.", seat=seat)
                )
            check_started(record, version)
            engine = get_engine(record.game)
            state = _over(engine, record, version)
            new_record = absence.forfeit(record, seat, absence.RESIGN, version + 1,
                                         await storage.store_clock.now_ms(), storage.now())
            entry = LogRecord(seat=None, action={"type": absence.RESIGN, "seat": seat})
            if stored := await storage.write(match_id, version, new_record, entry,
                                             before=record):
                if stored.bots and not stored.finished:
                    await self.due.signal_if_due(match_id, engine, stored, state)
                return state_of(match_id, version + 1, engine, state, None, stored,
                                storage.store_clock.peek_ms())
            storage.metrics.cas_conflict()
        raise busy()

    async def reclaim(self, match_id: str, token: Credential,
                      seat: int) -> ReclaimSeatResponse:
        """``seat``, which a bot took over, is taken back: by its player's credential (bound
        to it again; no token shown), its revoked seat token or the match's app key (a new
        seat token, answered once). Its bot stops at once. Answers the match as the seat
        sees it."""
        if token is None:
            raise ApiError.of("unauthorized", "Taking a seat back needs its old token, its "
                              "player's credential or the match's app key.")
        storage = self.storage
        for _ in range(MAX_ATTEMPTS):
            version, record = await self._load(match_id, token, seat)
            check_started(record, version)
            if seat in record.forfeited:
                raise _forfeited(record, seat)
            gone = record.away.get(seat)
            if gone is None:
                raise ApiError.of(
                    "seat_not_away", T("Seat {seat} is not played by a bot that took it "
                                       "over: there is nothing to take back.", seat=seat),
                    currentVersion=version,
                )
            claimant = _claimant(record, token, gone)
            if claimant is None:
                raise ApiError.of(
                    "not_your_seat",
                    T("Seat {seat} was not yours: only its former player, its old token or "
                      "the match's app key takes it back.", seat=seat),
                )
            engine = get_engine(record.game)
            state = _over(engine, record, version)
            new_token = seats.new_token()
            active = seat in engine.active_seats(state)
            new_record = absence.reclaim(record, seat, seats.digest(new_token), active,
                                         version + 1, await storage.store_clock.now_ms(),
                                         storage.now())
            entry = LogRecord(seat=None, action={"type": absence.RECLAIMED, "seat": seat})
            if stored := await storage.write(match_id, version, new_record, entry,
                                             before=record):
                return ReclaimSeatResponse(
                    seat=seat, token=None if claimant == "player" else new_token,
                    state=state_of(match_id, version + 1, engine, state, seat, stored,
                                   storage.store_clock.peek_ms()),
                )
            storage.metrics.cas_conflict()
        raise busy()
