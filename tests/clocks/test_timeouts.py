"""Deadlines fired by the clock worker, exactly once, on SQLite, Redis and Redis Cluster
(issue 18: "Enforced by workers, exactly once").

The logic tests call ``Timeouts.fire`` with the store time of their choosing (a deadline
"passed" without waiting for it); the worker tests use one-second deadlines set straight in
the record (the API's minimum is 10 s) and the store's real clock."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from service.clocks import OnTimeout, TimeControl
from service.matches import MatchService
from service.matches.clocking import DEADLINES
from service.matches.models import CreateMatchRequest
from service.matches.records import LogRecord
from service.workers.clocks import ClockWorker
from tests.clocks.conftest import TOY
from tests.store.conftest import Backend

pytestmark = pytest.mark.asyncio

FORFEIT = OnTimeout("forfeit")


def matches(store: Any) -> MatchService:
    return MatchService(store, ttl_finished=3600, ttl_idle=3600)


def correspondence(seconds: int) -> TimeControl:
    return TimeControl("correspondence", seconds_per_move=seconds)


async def new_match(service: MatchService, players: int = 2, seconds: int = 60,
                    policy: OnTimeout = FORFEIT) -> tuple[str, dict[int, str]]:
    created = await service.create_match(
        CreateMatchRequest(game=TOY, players=players),
        extra={"time_control": correspondence(seconds), "on_timeout": policy})
    return created.match_id, {s.seat: s.token for s in created.seats}


async def entries(service: MatchService, match_id: str) -> list[dict[str, Any]]:
    """The match's service entries of type ``timeout``."""
    _, record = await service.storage.load(match_id)
    logged = [LogRecord.decode(record.game, record.log_dict, e.data)
              for e in await service.storage.entries(match_id, 0)]
    return [e.action for e in logged
            if e.seat is None and isinstance(e.action, dict) and e.action["type"] == "timeout"]


async def test_a_seat_that_misses_its_deadline_forfeits_and_a_two_seat_match_ends(
    backend: Backend,
) -> None:
    service = matches(backend.store)
    match_id, _ = await new_match(service)
    version, record = await service.storage.load(match_id)
    deadline = record.deadlines()[0]
    # The schedule wakes the worker first to warn the seat (a tenth of the time per move
    # before its deadline), then at the deadline.
    warn = deadline - 6_000
    assert await service.storage.schedule().schedule_due_at(DEADLINES, match_id) == warn
    # Not yet due: nothing happens, the match keeps its deadline. (``lease``: the entry's
    # time, as a claim would have set it.)
    lease = warn
    assert await service.timeouts.fire(match_id, lease, deadline - 1) == []
    # It warned the seat (inside the window) and moved the entry to the deadline.
    lease = deadline
    assert await service.storage.schedule().schedule_due_at(DEADLINES, match_id) == lease
    fired = await service.timeouts.fire(match_id, lease, deadline)
    assert [(f.seat, f.version, f.deadline) for f in fired] == [(0, version + 1, deadline)]
    version2, after = await service.storage.load(match_id)
    assert version2 == version + 1
    assert after.finished and after.termination == "timeout" and after.forfeited == (0,)
    assert after.deadlines() == {}
    assert await entries(service, match_id) == [
        {"type": "timeout", "seat": 0, "policy": "forfeit", "kind": "random",
         "deadline": deadline}]
    # Fired once: firing again (another worker, a stale claim) stores nothing.
    assert await service.timeouts.fire(match_id, lease, deadline + 10_000) == []
    assert len(await entries(service, match_id)) == 1
    assert await service.storage.schedule().schedule_due_at(DEADLINES, match_id) is None


async def test_a_move_just_before_the_deadline_wins_against_the_timeout(
    backend: Backend,
) -> None:
    service = matches(backend.store)
    match_id, tokens = await new_match(service)
    _, record = await service.storage.load(match_id)
    deadline = record.deadlines()[0]
    await service.act(match_id, tokens[0], {"type": "pass"}, None, None)
    _, moved = await service.storage.load(match_id)
    assert 0 not in moved.deadlines() and 1 in moved.deadlines()
    # The worker judges at the old deadline: seat 0 met it, seat 1's is later.
    assert await service.timeouts.fire(match_id, 0, deadline) == []
    assert await entries(service, match_id) == []


async def test_racing_workers_fire_a_deadline_once(backend: Backend) -> None:
    service = matches(backend.store)
    others = [matches(backend.store) for _ in range(3)]
    match_id, _ = await new_match(service, players=3)
    _, record = await service.storage.load(match_id)
    deadline = record.deadlines()[0]
    results = await asyncio.gather(*(s.timeouts.fire(match_id, 0, deadline + 1)
                                     for s in [service, *others]))
    assert sum(len(r) for r in results) == 1
    _, after = await service.storage.load(match_id)
    # Three seats: the forfeited seat is played on by a random bot, the match goes on.
    assert not after.finished and after.forfeited == (0,) and after.bots == {0: "random"}
    assert after.away[0].reason == "timeout" and after.away[0].digest == record.tokens[0]
    assert len(await entries(service, match_id)) == 1


async def test_the_bot_policy_hands_the_seat_to_that_bot(backend: Backend) -> None:
    service = matches(backend.store)
    match_id, _ = await new_match(service, policy=OnTimeout("bot", "random"))
    _, record = await service.storage.load(match_id)
    deadline = record.deadlines()[0]
    fired = await service.timeouts.fire(match_id, 0, deadline)
    assert len(fired) == 1
    _, after = await service.storage.load(match_id)
    assert after.bots == {0: "random"} and after.forfeited == () and not after.finished
    assert after.tokens[0] is None and after.away[0].digest == record.tokens[0]
    assert (await entries(service, match_id))[0]["policy"] == "bot"
    assert after.deadlines() == {}  # a bot has no deadline


async def test_an_untimed_match_is_never_scheduled(backend: Backend) -> None:
    service = matches(backend.store)
    created = await service.create_match(CreateMatchRequest(game=TOY, players=2))
    _, record = await service.storage.load(created.match_id)
    assert record.deadlines() == {} and record.clocks[0].since is not None
    assert await service.storage.schedule().schedule_due_at(DEADLINES, created.match_id) is None


async def test_a_seat_is_warned_inside_its_warning_window_then_the_deadline_is_next(
    backend: Backend,
) -> None:
    service = matches(backend.store)
    warned: list[tuple[str, int, int, int]] = []

    async def warner(match_id: str, version: int, record: Any, seat: int,
                     deadline: int) -> None:
        warned.append((match_id, version, seat, deadline))

    service.subscribe(on_warning=warner)
    match_id, _ = await new_match(service)
    version, record = await service.storage.load(match_id)
    deadline = record.deadlines()[0]
    schedules = service.storage.schedule()
    warn = await schedules.schedule_due_at(DEADLINES, match_id)
    assert warn == deadline - 6_000
    assert await service.timeouts.fire(match_id, warn, warn - 1) == []
    assert warned == []  # not yet inside the window: nothing said, the entry stays
    assert await schedules.schedule_due_at(DEADLINES, match_id) == warn
    assert await service.timeouts.fire(match_id, warn, warn) == []
    assert warned == [(match_id, version, 0, deadline)]
    assert await schedules.schedule_due_at(DEADLINES, match_id) == deadline
    assert await entries(service, match_id) == []


@pytest.mark.parametrize("backend_spec", [pytest.param("redis", marks=pytest.mark.redis),
                                          pytest.param("cluster", marks=[pytest.mark.redis,
                                                                         pytest.mark.slow])],
                         indirect=True)
async def test_two_workers_one_killed_mid_way_fire_every_passed_deadline_once(
    backend: Backend,
) -> None:
    """Twelve matches with one-second deadlines; worker A claims some and dies without
    settling them (its lease, 1.5 s, runs out), worker B fires everything: the timeout
    entries equal the deadlines that passed."""
    service = matches(backend.store)
    ids = [(await new_match(service, seconds=1))[0] for _ in range(12)]
    dead = ClockWorker(matches(backend.another_store()).timeouts, lease_seconds=1.5)
    await asyncio.sleep(1.1)
    # Worker A claims up to six due matches and is killed before it fires any of them.
    schedules = dead.timeouts.storage.schedule()
    _, claimed = await schedules.schedule_claim(DEADLINES, 6, dead.lease_ms)
    assert claimed
    alive = ClockWorker(matches(backend.store).timeouts, lease_seconds=1.5)
    running = asyncio.create_task(alive.run())
    try:
        for _ in range(200):
            if alive.count >= len(ids):
                break
            await asyncio.sleep(0.05)
    finally:
        alive.stop()
        await running
    counts = [len(await entries(service, m)) for m in ids]
    assert counts == [1] * len(ids)
    for match_id in ids:
        _, record = await service.storage.load(match_id)
        assert record.finished and record.termination == "timeout"
    assert await schedules.schedule_size(DEADLINES) == 0
