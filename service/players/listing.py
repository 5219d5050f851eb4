"""A player's matches ("my matches"): the player's index in the store, newest created first,
read a page at a time, each match read from its own record (the truth: its status, whose
turn it is, its version).

Index members are ``<10**13 - created ms, 13 digits>.<match id>``: immutable, so a cursor --
the last member of a page -- stays valid under any concurrent write, and paging never repeats
or skips a match (a match created meanwhile sorts before the cursor). The index entry is
written before the match itself (``matches.create``): an entry whose match does not exist
(a replica died between the two writes, or the match expired) is skipped, never shown.

The index is a player's history: an entry is never taken out. Every match the player ever
held a seat in is listed, with how it holds it now (``MyMatch.seat_status``, from the
record: its bound seat, or ``away``/``resigned``/``forfeited`` from the seat a bot took,
``MatchRecord.seat_history``); a seat left while the match waited for players is not
listed. A page filtered by status or turn reads on through the index (at most ``SCAN_MAX``
entries) until it is full, so that paging a long history of finished matches takes few
requests.
"""

from __future__ import annotations

import base64
import binascii
import re
from datetime import UTC, datetime

from service.errors import ApiError
from service.games import get as get_engine
from service.i18n import T
from service.matches import MatchService, seeds
from service.matches.records import MatchRecord
from service.matches.views import holders
from service.store import DocStore

from .apps import match_url
from .docs import guard
from .models import MY_MATCHES_MAX, MyMatch, MyMatchesPage
from .records import MATCHES_INDEX, AppRecord, player_key

SCAN_MAX = 1000
"""The most index entries one page reads (a filtered page that found fewer than ``limit``
matches by then ends there, with a cursor to go on)."""
BATCH = 100
"""Index entries read (and their matches loaded) per round of a filtered page."""

MEMBER = re.compile(r"^[0-9]{13}\.[A-Za-z0-9_-]{1,64}$")
EPOCH_MS = 10**13


def member(created_ms: int, match_id: str) -> str:
    return f"{EPOCH_MS - created_ms:013d}.{match_id}"


def encode_cursor(last: str) -> str:
    return base64.urlsafe_b64encode(last.encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None) -> str | None:
    if cursor is None or cursor == "":
        return None
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raw = ""
    if not MEMBER.match(raw):
        raise ApiError.of("malformed", "cursor is not one this server gave.")
    return raw


def check_limit(limit: int | None) -> int:
    if limit is None:
        return 20
    if not 1 <= limit <= MY_MATCHES_MAX:
        raise ApiError.of("malformed", T("limit must be 1 to {most}.", most=MY_MATCHES_MAX))
    return limit


def _time(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


class Listing:
    def __init__(self, store: DocStore, matches: MatchService) -> None:
        self.store = store
        self.matches = matches

    async def page(
        self, app: AppRecord, player: str, *, status: str | None, mine: bool,
        cursor: str | None, limit: int | None,
    ) -> MyMatchesPage:
        if status not in (None, "waiting", "active", "finished", "cancelled"):
            raise ApiError.of("malformed",
                              "status must be waiting, active, finished or cancelled.")
        size = check_limit(limit)
        after = decode_cursor(cursor)
        filtered = status is not None or mine
        items: list[MyMatch] = []
        scanned = 0
        while True:
            batch = min(BATCH if filtered else size, SCAN_MAX - scanned)
            members = await guard(
                self.store.index_page(player_key(player), MATCHES_INDEX, after=after,
                                      limit=batch)
            )
            ids = [m.partition(".")[2] for m in members]
            loaded = await self.matches.load_records(ids)
            for entry, match_id, found in zip(members, ids, loaded, strict=True):
                scanned += 1
                after = entry
                if found is None:
                    continue
                item = self._item(app, player, match_id, *found, status=status, mine=mine)
                if item is None:
                    continue
                items.append(item)
                if len(items) == size:
                    return MyMatchesPage(items=items, next_cursor=encode_cursor(entry))
            if len(members) < batch:
                return MyMatchesPage(items=items, next_cursor=None)
            if scanned >= SCAN_MAX:
                assert after is not None
                return MyMatchesPage(items=items, next_cursor=encode_cursor(after))

    @staticmethod
    def _item(
        app: AppRecord, player: str, match_id: str, version: int, record: MatchRecord,
        *, status: str | None = None, mine: bool = False,
    ) -> MyMatch | None:
        """The item of a match for ``player``; None when it is not the player's or does not
        pass the filters (checked before the item is built)."""
        held = record.seat_history(app.id, player)
        if held is None:
            return None  # never this player's (or left while the match waited)
        seat, seat_status = held
        if status is not None and (record.phase != status if not record.started
                                   else status not in ("active", "finished")):
            return None
        active: list[int] = []
        if not record.started:
            current = record.phase
        elif record.finished:
            current = "finished"
        else:
            engine = get_engine(record.game)
            state = engine.loads(record.state)
            finished = engine.result(state) is not None
            active = [] if finished else sorted(engine.active_seats(state))
            current = "finished" if finished else "active"
        your_turn = seat_status == "playing" and seat in active
        if (status is not None and current != status) or (mine and not your_turn):
            return None
        return MyMatch(
            match_id=match_id, game=record.game,
            status=current, seat=seat, seat_status=seat_status,
            visibility=record.visibility, name=record.name,
            labels=dict(record.labels),
            players=holders(record), active_seats=active,
            your_turn=your_turn,
            version=version, created_at=_time(record.created), updated_at=_time(record.updated),
            url=match_url(app, match_id), seed_chosen=seeds.chosen(record),
        )
