"""Delivery guarantees of bot seats, on the embedded store and on Redis:

- a worker killed between claiming a due match and playing its bot leaves the signal
  pending, so the bot still moves -- at once for a restarted worker of the same name
  (``resume_due``), after ``reclaim_idle_ms`` for any other -- with no human reading the
  match (a read would signal it again), and exactly once per turn (at least once, never
  twice);
- a seat handed to a bot shows on live streams: the next version a watcher sees carries the
  new ``bots`` map.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from service import games
from service.bots import Budget
from service.games.base import dump_action
from service.matches import MatchService
from service.matches.models import CreateMatchRequest
from service.matches.records import MatchRecord
from service.store import MatchStore
from service.workers import bots as worker_module
from service.workers.bots import BotWorker

WAIT = 30.0  # bounds every wait; never a measurement


async def bots_only_match(service: MatchService) -> str:
    """A New York 1901 match whose only human left: both seats are bots now, and seat 0 (a
    bot) is to move. Nobody will read it."""
    created = await service.create_match(
        CreateMatchRequest(game="ny1901", players=2, seed=8, bots={"1": "random"}))
    await service.hand_seat_to_bot(created.match_id, created.seats[0].token, "random")
    return created.match_id


async def bot_moves(store: MatchStore, match_id: str) -> int:
    """Bot moves in the log (read from the store: no signal is sent)."""
    return len(await store.log(match_id)) - 1  # version 1 is the hand-over


async def crash_while_thinking(service: MatchService, monkeypatch: pytest.MonkeyPatch
                               ) -> threading.Event:
    """Run a worker named ``w`` until it has claimed the match and its bot is thinking, then
    kill it (cancel it mid-move). Returns the gate that holds the dead worker's thought."""
    entered, gate = threading.Event(), threading.Event()
    real_think = worker_module.think

    def stuck_think(*args: Any) -> Any:
        entered.set()
        gate.wait(WAIT)
        return real_think(*args)

    monkeypatch.setattr(worker_module, "think", stuck_think)
    dead = BotWorker(service, consumer="w", budget=Budget(iterations=1), block_ms=50)
    running = asyncio.create_task(dead.run())
    async with asyncio.timeout(WAIT):
        while not entered.is_set():
            await asyncio.sleep(0.01)
    running.cancel()
    await asyncio.gather(running, return_exceptions=True)
    monkeypatch.setattr(worker_module, "think", real_think)
    assert dead.moves == 0
    return gate


@pytest.mark.parametrize("successor", ["restarted", "another"])
async def test_a_bot_move_survives_a_worker_killed_between_claim_and_play(
    store: MatchStore, monkeypatch: pytest.MonkeyPatch, successor: str
) -> None:
    service = MatchService(store, ttl_finished=None, ttl_idle=None)
    match_id = await bots_only_match(service)
    gate = await crash_while_thinking(service, monkeypatch)
    try:
        assert await bot_moves(store, match_id) == 0
        name = "w" if successor == "restarted" else "other"
        worker = BotWorker(service, consumer=name, budget=Budget(iterations=1), block_ms=50,
                           reclaim_idle_ms=200)
        running = asyncio.create_task(worker.run())
        try:
            async with asyncio.timeout(WAIT):  # the bots play the match to its end
                while not MatchRecord.decode((await store.load(match_id))[1]).finished:
                    await asyncio.sleep(0.01)
        finally:
            worker.stop()
            await running
    finally:
        gate.set()
    entries = await store.log(match_id)
    assert [e.version for e in entries] == list(range(1, len(entries) + 1))
    assert len(entries) > 20
    assert worker.moves == len(entries) - 1  # every bot move is the successor's, each once
    version, _ = await store.load(match_id)
    assert version == len(entries)


async def test_a_seat_handed_to_a_bot_shows_on_the_live_stream(store: MatchStore) -> None:
    service = MatchService(store, ttl_finished=None, ttl_idle=None)
    created = await service.create_match(
        CreateMatchRequest(game="ny1901", players=2, seed=8))
    tokens = {s.seat: s.token for s in created.seats}
    watcher = service.watch(created.match_id, tokens[0], 0)
    try:
        nxt = asyncio.ensure_future(anext(watcher))
        await service.hand_seat_to_bot(created.match_id, tokens[1], "greedy")
        async with asyncio.timeout(WAIT):
            seen = await nxt
        assert (seen.version, seen.bots) == (1, {"1": "greedy"})
        engine = games.get("ny1901")
        move = engine.legal_actions(engine.loads(MatchRecord.decode(
            (await store.load(created.match_id))[1]).state), 0)[0]
        await service.act(created.match_id, tokens[0], dump_action(engine, move), None, None)
        async with asyncio.timeout(WAIT):
            later = await anext(watcher)
        assert later.bots == {"1": "greedy"}  # and it stays on later versions
    finally:
        await watcher.aclose()  # type: ignore[attr-defined]


@pytest.mark.parametrize("successor", ["restarted", "another"])
async def test_a_worker_killed_between_its_move_and_the_moves_signal_loses_no_turn(
    store: MatchStore, successor: str
) -> None:
    """One move per claimed signal (fair scheduling): the move's compare-and-set lands, then
    the worker dies before that write's due signal -- and so before it acknowledged the signal
    it had claimed. That one is still pending: the successor takes it back, reloads and plays
    the NEXT move (none lost, none doubled), and the match finishes."""
    dying = MatchService(store, ttl_finished=None, ttl_idle=None)
    match_id = await bots_only_match(dying)
    stored = asyncio.Event()

    async def die(*args: Any, **kwargs: Any) -> None:
        stored.set()
        await asyncio.Event().wait()  # the process is gone: never signals, never acks

    dying.due.signal_if_due = die  # type: ignore[method-assign]
    dead = BotWorker(dying, consumer="w", budget=Budget(iterations=1), block_ms=50)
    running = asyncio.create_task(dead.run())
    async with asyncio.timeout(WAIT):
        await stored.wait()
    running.cancel()
    await asyncio.gather(running, return_exceptions=True)
    assert await bot_moves(store, match_id) == 1
    service = MatchService(store, ttl_finished=None, ttl_idle=None)
    name = "w" if successor == "restarted" else "other"
    worker = BotWorker(service, consumer=name, budget=Budget(iterations=1), block_ms=50,
                       reclaim_idle_ms=200)
    running = asyncio.create_task(worker.run())
    try:
        async with asyncio.timeout(WAIT):
            while not MatchRecord.decode((await store.load(match_id))[1]).finished:
                await asyncio.sleep(0.01)
    finally:
        worker.stop()
        await running
    entries = await store.log(match_id)
    assert [e.version for e in entries] == list(range(1, len(entries) + 1))
    assert worker.moves == len(entries) - 2  # the hand-over, the dead worker's one move
    assert await store.claim_due("check", count=10, block_ms=0, reclaim_idle_ms=0) == []
