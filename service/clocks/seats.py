"""Each seat's clock, and how a write moves it. Times are integer milliseconds of the
store's clock (``StoredMatches.now_ms``); versions are the match's.

A seat's clock *runs* while the seat may act (one of the engine's active seats of an
unfinished match). ``since`` is when its current activation began; ``activation`` the
version that began it. Correspondence: the deadline is ``since + secondsPerMove`` and each
move of the seat that leaves it active begins a new activation (a seat that acts several
times in one turn is not stalled on one deadline). Live: ``left`` is the time the seat had
when its clock started running; the deadline is ``since + left``; when the seat stops being
active its clock stops, is charged the time it ran and, when its own move ended the
activation (a completed turn), gets the increment (Fischer). Untimed matches keep ``since``
too: views show when each active seat's turn began.

A seat's deadline runs from its activation, whoever holds it: a bot taking the seat for its
player (a hand-over, a timeout under the ``bot`` policy) leaves its clock as it is, and the
player taking it back (``reclaimed``) finds it as it is -- no new activation, no time added --
so handing a seat over and taking it back never moves a deadline later (issue 31, item 7).
Only a move (the bot's or the player's) begins a new activation.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace
from typing import Any

from .controls import TimeControl


@dataclass(frozen=True, slots=True)
class SeatClock:
    since: int | None = None
    """When the running activation began (None: the clock is stopped)."""
    left: int | None = None
    """Live clocks: the time the seat had when ``since`` began (or when it stopped)."""
    activation: int = 0
    """The version that began the seat's current (or last) activation."""

    @property
    def running(self) -> bool:
        return self.since is not None

    def encode(self) -> list[Any]:
        return [self.since, self.left, self.activation]

    @classmethod
    def decode(cls, raw: list[Any]) -> SeatClock:
        return cls(raw[0], raw[1], int(raw[2]))


def start_clocks(
    control: TimeControl | None, players: int, active: Collection[int], now: int, version: int
) -> tuple[SeatClock, ...]:
    """The clocks of a match set up at ``version``: the active seats' running."""
    left = control.base_seconds * 1000 if control is not None and control.kind == "live" else None
    return tuple(SeatClock(now if seat in active else None, left, version)
                 for seat in range(players))


def step_clocks(
    control: TimeControl | None, clocks: tuple[SeatClock, ...], before: Collection[int],
    after: Collection[int], mover: int | None, now: int, version: int,
) -> tuple[SeatClock, ...]:
    """The clocks after the write of ``version`` by ``mover`` (None: a service entry), the
    active seats going from ``before`` to ``after`` (empty once the match is finished)."""
    out = []
    for seat, clock in enumerate(clocks):
        was, now_active = seat in before and clock.running, seat in after
        if was and now_active:
            if mover == seat and (control is None or control.kind == "correspondence"):
                clock = SeatClock(now, clock.left, version)
        elif was:
            clock = _stopped(control, clock, now, completed=mover == seat)
        elif now_active:
            clock = SeatClock(now, clock.left, version)
        out.append(clock)
    return tuple(out)


def _stopped(control: TimeControl | None, clock: SeatClock, now: int,
             *, completed: bool) -> SeatClock:
    left = clock.left
    if control is not None and control.kind == "live" and left is not None:
        ran = 0 if clock.since is None else now - clock.since
        left = max(left - ran, 0)
        if completed:
            left += control.increment_seconds * 1000
    return SeatClock(None, left, clock.activation)


def out_of_time(control: TimeControl | None, clock: SeatClock) -> SeatClock:
    """A seat's clock once its time ran out: stopped, nothing left on a live clock."""
    live = control is not None and control.kind == "live"
    return SeatClock(None, 0 if live else clock.left, clock.activation)


def stopped(control: TimeControl | None, clock: SeatClock, now: int) -> SeatClock:
    """A seat's clock stopped at ``now`` without completing a turn (resigned, handed over)."""
    return _stopped(control, clock, now, completed=False) if clock.running else clock


def reclaimed(
    control: TimeControl | None, clock: SeatClock, active: bool, now: int, version: int
) -> SeatClock:
    """The clock of a seat its player took back from a bot at ``version``: unchanged -- its
    activation (and so its deadline) runs on from when it began, whoever held the seat
    meanwhile; a live clock keeps the time it has (none is granted). A clock found stopped
    while the seat may act (stored by a build whose hand-over stopped it) starts now, with
    the time it had, as a new activation: otherwise the seat would have no deadline at all."""
    if clock.running or not active:
        return clock
    return replace(clock, since=now, activation=version)


def deadline_of(control: TimeControl | None, clock: SeatClock) -> int | None:
    """When a running clock runs out (None: stopped, or no time control)."""
    if control is None or clock.since is None:
        return None
    if control.kind == "correspondence":
        return clock.since + control.seconds_per_move * 1000
    return clock.since + (clock.left or 0)


def remaining_of(control: TimeControl | None, clock: SeatClock, now: int) -> int | None:
    """What is left on the clock at ``now`` (None: no time control)."""
    if control is None:
        return None
    deadline = deadline_of(control, clock)
    if deadline is not None:
        return max(deadline - now, 0)
    if control.kind == "correspondence":
        return control.seconds_per_move * 1000
    return clock.left or 0
