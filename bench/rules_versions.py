"""Engine speed per rules version: paired, alternating batches of random playouts.

Run: ``.venv/bin/python -m bench.rules_versions`` (``--games N`` per batch, ``--pairs P``).
For each game and player count, batches of the same seeded random games are played under the
previous and the newest rules version in turn (A B A B ...), timed with ``process_time``;
the report gives each version's median games/s and the median of the per-pair ratios
newest / previous, which cancels most of the noise of a shared machine. Issue 13's bar: a
rules version is no more than 10 % slower than the one before it.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from typing import Any

from service import games


def _playout(engine: Any, players: int, seed: int, version: int) -> int:
    chooser = random.Random(seed)
    state = engine.setup(players, None, seed, version)
    steps = 0
    while engine.result(state) is None:
        seat = chooser.choice(sorted(engine.active_seats(state)))
        state, _ = engine.apply(state, seat, chooser.choice(engine.legal_actions(state, seat)))
        steps += 1
    return steps


def _batch(engine: Any, players: int, seeds: range, version: int) -> float:
    start = time.process_time()
    for seed in seeds:
        _playout(engine, players, seed, version)
    return len(seeds) / (time.process_time() - start)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=10, help="games per batch")
    parser.add_argument("--pairs", type=int, default=7, help="alternating batch pairs")
    args = parser.parse_args(argv)
    print("| game | players | previous | newest | games/s previous | games/s newest "
          "| ratio newest/previous (median of pairs) |")
    print("|---|---|---|---|---|---|---|")
    for game in ("ny1901", "ginkgopolis"):
        engine = games.get(game)
        old, new = engine.rules_versions[-2], engine.rules_versions[-1]
        for players in range(engine.min_players, engine.max_players + 1):
            rates: dict[int, list[float]] = {old: [], new: []}
            ratios = []
            for pair in range(args.pairs):
                seeds = range(pair * args.games, (pair + 1) * args.games)
                order = (old, new) if pair % 2 == 0 else (new, old)
                for version in order:
                    rates[version].append(_batch(engine, players, seeds, version))
                ratios.append(rates[new][-1] / rates[old][-1])
            print(f"| {game} | {players} | v{old} | v{new} | "
                  f"{statistics.median(rates[old]):.0f} | {statistics.median(rates[new]):.0f} "
                  f"| {statistics.median(ratios):.3f} |", flush=True)


if __name__ == "__main__":
    main()
