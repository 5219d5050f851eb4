"""Idle guests expire (issue 31, item 6): a guest is free to mint, so one left behind must not
keep a credential, quotas and a name forever.

Each new guest is put in the store schedule ``guests``, due ``ttl`` after its creation. When
it comes due (``GuestWorker`` claims it, leased: a worker that dies leaves it to another),
``GuestExpiry.judge`` decides, from the guest's record and its "my matches" index:

- idle less than ``ttl`` (idle since its creation or the newest match it sat down in): due
  again ``ttl`` after that;
- a match of its still unfinished: looked at again ``ttl`` later (never expired mid-game);
- a finished match against another person (a seat not a bot's besides its own): a history
  worth keeping -- it never expires (out of the schedule). The service keeps no ratings or
  tournament entries; a guest with those would be kept the same way;
- otherwise it leaves for good as ``DELETE /v1/me`` would: its seats renamed, its token
  revoked (``PlayerService._delete``), then out of the schedule.

Each step is a compare-and-set of its own and safe to repeat; ``schedule_settle`` only moves
a member this claim still holds.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

from service.matches.records import MatchRecord
from service.store import DocStore, Schedules

from .directory import Directory
from .docs import guard
from .records import MATCHES_INDEX, PlayerRecord, player_key

GUESTS = "guests"
"""The store schedule of guests to look at."""
DEFAULT_GUEST_TTL = 30 * 24 * 3600.0
"""Seconds a guest may stay idle before it expires (``--guest-ttl``; 0: never)."""
PAGE = 100
MAX_PAGES = 20
"""Matches of a guest looked at (newest first): beyond 2,000 it is kept."""
_INDEX_BASE = 10**13

Outcome = Literal["gone", "later", "kept", "expired"]


def created_ms_of(entry: str) -> int:
    """When the match of a "my matches" member was created (``<10**13 - ms>.<id>``)."""
    head = entry.partition(".")[0]
    return _INDEX_BASE - int(head) if head.isascii() and head.isdigit() else 0


def worth_keeping(record: MatchRecord) -> bool:
    """A finished match against another person (not only bots). A seat a bot took over (a
    hand-over, a timeout, a resignation: ``away``) was a person's: it counts as one."""
    born_bots = sum(1 for seat in record.bots if seat not in record.away)
    return record.finished and not record.cancelled and record.players - born_bots >= 2


@dataclass
class GuestExpiry:
    store: DocStore
    schedules: Schedules
    directory: Directory
    load_many: Callable[[list[str]], Awaitable[list[MatchRecord | None]]]
    leave: Callable[[PlayerRecord], Awaitable[object]]
    """The guest leaves for good (``PlayerService._delete``)."""
    ttl: float = DEFAULT_GUEST_TTL

    @property
    def ttl_ms(self) -> int:
        return int(self.ttl * 1000)

    async def scheduled(self, player: PlayerRecord) -> None:
        """Put a new guest in the schedule (nothing when guests never expire)."""
        if self.ttl > 0:
            await guard(self.schedules.schedule_lower(
                GUESTS, player.id, player.created * 1000 + self.ttl_ms))

    async def judge(self, player_id: str, claimed_ms: int, now_ms: int) -> Outcome:
        """Decide about one claimed guest (see the module docstring)."""
        player = await self.directory.get(player_id)
        if player is None or player.deleted or player.token is None or self.ttl <= 0:
            await self._settle(player_id, claimed_ms, None)
            return "gone"
        entries: list[str] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            page = await guard(self.store.index_page(
                player_key(player.id), MATCHES_INDEX, after=cursor, limit=PAGE))
            entries += page
            if len(page) < PAGE:
                break
            cursor = page[-1]
        else:
            await self._settle(player_id, claimed_ms, None)  # a long history: kept
            return "kept"
        idle_since = max([player.created * 1000, *(created_ms_of(e) for e in entries)])
        if now_ms < idle_since + self.ttl_ms:
            await self._settle(player_id, claimed_ms, idle_since + self.ttl_ms)
            return "later"
        records = await self.load_many([e.partition(".")[2] for e in entries])
        if any(r is not None and not (r.finished or r.cancelled) for r in records):
            await self._settle(player_id, claimed_ms, now_ms + self.ttl_ms)
            return "later"
        if any(r is not None and worth_keeping(r) for r in records):
            await self._settle(player_id, claimed_ms, None)
            return "kept"
        await self.leave(player)
        await self._settle(player_id, claimed_ms, None)
        return "expired"

    async def _settle(self, player_id: str, claimed_ms: int, at_ms: int | None) -> None:
        await guard(self.schedules.schedule_settle(GUESTS, player_id, claimed_ms, at_ms))
