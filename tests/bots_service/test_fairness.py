"""Fair bot scheduling (issue 20, item 2): eight all-bot matches used to keep a worker busy
to their ends while another match's bot stayed silent. Now a worker plays ONE move per
claimed signal (the write signals the match again, at the back of its lane), matches with a
human seat come before all-bot ones, and all-bot matches are still served.

The order is observed through an ordering hook (every due signal and every bot move stored,
appended to one list as it happens), never through wall time; on the embedded store and on
Redis (one worker, and several consumers on their own connections)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from service.bots import Budget
from service.matches import MatchService
from service.matches.models import CreateMatchRequest
from service.store import MatchStore
from service.store.redis import RedisStore
from service.workers.bots import BotWorker

WAIT = 120.0  # bounds every wait; never a measurement
ALL_BOT = 4


class Order:
    """The ordering hook: ("signal", match) for every due signal a write sent, ("move",
    match) for every bot move stored, ("claim", match) for every signal a worker claimed --
    in the order they happened (one event loop)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def record(self, service: MatchService, store: MatchStore) -> None:
        signal, act = store.signal_due, service.act_as_bot

        async def signal_due(match_id: str, **kw: Any) -> None:
            # Noted before it is sent: a worker may claim it while ``signal`` still awaits
            # its answer (noted after, the claim came first now and then under load).
            self.events.append(("signal", match_id))
            await signal(match_id, **kw)

        async def act_as_bot(match_id: str, *args: Any, **kw: Any) -> int:
            version = await act(match_id, *args, **kw)
            self.events.append(("move", match_id))
            return version

        store.signal_due = signal_due  # type: ignore[method-assign]
        service.act_as_bot = act_as_bot  # type: ignore[method-assign]

    def claims(self, store: MatchStore) -> None:
        claim = store.claim_due

        async def claim_due(*args: Any, **kw: Any) -> Any:
            got = await claim(*args, **kw)
            self.events.extend(("claim", s.match_id) for s in got)
            return got

        store.claim_due = claim_due  # type: ignore[method-assign]

    def moves(self, match_id: str) -> int:
        return self.events.count(("move", match_id))

    def after(self, event: tuple[str, str]) -> list[tuple[str, str]]:
        return self.events[self.events.index(event) + 1:]


async def all_bot_match(service: MatchService, seed: int) -> str:
    """Created with a search bot, then the last human seat handed over: bots only."""
    created = await service.create_match(
        CreateMatchRequest(game="ny1901", players=2, seed=seed, bots={"1": "search"}))
    await service.hand_seat_to_bot(created.match_id, created.seats[0].token, "search")
    return created.match_id


async def human_match(service: MatchService) -> str:
    """A human and a random bot; the bot (seat 0) is to move at once."""
    created = await service.create_match(
        CreateMatchRequest(game="ny1901", players=2, seed=77, bots={"0": "random"}))
    return created.match_id


async def until(condition: Any) -> None:
    async with asyncio.timeout(WAIT):
        while not condition():
            await asyncio.sleep(0.005)


def start(worker: BotWorker) -> asyncio.Task[None]:
    return asyncio.create_task(worker.run())


async def stop(*pairs: tuple[BotWorker, asyncio.Task[None]]) -> None:
    for worker, _ in pairs:
        worker.stop()
    await asyncio.gather(*(task for _, task in pairs))


def assert_round_robin(order: Order, bots_only: list[str], upto: int | None = None) -> None:
    """No all-bot match got its (k+1)-th move while another one still waited for its k-th."""
    counts = dict.fromkeys(bots_only, 0)
    for kind, match_id in order.events[:upto]:
        if kind != "move" or match_id not in counts:
            continue
        assert counts[match_id] <= min(counts.values()), (match_id, counts)
        counts[match_id] += 1


async def test_the_human_match_is_served_before_all_bot_matches_queued_earlier(
    store: MatchStore,
) -> None:
    service = MatchService(store, ttl_finished=None, ttl_idle=None)
    order = Order()
    order.record(service, store)
    bots_only = [await all_bot_match(service, seed) for seed in range(ALL_BOT)]
    human = await human_match(service)  # signalled after every all-bot match
    worker = BotWorker(service, consumer="w", concurrency=1, budget=Budget(iterations=2),
                       block_ms=50)
    running = start(worker)
    try:
        await until(lambda: order.moves(human) >= 1 and all(
            order.moves(m) >= 2 for m in bots_only))
    finally:
        await stop((worker, running))
    first_move = order.events.index(("move", human))
    before = order.events[:first_move]
    assert all(before.count(("move", m)) <= 1 for m in bots_only), before
    assert [e for e in before if e[0] == "move"] == []  # a human seat comes first
    assert_round_robin(order, bots_only)


async def test_a_human_match_signalled_while_all_bot_matches_play_waits_for_no_second_move(
    store: MatchStore,
) -> None:
    service = MatchService(store, ttl_finished=None, ttl_idle=None)
    order = Order()
    order.record(service, store)
    bots_only = [await all_bot_match(service, 10 + seed) for seed in range(ALL_BOT)]
    worker = BotWorker(service, consumer="w", concurrency=1, budget=Budget(iterations=2),
                       block_ms=50)
    running = start(worker)
    try:
        await until(lambda: all(order.moves(m) >= 2 for m in bots_only))
        human = await human_match(service)
        await until(lambda: order.moves(human) >= 1)
    finally:
        await stop((worker, running))
    waited = order.after(("signal", human))
    waited = waited[:waited.index(("move", human))]
    assert all(waited.count(("move", m)) <= 1 for m in bots_only), waited
    assert_round_robin(order, bots_only)


@pytest.mark.redis
async def test_several_redis_consumers_claim_the_human_match_before_any_second_move(
    redis_url: str, redis_prefix: str,
) -> None:
    stores = [RedisStore.from_url(redis_url, prefix=redis_prefix) for _ in range(3)]
    order = Order()
    try:
        writer = MatchService(stores[0], ttl_finished=None, ttl_idle=None)
        order.record(writer, stores[0])
        bots_only = [await all_bot_match(writer, 20 + seed) for seed in range(2 * ALL_BOT)]
        pairs = []
        for n, worker_store in enumerate(stores[1:]):
            service = MatchService(worker_store, ttl_finished=None, ttl_idle=None)
            order.record(service, worker_store)
            order.claims(worker_store)
            worker = BotWorker(service, consumer=f"w{n}", concurrency=2,
                               budget=Budget(iterations=2), block_ms=50)
            pairs.append((worker, start(worker)))
        try:
            await until(lambda: all(order.moves(m) >= 2 for m in bots_only))
            human = await human_match(writer)
            await until(lambda: order.moves(human) >= 1)
        finally:
            await stop(*pairs)
        waited = order.after(("signal", human))
        claimed = waited[:waited.index(("claim", human))]
        assert all(claimed.count(("claim", m)) <= 1 for m in bots_only), claimed
    finally:
        for each in stores:
            await each.close()


async def test_all_bot_matches_are_never_starved_by_a_busy_human_lane(
    store: MatchStore,
) -> None:
    """The human lane never empties (every claim first queues two more human-lane signals,
    of matches that are gone: handled at once): every ``all_bots_every``-th claim still takes
    the all-bot match, which keeps moving."""
    service = MatchService(store, ttl_finished=None, ttl_idle=None)
    order = Order()
    order.record(service, store)
    bots_only = await all_bot_match(service, 5)
    claim, ghosts = store.claim_due, iter(range(10**6))

    async def claim_due(*args: Any, **kw: Any) -> Any:
        for _ in range(2):
            await store.signal_due(f"gone-{next(ghosts)}")
        got = await claim(*args, **kw)
        order.events.extend(("claim", s.match_id) for s in got)
        return got

    store.claim_due = claim_due  # type: ignore[method-assign]
    worker = BotWorker(service, consumer="w", concurrency=1, budget=Budget(iterations=2),
                       block_ms=50, all_bots_every=4)
    running = start(worker)
    try:
        await until(lambda: order.moves(bots_only) >= 5)
    finally:
        await stop((worker, running))
    claims = [m for kind, m in order.events if kind == "claim"]
    assert all(c.startswith("gone-") for c in claims[:3])  # the human lane first
    served = [n for n, m in enumerate(claims) if m == bots_only]
    assert served[:5] == [3, 7, 11, 15, 19]  # every 4th claim, the all-bot match
