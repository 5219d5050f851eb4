"""Ginkgopolis engine benchmark: random playouts per second and legal_actions latency.

Run: ``.venv/bin/python -m bench.ginkgopolis`` (``--games N --runs R`` to change the sample).
Everything goes through the public engine contract (``active_seats``, ``legal_actions`` +
``apply`` with a uniformly random choice among the active seats and their moves), as a bot
or the service would use it. Reports the median over runs; CPU time (``process_time``) is
given too because the machine's cores are shared.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from typing import Any

from service.games.ginkgopolis import ENGINE


def playout(players: int, seed: int) -> int:
    engine = ENGINE
    chooser = random.Random(seed)
    state = engine.setup(players, None, seed)
    steps = 0
    while True:
        active = engine.active_seats(state)
        if not active:
            return steps
        seat = chooser.choice(sorted(active))
        state, _ = engine.apply(state, seat, chooser.choice(engine.legal_actions(state, seat)))
        steps += 1


def games_per_second(players: int, games: int, runs: int) -> tuple[float, float, float]:
    """Median over runs of (wall-clock games/s, CPU-time games/s, steps per game)."""
    rates, cpu_rates, steps = [], [], []
    for run in range(runs):
        start, cpu = time.perf_counter(), time.process_time()
        total = sum(playout(players, run * games + g) for g in range(games))
        rates.append(games / (time.perf_counter() - start))
        cpu_rates.append(games / max(time.process_time() - cpu, 1e-9))
        steps.append(total / games)
    return statistics.median(rates), statistics.median(cpu_rates), statistics.median(steps)


def sample_states(players: int, count: int) -> list[tuple[Any, int]]:
    """(state, active seat) pairs spread over whole random games."""
    engine = ENGINE
    picked = []
    for seed in range(count):
        chooser = random.Random(seed)
        state = engine.setup(players, None, seed)
        trail = []
        while engine.active_seats(state):
            seat = chooser.choice(sorted(engine.active_seats(state)))
            trail.append((state, seat))
            state, _ = engine.apply(state, seat, chooser.choice(engine.legal_actions(state, seat)))
        picked.append(trail[len(trail) // 2])
        picked.append(trail[len(trail) // 4])
    return picked


def legal_actions_median_us(
    players: int, count: int = 100, repeat: int = 20
) -> tuple[float, float]:
    engine = ENGINE
    samples, sizes = [], []
    for state, seat in sample_states(players, count):
        start = time.perf_counter()
        for _ in range(repeat):
            legal = engine.legal_actions(state, seat)
        samples.append((time.perf_counter() - start) / repeat * 1e6)
        sizes.append(len(legal))
    return statistics.median(samples), statistics.median(sizes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(f"Ginkgopolis: random playouts ({args.games} games x {args.runs} runs, median)")
    print(
        "| players | games/s (wall) | games/s (CPU time) | steps/game "
        "| legal_actions median (us) | moves listed (median) |"
    )
    print("|---|---|---|---|---|---|")
    for players in (1, 2, 3, 4, 5):
        rate, cpu_rate, steps = games_per_second(players, args.games, args.runs)
        latency, size = legal_actions_median_us(players)
        print(
            f"| {players} | {rate:.0f} | {cpu_rate:.0f} | {steps:.0f} | {latency:.1f} "
            f"| {size:.0f} |"
        )


if __name__ == "__main__":
    main()
