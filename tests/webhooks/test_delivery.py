"""Deliveries to a real receiver that verifies every signature: every event arrives, each id
at least once and with its match version, through receivers that fail, are down, are slow,
die mid-delivery, redirect; workers killed mid-delivery; no head-of-line blocking; endpoints
disabled after a failure run and enabled again; a rotated secret; the delivery log."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import Any, cast

import pytest

from service.identity.callers import Caller
from service.matches.records import MatchRecord
from service.store import MatchStore
from service.store.redis import RedisStore
from service.webhooks import WebhookSettings
from service.webhooks.models import UpdateWebhookRequest

from .conftest import FAST, Receiver, Stack, always_ok, kinds, until


async def everything_settled(stack: Stack) -> None:
    await until_async(lambda: stack.pending(), 0, "the schedule to empty")


async def until_async(read: Any, wanted: int, what: str) -> None:
    async with asyncio.timeout(20):
        while await read() != wanted:
            await asyncio.sleep(0.02)


async def test_each_event_arrives_signed_with_its_id_match_version_seat_and_user(
        stack: Stack, receiver: Receiver) -> None:
    app = await stack.app()
    await stack.endpoint(app, receiver, "/a")
    stack.start_worker()
    match_id = await stack.match(app)
    await until(lambda: len(receiver.got) >= 3, "three events")
    bodies = receiver.bodies()
    assert kinds(bodies) == ["match_started", "match_started", "your_turn"]
    for body in bodies:
        data = body["data"]
        assert body["timestamp"].endswith("Z")
        assert (data["matchId"], data["version"], data["game"]) == (match_id, 0, "toy")
        assert data["sub"] == ("u1", "u2")[data["seat"]]
        assert data["player"].startswith("pl_") or data["player"]
    ids = [g.id for g in receiver.got]
    assert all(i.startswith("msg_") for i in ids) and len(set(ids)) == len(ids)
    assert [g.body["data"]["id"] for g in receiver.got] == ids
    assert receiver.bad == []
    # Deriving the same version again (another replica) enqueues nothing new.
    _, record = await stack.matches.storage.load(match_id)
    from service.matches.storage import Written

    before = stack.hooks.enqueued
    await stack.hooks.on_write(Written(match_id, 0, None, record, None))
    assert stack.hooks.enqueued == before


async def test_an_app_without_endpoints_costs_nothing_and_moves_are_told_in_order(
        stack: Stack, receiver: Receiver) -> None:
    app = await stack.app()
    await stack.match(app)
    assert stack.hooks.enqueued == 0 and await stack.pending() == 0
    await stack.endpoint(app, receiver, "/moves", events=["your_turn", "match_finished"])
    stack.start_worker()
    match_id = await stack.match(app)
    # Play the match out as the app's users would (their players act through the service).
    for _ in range(60):
        _, record = await stack.matches.storage.load(match_id)
        if record.finished:
            break
        await _play_one(stack, match_id)
    await until(lambda: "match_finished" in kinds(receiver.bodies()), "match_finished")
    await everything_settled(stack)
    bodies = receiver.bodies()
    versions = [b["data"]["version"] for b in bodies if b["data"]["matchId"] == match_id]
    assert len(versions) >= 3 and receiver.bad == []
    final, _ = await stack.matches.storage.load(match_id)
    assert max(versions) == final


async def _play_one(stack: Stack, match_id: str) -> None:
    """One legal move of an active seat, as the seat's player."""
    from service import games
    from service.identity.callers import Caller as CallerType

    _, record = await stack.matches.storage.load(match_id)
    engine = games.get(record.game)
    state = engine.loads(record.state)
    for seat in engine.active_seats(state):
        holder = record.holder(seat)
        assert holder is not None
        caller = CallerType(app=record.app or "", player=holder.player)
        legal = await stack.matches.legal_moves(match_id, caller)
        if legal.moves:
            move = legal.moves[0]
            await stack.matches.act(match_id, caller, move if isinstance(move, dict)
                                    else move.model_dump(mode="json", by_alias=True),
                                    legal.version, None)
            return


@pytest.mark.parametrize("trouble", ["fail", "drop", "slow", "redirect"])
async def test_a_receiver_in_trouble_gets_every_event_once_it_recovers(
        stack: Stack, receiver: Receiver, trouble: str) -> None:
    """500s, a receiver killed mid-delivery (the connection dropped), one slower than the
    read timeout, a redirect (never followed): retried with backoff until it answers."""
    def plan(path: str, count: int, body: dict[str, Any]) -> tuple[str, float]:
        if count >= 4:
            return "ok", 0.0
        return {"fail": ("fail", 0.0), "drop": ("drop", 0.0), "slow": ("ok", 0.8),
                "redirect": ("redirect", 0.0)}[trouble]

    receiver.plan = plan
    app = await stack.app()
    webhook = await stack.endpoint(app, receiver, "/t")
    stack.start_worker()
    await stack.match(app)
    await until(lambda: len(receiver.ids("/t")) >= 3, "every event")
    await everything_settled(stack)
    page = await stack.hooks.deliveries(app, webhook, None, 100)
    errors = {i.error for i in page.items if i.outcome == "retrying"}
    assert errors == {"fail": {"status"}, "drop": {"connection"}, "slow": {"timeout"},
                      "redirect": {"redirect"}}[trouble]
    if trouble == "redirect":
        assert {i.status for i in page.items if i.outcome == "retrying"} == {307}
        assert receiver.requests.get("/elsewhere") is None
    assert {i.event_id for i in page.items if i.outcome == "delivered"} >= receiver.ids("/t")
    assert receiver.bad == []
    hook = await stack.hooks.get(app, webhook)
    assert hook.failures == 0 and hook.enabled


async def test_a_receiver_down_then_up_gets_every_event(stack: Stack,
                                                        receiver: Receiver) -> None:
    app = await stack.app()
    webhook = await stack.endpoint(app, receiver, "/down")
    receiver.stop()
    stack.start_worker()
    await stack.match(app)

    async def failed() -> bool:
        page = await stack.hooks.deliveries(app, webhook, None, 10)
        return any(i.error == "connection" for i in page.items)

    async with asyncio.timeout(20):
        while not await failed():
            await asyncio.sleep(0.02)
    receiver.start()  # the same port
    await until(lambda: len(receiver.ids("/down")) == 3, "every event after the restart")
    assert receiver.bad == []


async def test_no_endpoint_or_event_waits_behind_another(stack: Stack,
                                                         receiver: Receiver) -> None:
    """One endpoint that always fails delays nobody else; an event that keeps failing does
    not delay a later one to the same endpoint."""
    first: list[str] = []

    def plan(path: str, count: int, body: dict[str, Any]) -> tuple[str, float]:
        if path == "/broken":
            return "fail", 0.2
        if path == "/picky" and body.get("data", {}).get("matchId") in first:
            return "fail", 0.0
        return "ok", 0.0

    receiver.plan = plan
    app = await stack.app()
    await stack.endpoint(app, receiver, "/broken")
    await stack.endpoint(app, receiver, "/picky")
    await stack.endpoint(app, receiver, "/fine")
    stack.start_worker(concurrency=8, per_endpoint=2)
    first.append(await stack.match(app))
    await until(lambda: receiver.requests.get("/picky", 0) >= 3, "the first match failing")
    second = await stack.match(app)
    await until(lambda: len({b["data"]["matchId"] for b in receiver.bodies("/picky")}) == 1,
                "the second match's events to /picky")
    assert {b["data"]["matchId"] for b in receiver.bodies("/picky")} == {second}
    await until(lambda: len(receiver.ids("/fine")) == 6, "both matches to /fine")
    assert receiver.ids("/broken") == set()
    assert receiver.bad == []


async def test_a_failure_run_disables_the_endpoint_until_the_app_enables_it(
        store: MatchStore, receiver: Receiver) -> None:
    settings = WebhookSettings(**{**FAST.__dict__, "disable_after": 3,
                                  "disable_seconds": 0.0})
    stack = Stack(store, settings)
    try:
        receiver.plan = lambda path, count, body: ("fail", 0.0)
        app = await stack.app()
        webhook = await stack.endpoint(app, receiver, "/flaky")
        stack.start_worker()
        await stack.match(app)

        async def disabled() -> bool:
            return not (await stack.hooks.get(app, webhook)).enabled

        async with asyncio.timeout(20):
            while not await disabled():
                await asyncio.sleep(0.02)
        await everything_settled(stack)  # its pending deliveries are dropped
        hook = await stack.hooks.get(app, webhook)
        assert hook.disabled_at is not None and hook.failures >= 3
        await stack.match(app)  # nothing is queued for a disabled endpoint
        assert await stack.pending() == 0
        receiver.plan = always_ok
        enabled = await stack.hooks.enable(app, webhook)
        assert enabled.enabled and enabled.failures == 0
        await stack.match(app)
        await until(lambda: len(receiver.ids("/flaky")) == 3, "events after enable")
        assert receiver.bad == []
    finally:
        await stack.close()


async def test_a_rotated_secret_signs_from_then_on(stack: Stack, receiver: Receiver) -> None:
    app = await stack.app()
    webhook = await stack.endpoint(app, receiver, "/r")
    old = receiver.secrets["/r"]
    stack.start_worker()
    await stack.match(app)
    await until(lambda: len(receiver.ids("/r")) == 3, "events under the first secret")
    rotated = await stack.hooks.rotate_secret(app, webhook)
    assert rotated.secret != old and rotated.secret.startswith("whsec_")
    receiver.secrets["/r"] = rotated.secret  # the old one no longer verifies anything
    await stack.match(app)
    await until(lambda: len(receiver.ids("/r")) == 6, "events under the new secret")
    assert receiver.bad == []


async def test_the_delivery_log_pages_newest_first(stack: Stack, receiver: Receiver) -> None:
    app = await stack.app()
    webhook = await stack.endpoint(app, receiver, "/log")
    stack.start_worker()
    pinged = [(await stack.hooks.ping(app, webhook)).event_id for _ in range(5)]
    await until(lambda: receiver.ids("/log") == set(pinged), "five pings")

    async def logged() -> int:  # an attempt is logged after its receiver answered
        return len((await stack.hooks.deliveries(app, webhook, None, 10)).items)

    await until_async(logged, 5, "five attempts logged")
    seen: list[str] = []
    cursor = None
    while True:
        page = await stack.hooks.deliveries(app, webhook, cursor, 2)
        assert len(page.items) <= 2
        seen += [i.event_id for i in page.items]
        assert all(i.type == "ping" and i.status == 204 and i.attempt == 1
                   and i.outcome == "delivered" and i.next_retry_at is None
                   for i in page.items)
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert sorted(seen) == sorted(pinged) and len(seen) == 5
    times = [i.at for i in (await stack.hooks.deliveries(app, webhook, None, 10)).items]
    assert times == sorted(times, reverse=True)


async def test_an_address_the_policy_no_longer_allows_is_not_reached(
        store: MatchStore, receiver: Receiver) -> None:
    """Checked again at delivery: the operator dropped the loopback allowance."""
    maker = Stack(store)
    strict = Stack(store, WebhookSettings(**{**FAST.__dict__, "allow_networks": ()}))
    try:
        app = await maker.app()
        webhook = await maker.endpoint(app, receiver, "/strict")
        strict.start_worker()
        await maker.hooks.ping(app, webhook)

        async def refused() -> bool:
            page = await strict.hooks.deliveries(app, webhook, None, 5)
            return any(i.error == "forbidden_address" for i in page.items)

        async with asyncio.timeout(20):
            while not await refused():
                await asyncio.sleep(0.02)
        assert receiver.requests == {}
    finally:
        await strict.close()
        await maker.close()


async def worker_killed_mid_delivery(stack: Stack, receiver: Receiver) -> None:
    def plan(path: str, count: int, body: dict[str, Any]) -> tuple[str, float]:
        return ("fail", 0.3) if count == 0 else ("ok", 0.0)

    receiver.plan = plan
    app = await stack.app()
    webhook = await stack.endpoint(app, receiver, "/k")
    _, doomed = stack.start_worker(concurrency=1)
    pinged = (await stack.hooks.ping(app, webhook)).event_id
    await until(lambda: receiver.requests.get("/k", 0) >= 1, "the first attempt")
    doomed.cancel()  # killed while its request is in flight
    with contextlib.suppress(asyncio.CancelledError):
        await doomed
    stack.workers.clear()
    stack.start_worker()  # another worker: takes it once the lease runs out
    await until(lambda: receiver.ids("/k") == {pinged}, "the delivery by the second worker")
    await everything_settled(stack)
    page = await stack.hooks.deliveries(app, webhook, None, 10)
    assert [(i.attempt, i.outcome) for i in page.items] == [(2, "delivered")]
    assert receiver.bad == []


async def test_a_worker_killed_mid_delivery_leaves_it_to_another(
        stack: Stack, receiver: Receiver) -> None:
    await worker_killed_mid_delivery(stack, receiver)


async def test_a_worker_killed_mid_delivery_on_a_cluster(
        redis_cluster: Any, redis_cluster_prefix: str, receiver: Receiver) -> None:
    store = RedisStore.from_cluster_nodes(redis_cluster.nodes_arg, prefix=redis_cluster_prefix)
    stack = Stack(store)
    try:
        await worker_killed_mid_delivery(stack, receiver)
    finally:
        await stack.close()
        await store.close()


async def test_timeout_soon_is_sent_before_the_deadline_unless_the_seat_moved_on(
        stack: Stack, receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> None:
    deadlines: dict[str, int] = {}
    monkeypatch.setattr(MatchRecord, "deadlines",
                        lambda self: {0: deadlines[self.labels.get("k", "")]}
                        if self.labels.get("k", "") in deadlines else {})
    app = await stack.app()
    await stack.endpoint(app, receiver, "/soon", events=["timeout_soon"],
                         warn_before_seconds=10)
    stack.start_worker()
    now = await stack.hooks.outbox.now_ms()
    deadlines["a"] = now + 10_300  # warned 10 s before: in 0.3 s
    from service.matches.models import CreateMatchRequest

    async def labelled(label: str) -> str:
        created = await stack.players.create_match(app, CreateMatchRequest.model_validate(
            {"game": "toy", "seats": [{"user": "u1"}, {"user": "u2"}],
             "options": {"rounds": 1}, "labels": {"k": label}}))
        return created.match_id

    warned = await labelled("a")
    await until(lambda: len(receiver.ids("/soon")) == 1, "the warning")
    (body,) = receiver.bodies("/soon")
    assert body["type"] == "timeout_soon"
    assert body["data"]["matchId"] == warned and body["data"]["seat"] == 0
    assert body["data"]["sub"] == "u1" and body["data"]["warnBeforeSeconds"] == 10
    deadlines["b"] = now + 10_400
    await labelled("b")
    deadlines["b"] += 5_000  # the seat's clock moved on (another activation)
    await everything_settled(stack)
    assert len(receiver.ids("/soon")) == 1 and receiver.bad == []


async def test_an_update_changes_what_is_sent(stack: Stack, receiver: Receiver) -> None:
    app = await stack.app()
    webhook = await stack.endpoint(app, receiver, "/u")
    await stack.hooks.update(app, webhook, UpdateWebhookRequest(events=["your_turn"]))
    stack.hooks.endpoints.forget(cast(Caller, app).app)
    stack.start_worker()
    await stack.match(app)
    await until(lambda: len(receiver.ids("/u")) == 1, "your_turn only")
    await everything_settled(stack)
    assert kinds(receiver.bodies("/u")) == ["your_turn"]


async def test_concurrent_failures_to_one_endpoint_are_each_counted(
        store: MatchStore, receiver: Receiver) -> None:
    """Several attempts to one endpoint failing at the same moment: its failure count is the
    number of failed attempts logged (two increments from the same count write the very same
    bytes, which the store takes for one write repeated unless each write is its own)."""
    # No retry within the test; time for every attempt to reach the receiver.
    settings = WebhookSettings(**{**FAST.__dict__, "backoff_first": 60.0,
                                  "backoff_max": 60.0, "retry_seconds": 3600.0,
                                  "connect_timeout": 5.0, "read_timeout": 15.0,
                                  "lease_seconds": 30.0})
    stack = Stack(store, settings)
    count = 8
    together = threading.Barrier(count, timeout=10)

    def plan(path: str, count: int, body: dict[str, Any]) -> tuple[str, float]:
        with contextlib.suppress(threading.BrokenBarrierError):
            together.wait()  # every attempt in flight at once; all answered together
        return "fail", 0.0

    try:
        receiver.plan = plan
        app = await stack.app()
        webhook = await stack.endpoint(app, receiver, "/many")
        for _ in range(count):
            await stack.hooks.ping(app, webhook)
        stack.start_worker(per_endpoint=count)

        async def logged() -> int:
            page = await stack.hooks.deliveries(app, webhook, None, 100)
            return len(page.items)

        await until_async(logged, count, "every attempt logged")
        page = await stack.hooks.deliveries(app, webhook, None, 100)
        assert [(i.attempt, i.outcome) for i in page.items] == [(1, "retrying")] * count
        assert {i.error for i in page.items} == {"status"}
        assert receiver.requests["/many"] == count
        assert (await stack.hooks.get(app, webhook)).failures == count
    finally:
        await stack.close()

