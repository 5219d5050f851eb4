"""Reading a match: the caller's view, its legal moves and the log as it may see it."""

from __future__ import annotations

from typing import Any

from service import texts
from service.errors import ApiError
from service.games import get as get_engine
from service.games.base import Engine, parse_action
from service.i18n import DEFAULT_LANGUAGE, Lang, T
from service.identity.callers import Credential

from .due import DueSignals
from .models import LOG_PAGE_MAX, LegalMoves, LogEntryOut, LogPage, MatchState
from .play import game_state
from .records import MatchRecord
from .replay import Replayed, moves_between
from .storage import StoredMatches
from .views import events_for, holders, seat_of, state_of


class Reads:
    def __init__(self, storage: StoredMatches, due: DueSignals) -> None:
        self.storage = storage
        self.due = due

    async def _position(
        self, match_id: str, token: Credential
    ) -> tuple[int, MatchRecord, int | None, Engine[Any], Any]:
        """Version, record, the caller's seat, the engine and the state of the match; a bot
        whose turn it is gets signalled again (see ``DueSignals``)."""
        version, record = await self.storage.load(match_id)
        seat = seat_of(record, token, required=False)
        engine = get_engine(record.game)
        state = game_state(engine, record)
        if state is not None:
            await self.due.signal_if_due(match_id, engine, record, state, read=True)
        return version, record, seat, engine, state

    async def get_state(self, match_id: str, token: Credential) -> MatchState:
        """The match as the caller sees it (no texts: its views need none)."""
        version, record, seat, engine, state = await self._position(match_id, token)
        return state_of(match_id, version, engine, state, seat, record,
                        self.storage.store_clock.peek_ms())

    async def head(self, match_id: str, token: Credential) -> tuple[int, bool]:
        """The match's version and whether it is finished, with ``get_state``'s checks (404,
        401) and signals, but nothing rendered: what an event stream needs to start."""
        version, record, _, _, _ = await self._position(match_id, token)
        return version, record.finished

    async def seated(self, match_id: str, token: Credential) -> tuple[int, MatchRecord]:
        """The match's version and record once ``token`` is known to hold a seat in it (404
        ``match_not_found``, 401 ``unauthorized``, 403 ``forbidden`` otherwise): a write
        checks its credential with this before it reads the request's body, so that no
        body of a caller without a seat is ever parsed. ``act(loaded=)`` takes the answer
        as its first read."""
        version, record = await self.storage.load(match_id)
        seat_of(record, token, required=True)
        return version, record

    async def legal_moves(
        self, match_id: str, token: Credential, lang: Lang = DEFAULT_LANGUAGE
    ) -> LegalMoves:
        """The caller's legal moves, each with its sentence in ``lang``; a spectator (no
        token) has none."""
        version, _, seat, engine, state = await self._position(match_id, token)
        moves: list[Any] = []
        said: list[str] = []
        if seat is not None and state is not None:
            moves = engine.legal_actions(state, seat)
            if moves:
                said = texts.move_texts(engine.id, moves, engine.view(state, seat), lang)
        return LegalMoves(match_id=match_id, version=version, seat=seat, moves=moves,
                          texts=said)

    async def log(
        self, match_id: str, token: Credential, after: int, lang: Lang = DEFAULT_LANGUAGE,
        *, limit: int | None = None,
    ) -> LogPage:
        """Up to ``limit`` (1 to ``LOG_PAGE_MAX``) moves after version ``after`` as the caller
        sees them, the events' sentences in ``lang``; ``nextAfter`` says where the next page
        starts. The store keeps seat and action per version; the events are re-derived by
        replaying from the newest checkpoint at or before ``after`` (``replay.py``), so a page
        costs at most ``CHECKPOINT_EVERY - 1 + limit`` replayed moves. The transports always
        pass a limit (``LOG_PAGE_MAX`` by default); None, the whole rest of the log in one
        page, is for callers in the process (tools, tests). Each entry shows the caller's
        own moves; once the match is finished, every seat's move to everyone (the revealed
        seed tells every draw then: the moves let anyone replay the match and check it)."""
        if limit is not None and not 1 <= limit <= LOG_PAGE_MAX:
            raise ApiError.of(
                "malformed", T("limit must be 1 to {most}.", most=LOG_PAGE_MAX)
            )
        version, record = await self.storage.load(match_id)
        seat = seat_of(record, token, required=False)
        engine = get_engine(record.game)
        after = max(after, 0)
        upto = version if limit is None else min(version, after + limit)
        moves: Replayed = []
        if after < version:
            _, moves = await moves_between(self.storage, match_id, engine, record, after, upto)
        state = game_state(engine, record)
        view = engine.view(state, seat) if state is not None else None
        out = [
            LogEntryOut(
                version=moved,
                seat=logged.seat,
                action=(parse_action(engine, logged.action)
                        if logged.seat is not None
                        and (record.finished or (seat is not None and logged.seat == seat))
                        else None),
                events=events_for(seat, events, engine.id, lang=lang, view=view),
            )
            for moved, logged, events in moves
        ]
        return LogPage(match_id=match_id, entries=out, latest_version=version,
                       next_after=upto if upto < version else None, players=holders(record))
