"""New York 1901 engine benchmark: random playouts per second and legal_actions latency.

Run: ``.venv/bin/python -m bench.ny1901`` (``--games N --runs R`` to change the sample).
Everything goes through the public engine contract (``legal_actions`` + ``apply`` with a
uniformly random choice), as a bot or the service would use it.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from service.games.ny1901 import ENGINE

from .engine_playouts import games_per_second, lowest_seat, random_game, sample_args


def mid_game_states(players: int, count: int) -> list[Any]:
    """The middle position of each of ``count`` random games (seeds 0, 1, ...)."""
    states = []
    for seed in range(count):
        trail = [state for state, _ in random_game(ENGINE, players, seed, lowest_seat)]
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
    args = sample_args(__doc__)
    print(f"New York 1901: random playouts ({args.games} games x {args.runs} runs, median)")
    print("| players | games/s (wall) | games/s (CPU time) | steps/game "
          "| legal_actions cold / warm (us, median) | moves listed (median) |")
    print("|---|---|---|---|---|---|")
    for players in (2, 3, 4):
        rate, cpu_rate, steps = games_per_second(
            ENGINE, players, args.games, args.runs, lowest_seat
        )
        cold, warm, size = legal_actions_median_us(players)
        print(f"| {players} | {rate:.0f} | {cpu_rate:.0f} | {steps:.0f} "
              f"| {cold:.0f} / {warm:.0f} | {size:.0f} |")


if __name__ == "__main__":
    main()
