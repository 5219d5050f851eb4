"""Reading a match: the caller's view, its legal moves and the log as it may see it."""

from __future__ import annotations

from typing import Any

from service.games import get as get_engine
from service.games.base import Engine, parse_action

from .due import DueSignals
from .models import LegalMoves, LogEntryOut, LogPage, MatchState
from .records import MatchRecord
from .replay import replay
from .storage import MatchStorage
from .views import events_for, seat_of, state_of


class Reads:
    def __init__(self, storage: MatchStorage, due: DueSignals) -> None:
        self.storage = storage
        self.due = due

    async def _position(
        self, match_id: str, token: str | None
    ) -> tuple[int, MatchRecord, int | None, Engine[Any], Any]:
        """Version, record, the caller's seat, the engine and the state of the match; a bot
        whose turn it is gets signalled again (see ``DueSignals``)."""
        version, record = await self.storage.load(match_id)
        seat = seat_of(record, token, required=False)
        engine = get_engine(record.game)
        state = engine.loads(record.state)
        await self.due.signal_if_due(match_id, engine, record, state, read=True)
        return version, record, seat, engine, state

    async def get_state(self, match_id: str, token: str | None) -> MatchState:
        version, record, seat, engine, state = await self._position(match_id, token)
        return state_of(match_id, version, engine, state, seat, record)

    async def legal_moves(self, match_id: str, token: str | None) -> LegalMoves:
        """The caller's legal moves; a spectator (no token) has none."""
        version, _, seat, engine, state = await self._position(match_id, token)
        moves: list[Any] = []
        if seat is not None:
            moves = engine.legal_actions(state, seat)
        return LegalMoves(match_id=match_id, version=version, seat=seat, moves=moves)

    async def log(self, match_id: str, token: str | None, after: int) -> LogPage:
        """The moves after version ``after`` as the caller sees them. The store keeps seat
        and action per version; the events are re-derived by replaying from the seed."""
        version, record = await self.storage.load(match_id)
        seat = seat_of(record, token, required=False)
        engine = get_engine(record.game)
        _, moves = await replay(self.storage, match_id, engine, record, version)
        out = [
            LogEntryOut(
                version=moved,
                seat=logged.seat,
                action=(parse_action(engine, logged.action)
                        if seat is not None and logged.seat == seat else None),
                events=events_for(seat, events),
            )
            for moved, logged, events in moves
            if moved > after
        ]
        return LogPage(match_id=match_id, entries=out, latest_version=version)
