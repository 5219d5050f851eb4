"""Issue 31, item 7: handing a seat to a bot and taking it back never moves its deadline.
A seat's deadline runs from its activation, whoever holds it; a reclaim neither restarts a
clock nor adds time (no floor on a live clock), so a player cannot stall a timed match by
repeating hand-over and reclaim: the timeout fires at the original deadline, on every
store."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from service.clocks import OnTimeout, SeatClock, TimeControl, deadline_of, reclaimed
from service.matches import MatchService, absence
from service.matches.clocking import DEADLINES
from service.matches.models import CreateMatchRequest
from tests.clocks.conftest import TOY
from tests.store.conftest import Backend

CORRESPONDENCE = TimeControl("correspondence", seconds_per_move=60)
LIVE = TimeControl("live", base_seconds=60, increment_seconds=0)


async def _match(service: MatchService, control: TimeControl,
                 policy: OnTimeout) -> tuple[str, dict[int, str]]:
    created = await service.create_match(
        CreateMatchRequest(game=TOY, players=2),
        extra={"time_control": control, "on_timeout": policy})
    return created.match_id, {s.seat: s.token for s in created.seats}


async def _hand_over_and_back(service: MatchService, match_id: str, token: str,
                              times: int) -> tuple[str, list[int]]:
    """Seat 0 handed to a bot and taken back ``times`` times (no bot worker runs: the bot
    never moves); the seat's deadline after each reclaim."""
    seen = []
    for _ in range(times):
        await service.hand_seat_to_bot(match_id, token, "random", 0)
        await asyncio.sleep(0.02)  # time passes while the bot holds the seat
        back = await service.reclaim_seat(match_id, token, 0)
        assert back.token is not None
        token = back.token
        _, record = await service.storage.load(match_id)
        seen.append(record.deadlines()[0])
        await asyncio.sleep(0.02)
    return token, seen


@pytest.mark.parametrize("control", [CORRESPONDENCE, LIVE], ids=["correspondence", "live"])
async def test_hand_over_and_reclaim_never_move_the_deadline_and_it_fires_on_time(
        backend: Backend, control: TimeControl) -> None:
    service = MatchService(backend.store, ttl_finished=3600, ttl_idle=3600)
    match_id, tokens = await _match(service, control, OnTimeout("forfeit"))
    _, record = await service.storage.load(match_id)
    deadline = record.deadlines()[0]
    activation = record.clocks[0].activation
    _, seen = await _hand_over_and_back(service, match_id, tokens[0], 5)
    assert seen == [deadline] * 5
    version, record = await service.storage.load(match_id)
    assert record.clocks[0].activation == activation and record.bots == {}
    assert await service.storage.schedule().schedule_due_at(DEADLINES, match_id) is not None
    # The timeout fires at the original deadline, not a moment later.
    assert await service.timeouts.fire(match_id, 0, deadline - 1) == []
    fired = await service.timeouts.fire(match_id, 0, deadline)
    assert [(f.seat, f.deadline, f.version) for f in fired] == [(0, deadline, version + 1)]


async def test_a_seat_taken_back_after_its_timeout_has_no_fresh_deadline(
        backend: Backend) -> None:
    """Under the ``bot`` policy: the seat timed out and its bot has not moved yet; taken
    back, the seat's deadline is still the one that passed, so it times out again at once."""
    service = MatchService(backend.store, ttl_finished=3600, ttl_idle=3600)
    match_id, tokens = await _match(service, CORRESPONDENCE, OnTimeout("bot", "random"))
    _, record = await service.storage.load(match_id)
    deadline = record.deadlines()[0]
    assert len(await service.timeouts.fire(match_id, 0, deadline)) == 1
    await service.reclaim_seat(match_id, tokens[0], 0)
    _, back = await service.storage.load(match_id)
    assert back.deadlines()[0] == deadline and back.bots == {}
    fired = await service.timeouts.fire(match_id, 0, deadline + 5)
    assert [(f.seat, f.deadline) for f in fired] == [(0, deadline)]


def test_a_live_clock_taken_back_gets_no_time() -> None:
    """No floor: a live seat with a second left keeps its second (it used to get 30 s at
    every reclaim), and a hand-over does not stop its clock."""
    clock = SeatClock(since=10_000, left=1_000, activation=3)
    assert reclaimed(LIVE, clock, active=True, now=10_900, version=9) == clock
    assert deadline_of(LIVE, clock) == 11_000
    # Through the record changes of a hand-over and a reclaim.
    from service.matches.records import MatchRecord

    record = MatchRecord(game=TOY, players=2, options=None, seed=1, tokens=("a", "b"),
                         state=b"", time_control=LIVE,
                         clocks=(clock, SeatClock(None, 60_000, 0)))
    away = absence.to_bot(record, 0, "random", "hand_over", 4, 10_500, 0)
    assert away.clocks == record.clocks
    back = absence.reclaim(away, 0, "c", True, 5, 10_900, 0)
    assert back.clocks == record.clocks
    # A clock a build before this one stopped at the hand-over starts at the reclaim, with
    # the time it had: the seat must have a deadline.
    stopped = replace(clock, since=None, left=400)
    assert reclaimed(LIVE, stopped, active=True, now=20_000, version=9) == SeatClock(
        20_000, 400, 9)
