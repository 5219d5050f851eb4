"""Ginkgopolis engine benchmark: random playouts per second and legal_actions latency.

Run: ``.venv/bin/python -m bench.ginkgopolis`` (``--games N --runs R`` to change the sample,
``--rules-version V`` to play under an older rules version; default: the newest).
Everything goes through the public engine contract (``active_seats``, ``legal_actions`` +
``apply`` with a uniformly random choice among the active seats and their moves), as a bot
or the service would use it. Reports the median over runs; CPU time (``process_time``) is
given too because the machine's cores are shared.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any

from service.games.ginkgopolis import ENGINE, GinkgopolisEngine

from .engine_playouts import games_per_second, random_game, random_seat, sample_args


class AtVersion(GinkgopolisEngine):
    """The engine, its new matches set up under one rules version."""

    def __init__(self, version: int) -> None:
        self.version = version

    def setup(self, players: int, options: Any, seed: int,
              rules_version: int | None = None) -> Any:
        return super().setup(players, options, seed, self.version)


def rules_version_arg() -> int:
    """``--rules-version V`` (taken off the command line; the newest when absent)."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--rules-version", type=int, default=ENGINE.rules_versions[-1])
    known, rest = parser.parse_known_args()
    sys.argv[1:] = rest
    return int(known.rules_version)


def sample_states(engine: Any, players: int, count: int) -> list[tuple[Any, int]]:
    """(state, active seat) pairs spread over whole random games."""
    picked = []
    for seed in range(count):
        trail = [
            (state, seat)
            for state, seat in random_game(engine, players, seed, random_seat)
            if seat is not None
        ]
        picked.append(trail[len(trail) // 2])
        picked.append(trail[len(trail) // 4])
    return picked


def legal_actions_median_us(
    engine: Any, players: int, count: int = 100, repeat: int = 20
) -> tuple[float, float]:
    samples, sizes = [], []
    for state, seat in sample_states(engine, players, count):
        start = time.perf_counter()
        for _ in range(repeat):
            legal = engine.legal_actions(state, seat)
        samples.append((time.perf_counter() - start) / repeat * 1e6)
        sizes.append(len(legal))
    return statistics.median(samples), statistics.median(sizes)


def main() -> None:
    version = rules_version_arg()
    args = sample_args(__doc__)
    engine = AtVersion(version)
    print(f"Ginkgopolis, rules version {version}: random playouts ({args.games} games x "
          f"{args.runs} runs, median)")
    print(
        "| players | games/s (wall) | games/s (CPU time) | steps/game "
        "| legal_actions median (us) | moves listed (median) |"
    )
    print("|---|---|---|---|---|---|")
    for players in (1, 2, 3, 4, 5):
        rate, cpu_rate, steps = games_per_second(
            engine, players, args.games, args.runs, random_seat
        )
        latency, size = legal_actions_median_us(engine, players)
        print(
            f"| {players} | {rate:.0f} | {cpu_rate:.0f} | {steps:.0f} | {latency:.1f} "
            f"| {size:.0f} |"
        )


if __name__ == "__main__":
    main()
