"""``QueueService``: quick match -- players queue for a game, a match is created as soon as
enough compatible players wait -- behind one object that REST and GraphQL share.

Every change to a queue is a compare-and-set of its one document (``records.py``; on Redis
Cluster one hash slot), deciding with ``rules.py``. A match is formed in three writes, each
safe to repeat, so that a replica dying between any two neither loses players nor puts a
ticket in two matches:

1. the queue document, by compare-and-set: the tickets leave ``waiting`` for ``forming``,
   which names the match id (derived from the queue's salt and its count of matches);
2. the match, created under that id (the players' "my matches" entries first); a second
   attempt finds it created (``MatchExists``) and goes on;
3. the queue document again: ``forming`` marked on its tickets (``matched``, with the match
   and each seat), the next match formed in the same write if enough wait; then the queue's
   feed wakes the long polls.

Whoever reads a queue with a match forming finishes it (an enqueue, any poll of that queue):
the tickets of a match whose former died are in it, and their holders' polls finish it.
``match_started`` reaches each player's feed from the match's creation (``service.players``
derives it for every seat bound to a player).
"""

from __future__ import annotations

import asyncio
import random
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any

from service.errors import ApiError
from service.i18n import T
from service.identity.callers import Caller, Credential
from service.matches.create import engine_for_new
from service.matches.models import BotSeat, CreateMatchRequest, PlayerSeat
from service.matches.records import MatchRecord, SeatPlayer
from service.matches.wire import parse_options
from service.players import PlayerService
from service.players.docs import guard
from service.players.listing import member
from service.players.records import MATCHES_INDEX, player_key
from service.store import DocStore, MatchExists

from . import rules
from .models import WAIT_MAX_SECONDS, EnqueueRequest, QueueTicket
from .records import (
    Done,
    Forming,
    QueueDoc,
    QueueEntry,
    Seat,
    digest_of_ticket,
    new_ticket,
    queue_digest,
    queue_key,
)
from .rules import Policy

MAX_ATTEMPTS = 64
WAKE_SOURCE = "q"
"""The queue feed's source: one item per marked match, only to wake the long polls."""
DEFAULT_NAME = "Player"

Fault = Callable[[str], Awaitable[None]]


def ticket_not_found() -> ApiError:
    return ApiError.of("ticket_not_found", "No such ticket of yours (or it was forgotten).")


class QueueService:
    def __init__(
        self, store: DocStore, players: PlayerService, *, clock: Callable[[], float] = time.time,
        ticket_seconds: int = rules.TICKET_SECONDS, bot: str = rules.DEFAULT_BOT,
    ) -> None:
        self.store = store
        self.players = players
        self.matches = players.matches
        self.clock = clock
        self.policy = Policy(ticket_seconds=ticket_seconds, bot=bot)
        self.fault: Fault | None = None
        """Tests: awaited between the writes of forming a match (``formed``: the queue
        names it; ``indexed``: the players' "my matches" entries written; ``created``: the
        match stored) -- raising there is a replica dying there."""
        self._locks: dict[str, asyncio.Lock] = {}
        self._users: dict[str, int] = {}
        self._settling: dict[str, asyncio.Future[QueueDoc]] = {}
        self.formed = 0
        """Matches this replica created from queues (a metric, and for tests)."""
        self.count_formed: Callable[[str, list[Seat]], Awaitable[None]] | None = None
        """Counts a match being formed against its players' quotas of unfinished matches,
        and a guest's address's (set by the composition root when quotas are on; each
        enqueue checked the room)."""

    def now(self) -> int:
        return int(self.clock() * 1000)

    # -- the operations ---------------------------------------------------------------

    async def enqueue(self, caller: Credential, req: EnqueueRequest, *,
                      quota: str | None = None) -> tuple[QueueTicket, bool]:
        """The caller's ticket in the queue of compatible players (its existing one, if it
        holds one there: ``False``), and the match if it completed one. ``quota``: the
        address a guest's match counts against too when it is formed (``QueueEntry.quota``)."""
        who = _queuer(caller)
        engine = engine_for_new(req.game)
        if not engine.min_players <= req.players <= engine.max_players:
            raise ApiError.of(
                "bad_player_count",
                T("{game} takes {min} to {max} players, not {players}.", game=engine.title,
                  min=engine.min_players, max=engine.max_players, players=req.players),
            )
        parsed = parse_options(engine, req.options)
        options: dict[str, Any] = (parsed or engine.Options()).model_dump(mode="json")
        rules_version = engine.rules_versions[-1]
        digest = queue_digest(engine.id, req.players, rules_version, options)
        key = queue_key(who.app, digest)
        assert who.player is not None
        player = who.player
        name = who.name or DEFAULT_NAME
        held: list[tuple[str, bool]] = []

        def change(doc: QueueDoc | None, now: int) -> QueueDoc:
            held.clear()
            if doc is None:
                doc = QueueDoc(app=who.app, game=engine.id, players=req.players,
                               rules=rules_version, options=options,
                               salt=secrets.token_hex(16))
            doc = rules.tidy(doc, now, self.policy)
            mine = rules.held_by(doc, player)
            if mine is not None:
                held.append((mine, False))
                return self._form(rules.refreshed(doc, mine, now, self.policy), now)
            ticket = new_ticket(digest)
            held.append((ticket, True))
            entry = QueueEntry(ticket, player, name, now, now, req.fill_with_bots_after_seconds,
                            quota)
            return self._form(doc.but(waiting=(*doc.waiting, entry)), now)

        version, doc = await self._update(key, change)
        ticket, created = held[0]
        doc = await self._settle(key, version, doc)
        return _answer(doc, ticket, player, self.policy), created

    async def poll(self, caller: Credential, ticket: str, wait: int = 0) -> QueueTicket:
        """The ticket's state; while it waits, up to ``wait`` seconds (0..60) for a match:
        the answer comes as soon as one is formed. A poll counts as the holder's sign of
        life (a ticket not polled for ``ticket_seconds`` expires)."""
        who = _queuer(caller)
        if not 0 <= wait <= WAIT_MAX_SECONDS:
            raise ApiError.of("malformed", T("wait must be 0 to {most} seconds.",
                                             most=WAIT_MAX_SECONDS))
        key = _key_of(who, ticket)
        assert who.player is not None
        deadline = time.monotonic() + wait
        after = (await guard(self.store.feed_read(key, 0, 1))).last if wait else 0
        while True:
            doc = await self._touch(key, ticket, who.player)
            answer = _answer(doc, ticket, who.player, self.policy)
            left = deadline - time.monotonic()
            if answer.status != "waiting" or left <= 0:
                return answer
            due = rules.next_fill_due(doc)
            if due is not None:
                left = min(left, max(0.0, (due - self.now()) / 1000) + 0.01)
            after = await self._sleep(key, after, left)

    async def leave(self, caller: Credential, ticket: str) -> QueueTicket:
        """The ticket out of the queue (``left``); a ticket already matched stays matched
        (the answer says so), one being formed into a match is matched."""
        who = _queuer(caller)
        key = _key_of(who, ticket)
        player = who.player
        assert player is not None

        def change(doc: QueueDoc | None, now: int) -> QueueDoc:
            if doc is None:
                raise ticket_not_found()
            doc = rules.tidy(doc, now, self.policy)
            found = rules.status_of(doc, ticket)
            if found is None or found[0] != player:
                raise ticket_not_found()
            if not any(w.ticket == ticket for w in doc.waiting):
                return doc
            return doc.but(
                waiting=tuple(w for w in doc.waiting if w.ticket != ticket),
                done={**doc.done, ticket: Done(player, "left", now)},
            )

        version, doc = await self._update(key, change, create=False)
        doc = await self._settle(key, version, doc)
        return _answer(doc, ticket, player, self.policy)

    # -- the queue document -----------------------------------------------------------

    def _form(self, doc: QueueDoc, now: int) -> QueueDoc:
        """``rules.form`` where this build creates matches under the queue's rules version
        (during a rolling upgrade, replicas of the other build form that queue's matches)."""
        if engine_for_new(doc.game).rules_versions[-1] != doc.rules:
            return doc
        return rules.form(doc, now)

    async def _touch(self, key: str, ticket: str, player: str) -> QueueDoc:
        """The queue after a poll of ``ticket``: tidied, the ticket's sign of life noted,
        a match formed (bots fill one that is due) and finished."""

        def change(doc: QueueDoc | None, now: int) -> QueueDoc:
            if doc is None:
                raise ticket_not_found()
            doc = rules.tidy(doc, now, self.policy)
            found = rules.status_of(doc, ticket)
            if found is None or found[0] != player:
                raise ticket_not_found()
            return self._form(rules.refreshed(doc, ticket, now, self.policy), now)

        version, doc = await self._update(key, change, create=False)
        return await self._settle(key, version, doc)

    async def _update(
        self, key: str, change: Callable[[QueueDoc | None, int], QueueDoc], *,
        create: bool = True,
    ) -> tuple[int, QueueDoc]:
        """``change`` applied by compare-and-set until it lands (written only when it changes
        the document); the stored version and document after. One change of a queue at a
        time per replica (``_locks``): a crowd queueing through one replica takes turns
        instead of losing races, so only replicas race each other."""
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        self._users[key] = self._users.get(key, 0) + 1
        try:
            async with lock:
                return await self._cas(key, change, create)
        finally:
            self._users[key] -= 1
            if not self._users[key]:
                del self._users[key], self._locks[key]

    async def _cas(
        self, key: str, change: Callable[[QueueDoc | None, int], QueueDoc], create: bool,
    ) -> tuple[int, QueueDoc]:
        for attempt in range(MAX_ATTEMPTS):
            stored = await guard(self.store.get_doc(key))
            current = QueueDoc.decode(stored.data) if stored is not None else None
            version = stored.version if stored is not None else 0
            new = change(current, self.now())
            data = new.encode()
            if stored is not None and data == stored.data:
                return version, new
            if stored is None and not create:
                raise ticket_not_found()
            if await guard(self.store.put_doc(key, version, data)):
                return version + 1, new
            # Lost a race to another replica: back off a little (jittered).
            await asyncio.sleep(random.random() * min(0.05, 0.002 * 2 ** min(attempt, 5)))
        raise ApiError.of("busy", "Too many players are queueing at once; retry.",
                          retryAfter=1)

    async def _settle(self, key: str, version: int, doc: QueueDoc) -> QueueDoc:
        """Finish every match the queue is forming (steps 2 and 3), then return it. One
        finisher per queue per replica: callers that find one at work wait for it (and read
        the queue it leaves), rather than all creating the same match."""
        if doc.forming is None:
            return doc
        running = self._settling.get(key)
        if running is None:
            running = asyncio.ensure_future(self._finish(key, version, doc))
            self._settling[key] = running
            running.add_done_callback(lambda _: self._settling.pop(key, None))
        await asyncio.shield(running)
        stored = await guard(self.store.get_doc(key))
        return QueueDoc.decode(stored.data) if stored is not None else doc

    async def _finish(self, key: str, version: int, doc: QueueDoc) -> QueueDoc:
        while doc.forming is not None:
            if engine_for_new(doc.game).rules_versions[-1] != doc.rules:
                return doc
            forming = doc.forming
            await self._fault("formed")
            await self._create(doc, forming)
            await self._fault("created")

            def change(current: QueueDoc | None, now: int, match: str = forming.match
                       ) -> QueueDoc:
                assert current is not None
                marked = rules.mark(current, match, now)
                if marked is None:
                    return current  # another replica marked it
                return self._form(rules.tidy(marked, now, self.policy), now)

            before = version
            version, doc = await self._update(key, change, create=False)
            if version != before:
                await guard(self.store.feed_append(
                    key, WAKE_SOURCE, version, [b"m"], now=self.clock(), keep=1,
                    keep_seconds=0,
                ))
        return doc

    async def _create(self, doc: QueueDoc, forming: Forming) -> None:
        seats = [PlayerSeat(player=s.player) if s is not None else BotSeat(bot=self.policy.bot)
                 for s in forming.seats]
        req = CreateMatchRequest(game=doc.game, options=doc.options, seats=seats)
        bound = {number: SeatPlayer(s.player, s.name)
                 for number, s in enumerate(forming.seats) if s is not None}
        entry = member(forming.at, forming.match)

        async def index_first(match_id: str, record: MatchRecord) -> None:
            # The same member on every attempt (the forming's time): a repeat adds nothing.
            await asyncio.gather(*(
                guard(self.store.index_add(player_key(p.player), MATCHES_INDEX, [entry]))
                for p in bound.values()
            ))
            if self.count_formed is not None:  # a repeat counts nothing twice
                await self.count_formed(match_id, [s for s in forming.seats if s is not None])
            await self._fault("indexed")

        try:
            await self.matches.create_match(req, app=doc.app, bound=bound,
                                            before_write=index_first, match_id=forming.match)
        except MatchExists:
            return  # created by an attempt before (a replica that died, or a racing one)
        self.formed += 1

    async def _sleep(self, key: str, after: int, seconds: float) -> int:
        """Until the queue's feed passes ``after`` (a match marked) or ``seconds`` pass;
        the feed's newest number seen."""
        watch = self.store.watch_feed(key, after)
        try:
            return await asyncio.wait_for(anext(watch), timeout=seconds)
        except (TimeoutError, StopAsyncIteration):
            return after
        finally:
            await watch.aclose()

    async def _fault(self, step: str) -> None:
        if self.fault is not None:
            await self.fault(step)


def _queuer(caller: Credential) -> Caller:
    """A player (player token or app user's JWT): only players queue."""
    if caller is None:
        raise ApiError.of("unauthorized", "Queueing needs a player token or an app's JWT.")
    if not isinstance(caller, Caller) or caller.player is None:
        raise ApiError.of(
            "forbidden", "Only players queue: use a player token or an app user's JWT, not a "
            "seat token or an app key.")
    return caller


def _key_of(who: Caller, ticket: str) -> str:
    digest = digest_of_ticket(ticket) if isinstance(ticket, str) else None
    if digest is None:
        raise ticket_not_found()
    return queue_key(who.app, digest)


def _answer(doc: QueueDoc, ticket: str, player: str, policy: Policy) -> QueueTicket:
    found = rules.status_of(doc, ticket)
    if found is None or found[0] != player:
        raise ticket_not_found()
    _, status, match, seat = found
    return QueueTicket(ticket=ticket, status=status, game=doc.game,
                       players=doc.players, match_id=match, seat=seat,
                       poll_within_seconds=policy.ticket_seconds)
