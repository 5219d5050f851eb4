"""Clock benchmark (issue 18): ``--matches`` (10,000) 2-seat New York 1901 matches on Redis
with correspondence clocks that all run out within ``--spread`` (60) seconds, fired by TWO
clock workers in two processes. Reported: deadlines fired per second, how late each fired
after its deadline (p50/p99/max), and that none fired twice or early.

Run: ``.venv/bin/python -m bench.clocks`` (Redis at ``--redis-url``, else
$SKYLINE_BENCH_REDIS_URL, else redis://127.0.0.1:6379; keys under a fresh prefix deleted at
the end), ``--quick`` (1,000 matches), ``--spread 0`` (every deadline at one moment: the
workers' capacity), ``--workers``, ``--json PATH``.

What runs:

- The two workers start first, each a process of its own (``multiprocessing`` spawn: its
  own event loop, ``RedisStore`` and ``MatchService``), running ``ClockWorker`` (16
  concurrent firings each, the default) around a ``Timeouts`` that records every ``Fired``.
- This process measures the creation rate on 200 untimed matches, then creates the timed
  matches (64 in flight), match i with ``seconds_per_move`` chosen so that its deadline
  falls ``spread * i / N`` after a start set safely after the creation's projected end (the
  per-move seconds are whole, so a deadline is within half a second of its target; the
  record field is set directly, below the API's 10 s minimum). Progress is printed.
- Once the schedule ``deadlines`` is empty the workers stop and send what they fired.
  Lateness = ``Fired.fired_at`` (store clock once the timeout's write landed) minus the
  deadline; "claimed" = the claim's store time minus the deadline. Then every match is read
  back: its log must hold exactly one ``timeout`` entry and the match must have ended by
  timeout (two workers, one firing each).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import statistics
import sys
import time
import uuid
from collections import Counter
from multiprocessing.synchronize import Event as MpEvent
from typing import Any

from service.clocks import OnTimeout, TimeControl
from service.matches import MatchService
from service.matches.clocking import DEADLINES
from service.matches.models import CreateMatchRequest
from service.matches.records import LogRecord
from service.matches.timeouts import Fired, Timeouts
from service.store.redis import RedisStore
from service.workers.clocks import ClockWorker

from .quick_match import _pct

GAME = "ny1901"
FORFEIT = OnTimeout("forfeit")
IN_FLIGHT = 64

Row = tuple[str, int, int, int, int]
"""(match id, seat, deadline, claim time, fired_at), ms of the store's clock."""


class RecordingTimeouts(Timeouts):
    """``Timeouts`` keeping every firing with the claim's store time."""

    def __init__(self, service: MatchService) -> None:
        super().__init__(service.storage, service.due)
        self.rows: list[Row] = []

    async def fire(self, match_id: str, claimed_ms: int, now_ms: int) -> list[Fired]:
        fired = await super().fire(match_id, claimed_ms, now_ms)
        self.rows.extend((f.match_id, f.seat, f.deadline, now_ms, f.fired_at) for f in fired)
        return fired


def worker_process(url: str, prefix: str, index: int, ready: Any, stop: MpEvent,
                   out: Any) -> None:
    asyncio.run(_worker(url, prefix, index, ready, stop, out))


async def _worker(url: str, prefix: str, index: int, ready: Any, stop: MpEvent,
                  out: Any) -> None:
    store = RedisStore.from_url(url, prefix=prefix)
    service = MatchService(store, ttl_finished=3600, ttl_idle=3600)
    timeouts = RecordingTimeouts(service)
    worker = ClockWorker(timeouts)
    task = asyncio.create_task(worker.run())
    ready.put(index)
    while not stop.is_set():
        await asyncio.sleep(0.05)
    worker.stop()
    await task
    out.put((index, worker.count, timeouts.rows))
    await store.close()


async def _create_all(service: MatchService, count: int,
                      extra_of: Any, label: str) -> list[str]:
    ids: list[str] = [""] * count
    next_i = 0
    started = time.perf_counter()
    shown = started

    async def one() -> None:
        nonlocal next_i, shown
        while next_i < count:
            i = next_i
            next_i += 1
            extra = await extra_of(i)
            created = await service.create_match(
                CreateMatchRequest(game=GAME, players=2), extra=extra)
            ids[i] = created.match_id
            now = time.perf_counter()
            if now - shown >= 5 and label:
                shown = now
                done = sum(1 for m in ids if m)
                print(f"  {label}: {done:,}/{count:,} created "
                      f"({done / (now - started):.0f}/s)", flush=True)

    await asyncio.gather(*(one() for _ in range(min(IN_FLIGHT, count))))
    return ids


async def timeout_entries(service: MatchService, match_id: str) -> tuple[int, bool]:
    """(how many ``timeout`` entries the match's log holds, whether it ended by timeout)."""
    _, record = await service.storage.load(match_id)
    logged = [LogRecord.decode(record.game, record.log_dict, e.data)
              for e in await service.storage.entries(match_id, 0)]
    n = sum(1 for e in logged if e.seat is None and isinstance(e.action, dict)
            and e.action.get("type") == "timeout")
    return n, bool(record.finished and record.termination == "timeout")


async def bench(url: str, args: argparse.Namespace) -> dict[str, Any]:
    prefix = f"bench-clocks:{uuid.uuid4().hex[:8]}:"
    store = RedisStore.from_url(url, prefix=prefix)
    service = MatchService(store, ttl_finished=3600, ttl_idle=3600)
    ctx = multiprocessing.get_context("spawn")
    ready, out, stop = ctx.Queue(), ctx.Queue(), ctx.Event()
    procs = [ctx.Process(target=worker_process, args=(url, prefix, i, ready, stop, out),
                         daemon=True) for i in range(args.workers)]
    try:
        for proc in procs:
            proc.start()
        for _ in procs:
            await asyncio.to_thread(ready.get, True, 60)
        print(f"{args.workers} clock workers running (pids "
              f"{', '.join(str(p.pid) for p in procs)})", flush=True)
        n = args.matches
        clock = service.storage.store_clock

        async def untimed(_: int) -> None:
            return None

        t = time.perf_counter()
        await _create_all(service, 200, untimed, "")
        rate = 200 / (time.perf_counter() - t)
        start_ms = await clock.now_ms()
        first_ms = start_ms + int(n / rate * 1.3 * 1000) + 5000
        spread_ms = int(args.spread * 1000)
        print(f"creation rate (200 untimed matches): {rate:.0f}/s; deadlines from "
              f"+{(first_ms - start_ms) / 1000:.1f} s to "
              f"+{(first_ms + spread_ms - start_ms) / 1000:.1f} s", flush=True)

        async def timed(i: int) -> dict[str, Any]:
            target = first_ms + spread_ms * i // max(1, n - 1)
            seconds = max(1, round((target - await clock.now_ms()) / 1000))
            return {"time_control": TimeControl("correspondence", seconds_per_move=seconds),
                    "on_timeout": FORFEIT}

        t = time.perf_counter()
        ids = await _create_all(service, n, timed, "timed matches")
        create_s = time.perf_counter() - t
        created_ms = await clock.now_ms()
        deadlines = {}
        for i in range(0, n, 500):
            for match_id, (_, record) in zip(ids[i:i + 500], await service.load_records(
                    ids[i:i + 500]) or [], strict=False):
                deadlines[match_id] = min(record.deadlines().values())
        early = [m for m, d in deadlines.items() if d < created_ms]
        print(f"{n:,} timed matches created in {create_s:.1f} s ({n / create_s:.0f}/s); "
              f"{len(early)} deadlines before creation ended; first deadline "
              f"+{(min(deadlines.values()) - created_ms) / 1000:.1f} s, last "
              f"+{(max(deadlines.values()) - created_ms) / 1000:.1f} s", flush=True)
        last_deadline = max(deadlines.values())
        schedules = service.storage.schedule()
        shown = 0.0
        while True:
            left = await schedules.schedule_size(DEADLINES)
            now_ms = await clock.now_ms()
            if left == 0 and now_ms > last_deadline:
                break
            if now_ms > last_deadline + args.give_up * 1000:
                print(f"giving up: {left} matches still in the schedule", flush=True)
                break
            if time.monotonic() - shown >= 5:
                shown = time.monotonic()
                print(f"  {left:,} matches left in the schedule "
                      f"(last deadline in {(last_deadline - now_ms) / 1000:.0f} s)",
                      flush=True)
            await asyncio.sleep(0.2)
        stop.set()
        rows: list[Row] = []
        per_worker: dict[int, int] = {}
        for _ in procs:
            index, count, got = await asyncio.to_thread(out.get, True, 60)
            per_worker[index] = count
            rows.extend(got)
        for proc in procs:
            proc.join(10)
        # Verification: one timeout entry per match, every match ended by timeout.
        counts: dict[str, tuple[int, bool]] = {}
        sem = asyncio.Semaphore(64)

        async def check(match_id: str) -> None:
            async with sem:
                counts[match_id] = await timeout_entries(service, match_id)

        await asyncio.gather(*(check(m) for m in ids))
        logged = Counter(c for c, _ in counts.values())
        fired_per_match = Counter(r[0] for r in rows)
        twice = sum(1 for c in fired_per_match.values() if c > 1)
        late = [r[4] - r[2] for r in rows]
        claimed = [r[3] - r[2] for r in rows]
        early_fired = sum(1 for r in rows if r[4] < r[2] or r[3] < r[2])
        wrong_deadline = sum(1 for r in rows if deadlines.get(r[0]) != r[2])
        first_fired = min(r[4] for r in rows)
        last_fired = max(r[4] for r in rows)
        first_due = min(deadlines.values())
        # Deadlines per second: fired (fired_at) bucketed by second, busiest seconds.
        buckets = Counter((r[4] - first_due) // 1000 for r in rows)
        result = {
            "matches": n,
            "workers": args.workers,
            "spread_s": args.spread,
            "creation_per_s": round(n / create_s),
            "deadlines_before_creation_ended": len(early),
            "fired": len(rows),
            "fired_per_worker": [per_worker[i] for i in sorted(per_worker)],
            "fired_twice (worker reports)": twice,
            "timeout entries per match": dict(sorted(logged.items())),
            "matches ended by timeout": sum(1 for _, ok in counts.values() if ok),
            "fired early": early_fired,
            "fired with a deadline other than the record's": wrong_deadline,
            "fired_per_s_overall (N / first deadline..last fired)": round(
                len(rows) / max(0.001, (last_fired - first_due) / 1000), 1),
            "fired_per_s_while_firing (first..last fired)": round(
                len(rows) / max(0.001, (last_fired - first_fired) / 1000), 1),
            "deadlines_due_per_s (N / first..last deadline)": round(
                n / max(0.001, (last_deadline - first_due) / 1000), 1),
            "busiest_second_fired": max(buckets.values()),
            "lateness_ms_p50": _pct([float(x) for x in late], 0.5),
            "lateness_ms_p99": _pct([float(x) for x in late], 0.99),
            "lateness_ms_max": max(late),
            "lateness_ms_mean": round(statistics.fmean(late), 1),
            "claim_lateness_ms_p50": _pct([float(x) for x in claimed], 0.5),
            "claim_lateness_ms_p99": _pct([float(x) for x in claimed], 0.99),
            "claim_lateness_ms_max": max(claimed),
            "load_average": os.getloadavg(),
        }
        return result
    finally:
        stop.set()
        for proc in procs:
            proc.join(5)
            if proc.is_alive():
                proc.terminate()
        client = store.client
        async for key in client.scan_iter(match=prefix + "*", count=1000):
            await client.delete(key)
        await store.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis-url", default=None)
    parser.add_argument("--matches", type=int, default=10_000)
    parser.add_argument("--spread", type=float, default=60.0,
                        help="seconds over which the deadlines fall due (0: all at once)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--give-up", type=float, default=120.0,
                        help="seconds after the last deadline to stop waiting")
    parser.add_argument("--quick", action="store_true", help="1,000 matches")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    if args.quick:
        args.matches = min(args.matches, 1000)
    url = args.redis_url or os.environ.get("SKYLINE_BENCH_REDIS_URL") or \
        "redis://127.0.0.1:6379"
    print(f"load average before: {os.getloadavg()}", flush=True)
    result = asyncio.run(bench(url, args))
    print(json.dumps(result, indent=2))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
    ok = (result["fired"] == args.matches and result["fired_twice (worker reports)"] == 0
          and result["timeout entries per match"] == {1: args.matches}
          and result["fired early"] == 0)
    print("OK: every deadline fired exactly once, none early" if ok else "FAILED", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
