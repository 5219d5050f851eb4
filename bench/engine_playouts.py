"""The harness the engine benchmarks share: uniformly random playouts through the public
engine contract (``active_seats``, ``legal_actions`` + ``apply``), as a bot or the service
would use it, and their median rates over several runs.

Each game's benchmark (``bench.ny1901``, ``bench.ginkgopolis``) passes its engine and how it
picks the acting seat among the active ones (``lowest_seat`` or ``random_seat``); the random
choices all come from one ``random.Random(seed)`` per game, so a seed always plays the same
game.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable, Collection, Iterator
from typing import Any, Protocol


class Playable(Protocol):
    """The part of the engine contract (``service/games/base.py``) a playout uses."""

    def setup(self, players: int, options: Any, seed: int, /) -> Any: ...

    def active_seats(self, state: Any, /) -> frozenset[int]: ...

    def legal_actions(self, state: Any, seat: int, /) -> list[Any]: ...

    def apply(self, state: Any, seat: int, action: Any, /) -> tuple[Any, Any]: ...


SeatPicker = Callable[[random.Random, Collection[int]], int]
"""Which of the active seats acts next (may draw from the game's generator)."""


def lowest_seat(chooser: random.Random, active: Collection[int]) -> int:
    return min(active)


def random_seat(chooser: random.Random, active: Collection[int]) -> int:
    return chooser.choice(sorted(active))


def random_game(
    engine: Playable, players: int, seed: int, pick_seat: SeatPicker
) -> Iterator[tuple[Any, int | None]]:
    """Every position of one random game in order, each with the seat that moves there
    (``None`` with the final position, where no seat is active)."""
    chooser = random.Random(seed)
    state = engine.setup(players, None, seed)
    while True:
        active = engine.active_seats(state)
        if not active:
            yield state, None
            return
        seat = pick_seat(chooser, active)
        yield state, seat
        state, _ = engine.apply(state, seat, chooser.choice(engine.legal_actions(state, seat)))


def playout(engine: Playable, players: int, seed: int, pick_seat: SeatPicker) -> int:
    """Plays one random game to its end; returns the number of moves."""
    return sum(1 for _, seat in random_game(engine, players, seed, pick_seat) if seat is not None)


def games_per_second(
    engine: Playable, players: int, games: int, runs: int, pick_seat: SeatPicker
) -> tuple[float, float, float]:
    """Median over runs of (wall-clock games/s, CPU-time games/s, steps per game). CPU time
    (``process_time``) stays meaningful when other processes share the cores."""
    rates, cpu_rates, steps = [], [], []
    for run in range(runs):
        start, cpu = time.perf_counter(), time.process_time()
        total = sum(
            playout(engine, players, run * games + g, pick_seat) for g in range(games)
        )
        rates.append(games / (time.perf_counter() - start))
        cpu_rates.append(games / max(time.process_time() - cpu, 1e-9))
        steps.append(total / games)
    return statistics.median(rates), statistics.median(cpu_rates), statistics.median(steps)


def sample_args(description: str | None) -> argparse.Namespace:
    """``--games N --runs R``: the playout sample (default 100 games x 5 runs)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    return parser.parse_args()
