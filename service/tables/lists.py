"""The lobby's two lists per app: waiting public matches (the lobby) and active public ones
(to spectate). Each is a set of indexes of the app's lobby document (``lobby:<app>``; on
Redis Cluster one hash slot): the whole list and one per game, per player count and per
both, so that a filtered page reads one index.

An index is a hint, the match record is the truth. Entries are written *before* the write
they announce (a public match's creation, the write that starts it), so a crash between the
two leaves an entry to a match that is not (yet) what the list shows -- skipped when read,
never a listed match missing. A read keeps only the matches whose records say they belong
(waiting / active, and still public), and drops the entries of matches that can never
belong again (started or cancelled for the lobby; finished, cancelled or gone for both).
So the lists stay right across replicas without any write having to touch them at the end.

Members are ``<10**13 - created ms>.<match id>`` (``service.players.listing.member``):
newest first, immutable, so a cursor (the last member read) stays valid under concurrent
writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from service.errors import ApiError
from service.games import get as get_engine
from service.i18n import T
from service.matches import MatchService
from service.matches.records import MatchRecord
from service.matches.views import holders
from service.players.docs import guard
from service.players.listing import decode_cursor, encode_cursor, member
from service.store import DocStore

from .models import LIST_DEFAULT, LIST_MAX, LiveEntry, LivePage, LobbyEntry, LobbyPage

WAITING = "w"
ACTIVE = "a"
ROUNDS = 4
"""Index pages one list read looks at before answering a short page with a cursor."""


def lobby_key(app: str) -> str:
    return f"lobby:{app}"


def index_names(kind: str, game: str, players: int) -> list[str]:
    """Every index a match of ``game`` for ``players`` seats is listed in."""
    return [kind, f"{kind}:g:{game}", f"{kind}:n:{players}", f"{kind}:gn:{game}:{players}"]


def index_for(kind: str, game: str | None, players: int | None) -> str:
    """The one index a page filtered by ``game`` and/or ``players`` reads."""
    if game is not None and players is not None:
        return f"{kind}:gn:{game}:{players}"
    if game is not None:
        return f"{kind}:g:{game}"
    if players is not None:
        return f"{kind}:n:{players}"
    return kind


def entry_of(record: MatchRecord, match_id: str) -> str:
    return member(record.created * 1000, match_id)


def _limit(limit: int | None) -> int:
    if limit is None:
        return LIST_DEFAULT
    if not 1 <= limit <= LIST_MAX:
        raise ApiError.of("malformed", T("limit must be 1 to {most}.", most=LIST_MAX))
    return limit


def _time(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


class LobbyIndexes:
    def __init__(self, store: DocStore, matches: MatchService) -> None:
        self.store = store
        self.matches = matches

    async def announce(self, kind: str, record: MatchRecord, match_id: str) -> None:
        """List a public match (before the write that makes it belong)."""
        if record.visibility != "public" or record.app is None:
            return
        entry = entry_of(record, match_id)
        for name in index_names(kind, record.game, record.players):
            await guard(self.store.index_add(lobby_key(record.app), name, [entry]))

    async def withdraw(self, kind: str, record: MatchRecord, match_id: str) -> None:
        """Take back the entry ``announce`` wrote for a write that was then refused, so a
        refused creation, join or start leaves no phantom (issue 31 item 9) -- unless the
        match belongs in the list now: another writer's start landed meanwhile (and that
        writer announces again once its write is in, in case this removal came between)."""
        if record.visibility != "public" or record.app is None:
            return
        loaded = await self.matches.load_records([match_id])
        now = loaded[0][1] if loaded and loaded[0] is not None else None
        if now is not None and _belongs(kind, now, record.app):
            return
        await self._drop(record.app, kind, record, [entry_of(record, match_id)])

    async def _drop(self, app: str, kind: str, record: MatchRecord | None,
                    entries: Sequence[str]) -> None:
        if not entries:
            return
        names = ([kind] if record is None
                 else index_names(kind, record.game, record.players))
        for name in names:
            await guard(self.store.index_remove(lobby_key(app), name, list(entries)))

    async def _page(
        self, app: str, kind: str, game: str | None, players: int | None,
        cursor: str | None, limit: int | None,
    ) -> tuple[list[tuple[str, int, MatchRecord]], str | None]:
        size = _limit(limit)
        after = decode_cursor(cursor)
        index = index_for(kind, game, players)
        found: list[tuple[str, int, MatchRecord]] = []
        for _ in range(ROUNDS):
            members = await guard(self.store.index_page(lobby_key(app), index, after=after,
                                                        limit=size))
            ids = [m.partition(".")[2] for m in members]
            loaded = await self.matches.load_records(ids)
            for entry, match_id, item in zip(members, ids, loaded, strict=True):
                after = entry
                record = None if item is None else item[1]
                if record is not None and _belongs(kind, record, app):
                    found.append((match_id, item[0] if item else 0, record))
                elif record is None or _gone(kind, record):
                    await self._drop(app, kind, record, [entry])
                if len(found) >= size:
                    return found, encode_cursor(entry)
            if len(members) < size:
                return found, None
        return found, encode_cursor(after) if after is not None else None

    async def lobby(self, app: str, game: str | None, players: int | None,
                    cursor: str | None, limit: int | None, now: int) -> LobbyPage:
        found, next_cursor = await self._page(app, WAITING, game, players, cursor, limit)
        return LobbyPage(items=[_lobby_entry(m, v, r, now) for m, v, r in found],
                         next_cursor=next_cursor)

    async def live(self, app: str, game: str | None, players: int | None,
                   cursor: str | None, limit: int | None) -> LivePage:
        found, next_cursor = await self._page(app, ACTIVE, game, players, cursor, limit)
        return LivePage(items=[_live_entry(m, v, r) for m, v, r in found],
                        next_cursor=next_cursor)


def _belongs(kind: str, record: MatchRecord, app: str) -> bool:
    if record.visibility != "public" or record.app != app:
        return False
    if kind == WAITING:
        return record.waiting
    return record.started and not record.finished


def _gone(kind: str, record: MatchRecord) -> bool:
    """Whether a match can never be in this list again."""
    if record.cancelled or record.finished or record.visibility != "public":
        return True
    return kind == WAITING and record.started


def _lobby_entry(match_id: str, version: int, record: MatchRecord, now: int) -> LobbyEntry:
    engine = get_engine(record.game)
    return LobbyEntry(
        match_id=match_id, game=record.game, version=version,
        rules_version=engine.rules_versions[-1], players=record.players,
        seats=holders(record), open_seats=record.free_seats(), options=record.options,
        name=record.name, labels=dict(record.labels),
        seed_chosen=record.chosen_seed is not None, created_at=_time(record.created),
        age_seconds=max(now - record.created, 0),
    )


def _live_entry(match_id: str, version: int, record: MatchRecord) -> LiveEntry:
    engine = get_engine(record.game)
    state = engine.loads(record.state)
    return LiveEntry(
        match_id=match_id, game=record.game, version=version,
        rules_version=record.rules_version, players=record.players, seats=holders(record),
        active_seats=sorted(engine.active_seats(state)), options=record.options,
        name=record.name, labels=dict(record.labels), seed_chosen=record.seed_chosen is not False,
        created_at=_time(record.created), updated_at=_time(record.updated),
    )
