"""Events waiting to be delivered, and the delivery log.

Each delivery -- one event for one endpoint -- is a *message*: a document ``whmsg:<id>``
(its body, fixed once, and how many attempts were made) and a member of its endpoint's
*lane*, the store schedule ``whq:<endpoint id>``, due at its next attempt. Its id ``msg_…``
is derived from the app, endpoint, match, version, kind and seat, so two replicas deriving
the same event store the very same bytes (``put_doc(key, 0, data)`` is idempotent on equal
bytes) and schedule it once. The schedule ``whlanes`` holds one member per lane with
something in it (``<app id>:<endpoint id>``), due no later than the lane's earliest message:
the workers take turns among lanes there (a lane served goes behind every lane that waited
longer), then claim a few messages of each lane with a lease (a worker that dies leaves them
to another once the lease runs out), count the attempt on the document by compare-and-set
(two workers never make the same attempt), send, and settle the member: removed once
delivered or given up, else due again after a backoff. Messages are independent: no event,
match or endpoint waits behind another, and no app's backlog delays another app.

Keeping ``whlanes`` true without a transaction over two keys: whoever adds to a lane (a new
message, a retry) lowers the lane's entry *after* writing the lane (``schedule_lower`` only
moves a time earlier, so it can never hide anything); a worker that moves an entry later or
removes it (``settle_lane``) does so by compare-and-set on its claim, then reads the lane
again and lowers the entry if something earlier arrived meanwhile. Either the adder's lower
comes after the worker's write, or the worker's second read sees the addition. A new message
lowers the entry before it is added too, so that a process that dies between the two writes
leaves it in a lane the workers will look at. (A process that dies between storing a
message's document and scheduling it leaves the document unscheduled, as before lanes: the
events of a version are derived once, by the process that wrote it, after the write.)

The log of attempts is a feed per endpoint (``whlog:<endpoint id>``), the newest
``LOG_KEEP`` attempts at least and those of the last ``LOG_KEEP_SECONDS``, read newest
first.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import asdict, dataclass, replace
from typing import Any

from service.errors import ApiError
from service.players.docs import guard
from service.store import DocStore
from service.store.base import Schedules

LANES = "whlanes"
"""The schedule of lanes (module doc)."""
LEGACY_SCHEDULE = "webhooks"
"""Where builds before lanes scheduled every message (one schedule): what is left there is
moved to its lane (``adopt_legacy``)."""
LOG_KEEP = 1000
LOG_KEEP_SECONDS = 3 * 86400.0
LOG_SOURCE = "attempts"
MAX_APPEND_TRIES = 8


def message_key(msg_id: str) -> str:
    return f"whmsg:{msg_id}"


def log_key(endpoint_id: str) -> str:
    return f"whlog:{endpoint_id}"


def lane_key(endpoint_id: str) -> str:
    return f"whq:{endpoint_id}"


def lane_member(app_id: str, endpoint_id: str) -> str:
    return f"{app_id}:{endpoint_id}"


def lane_of(member: str) -> tuple[str, str]:
    """``lane_member``'s (app id, endpoint id)."""
    app, _, endpoint = member.rpartition(":")
    return app, endpoint


def message_id(*parts: object) -> str:
    """``msg_`` and 26 characters of a hash of ``parts``: stable for the same event."""
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=16).digest()
    return "msg_" + base64.b32encode(digest).decode().rstrip("=").lower()


@dataclass(frozen=True, slots=True)
class Check:
    """What must still hold when a ``timeout_soon`` warning is due: the seat is active
    with the same deadline (the same activation)."""

    match_id: str
    seat: int
    deadline: int


@dataclass(frozen=True, slots=True)
class Message:
    id: str
    app: str
    endpoint: str
    type: str
    body: str
    """The JSON body sent, exactly (the same on every attempt)."""
    due: int
    """When it was first due (ms, store clock): retries end ``retry window`` after it."""
    check: Check | None = None
    attempts: int = 0
    done: str | None = None
    """``delivered``, ``failed``, ``stale`` (a warning no longer true) or ``dropped`` (its
    endpoint deleted or disabled); None while it is to be sent."""

    def encode(self) -> bytes:
        raw = asdict(self)
        return json.dumps(raw, separators=(",", ":"), sort_keys=True).encode()

    @classmethod
    def decode(cls, data: bytes) -> Message:
        raw: dict[str, Any] = json.loads(data)
        check = raw.pop("check", None)
        return cls(**raw, check=Check(**check) if check else None)

    def but(self, **changes: Any) -> Message:
        return replace(self, **changes)


@dataclass(frozen=True, slots=True)
class LoggedAttempt:
    event_id: str
    type: str
    attempt: int
    at: int
    """ms since the epoch (store clock)."""
    status: int | None
    error: str | None
    duration_ms: int
    outcome: str
    next_at: int | None

    def encode(self) -> bytes:
        return json.dumps(asdict(self), separators=(",", ":"), sort_keys=True).encode()

    @classmethod
    def decode(cls, data: bytes) -> LoggedAttempt:
        return cls(**json.loads(data))


class Outbox:
    def __init__(self, store: DocStore) -> None:
        self.store = store
        self.schedules: Schedules = store  # type: ignore[assignment]

    async def now_ms(self) -> int:
        return await guard(self.schedules.store_time_ms())

    async def enqueue(self, message: Message) -> bool:
        """Store the message and schedule it at its ``due`` time; False when it was stored
        before (by another replica deriving the same event, or a retry): not scheduled
        again."""
        key = message_key(message.id)
        data = message.encode()
        existing = await guard(self.store.get_doc(key))
        if existing is not None:
            return False
        if not await guard(self.store.put_doc(key, 0, data)):
            return False
        await self.schedule(message.app, message.endpoint, message.id, message.due)
        return True

    async def schedule(self, app_id: str, endpoint_id: str, msg_id: str, at_ms: int) -> None:
        """Due at ``at_ms`` (or earlier if it already is) in its lane, and the lane too
        (module doc): the lane's entry is lowered before the message is added, so that a
        crash between the two writes leaves the message in a lane the workers look at, and
        again after, for a worker that moved the entry meanwhile."""
        member = lane_member(app_id, endpoint_id)
        await guard(self.schedules.schedule_lower(LANES, member, at_ms))
        await guard(self.schedules.schedule_lower(lane_key(endpoint_id), msg_id, at_ms))
        await guard(self.schedules.schedule_lower(LANES, member, at_ms))

    async def load(self, msg_id: str) -> tuple[int, Message] | None:
        doc = await guard(self.store.get_doc(message_key(msg_id)))
        return None if doc is None else (doc.version, Message.decode(doc.data))

    async def save(self, version: int, message: Message) -> bool:
        """Compare-and-set the message's document (False: another worker changed it)."""
        return await guard(self.store.put_doc(message_key(message.id), version,
                                              message.encode()))

    # -- lanes (the workers') ----------------------------------------------------------------

    async def claim_lanes(self, limit: int,
                          lease_ms: int) -> tuple[int, list[tuple[str, int]]]:
        """``(store now, [(lane member, claim)])``: lanes with a message due, the longest
        waiting first."""
        return await guard(self.schedules.schedule_claim(LANES, limit, lease_ms))

    async def claim(self, endpoint_id: str, limit: int,
                    lease_ms: int) -> tuple[int, list[tuple[str, int]]]:
        """Due messages of one lane, earliest first, each leased."""
        return await guard(self.schedules.schedule_claim(lane_key(endpoint_id), limit,
                                                         lease_ms))

    async def lane_next(self, endpoint_id: str) -> int | None:
        return await guard(self.schedules.schedule_next(lane_key(endpoint_id)))

    async def settle_lane(self, member: str, claimed_ms: int, not_before_ms: int) -> None:
        """Put a claimed lane back: due when its earliest message is, but not before
        ``not_before_ms`` (its turn: behind the lanes that waited longer, or later for a lane
        held back); removed when it is empty (module doc: the second read)."""
        _, endpoint = lane_of(member)
        first = await self.lane_next(endpoint)
        at = None if first is None else max(first, not_before_ms)
        settled = await guard(self.schedules.schedule_settle(LANES, member, claimed_ms, at))
        if not settled and first is not None:
            # Moved since the claim (something was added): never later than its messages.
            await guard(self.schedules.schedule_lower(LANES, member, first))
        again = await self.lane_next(endpoint)
        if again is not None and (first is None or again < first):
            await guard(self.schedules.schedule_lower(LANES, member, again))

    async def wake_lane(self, member: str, at_ms: int) -> None:
        """Make a lane due by ``at_ms`` (a lane held back whose endpoint has room again)."""
        await guard(self.schedules.schedule_lower(LANES, member, at_ms))

    async def settle(self, app_id: str, endpoint_id: str, msg_id: str, claimed_ms: int,
                     at_ms: int | None) -> bool:
        """Settle a claimed message: due again at ``at_ms`` (its lane too), or removed
        (None)."""
        settled = await guard(self.schedules.schedule_settle(
            lane_key(endpoint_id), msg_id, claimed_ms, at_ms))
        if settled and at_ms is not None:
            await guard(self.schedules.schedule_lower(
                LANES, lane_member(app_id, endpoint_id), at_ms))
        return settled

    async def next_due(self) -> int | None:
        return await guard(self.schedules.schedule_next(LANES))

    async def pending(self, endpoint_ids: list[str]) -> int:
        """Messages of these endpoints waiting in their lanes (being attempted included)."""
        sizes = [await guard(self.schedules.schedule_size(lane_key(e))) for e in endpoint_ids]
        return sum(sizes)

    async def adopt_legacy(self, limit: int, lease_ms: int) -> int:
        """Move what an older build scheduled in ``LEGACY_SCHEDULE`` into the lanes (due
        now), at most ``limit`` messages; how many were moved or found gone."""
        if await guard(self.schedules.schedule_next(LEGACY_SCHEDULE)) is None:
            return 0
        now, claimed = await guard(self.schedules.schedule_claim(LEGACY_SCHEDULE, limit,
                                                                 lease_ms))
        for msg_id, claimed_ms in claimed:
            loaded = await self.load(msg_id)
            if loaded is not None and loaded[1].done is None:
                message = loaded[1]
                await self.schedule(message.app, message.endpoint, message.id, now)
            await guard(self.schedules.schedule_settle(LEGACY_SCHEDULE, msg_id, claimed_ms,
                                                       None))
        return len(claimed)

    async def log(self, endpoint_id: str, attempt: LoggedAttempt) -> None:
        """Append an attempt to the endpoint's log (its number: above every one before).

        ``at`` is stamped again, from the store's clock, after the mark is read: an append
        that lost the race to a concurrent one is stamped anew, so the log's order (newest
        first) is also the order of its times."""
        key = log_key(endpoint_id)
        for _ in range(MAX_APPEND_TRIES):
            (mark,) = await guard(self.store.feed_marks(key, [LOG_SOURCE]))
            attempt = replace(attempt, at=max(attempt.at, await self.now_ms()))
            if await guard(self.store.feed_append(
                    key, LOG_SOURCE, mark + 1, [attempt.encode()], now=attempt.at / 1000,
                    keep=LOG_KEEP, keep_seconds=LOG_KEEP_SECONDS)):
                return

    async def read_log(self, endpoint_id: str, cursor: str | None,
                       limit: int) -> tuple[list[LoggedAttempt], str | None]:
        """A page of the log, newest first, from before ``cursor`` (None: the newest)."""
        key = log_key(endpoint_id)
        head = await guard(self.store.feed_read(key, 0, 1))
        below = head.last + 1
        if cursor is not None:
            if not cursor.isascii() or not cursor.isdigit() or len(cursor) > 15:
                raise ApiError.of("malformed", "cursor must be a nextCursor of this log.")
            below = min(int(cursor), below)
        start = max(head.trimmed, below - 1 - limit)
        if below - 1 <= start:
            return [], None
        page = await guard(self.store.feed_read(key, start, below - 1 - start))
        items = [LoggedAttempt.decode(i.data) for i in reversed(page.items) if i.seq < below]
        first = page.items[0].seq if page.items else below
        return items, (str(first) if first - 1 > head.trimmed else None)
