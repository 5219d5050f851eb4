"""Matches that wait for players: joining, leaving, starting early and cancelling.

A match created with open seats is stored without a game (``MatchRecord.phase ==
"waiting"``). Every change to it is a compare-and-set of the record with a log entry of its
own (seat null, like a hand-over): ``player_joined``, ``player_left``, ``match_started``,
``match_cancelled``. The write that fills the last open seat -- a join (``"starts": true``)
or the creator's early start (open seats to bots) -- also sets the game up: the seed is
drawn (or the allowed chosen one taken), the rules version fixed, the seed commitment
published, all in that same compare-and-set. So two players racing for one seat cannot both
sit, and a match is never started twice.

Callers are named by ``(app, player, name)``: identities live in ``service.players``; this
module only checks what the record says.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from service.errors import ApiError
from service.games import get as get_engine
from service.games.base import Engine
from service.i18n import T
from service.identity import seats

from . import invites, seeds
from .bot_seats import bot_seats
from .due import DueSignals
from .models import MatchState
from .records import LogRecord, MatchRecord, SeatPlayer
from .storage import StoredMatches, busy
from .views import hidden, no_seat, state_of

MAX_ATTEMPTS = 64
"""Compare-and-set attempts of one lobby write (50 players racing: each lost attempt means
another player's write landed)."""
DEFAULT_START_BOT = "greedy"


@dataclass(frozen=True, slots=True)
class Member:
    """Who asks: a player of ``app`` (``player`` and its display ``name``), or the app's key
    itself (``player`` None)."""

    app: str
    player: str | None
    name: str = ""


def set_up(engine: Engine[Any], record: MatchRecord, version: int, now: int) -> MatchRecord:
    """``record`` with its game set up as of ``version`` (the start's own version): the seed
    drawn (or the chosen one), a seat token per human seat (nobody is shown one: the players'
    own credentials act for them), the state, the rules version fixed."""
    salt: bytes | None = None
    if record.chosen_seed is not None:
        seed = record.chosen_seed
    else:
        seed, salt = seeds.draw()
    state = engine.setup(record.players, _options(engine, record), seed)
    return replace(
        record,
        phase="active",
        seed=seed,
        seed_salt=salt,
        seed_chosen=salt is None,
        chosen_seed=None,
        state=engine.dumps(state),
        finished=engine.result(state) is not None,
        rules_version=engine.rules_version(state),
        tokens=tuple(None if s in record.bots else seats.digest(seats.new_token())
                     for s in range(record.players)),
        start_version=version,
        updated=now,
    )


def _options(engine: Engine[Any], record: MatchRecord) -> Any:
    return engine.Options.model_validate(record.options) if record.options else None


def _cancelled() -> ApiError:
    return ApiError.of("match_cancelled", "This match was cancelled.")


def _started() -> ApiError:
    return ApiError.of("match_started", "This match has started: its seats are no longer "
                       "open.")


def _filled(record: MatchRecord) -> bool:
    """Whether a started match started because players took every open seat (not early)."""
    return all(seat not in record.bots for seat in record.open_seats)


class WaitingMatches:
    def __init__(self, storage: StoredMatches, due: DueSignals) -> None:
        self.storage = storage
        self.due = due

    async def join(
        self, match_id: str, member: Member, seat: int | None = None, *,
        invite: str | None = None,
    ) -> MatchState:
        """``member`` takes ``seat`` (None: the lowest open one it may take). 409
        ``seat_taken`` when it is taken (or the match filled meanwhile), ``already_seated``,
        ``match_started``, ``match_cancelled``. ``invite``: a seat code or the player's
        invitation id (``invites.py``), used in the same compare-and-set (a private match is
        joined only so; without one it answers as a missing match; 404/410 for an invitation
        that is unknown or spent). A seat reserved for another player (a rematch) is taken."""
        if member.player is None:
            raise ApiError.of("forbidden", "Joining needs a player credential (a player token "
                              "or an app's JWT), not an app key.")
        for _ in range(MAX_ATTEMPTS):
            version, record = await self.storage.load(match_id)
            if record.app != member.app:
                raise hidden() if invite is None else invites.not_found()
            seated = record.player_seat(member.app, member.player)
            now = self.storage.now()
            grant = (invites.usable(record, invite, member.player, now)
                     if invite is not None and seated is None and record.waiting else None)
            if record.visibility == "private" and grant is None and seated is None:
                if invite is not None and not record.waiting:
                    raise _too_late(record, invite, member.player, seat)
                raise hidden()
            if record.cancelled:
                raise _cancelled()
            if seated is not None:
                raise ApiError.of("already_seated", "You already sit in this match.")
            if record.started:
                if _filled(record):  # players took every seat: it is full
                    raise _taken(seat)
                raise _started()
            wanted = grant.seat if grant is not None and grant.seat is not None else seat
            if seat is not None and wanted != seat:
                raise ApiError.of("malformed", T("This invitation is to seat {seat}.",
                                                 seat=wanted))
            free = record.free_for(member.player)
            if wanted is None:
                if not free:
                    raise _taken(None)
                taking = free[0]
            elif wanted not in free:
                if not 0 <= wanted < record.players:
                    raise ApiError.of("malformed", T("seat must be 0 to {last}.",
                                                     last=record.players - 1))
                raise _taken(wanted)
            else:
                taking = wanted
            players = list(record.seat_players)
            players[taking] = SeatPlayer(member.player, member.name)
            new_record = replace(
                record, seat_players=tuple(players), updated=now,
                invites=invites.used(record, grant) if grant is not None else record.invites,
                reserved={s: p for s, p in record.reserved.items() if s != taking},
            )
            action: dict[str, Any] = {"type": "player_joined", "seat": taking,
                                      "player": member.player, "name": member.name}
            engine = get_engine(record.game)
            if len(record.free_seats()) == 1:
                new_record = set_up(engine, new_record, version + 1, now)
                action["starts"] = True
            if stored := await self._write(match_id, version, record, new_record, action):
                return await self._answer(match_id, version + 1, engine, stored, taking)
        raise busy()

    async def leave(self, match_id: str, member: Member) -> MatchState:
        """``member`` leaves a waiting match: its seat opens again; its creator leaving
        cancels the match (``creator_left``)."""
        for _ in range(MAX_ATTEMPTS):
            version, record = await self.storage.load(match_id)
            own = (None if member.player is None
                   else record.player_seat(member.app, member.player))
            if own is None:
                if record.visibility == "private" or record.app != member.app:
                    raise hidden()
                raise no_seat()
            if record.cancelled:
                raise _cancelled()
            if record.started:
                raise ApiError.of(
                    "match_started", "This match has started: a seat of a started match is "
                    "left by handing it to a bot (POST /v1/matches/{matchId}/seats/{seat}/bot)."
                )
            now = self.storage.now()
            action: dict[str, Any]
            if member.player == record.creator:
                new_record = replace(record, phase="cancelled", cancel_reason="creator_left",
                                     updated=now)
                action = {"type": "match_cancelled", "reason": "creator_left", "seat": own}
            else:
                players = list(record.seat_players)
                players[own] = None
                opened = tuple(sorted({*record.open_seats, own}))
                new_record = replace(record, seat_players=tuple(players), open_seats=opened,
                                     updated=now)
                action = {"type": "player_left", "seat": own}
            engine = get_engine(record.game)
            if stored := await self._write(match_id, version, record, new_record, action):
                return await self._answer(match_id, version + 1, engine, stored, None)
        raise busy()

    async def start(self, match_id: str, member: Member, bot: str | None = None) -> MatchState:
        """The creator starts a waiting match now: its open seats go to ``bot`` bots
        (default ``greedy``, ``random`` where the game has no other)."""
        for _ in range(MAX_ATTEMPTS):
            version, record = await self.storage.load(match_id)
            self._check_creator(record, member)
            if record.cancelled:
                raise _cancelled()
            if record.started:
                raise _started()
            engine = get_engine(record.game)
            kind = bot or DEFAULT_START_BOT
            free = record.free_seats()
            wanted = {str(s): k for s, k in record.bots.items()}
            for seat in free:
                wanted[str(seat)] = kind
            try:
                bots = bot_seats(engine, record.players, wanted, all_bots=True)
            except ApiError:
                if bot is not None:
                    raise
                bots = bot_seats(engine, record.players,
                                 {**wanted, **{str(s): "random" for s in free}}, all_bots=True)
            now = self.storage.now()
            players = tuple(None if s in bots else p for s, p in enumerate(record.seat_players))
            new_record = set_up(engine, replace(record, bots=bots, seat_players=players),
                                version + 1, now)
            action = {"type": "match_started",
                      "bots": {str(s): bots[s] for s in free}}
            if stored := await self._write(match_id, version, record, new_record, action):
                return await self._answer(match_id, version + 1, engine, stored, None)
        raise busy()

    async def cancel(self, match_id: str, member: Member) -> MatchState:
        """The creator cancels a waiting match (``match_cancelled``, reason ``creator``)."""
        for _ in range(MAX_ATTEMPTS):
            version, record = await self.storage.load(match_id)
            self._check_creator(record, member)
            if record.cancelled:
                raise _cancelled()
            if record.started:
                raise _started()
            new_record = replace(record, phase="cancelled", cancel_reason="creator",
                                 updated=self.storage.now())
            action = {"type": "match_cancelled", "reason": "creator"}
            engine = get_engine(record.game)
            if stored := await self._write(match_id, version, record, new_record, action):
                return await self._answer(match_id, version + 1, engine, stored, None)
        raise busy()

    @staticmethod
    def _check_creator(record: MatchRecord, member: Member) -> None:
        """Only the creator (a player), or the app's key for a match an app key created,
        may start or cancel; others that may read the match get 403, others 404."""
        if record.app != member.app:
            raise hidden()
        is_creator = (member.player == record.creator if record.creator is not None
                      else member.player is None)
        if is_creator:
            return
        if (record.visibility == "private" and member.player is not None
                and record.player_seat(member.app, member.player) is None):
            raise hidden()
        raise ApiError.of("forbidden", "Only the match's creator may do this.")

    async def _write(self, match_id: str, version: int, before: MatchRecord,
                     after: MatchRecord, action: dict[str, Any]) -> MatchRecord | None:
        entry = LogRecord(seat=None, action=action)
        landed = await self.storage.write(match_id, version, after, entry, before=before)
        if not landed:
            self.storage.metrics.cas_conflict()
        return landed

    async def _answer(self, match_id: str, version: int, engine: Engine[Any],
                      record: MatchRecord, seat: int | None) -> MatchState:
        state = engine.loads(record.state) if record.started else None
        if state is not None:
            await self.due.signal_if_due(match_id, engine, record, state)
        return state_of(match_id, version, engine, state, seat, record,
                        self.storage.store_clock.peek_ms())


def _too_late(record: MatchRecord, invite: str, player: str, seat: int | None) -> ApiError:
    """A private match that waits no more, joined with an invitation: one of its own (the
    caller was invited) learns why -- 409 ``seat_taken`` when players filled it,
    ``match_started`` / ``match_cancelled`` otherwise; any other code is 404
    ``invite_not_found``, as for a match that does not exist."""
    try:
        invites.find(record, invite, player)
    except ApiError:
        return invites.not_found()
    if record.cancelled:
        return _cancelled()
    return _taken(seat) if _filled(record) else _started()


def _taken(seat: int | None) -> ApiError:
    if seat is None:
        return ApiError.of("seat_taken", "Every seat of this match is taken.")
    return ApiError.of("seat_taken", T("Seat {seat} is taken.", seat=seat))
