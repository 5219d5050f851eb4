"""``Rematch``: a finished match's rematch -- a waiting match with the same game, options,
visibility, name and labels, the seat order rotated (the former seat 1 moves first), bots
re-seated, the caller seated and every other human seat offered to its former player
(reserved for it: ``rematch_offered`` in its feed; it takes the seat through ``join``).

Linked both ways (``rematchOf``, ``rematch``) without a cross-key transaction: the rematch's
id is derived from the finished match's, so every caller (and a retry after a crash) names
the same one -- created once (a second creation finds it: ``MatchExists``), then the
finished match's record gets the link by a compare-and-set of its own. A second call, by
anyone, answers the same rematch.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
from typing import Any

from service.errors import ApiError
from service.identity.callers import Credential
from service.matches.models import CreateMatchRequest, MatchState
from service.matches.records import LogRecord, MatchRecord
from service.matches.storage import busy
from service.matches.views import hidden, no_seat
from service.store import MatchExists

from .service import TableService

MAX_ATTEMPTS = 16


def rematch_id(match_id: str) -> str:
    """The id of ``match_id``'s rematch (16 url-safe characters, like every match id)."""
    raw = hashlib.sha256(f"rematch\x1f{match_id}".encode()).digest()[:12]
    return base64.urlsafe_b64encode(raw).decode().replace("-", "x")


def rotated(record: MatchRecord) -> list[int]:
    """New seat -> the old seat it takes over (the old seat 1 moves first)."""
    return [(seat + 1) % record.players for seat in range(record.players)]


class Rematch:
    def __init__(self, tables: TableService) -> None:
        self.tables = tables
        self.storage = tables.matches.storage

    async def rematch(self, caller: Credential, match_id: str) -> MatchState:
        who = await self.tables.players.member(caller)
        _, old = await self.storage.load(match_id)
        if old.app != who.app:
            raise hidden()
        own = (None if who.player is None
               else old.player_seat(who.app, who.player))
        if who.player is not None and own is None:
            if old.visibility == "private":
                raise hidden()
            raise no_seat()
        if not old.started or not old.finished:
            raise ApiError.of("match_not_finished", "A rematch follows a finished match.")
        new_id = old.rematch or rematch_id(match_id)
        if old.rematch is None:
            await self._create(caller, who.player, match_id, old, new_id)
            await self._link(match_id, new_id)
        return await self.tables.matches.get_state(new_id, caller)

    async def _create(self, caller: Credential, player: str | None, match_id: str,
                      old: MatchRecord, new_id: str) -> None:
        seats: list[dict[str, Any]] = []
        reserved: dict[int, str] = {}
        for seat, former in enumerate(rotated(old)):
            kind = old.bots.get(former)
            holder = old.holder(former)
            if kind is not None and holder is None:
                seats.append({"bot": kind})
            elif holder is not None and holder.player == player:
                seats.append({"player": "me"})
            else:
                seats.append({"open": True})
                if holder is not None:
                    reserved[seat] = holder.player
        body: dict[str, Any] = {"game": old.game, "seats": seats,
                                "visibility": old.visibility}
        if old.options is not None:
            body["options"] = old.options
        if old.name is not None:
            body["name"] = old.name
        if old.labels:
            body["labels"] = old.labels
        request = CreateMatchRequest.model_validate(body)
        # MatchExists: another caller (or this one, before a crash) created it.
        with contextlib.suppress(MatchExists):
            await self.tables.create_match(
                caller, request, match_id=new_id,
                extra={"rematch_of": match_id, "reserved": reserved,
                       # The same time control and policy as the match it follows.
                       "time_control": old.time_control, "on_timeout": old.on_timeout})

    async def _link(self, match_id: str, new_id: str) -> None:
        from dataclasses import replace

        for _ in range(MAX_ATTEMPTS):
            version, old = await self.storage.load(match_id)
            if old.rematch is not None:
                return
            linked = replace(old, rematch=new_id, updated=self.storage.now())
            entry = LogRecord(seat=None, action={"type": "rematch", "matchId": new_id})
            if await self.storage.write(match_id, version, linked, entry, before=old):
                return
        raise busy()
