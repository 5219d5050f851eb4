"""service/clocks: time controls checked, and each seat's clock as writes move it (issue 18:
correspondence deadlines per activation, live clocks with a Fischer increment per completed
turn, several seats running at once in simultaneous steps)."""

from __future__ import annotations

from typing import Any

import pytest

from service.clocks import (
    BadClockInput,
    OnTimeout,
    SeatClock,
    TimeControl,
    deadline_of,
    out_of_time,
    parse_on_timeout,
    parse_time_control,
    reclaimed,
    remaining_of,
    start_clocks,
    step_clocks,
    stopped,
)
from service.clocks.controls import MAX_MOVE_SECONDS

DAY = {"correspondence": {"secondsPerMove": 86400}}
LIVE = {"live": {"baseSeconds": 600, "incrementSeconds": 5}}


def test_time_controls_parse_and_round_trip() -> None:
    corr = parse_time_control(DAY)
    assert corr == TimeControl("correspondence", seconds_per_move=86400)
    live = parse_time_control(LIVE)
    assert live == TimeControl("live", base_seconds=600, increment_seconds=5)
    for control in (corr, live):
        assert TimeControl.decode(control.encode()) == control
    assert corr.wire() == DAY and live.wire() == LIVE
    assert parse_time_control({"live": {"baseSeconds": 60}}).increment_seconds == 0


@pytest.mark.parametrize("raw", [
    {"correspondence": {"secondsPerMove": 9}},  # below the 10 s floor
    {"correspondence": {"secondsPerMove": MAX_MOVE_SECONDS + 1}},  # over 14 days
    {"correspondence": {"secondsPerMove": True}},
    {"correspondence": {"secondsPerMove": 60.5}},
    {"correspondence": {}},
    {"live": {"baseSeconds": 59}},
    {"live": {"baseSeconds": 3 * 3600 + 1}},
    {"live": {"baseSeconds": 600, "incrementSeconds": 181}},
    {"live": {"baseSeconds": 600, "incrementSeconds": -1}},
    {"live": {"incrementSeconds": 5}},
    {"live": {"baseSeconds": 600, "extra": 1}},
    {"blitz": {"baseSeconds": 600}},
    {**DAY, **LIVE},
    [],
    "fast",
])
def test_out_of_range_or_misshapen_time_controls_are_refused(raw: Any) -> None:
    with pytest.raises(BadClockInput) as refused:
        parse_time_control(raw)
    assert refused.value.code == "bad_time_control"


def test_the_operator_floor_applies() -> None:
    assert parse_time_control({"correspondence": {"secondsPerMove": 10}}).seconds_per_move == 10
    with pytest.raises(BadClockInput):
        parse_time_control({"correspondence": {"secondsPerMove": 30}}, min_move_seconds=60)


def test_timeout_policies() -> None:
    both = ("random", "greedy")
    assert parse_on_timeout({"policy": "forfeit"}, both) == OnTimeout("forfeit")
    assert parse_on_timeout({"policy": "bot", "bot": "greedy"}, both) == OnTimeout("bot", "greedy")
    assert parse_on_timeout({"policy": "bot"}, both) == OnTimeout("bot", "random")
    for policy in (OnTimeout("forfeit"), OnTimeout("bot", "greedy")):
        assert OnTimeout.decode(policy.encode()) == policy
    for raw in ({"policy": "bot", "bot": "greedy"},  # a game without a greedy bot
                {"policy": "bot", "bot": "oracle"}, {"policy": "pause"},
                {"policy": "forfeit", "bot": "random"}, None):
        with pytest.raises(BadClockInput) as refused:
            parse_on_timeout(raw, ("random",))
        assert refused.value.code == "bad_timeout_policy"


def test_a_correspondence_deadline_is_per_activation() -> None:
    control = parse_time_control({"correspondence": {"secondsPerMove": 60}})
    clocks = start_clocks(control, 2, {0}, now=1_000, version=0)
    assert [deadline_of(control, c) for c in clocks] == [61_000, None]
    # Seat 0 acts and stays active (several actions in one turn): a new deadline.
    clocks = step_clocks(control, clocks, {0}, {0}, mover=0, now=50_000, version=1)
    assert deadline_of(control, clocks[0]) == 110_000 and clocks[0].activation == 1
    # Seat 0 ends its turn: its clock stops, seat 1's starts.
    clocks = step_clocks(control, clocks, {0}, {1}, mover=0, now=70_000, version=2)
    assert [deadline_of(control, c) for c in clocks] == [None, 130_000]
    assert remaining_of(control, clocks[1], 100_000) == 30_000
    assert remaining_of(control, clocks[0], 100_000) == 60_000  # a full move's time, stopped
    # A service entry (nobody moved) leaves the running clock alone.
    same = step_clocks(control, clocks, {1}, {1}, mover=None, now=90_000, version=3)
    assert same == clocks


def test_a_live_clock_runs_only_while_its_seat_acts_with_a_fischer_increment() -> None:
    control = parse_time_control(LIVE)
    clocks = start_clocks(control, 2, {0}, now=0, version=0)
    assert deadline_of(control, clocks[0]) == 600_000
    # Two actions in one turn: the clock keeps running, no increment yet.
    clocks = step_clocks(control, clocks, {0}, {0}, mover=0, now=10_000, version=1)
    assert deadline_of(control, clocks[0]) == 600_000
    clocks = step_clocks(control, clocks, {0}, {1}, mover=0, now=30_000, version=2)
    assert clocks[0] == SeatClock(None, 600_000 - 30_000 + 5_000, 0)  # charged, incremented
    assert remaining_of(control, clocks[0], 99_999) == 575_000  # stopped: not running down
    assert deadline_of(control, clocks[1]) == 30_000 + 600_000
    # Seat 1 leaves the activation without moving (e.g. a service entry): no increment.
    clocks = step_clocks(control, clocks, {1}, {0}, mover=None, now=40_000, version=3)
    assert clocks[1].left == 590_000 and deadline_of(control, clocks[0]) == 40_000 + 575_000


def test_simultaneous_steps_run_every_choosing_seat_clock() -> None:
    control = parse_time_control({"live": {"baseSeconds": 60, "incrementSeconds": 0}})
    clocks = start_clocks(control, 3, {0}, now=0, version=0)
    clocks = step_clocks(control, clocks, {0}, {0, 1, 2}, mover=0, now=1_000, version=1)
    assert [c.running for c in clocks] == [True, True, True]
    # Seat 2 chooses first: only its clock stops; the others still run.
    clocks = step_clocks(control, clocks, {0, 1, 2}, {0, 1}, mover=2, now=5_000, version=2)
    assert [c.running for c in clocks] == [True, True, False]
    assert clocks[2].left == 56_000 and deadline_of(control, clocks[1]) == 61_000


def test_a_finished_match_stops_every_clock() -> None:
    control = parse_time_control(DAY)
    clocks = start_clocks(control, 2, {0, 1}, now=0, version=0)
    clocks = step_clocks(control, clocks, {0, 1}, set(), mover=1, now=5, version=1)
    assert not any(c.running for c in clocks)


def test_untimed_matches_still_say_when_each_turn_began() -> None:
    clocks = start_clocks(None, 2, {0}, now=7, version=0)
    clocks = step_clocks(None, clocks, {0}, {0}, mover=0, now=9, version=1)
    assert clocks[0].since == 9  # each of its actions
    clocks = step_clocks(None, clocks, {0}, {1}, mover=0, now=11, version=2)
    assert clocks[1].since == 11 and deadline_of(None, clocks[1]) is None
    assert remaining_of(None, clocks[1], 20) is None


def test_timeout_resign_and_reclaim_clocks() -> None:
    live = parse_time_control(LIVE)
    clock = SeatClock(since=0, left=1_000, activation=3)
    assert out_of_time(live, clock) == SeatClock(None, 0, 3)
    assert stopped(live, clock, now=400) == SeatClock(None, 600, 3)
    # Taken back from a bot while active: the clock as it was (issue 31, item 7: no new
    # activation, no time added); one found stopped starts with the time it had.
    assert reclaimed(live, clock, active=True, now=5_000, version=9) == clock
    back = reclaimed(live, out_of_time(live, clock), active=True, now=5_000, version=9)
    assert back == SeatClock(5_000, 0, 9)
    corr = parse_time_control({"correspondence": {"secondsPerMove": 100}})
    idle = reclaimed(corr, SeatClock(None, None, 2), active=False, now=5_000, version=9)
    assert idle == SeatClock(None, None, 2)
    assert SeatClock.decode(back.encode()) == back
