"""One app's slow endpoints stall no other app (issue 31, item 3): every attempt has a
deadline however slowly the receiver answers, one app (and one endpoint) holds a capped
number of the worker's slots, and the worker takes turns among the endpoints' lanes, so
another app's delivery never waits behind a backlog. Asserted on counts, order and slots;
the only times are the bounds of the waits."""

from __future__ import annotations

import asyncio
from typing import Any

from service.store import MatchStore
from service.webhooks import WebhookSettings
from service.webhooks.outbox import LEGACY_SCHEDULE, message_id
from service.webhooks.sender import Sender
from service.webhooks.ssrf import UrlPolicy, parse_networks

from .conftest import FAST, WAIT, Receiver, Stack, until

TRICKLE = 0.1
"""Seconds between two bytes of a trickled answer: far under the read timeout (0.5 s)."""
SLOW = WebhookSettings(**{**FAST.__dict__, "connect_timeout": 0.5, "read_timeout": 0.5,
                          "lease_seconds": 5.0})
"""Each attempt ends within 1 s (connect + read); a trickled answer never trips the read
timeout, which is per read."""


def _trickle_on(prefix: str) -> Any:
    def plan(path: str, count: int, body: dict[str, Any]) -> tuple[str, float]:
        return ("trickle", TRICKLE) if path.startswith(prefix) else ("ok", 0.0)

    return plan


async def test_an_attempt_ends_at_its_deadline_however_the_answer_trickles(
        receiver: Receiver) -> None:
    receiver.plan = _trickle_on("/slow")
    sender = Sender(UrlPolicy(allow_http=True, allow_networks=parse_networks("127.0.0.0/8")),
                    connect_timeout=0.5, read_timeout=0.5, deadline=1.0)
    try:
        async with asyncio.timeout(WAIT):
            outcome = await sender.post(receiver.url("/slow"), {}, b"{}")
    finally:
        await sender.aclose()
    assert (outcome.status, outcome.error) == (None, "timeout")
    # It was the deadline: bytes kept coming, each well within the read timeout.
    assert len(receiver.trickled) >= 3 and max(receiver.trickled) < 0.5


async def test_slow_endpoints_of_one_app_never_stall_another_app(
        store: MatchStore, receiver: Receiver) -> None:
    stack = Stack(store, SLOW)
    try:
        receiver.plan = _trickle_on("/slow")
        slow = await stack.app()
        for n in range(8):
            await stack.endpoint(slow, receiver, f"/slow{n}")
        fast = await stack.app()
        ping_hook = await stack.endpoint(fast, receiver, "/fast")
        worker, _ = stack.start_worker(concurrency=32, per_endpoint=4, per_app=8)
        for _ in range(2):
            await stack.match(slow)  # 3 events for each of 8 endpoints
        backlog = 2 * 3 * 8
        await until(lambda: worker.busy(slow.app) == 8, "the slow app at its cap")

        pings = {(await stack.hooks.ping(fast, ping_hook)).event_id for _ in range(5)}
        await until(lambda: receiver.ids("/fast") == pings, "the other app's pings")
        # Nothing of the slow app went meanwhile: its backlog was all still there.
        assert await stack.hooks.pending(slow.app) == backlog
        assert not any(receiver.ids(f"/slow{n}") for n in range(8))
        # Slots: the slow app never held more than its cap, an endpoint never more than its.
        assert worker.peak_per_app[slow.app] == 8
        assert max(worker.peak_per_endpoint.values()) <= 4
        assert max(receiver.peak.get(f"/slow{n}", 0) for n in range(8)) <= 4

        # The slow attempts ended at their deadline (and are retried).
        await until(lambda: worker.attempts >= 5 + 8, "a round of slow attempts to end")
        hooks = await stack.hooks.all(slow)
        logged = [i for h in hooks.items
                  for i in (await stack.hooks.deliveries(slow, h.id, None, 50)).items]
        assert logged and {i.error for i in logged} == {"timeout"}
        assert {i.outcome for i in logged} == {"retrying"}

        # Once the slow receivers answer, the held lanes resume and everything arrives.
        receiver.plan = lambda path, count, body: ("ok", 0.0)
        await until(lambda: sum(len(receiver.ids(f"/slow{n}")) for n in range(8))
                    == backlog, "the slow app's backlog", seconds=60)
        assert receiver.bad == []
    finally:
        await stack.close()


async def test_another_apps_delivery_takes_its_turn_before_a_backlog(
        stack: Stack, receiver: Receiver) -> None:
    """One slot: an app with a backlog of 30 deliveries and another app's ping, stored after
    the whole backlog. The ping is the second delivery made (the backlog's lane had one turn
    first), not the 31st."""
    busy = await stack.app()
    await stack.endpoint(busy, receiver, "/busy")
    other = await stack.app()
    hook = await stack.endpoint(other, receiver, "/other")
    for _ in range(10):
        await stack.match(busy)
    pinged = (await stack.hooks.ping(other, hook)).event_id
    order: list[str] = []
    plan = receiver.plan

    def noting(path: str, count: int, body: dict[str, Any]) -> tuple[str, float]:
        order.append(path)
        return plan(path, count, body)

    receiver.plan = noting
    stack.start_worker(concurrency=1)
    await until(lambda: len(receiver.ids()) == 31, "every delivery")
    assert receiver.ids("/other") == {pinged}
    assert order.index("/other") == 1, order[:5]


async def test_lanes_of_one_app_take_turns_too(stack: Stack, receiver: Receiver) -> None:
    """Within an app, an endpoint's backlog does not hold up its other endpoint."""
    app = await stack.app()
    await stack.endpoint(app, receiver, "/first")
    for _ in range(10):
        await stack.match(app)
    second = await stack.endpoint(app, receiver, "/second")
    pinged = (await stack.hooks.ping(app, second)).event_id
    order: list[str] = []
    plan = receiver.plan

    def noting(path: str, count: int, body: dict[str, Any]) -> tuple[str, float]:
        order.append(path)
        return plan(path, count, body)

    receiver.plan = noting
    stack.start_worker(concurrency=1)
    await until(lambda: len(receiver.ids()) == 31, "every delivery")
    assert receiver.ids("/second") == {pinged} and order.index("/second") == 1, order[:5]


async def test_a_delivery_an_older_build_scheduled_is_delivered(
        stack: Stack, receiver: Receiver) -> None:
    """A rolling upgrade: a message stored and scheduled the way builds before lanes did
    (one schedule of messages) is moved to its lane and delivered."""
    from service.webhooks import payloads

    app = await stack.app()
    hook = await stack.endpoint(app, receiver, "/old")
    endpoint = await stack.hooks.endpoints.get(app.app, hook)
    assert endpoint is not None
    now = await stack.hooks.outbox.now_ms()
    msg = message_id(app.app, hook, "ping", now, "legacy")
    message = payloads.ping(app.app, endpoint, msg, now)
    store = stack.hooks.outbox.store
    assert await store.put_doc(f"whmsg:{msg}", 0, message.encode())
    await stack.hooks.outbox.schedules.schedule_lower(LEGACY_SCHEDULE, msg, now)
    stack.start_worker()
    await until(lambda: receiver.ids("/old") == {msg}, "the older build's delivery")
    assert await stack.hooks.outbox.schedules.schedule_size(LEGACY_SCHEDULE) == 0


async def test_a_process_dying_between_a_lanes_writes_loses_no_delivery(
        stack: Stack, receiver: Receiver) -> None:
    """Scheduling a message is three writes: the lane's entry lowered, the message added to
    the lane, the entry lowered again. Dying after the second leaves a message the workers
    still find."""
    from service.webhooks import payloads
    from service.webhooks.outbox import LANES, lane_key, lane_member

    app = await stack.app()
    hook = await stack.endpoint(app, receiver, "/crash")
    endpoint = await stack.hooks.endpoints.get(app.app, hook)
    assert endpoint is not None
    outbox = stack.hooks.outbox
    now = await outbox.now_ms()
    msg = message_id(app.app, hook, "ping", now, "crash")
    assert await outbox.store.put_doc(f"whmsg:{msg}", 0,
                                      payloads.ping(app.app, endpoint, msg, now).encode())
    await outbox.schedules.schedule_lower(LANES, lane_member(app.app, hook), now)
    await outbox.schedules.schedule_lower(lane_key(hook), msg, now)
    # ... and the process died here: no second lower.
    stack.start_worker()
    await until(lambda: receiver.ids("/crash") == {msg}, "the delivery")


async def test_a_delivery_added_while_its_lane_is_put_back_keeps_the_lane_due(
        stack: Stack) -> None:
    """The race the lanes are built to survive (``service/webhooks/outbox.py``): a worker
    puts an empty lane back (it removes its entry) just as a warning due in an hour joins
    the lane -- whose lowering of the entry changed nothing, the claimed entry being due
    sooner. The worker's second look at the lane brings the entry back."""
    from service.webhooks.outbox import LANES, lane_member

    app = await stack.app()
    outbox = stack.hooks.outbox
    endpoint = "we_" + "0" * 20
    member = lane_member(app.app, endpoint)
    now = await outbox.now_ms()
    await outbox.schedules.schedule_lower(LANES, member, now)
    _, claimed = await outbox.claim_lanes(10, 60_000)
    assert [m for m, _ in claimed] == [member]
    later = now + 3_600_000
    looked = 0
    original = outbox.lane_next

    async def racing(endpoint_id: str) -> int | None:
        nonlocal looked
        found = await original(endpoint_id)
        looked += 1
        if looked == 1:  # between the worker's first look and its write
            await outbox.schedule(app.app, endpoint, "msg_warning", later)
        return found

    outbox.lane_next = racing  # type: ignore[method-assign]
    await outbox.settle_lane(member, claimed[0][1], now + 1)
    assert await outbox.schedules.schedule_due_at(LANES, member) == later
