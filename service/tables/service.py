"""``TableService``: matches that wait for players (create, join, leave, start, cancel) and
the lobby's lists, behind one object that REST and GraphQL share.

It composes ``service.players`` (who asks, "my matches") with ``service.matches.waiting``
(the compare-and-set writes) and ``lists.py`` (the lobby indexes), and keeps the
index-first order: a player's "my matches" entry and a public match's list entry are
written before the match write they announce.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from service.errors import ApiError
from service.identity.callers import Caller, Credential
from service.matches import MatchService
from service.matches.models import CreateMatchRequest, CreateMatchResponse, MatchState
from service.matches.records import MatchRecord
from service.matches.waiting import Member, WaitingMatches
from service.players import PlayerService

from .lists import ACTIVE, WAITING, LobbyIndexes
from .models import JoinRequest, LivePage, LobbyPage, StartRequest

BeforeWrite = Callable[[str, MatchRecord], Awaitable[None]]
log = logging.getLogger("skyline.lobby")


class TableService:
    def __init__(self, players: PlayerService, matches: MatchService) -> None:
        self.players = players
        self.matches = matches
        self.waiting = WaitingMatches(matches.storage, matches.due)
        self.lists = LobbyIndexes(players.store, matches)

    async def create_match(
        self, caller: Credential, req: CreateMatchRequest, *,
        before_write: BeforeWrite | None = None, match_id: str | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> CreateMatchResponse:
        """A new match (``PlayerService.create_match``); a public one is listed first: in
        the lobby when it waits for players, in the live matches when it starts at once."""

        announced: list[tuple[str, str, MatchRecord]] = []

        async def listed_first(match_id: str, record: MatchRecord) -> None:
            if before_write is not None:
                await before_write(match_id, record)
            kind = WAITING if record.waiting else ACTIVE
            announced.append((kind, match_id, record))
            await self.lists.announce(kind, record, match_id)

        try:
            return await self.players.create_match(caller, req, before_write=listed_first,
                                                   match_id=match_id, extra=extra)
        except ApiError as error:
            for kind, listed_id, record in announced:
                await self._withdraw(error, kind, record, listed_id)
            raise

    async def join(self, caller: Credential, match_id: str, req: JoinRequest) -> MatchState:
        member = await self.players.member(caller)
        listed = None
        if member.player is not None:
            listed = await self._prepare_join(match_id, member.player)
        return await self._starting(match_id, listed, lambda: self.waiting.join(
            match_id, member, req.seat, invite=req.invite))

    async def _prepare_join(self, match_id: str, player: str) -> MatchRecord | None:
        """Index-first: the player's "my matches" entry, and (a public match whose last
        open seat this join may take) its live-list entry, before the join is written; the
        record a live-list entry was announced for, if one was."""
        _, record = await self.matches.load_record(match_id)
        if not record.waiting:
            return None  # refused by the join itself, with the right code
        await self.players.index_match(player, record.created, match_id)
        if len(record.free_seats()) <= 1:
            await self.lists.announce(ACTIVE, record, match_id)
            return record
        return None

    async def _starting(self, match_id: str, listed: MatchRecord | None,
                        write: Callable[[], Awaitable[MatchState]]) -> MatchState:
        """Run a write that may start a match whose live-list entry was announced for it
        (``listed``): refused, the entry is withdrawn (no phantom in the live list); landed
        and started, announced again (a refused concurrent writer may have withdrawn it
        between this one's announcement and its write)."""
        if listed is None:
            return await write()
        try:
            state = await write()
        except ApiError as error:
            await self._withdraw(error, ACTIVE, listed, match_id)
            raise
        if state.status == "active":
            await self.lists.announce(ACTIVE, listed, match_id)
        return state

    async def _withdraw(self, error: ApiError, kind: str, record: MatchRecord,
                        match_id: str) -> None:
        """After ``error``: withdraw the entry when the write was refused (4xx: nothing was
        written); a 5xx may have landed (outcome unknown): the entry stays, and a read skips
        it if the match does not belong."""
        if error.status >= 500:
            return
        try:
            await self.lists.withdraw(kind, record, match_id)
        except ApiError as failed:  # the refusal is the answer; a read skips the entry
            log.warning("match %s: could not withdraw its %s list entry (%s)", match_id,
                        kind, failed.code)

    async def leave(self, caller: Credential, match_id: str) -> MatchState:
        return await self.waiting.leave(match_id, await self.players.member(caller))

    async def start(self, caller: Credential, match_id: str, req: StartRequest) -> MatchState:
        member = await self.players.member(caller)
        _, record = await self.matches.load_record(match_id)
        listed = None
        if record.waiting and _may_start(record, member):
            await self.lists.announce(ACTIVE, record, match_id)
            listed = record
        return await self._starting(match_id, listed,
                                    lambda: self.waiting.start(match_id, member, req.bot))

    async def cancel(self, caller: Credential, match_id: str) -> MatchState:
        return await self.waiting.cancel(match_id, await self.players.member(caller))

    async def lobby(
        self, caller: Credential, *, game: str | None, players: int | None,
        cursor: str | None, limit: int | None,
    ) -> LobbyPage:
        return await self.lists.lobby(_app_of(caller), game, players, cursor, limit,
                                      self.matches.storage.now())

    async def live(
        self, caller: Credential, *, game: str | None, players: int | None,
        cursor: str | None, limit: int | None,
    ) -> LivePage:
        return await self.lists.live(_app_of(caller), game, players, cursor, limit)


def _may_start(record: MatchRecord, member: Member) -> bool:
    if record.app != member.app:
        return False
    if record.creator is not None:
        return member.player == record.creator
    return member.player is None


def _app_of(caller: Credential) -> str:
    """The app whose lists the caller reads: a player's or an app key's own."""
    if not isinstance(caller, Caller):
        raise ApiError.of("unauthorized", "The lobby is per app: this needs a player "
                          "credential or an app key.")
    return caller.app
