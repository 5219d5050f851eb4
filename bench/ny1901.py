"""New York 1901 engine benchmark: random playouts per second and legal_actions latency.

Run: ``.venv/bin/python -m bench.ny1901`` (``--games N --runs R`` to change the sample).
Everything goes through the public engine contract (``legal_actions`` + ``apply`` with a
uniformly random choice), as a bot or the service would use it.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from typing import Any

from service.games.ny1901 import ENGINE


def playout(players: int, seed: int) -> int:
    engine = ENGINE
    chooser = random.Random(seed)
    state = engine.setup(players, None, seed)
    steps = 0
    while True:
        active = engine.active_seats(state)
        if not active:
            return steps
        seat = min(active)
        state, _ = engine.apply(state, seat, chooser.choice(engine.legal_actions(state, seat)))
        steps += 1


def games_per_second(players: int, games: int, runs: int) -> tuple[float, float, float]:
    """Median over runs of (wall-clock games/s, CPU-time games/s, steps per game). CPU time
    (``process_time``) stays meaningful when other processes share the cores."""
    rates, cpu_rates, steps = [], [], []
    for run in range(runs):
        start, cpu = time.perf_counter(), time.process_time()
        total = sum(playout(players, run * games + g) for g in range(games))
        rates.append(games / (time.perf_counter() - start))
        cpu_rates.append(games / max(time.process_time() - cpu, 1e-9))
        steps.append(total / games)
    return statistics.median(rates), statistics.median(cpu_rates), statistics.median(steps)


def mid_game_states(players: int, count: int) -> list[Any]:
    engine = ENGINE
    states = []
    for seed in range(count):
        chooser = random.Random(seed)
        state = engine.setup(players, None, seed)
        trail = [state]
        while engine.active_seats(state):
            seat = min(engine.active_seats(state))
            state, _ = engine.apply(state, seat, chooser.choice(engine.legal_actions(state, seat)))
            trail.append(state)
        states.append(trail[len(trail) // 2])
    return states


def legal_actions_median_us(players: int, count: int = 200, repeat: int = 20) -> tuple[
        float, float, float]:
    """Median microseconds of ``legal_actions`` on mid-game positions: cold (the engine's
    placement memo emptied first) and warm (repeated calls), and the median move count."""
    engine = ENGINE
    cold, warm, sizes = [], [], []
    for state in mid_game_states(players, count):
        engine.rules.clear_memo()
        start = time.perf_counter()
        legal = engine.legal_actions(state, state.seat)
        cold.append((time.perf_counter() - start) * 1e6)
        start = time.perf_counter()
        for _ in range(repeat):
            engine.legal_actions(state, state.seat)
        warm.append((time.perf_counter() - start) / repeat * 1e6)
        sizes.append(len(legal))
    return statistics.median(cold), statistics.median(warm), statistics.median(sizes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(f"New York 1901: random playouts ({args.games} games x {args.runs} runs, median)")
    print("| players | games/s (wall) | games/s (CPU time) | steps/game "
          "| legal_actions cold / warm (us, median) | moves listed (median) |")
    print("|---|---|---|---|---|---|")
    for players in (2, 3, 4):
        rate, cpu_rate, steps = games_per_second(players, args.games, args.runs)
        cold, warm, size = legal_actions_median_us(players)
        print(f"| {players} | {rate:.0f} | {cpu_rate:.0f} | {steps:.0f} "
              f"| {cold:.0f} / {warm:.0f} | {size:.0f} |")


if __name__ == "__main__":
    main()
