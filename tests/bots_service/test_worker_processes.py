"""`skyline worker --processes N`: bots think in worker processes instead of threads. The
moves must be the very ones the threads would choose (bots are seeded by the match, search
budgets here are iteration counts only), and they must come from other processes."""

from __future__ import annotations

import concurrent.futures
import os
import random
from typing import Any

import pytest

from service import games
from service.bots import Budget
from service.games.base import dump_action
from service.matches import MatchService
from service.matches.models import CreateMatchRequest
from service.store.sqlite import SqliteStore
from service.workers.bots import BotWorker, think

CASES = [
    ("ny1901", 2, {"1": "search"}),
    ("ginkgopolis", 3, {"1": "greedy", "2": "search"}),  # simultaneous card choices
]


async def _play(game: str, players: int, bots: dict[str, str], processes: int
                ) -> list[tuple[int | None, Any]]:
    """A complete match: humans play seeded random moves, the worker plays the bot seats.
    Returns the log as (seat, action) pairs."""
    service = MatchService(SqliteStore(":memory:"), ttl_finished=None, ttl_idle=None)
    worker = BotWorker(service, budget=Budget(iterations=4, seconds=None), processes=processes)
    try:
        created = await service.create_match(
            CreateMatchRequest(game=game, players=players, seed=21, bots=bots)
        )
        match_id = created.match_id
        tokens = {s.seat: s.token for s in created.seats}
        engine = games.get(game)
        chooser = random.Random(4)
        while (state := await service.get_state(match_id, None)).status != "finished":
            humans = [s for s in state.active_seats if s in tokens]
            if humans:
                seat = chooser.choice(humans)
                moves = (await service.legal_moves(match_id, tokens[seat])).moves
                move = dump_action(engine, chooser.choice(moves))
                await service.act(match_id, tokens[seat], move, None, None)
            else:
                assert await worker.play(match_id)
        page = await service.log(match_id, None, 0)
        assert {str(e.seat) for e in page.entries} >= set(bots)  # every bot seat moved
        # The moves, not the stored bytes: an entry also keeps the time it was written
        # (its version's record header, issue 30), which differs from run to run.
        return [(e.seat, e.action) for e in page.entries]
    finally:
        worker._pool.shutdown(wait=True)


@pytest.mark.parametrize(("game", "players", "bots"), CASES)
async def test_processes_choose_the_moves_threads_choose(
    game: str, players: int, bots: dict[str, str]
) -> None:
    in_threads = await _play(game, players, bots, processes=0)
    in_processes = await _play(game, players, bots, processes=2)
    assert in_processes == in_threads


def test_thinking_runs_in_another_process() -> None:
    """The pool the worker uses with processes=2 runs ``think`` elsewhere, and ``think`` is
    what the thread pool runs too (one function for both)."""
    service = MatchService(SqliteStore(":memory:"), ttl_finished=None, ttl_idle=None)
    worker = BotWorker(service, processes=2)
    try:
        assert isinstance(worker._pool, concurrent.futures.ProcessPoolExecutor)
        assert worker._pool.submit(os.getpid).result(timeout=120) != os.getpid()
        engine = games.get("ny1901")
        state = engine.setup(2, None, 3)
        seat = min(engine.active_seats(state))
        moves = engine.legal_actions(state, seat)
        view = engine.view(state, seat)
        here = think("greedy", 3, Budget(), "ny1901", view, moves, seat)
        there = worker._pool.submit(
            think, "greedy", 3, Budget(), "ny1901", view, moves, seat
        ).result(timeout=120)
        assert there == here and here in moves
    finally:
        worker._pool.shutdown(wait=True)
    assert isinstance(BotWorker(service)._pool, concurrent.futures.ThreadPoolExecutor)
