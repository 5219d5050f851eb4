"""Bot worker thinking: threads vs worker processes (``skyline worker --processes``).

    .venv/bin/python -m bench.bot_pool [--rounds 5] [--simulations 100]

Sixteen search-bot moves (New York 1901 and Ginkgopolis, 2 players, positions after ten
seeded random moves) submitted at once to a pool of 4 threads and to a pool of one process per
core, as the worker submits them; median wall time of ``--rounds`` rounds after one warm-up
round, and the ratio. Threads share one core's worth of Python (the GIL).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import multiprocessing
import os
import random
import statistics
import time
from typing import Any

from service import games
from service.bots import Budget
from service.workers.bots import think


def positions() -> list[tuple[str, Any, list[Any], int]]:
    out = []
    for game in ("ny1901", "ginkgopolis"):
        engine = games.get(game)
        for seed in range(8):
            state = engine.setup(2, None, seed)
            chooser = random.Random(seed)
            for _ in range(10):
                seat = min(engine.active_seats(state))
                state, _ = engine.apply(state, seat, chooser.choice(
                    engine.legal_actions(state, seat)))
            seat = min(engine.active_seats(state))
            out.append((game, engine.view(state, seat), engine.legal_actions(state, seat), seat))
    return out


def seconds_per_round(pool: concurrent.futures.Executor, moves: list[Any], budget: Budget,
                      rounds: int) -> float:
    def one_round() -> float:
        start = time.perf_counter()
        futures = [pool.submit(think, "search", 1, budget, g, v, m, s) for g, v, m, s in moves]
        for future in futures:
            future.result()
        return time.perf_counter() - start

    one_round()  # warm-up: imports, process start
    return statistics.median(one_round() for _ in range(rounds))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--simulations", type=int, default=100)
    args = parser.parse_args()
    moves = positions()
    budget = Budget(iterations=args.simulations, seconds=None)
    cores = os.cpu_count() or 1
    with concurrent.futures.ThreadPoolExecutor(4) as threads:
        in_threads = seconds_per_round(threads, moves, budget, args.rounds)
    spawn = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(cores, mp_context=spawn) as processes:
        in_processes = seconds_per_round(processes, moves, budget, args.rounds)
    print(f"{len(moves)} search moves ({args.simulations} simulations each), median of "
          f"{args.rounds} rounds, {cores} cores")
    print("| pool | seconds per round | moves/s | vs threads |")
    print("| --- | ---: | ---: | ---: |")
    print(f"| 4 threads | {in_threads:.2f} | {len(moves) / in_threads:.1f} | 1.00x |")
    print(f"| {cores} processes | {in_processes:.2f} | {len(moves) / in_processes:.1f} "
          f"| {in_threads / in_processes:.2f}x |")


if __name__ == "__main__":
    main()
