"""Seats bound to players: a player leaving for good (its name replaced in the match, also in
a seat a bot holds for it), and a
seat's token renewed -- recovered by its player, or rotated by the match's app.

Each is a compare-and-set with a service log entry (``seat`` null, like a hand-over), so it
is a version of the match like any other: watchers see it, the player feed derives a
``seat_changed`` event from it, and a retry never applies it twice.
"""

from __future__ import annotations

from dataclasses import replace

from service.errors import ApiError
from service.i18n import T
from service.identity import seats
from service.identity.callers import Caller, Credential

from .models import SeatToken
from .play import check_started
from .records import LogRecord, MatchRecord
from .storage import StoredMatches, busy
from .views import hidden, seat_of

MAX_ATTEMPTS = 16


class SeatPlayers:
    def __init__(self, storage: StoredMatches) -> None:
        self.storage = storage

    async def rename_player(self, match_id: str, app: str, player: str, name: str) -> bool:
        """Give ``player``'s seat in the match the name ``name`` (a player who left for
        good); False when the player has no seat there or already has that name."""
        storage = self.storage
        for _ in range(MAX_ATTEMPTS):
            version, record = await storage.load(match_id)
            seat = record.player_seat(app, player)
            if seat is None:
                found = self._rename_away(record, app, player, name)
                if found is None:
                    return False
                seat, new_record = found
                new_record = replace(new_record, updated=storage.now())
            else:
                bound = record.seat_players[seat]
                assert bound is not None
                if bound.name == name:
                    return False
                renamed = list(record.seat_players)
                renamed[seat] = replace(bound, name=name)
                new_record = replace(record, seat_players=tuple(renamed),
                                     updated=storage.now())
            entry = LogRecord(seat=None, action={"type": "seat_renamed", "seat": seat,
                                                 "name": name})
            if await storage.write(match_id, version, new_record, entry, before=record):
                return True
            storage.metrics.cas_conflict()
        raise busy()

    @staticmethod
    def _rename_away(record: MatchRecord, app: str, player: str,
                     name: str) -> tuple[int, MatchRecord] | None:
        """The seat a bot took from ``player`` with the player's name ``name`` in ``away``
        (so that a seat taken back by the match's app key, or a later read, never shows the
        name of a player who left for good); None: no such seat, or it has that name."""
        if app != record.app:
            return None
        for seat, gone in record.away.items():
            if gone.player is None or gone.player.player != player:
                continue
            if gone.player.name == name:
                return None
            away = {**record.away, seat: replace(gone, player=replace(gone.player, name=name))}
            return seat, replace(record, away=away)
        return None

    async def renew_seat_token(
        self, match_id: str, caller: Credential, seat: int | None = None
    ) -> SeatToken:
        """A new token for a seat bound to a player; the old one stops working at once. The
        seat's player renews its own seat (recovering a lost token); the match's app key
        renews any player seat (``seat``). Anonymous seats have no player to recover them:
        their token is their only credential."""
        if not isinstance(caller, Caller):
            raise ApiError.of(
                "unauthorized", "Renewing a seat token needs the seat's player credential or "
                "the match's app key.",
            )
        storage = self.storage
        for _ in range(MAX_ATTEMPTS):
            version, record = await storage.load(match_id)
            own = self._seat(record, caller, seat)
            check_started(record, version)  # a seat's token is made when the match starts
            token = seats.new_token()
            tokens = list(record.tokens)
            tokens[own] = seats.digest(token)
            new_record = replace(record, tokens=tuple(tokens), updated=storage.now())
            entry = LogRecord(seat=None, action={"type": "seat_token_renewed", "seat": own})
            if await storage.write(match_id, version, new_record, entry, before=record):
                return SeatToken(seat=own, token=token)
            storage.metrics.cas_conflict()
        raise busy()

    @staticmethod
    def _seat(record: MatchRecord, caller: Caller, seat: int | None) -> int:
        if caller.is_app:
            if record.app != caller.app:
                if record.visibility == "private":  # answered as a missing match (no oracle)
                    raise hidden()
                raise ApiError.of("forbidden", "The match is not one of this app's.")
            if seat is None or not 0 <= seat < len(record.seat_players):
                raise ApiError.of("forbidden", "Name a seat of the match bound to a player.")
            if record.seat_players[seat] is None:
                raise ApiError.of(
                    "forbidden", T("Seat {seat} is not bound to a player.", seat=seat)
                )
            return seat
        own = seat_of(record, caller, required=True)
        assert own is not None
        if seat is not None and seat != own:
            raise ApiError.of("forbidden", T("Seat {seat} is not yours.", seat=seat))
        return own
