"""Fair bot scheduling (issue 20, item 2): how long a human match's bot stays silent while
all-bot matches keep the worker busy.

    .venv/bin/python -m bench.bot_fairness [--all-bot 8] [--samples 5] [--cap 40]

On the embedded store with the in-process worker of ``skyline serve`` (default concurrency
and search budgets): ``--all-bot`` Ginkgopolis matches of five seats are created with four
``search`` bots, then their last human seat is handed over to a ``search`` bot. Once every
one of them is playing, a New York 1901 match is created whose ``random`` bot (seat 0) is to
move at once; the time until its first move is stored is one sample (``--cap`` seconds at
most: a sample that reaches it counts as the cap). ``--samples`` such matches, one after the
other; prints the median and every sample. The same script runs unchanged against an older
checkout (``PYTHONPATH=<old tree>``): that is the "before" figure of docs/bots.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time

from service.matches import MatchService
from service.matches.models import CreateMatchRequest
from service.store.sqlite import SqliteStore
from service.workers.bots import BotWorker


async def first_bot_move(store: SqliteStore, service: MatchService, seed: int,
                         cap: float) -> float:
    created = await service.create_match(
        CreateMatchRequest(game="ny1901", players=2, seed=seed, bots={"0": "random"}))
    start = time.monotonic()
    while time.monotonic() - start < cap:
        version, _ = await store.load(created.match_id)
        if version >= 1:
            return time.monotonic() - start
        await asyncio.sleep(0.01)
    return cap


async def run(all_bot: int, samples: int, cap: float) -> list[float]:
    store = SqliteStore(":memory:")
    service = MatchService(store, ttl_finished=None, ttl_idle=None)
    worker = BotWorker(service)  # what `skyline serve` runs on the embedded store
    running = asyncio.create_task(worker.run())
    try:
        ids = []
        for seed in range(all_bot):
            created = await service.create_match(CreateMatchRequest(
                game="ginkgopolis", players=5, seed=seed,
                bots={str(seat): "search" for seat in range(1, 5)}))
            await service.hand_seat_to_bot(created.match_id, created.seats[0].token, "search")
            ids.append(created.match_id)
        while worker.moves < all_bot:  # every all-bot match under way
            await asyncio.sleep(0.05)
        out = []
        for n in range(samples):
            out.append(await first_bot_move(store, service, 1000 + n, cap))
            await asyncio.sleep(0.5)
        return out
    finally:
        worker.stop()
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--all-bot", type=int, default=8)
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--cap", type=float, default=40.0)
    args = parser.parse_args()
    got = asyncio.run(run(args.all_bot, args.samples, args.cap))
    print(json.dumps({
        "all_bot_matches": args.all_bot,
        "median_seconds": round(statistics.median(got), 3),
        "samples_seconds": [round(x, 3) for x in got],
        "cap_seconds": args.cap,
    }))


if __name__ == "__main__":
    main()
