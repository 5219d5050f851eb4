"""Time in matches, kept by the service and never by the rules: time controls
(``controls.py``: correspondence deadlines and live chess clocks, the timeout policy), each
seat's clock and how a write moves it (``seats.py``). Pure: the time is an argument, the
engines never see it; the match service stores the clocks in its record and the clock
worker (``service/workers/clocks.py``) fires the deadlines."""

from .controls import (
    MAX_MOVE_SECONDS,
    MIN_MOVE_SECONDS,
    BadClockInput,
    OnTimeout,
    TimeControl,
    parse_on_timeout,
    parse_time_control,
)
from .seats import (
    SeatClock,
    deadline_of,
    out_of_time,
    reclaimed,
    remaining_of,
    start_clocks,
    step_clocks,
    stopped,
)

__all__ = [
    "MAX_MOVE_SECONDS",
    "MIN_MOVE_SECONDS",
    "BadClockInput",
    "OnTimeout",
    "SeatClock",
    "TimeControl",
    "deadline_of",
    "out_of_time",
    "parse_on_timeout",
    "parse_time_control",
    "reclaimed",
    "remaining_of",
    "start_clocks",
    "step_clocks",
    "stopped",
]
