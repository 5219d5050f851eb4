"""The bot worker: plays bot seats as the store signals them due.

Every write that leaves a bot seat active signals its match as due (``store.signal_due``:
on Redis an entry of the stream ``{prefix}bots:due``, read through the consumer group
``workers``; in memory an in-process queue). A worker claims signals, and for each match:

1. loads it (through ``MatchService``, like any request);
2. for every active bot seat, asks that seat's bot for a move given the seat's VIEW and legal
   moves only -- in a thread (default) or, with ``processes=N``, in one of N worker
   processes, so the event loop keeps serving while a search bot thinks. Threads share one
   core's worth of Python (the GIL); processes let one worker use every core for search bots;
3. stores the move with ``MatchService.act_as_bot`` pinned to the loaded version: the same
   checks and compare-and-set as a human's move. A conflict (a human moved meanwhile) drops
   the move, never forks the history: the write that won signalled the match again if a bot
   is still to move;
4. acknowledges the signal: ONE move per claimed signal. The move's own write signals the
   match again when a bot seat is still active, at the back of its lane, so a match of
   bots only waits behind every other due match for its next move.

Fair scheduling (issue 20, item 2): the store keeps two first-in-first-out lanes of
signals, matches with a human seat and all-bot matches (``DueSignal.all_bots``). A claim
takes the human lane first; every ``all_bots_every``-th claim of a worker takes one
all-bot signal first when there is one, so all-bot matches are scheduled last but never
starved. Together with one move per signal this gives, per lane, round-robin: no match gets
a second bot move while another match of its lane waits for its first, and a match with a
human seat waits for at most one all-bot move per ``all_bots_every`` claims. Thinking per
match per turn of the queue is one move's: at most the budget of a move (``--bot-budget``,
by default 100 simulations or 2 s), never a whole game. A move that loses its
compare-and-set is not thought again in the same turn: the write that won signalled the
match again if a bot is still to move.

Signals are delivered at least once and carry nothing but the match id, so duplicates are
harmless: the worker always looks at the state. A signal claimed by a worker that died is
taken back by a restarted worker of the same name at once (``resume_due``) and by any other
worker once it has been pending ``reclaim_idle_ms``.

``skyline worker`` runs one (``--concurrency`` matches at a time, ``--processes`` thinking
processes); ``skyline serve`` on the embedded store runs one inside the server process.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import multiprocessing
import os
import socket
from typing import Any

from service import games
from service.bots import Budget, get_bot
from service.errors import ApiError
from service.games.base import dump_action
from service.matches import MatchService
from service.store import DueSignal
from service.store.base import DUE_RECLAIM_IDLE_MS

log = logging.getLogger("skyline.worker")

DEFAULT_CONCURRENCY = 4
"""Matches one bot worker plays at once (``--worker-concurrency``, ``worker --concurrency``)."""
DEFAULT_BUDGET = Budget(iterations=100, seconds=2.0)
"""Per move of a ``search`` bot: at most 100 simulations or 2 s, whichever comes first."""
GAME_BUDGETS = {"ginkgopolis": Budget(iterations=300, seconds=2.0)}
"""Games whose search bot needs more simulations to play well: Ginkgopolis' search wins
59 % against greedy at 100 simulations and 67.5 % at 300 (docs/bots.md)."""


def default_budget(game: str) -> Budget:
    """The search budget a bot seat of ``game`` gets unless the worker is given one."""
    return GAME_BUDGETS.get(game, DEFAULT_BUDGET)
ALL_BOTS_EVERY = 4
"""Every 4th claim of a worker takes an all-bot match first (when one is due): matches with
a human seat come first, all-bot matches are never starved."""


def think(kind: str, seed: int, budget: Budget, game: str, view: Any, moves: list[Any],
          seat: int) -> Any:
    """One bot move: what a ``kind`` bot of ``game`` seeded ``seed`` plays from ``view``
    among ``moves``. A module-level function of plain, picklable arguments, so that it runs
    the same in a thread and in a worker process (which looks the engine up itself)."""
    bot = get_bot(kind, seed=seed, budget=budget)
    return bot.choose(games.get(game), view, moves, seat)


def default_consumer() -> str:
    """``host:pid``: unique per process; pass a stable name to resume after a restart."""
    return f"{socket.gethostname()}:{os.getpid()}"


class BotWorker:
    """Claims due matches from ``service.store`` and plays their bot seats."""

    def __init__(
        self,
        service: MatchService,
        *,
        consumer: str | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        budget: Budget | None = None,
        block_ms: int = 1000,
        reclaim_idle_ms: int = DUE_RECLAIM_IDLE_MS,
        retry_pause: float = 1.0,
        processes: int = 0,
        all_bots_every: int = ALL_BOTS_EVERY,
    ) -> None:
        self.service = service
        self.store = service.store
        self.consumer = consumer or default_consumer()
        self.concurrency = max(1, concurrency)
        self.budget = budget
        self.block_ms = block_ms
        self.reclaim_idle_ms = reclaim_idle_ms
        self.retry_pause = retry_pause
        self.moves = 0
        """Bot moves stored by this worker (metrics, tests)."""
        self.all_bots_every = max(1, all_bots_every)
        self._claims = 0
        self.processes = max(0, processes)
        self._pool: concurrent.futures.Executor
        if self.processes:
            # spawn, not fork: the parent runs an event loop and threads.
            self._pool = concurrent.futures.ProcessPoolExecutor(
                max_workers=self.processes, mp_context=multiprocessing.get_context("spawn")
            )
        else:
            self._pool = concurrent.futures.ThreadPoolExecutor(
                max_workers=self.concurrency, thread_name_prefix="skyline-bot"
            )
        # match id -> signals claimed for it while it is being handled (acked together)
        self._running: dict[str, list[str]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._stopping = asyncio.Event()

    # -- the loop ---------------------------------------------------------------------------

    async def run(self) -> None:
        """Claim and handle signals until ``stop()``."""
        try:
            try:
                self._dispatch(await self.store.resume_due(self.consumer))
            except (ApiError, OSError) as exc:  # StoreUnavailable is an OSError
                log.warning("worker %s: cannot resume pending signals: %s", self.consumer, exc)
            while not self._stopping.is_set():
                free = self.concurrency - len(self._running)
                if free <= 0:
                    await asyncio.wait(set(self._tasks), return_when=asyncio.FIRST_COMPLETED)
                    continue
                self._claims += 1
                share = 1 if self._claims % self.all_bots_every == 0 else 0
                try:
                    claimed = await self.store.claim_due(
                        self.consumer, count=free, block_ms=self.block_ms,
                        reclaim_idle_ms=self.reclaim_idle_ms, all_bots_first=share,
                    )
                except OSError as exc:  # StoreUnavailable
                    log.warning("worker %s: store unavailable: %s", self.consumer, exc)
                    await self._pause()
                    continue
                except Exception:  # never let one bad reply end the worker
                    log.exception("worker %s: claiming due matches failed", self.consumer)
                    await self._pause()
                    continue
                self._dispatch(claimed)
        finally:
            for task in list(self._tasks):
                task.cancel()
            if self._tasks:
                await asyncio.gather(*self._tasks, return_exceptions=True)
            self._pool.shutdown(wait=False, cancel_futures=True)

    def stop(self) -> None:
        self._stopping.set()

    async def _pause(self) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), self.retry_pause)

    def _dispatch(self, signals: list[DueSignal]) -> None:
        for signal in signals:
            held = self._running.get(signal.match_id)
            if held is not None:
                held.append(signal.token)  # the running handler looks again before acking
                continue
            self._running[signal.match_id] = [signal.token]
            task = asyncio.create_task(self._handle(signal.match_id))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _handle(self, match_id: str) -> None:
        try:
            while True:
                held = self._running[match_id]
                seen = len(held)
                done = await self.play(match_id)
                if not done:
                    return  # not acked: retried (resume / reclaim) later
                if len(held) != seen:
                    continue  # claimed again while we played: one more move first
                acked = list(held)
                try:
                    await self.store.ack_due(acked)
                except OSError as exc:
                    log.warning("worker %s: ack failed for %s: %s", self.consumer, match_id,
                                exc)
                if len(held) == len(acked):
                    break
                # Claimed again while the ack was on its way: that signal is not acked
                # (nor dropped): look at the match again for it.
                del held[:len(acked)]
        except Exception:
            log.exception("worker %s: match %s failed", self.consumer, match_id)
        finally:
            self._running.pop(match_id, None)

    # -- one match --------------------------------------------------------------------------

    async def play(self, match_id: str) -> bool:
        """Play ONE move of ``match_id``'s first active bot seat (the lowest). True when
        handled (including a match that is gone or finished, no bot to move, or a move that
        lost its compare-and-set: the winning write signalled the match again if a bot is
        still to move); False when the store failed (try again later)."""
        service = self.service
        try:
            version, record = await service.storage.load(match_id)
        except ApiError as error:
            if error.code == "match_not_found":
                return True
            await self._pause()
            return False
        if record.finished or not record.bots or not record.started:
            return True  # nothing to play (a waiting match's bots start with it)
        engine = games.get(record.game)
        state = engine.loads(record.state)
        due = sorted(set(record.bots) & engine.active_seats(state))
        if not due:
            return True
        seat = due[0]
        moves = engine.legal_actions(state, seat)
        if not moves:
            return True
        view = engine.view(state, seat)
        budget = self.budget or default_budget(record.game)
        move = await asyncio.get_running_loop().run_in_executor(
            # Seeded by the match and its version: deterministic, yet a position seen
            # again (everyone passed) does not repeat the same choice forever.
            self._pool, think, record.bots[seat], record.seed + (version << 53), budget,
            record.game, view, moves, seat,
        )
        if move not in moves:
            move = moves[0]
        try:
            await service.act_as_bot(
                match_id, seat, dump_action(engine, move), expected_version=version
            )
            self.moves += 1
        except ApiError as error:
            if error.code in ("version_conflict", "not_your_turn"):
                return True  # someone moved meanwhile; their write signalled if due
            if error.code in ("match_not_found", "match_finished"):
                return True
            if error.code in ("store_unavailable", "store_full"):
                await self._pause()
                return False
            log.error("worker: bot seat %s of %s refused: %s", seat, match_id, error)
        return True


async def run_worker(
    service: MatchService, stop: asyncio.Event | None = None, **options: Any
) -> None:
    """Run a ``BotWorker`` until ``stop`` is set (or the task is cancelled)."""
    worker = BotWorker(service, **options)
    if stop is None:
        await worker.run()
        return
    runner = asyncio.create_task(worker.run())
    await stop.wait()
    worker.stop()
    await runner
