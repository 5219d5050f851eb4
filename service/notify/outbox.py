"""Events waiting to be delivered, and the delivery log.

Each delivery -- one event for one endpoint -- is a *message*: a document ``whmsg:<id>``
(its body, fixed once, and how many attempts were made) and a member of the store schedule
``webhooks`` due at its next attempt. Its id ``msg_…`` is derived from the app, endpoint,
match, version, kind and seat, so two replicas deriving the same event store the very same
bytes (``put_doc(key, 0, data)`` is idempotent on equal bytes) and schedule it once. A worker
claims due members with a lease (a worker that dies leaves them to another once the lease
runs out), counts the attempt on the document by compare-and-set (two workers never make the
same attempt), sends, and settles the member: removed once delivered or given up, else due
again after a backoff. Messages are independent: no event, match or endpoint waits behind
another.

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

SCHEDULE = "webhooks"
LOG_KEEP = 1000
LOG_KEEP_SECONDS = 3 * 86400.0
LOG_SOURCE = "attempts"
MAX_APPEND_TRIES = 8


def message_key(msg_id: str) -> str:
    return f"whmsg:{msg_id}"


def log_key(endpoint_id: str) -> str:
    return f"whlog:{endpoint_id}"


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
        await guard(self.schedules.schedule_lower(SCHEDULE, message.id, message.due))
        return True

    async def load(self, msg_id: str) -> tuple[int, Message] | None:
        doc = await guard(self.store.get_doc(message_key(msg_id)))
        return None if doc is None else (doc.version, Message.decode(doc.data))

    async def save(self, version: int, message: Message) -> bool:
        """Compare-and-set the message's document (False: another worker changed it)."""
        return await guard(self.store.put_doc(message_key(message.id), version,
                                              message.encode()))

    async def claim(self, limit: int, lease_ms: int) -> tuple[int, list[tuple[str, int]]]:
        return await guard(self.schedules.schedule_claim(SCHEDULE, limit, lease_ms))

    async def settle(self, msg_id: str, claimed_ms: int, at_ms: int | None) -> bool:
        return await guard(self.schedules.schedule_settle(SCHEDULE, msg_id, claimed_ms,
                                                          at_ms))

    async def next_due(self) -> int | None:
        return await guard(self.schedules.schedule_next(SCHEDULE))

    async def pending(self) -> int:
        return await guard(self.schedules.schedule_size(SCHEDULE))

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
