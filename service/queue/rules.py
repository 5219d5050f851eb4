"""What a queue document becomes, decided without I/O: tickets expired and forgotten
(``tidy``), a match formed from the oldest compatible tickets (``form``), a formed match
marked on its tickets (``mark``). Pure functions of the document and the service's clock
(ms), so every replica decides alike and the compare-and-set that stores the result makes
each decision once.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

from .records import Done, Forming, QueueDoc, QueueEntry, Seat, match_id_of

TICKET_SECONDS = 600
"""Default: a ticket not polled for this long expires."""
DEFAULT_BOT = "greedy"
"""The bot that fills seats (``fillWithBotsAfterSeconds``): milliseconds a move, and it beats
``random`` in more than nine games out of ten (docs/bots.md)."""


@dataclass(frozen=True, slots=True)
class Policy:
    ticket_seconds: int = TICKET_SECONDS
    bot: str = DEFAULT_BOT

    @property
    def refresh_ms(self) -> int:
        """A poll rewrites the ticket's ``seen`` only when it is older than this: polls do
        not all write, and a ticket expires ``ticket_seconds`` to ``ticket_seconds`` + this
        after its last poll (never before)."""
        return min(self.ticket_seconds * 1000 // 20, 15_000)

    @property
    def expire_ms(self) -> int:
        return self.ticket_seconds * 1000 + self.refresh_ms

    @property
    def keep_ms(self) -> int:
        """How long a ticket out of the queue (matched, expired, left) can still be read."""
        return self.ticket_seconds * 1000


def tidy(doc: QueueDoc, now: int, policy: Policy) -> QueueDoc:
    """Tickets not polled for too long expire; tickets out of the queue for ``keep_ms`` are
    forgotten."""
    done = {t: d for t, d in doc.done.items() if now - d.at <= policy.keep_ms}
    waiting: list[QueueEntry] = []
    for entry in doc.waiting:
        if now - entry.seen > policy.expire_ms:
            done[entry.ticket] = Done(entry.player, "expired", now)
        else:
            waiting.append(entry)
    if len(waiting) == len(doc.waiting) and len(done) == len(doc.done):
        return doc
    return doc.but(waiting=tuple(waiting), done=done)


def fill_due(entry: QueueEntry) -> int | None:
    """When (ms) bots may fill a match for ``entry``; None: never."""
    return None if entry.fill is None else entry.queued + entry.fill * 1000


def next_fill_due(doc: QueueDoc) -> int | None:
    dues = [d for d in (fill_due(w) for w in doc.waiting) if d is not None]
    return min(dues) if dues else None


def form(doc: QueueDoc, now: int) -> QueueDoc:
    """The next match, if one can be formed and none is being formed: the oldest ``players``
    waiting tickets; else, once a ticket's bot-fill delay has passed, every waiting ticket
    that accepts bots, with bots in the other seats."""
    if doc.forming is not None or not doc.waiting:
        return doc
    if len(doc.waiting) >= doc.players:
        chosen = list(doc.waiting[:doc.players])
    else:
        accepting = [w for w in doc.waiting if w.fill is not None]
        if not any(due is not None and now >= due for due in map(fill_due, accepting)):
            return doc
        chosen = accepting
    match = match_id_of(doc.salt, doc.n)
    people: list[Seat | None] = [Seat(w.ticket, w.player, w.name, w.quota) for w in chosen]
    people += [None] * (doc.players - len(chosen))
    # Seats in an order drawn from the match id: who queued first does not always move first.
    order = sorted(range(len(people)), key=lambda i: _shuffle_key(match, people[i], i))
    taken = {w.ticket for w in chosen}
    return doc.but(
        n=doc.n + 1,
        waiting=tuple(w for w in doc.waiting if w.ticket not in taken),
        forming=Forming(match=match, at=now, seats=tuple(people[i] for i in order)),
    )


def _shuffle_key(match: str, seat: Seat | None, index: int) -> bytes:
    name = seat.ticket if seat is not None else f"bot:{index}"
    return hashlib.blake2b(f"{match}:{name}".encode(), digest_size=8).digest()


def mark(doc: QueueDoc, match: str, now: int) -> QueueDoc | None:
    """The formed match ``match`` created: its tickets matched, nothing forming. None when
    it is not the one forming (another replica marked it)."""
    if doc.forming is None or doc.forming.match != match:
        return None
    done = dict(doc.done)
    for number, seat in enumerate(doc.forming.seats):
        if seat is not None:
            done[seat.ticket] = Done(seat.player, "matched", now, match, number)
    return doc.but(forming=None, done=done)


def held_by(doc: QueueDoc, player: str) -> str | None:
    """The player's ticket in the queue (waiting or being formed into a match), if any."""
    for entry in doc.waiting:
        if entry.player == player:
            return entry.ticket
    if doc.forming is not None:
        for seat in doc.forming.seats:
            if seat is not None and seat.player == player:
                return seat.ticket
    return None


def refreshed(doc: QueueDoc, ticket: str, now: int, policy: Policy) -> QueueDoc:
    """``ticket`` polled at ``now`` (written only when its ``seen`` is stale)."""
    entries = []
    changed = False
    for entry in doc.waiting:
        if entry.ticket == ticket and now - entry.seen >= policy.refresh_ms:
            entry = replace(entry, seen=now)
            changed = True
        entries.append(entry)
    return doc.but(waiting=tuple(entries)) if changed else doc


def status_of(doc: QueueDoc, ticket: str) -> tuple[str, str, str | None, int | None] | None:
    """``(owner, status, match, seat)`` of ``ticket``; None when the queue does not hold it."""
    for entry in doc.waiting:
        if entry.ticket == ticket:
            return entry.player, "waiting", None, None
    if doc.forming is not None:
        for seat in doc.forming.seats:
            if seat is not None and seat.ticket == ticket:
                return seat.player, "waiting", None, None
    done = doc.done.get(ticket)
    if done is not None:
        return done.player, done.status, done.match, done.seat
    return None
