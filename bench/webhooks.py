"""Webhook benchmark (issue 18): deliveries per second to a local receiver, the retry
schedule under a failing receiver, and when a failing endpoint is disabled.

Run: ``.venv/bin/python -m bench.webhooks`` (Redis at ``--redis-url``, else
$SKYLINE_BENCH_REDIS_URL, else redis://127.0.0.1:6379; keys under a fresh prefix deleted at
the end; the receiver listens on 127.0.0.1:``--port``, 18300), ``--quick`` (500 events, a
15 s retry watch), ``--events``, ``--workers``, ``--json PATH``, ``--parts`` (a comma list of
``deliveries``, ``retries``, ``disabling``: run only those; all by default).

What runs (every process has its own event loop and store connection):

- **Receiver**: a raw asyncio HTTP/1.1 server (keep-alive) in a process of its own; it
  answers 204 (paths ``/fail…``: 500), notes each request's arrival time, path and
  ``webhook-id``, and keeps every 25th request whole: this process verifies those with the
  ``standardwebhooks`` library against the endpoint's secret.
- **Deliveries**: events from real match writes: ``--endpoints`` apps (1, then 8), each with
  one endpoint subscribed to ``match_started`` and ``your_turn``; 2-seat New York 1901
  matches seating two of the app's users are created (each gives 3 messages: two
  ``match_started``, one ``your_turn``) until ``--events`` messages wait in the outbox. Then
  ``--workers`` (2) ``WebhookWorker`` processes (concurrency 32, at most 4 attempts per
  endpoint at once per worker: the defaults) start and deliver. Reported: deliveries per
  second from the workers' start to the last arrival, and between the 10th and 90th
  percentile arrivals (steady), duplicates, and the signature checks.
- **Retry schedule**: the backoff scaled down by ``k = --backoff-first / 5`` (first retry
  after 0.2 s instead of 5 s; every other duration -- the cap, the retry window, the disable
  time -- scaled by the same k), factor 3 and +-20 % jitter as configured; 4 pings to a
  receiver path answering 500 (4: no worker holds one back for the per-endpoint limit),
  watched for ``--retry-watch`` seconds. Reported: each gap between attempts of one message
  as a multiple of the base (expected 1, 3, 9, 27 ... each +-20 %), median/min/max.
- **Disabling**: a time scale where 6 h is 6 s (k = 1/3600), 5 pings to a failing path:
  when the endpoint is disabled (``disable_after`` 20 failed attempts in a row over at least
  ``disable_seconds``), and what became of the pending messages.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import multiprocessing
import os
import statistics
import sys
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from multiprocessing.synchronize import Event as MpEvent
from typing import Any, cast

from standardwebhooks import Webhook

from service.identity.callers import Caller
from service.matches import MatchService
from service.matches.models import CreateMatchRequest
from service.players import PlayerService
from service.store import DocStore
from service.store.redis import RedisStore
from service.webhooks import WebhookService, WebhookSettings
from service.webhooks.models import CreateWebhookRequest
from service.workers.webhooks import WebhookWorker

from .quick_match import _pct

LOOPBACK = {"allow_http": True, "allow_networks": ("127.0.0.0/8",)}
SAMPLE_EVERY = 25
PARTS = ("deliveries", "retries", "disabling")
DAY, HOUR = 86400.0, 3600.0


def scaled(k: float, **extra: Any) -> dict[str, Any]:
    """The default settings (5 s x3, cap 4 h, window 24 h, disable after 20 over 6 h), every
    duration times ``k``."""
    return {**LOOPBACK, "backoff_first": 5.0 * k, "backoff_factor": 3.0,
            "backoff_max": 4 * HOUR * k, "jitter": 0.2, "retry_seconds": DAY * k,
            "disable_after": 20, "disable_seconds": 6 * HOUR * k, **extra}


# -- the receiver ---------------------------------------------------------------------------

def receiver_process(port: int, ready: Any, stop: MpEvent, out: Any) -> None:
    asyncio.run(_receiver(port, ready, stop, out))


async def _receiver(port: int, ready: Any, stop: MpEvent, out: Any) -> None:
    seen: list[tuple[float, str, str]] = []
    samples: list[tuple[str, dict[str, str], bytes]] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                _, path, _ = lines[0].split(" ", 2)
                headers: dict[str, str] = {}
                for line in lines[1:]:
                    if line:
                        name, _, value = line.partition(":")
                        headers[name.strip().lower()] = value.strip()
                size = int(headers.get("content-length", "0"))
                body = await reader.readexactly(size) if size else b""
                seen.append((time.time(), path, headers.get("webhook-id", "")))
                if len(seen) % SAMPLE_EVERY == 1:
                    samples.append((path, headers, body))
                status = (b"500 Internal Server Error" if path.startswith("/fail")
                          else b"204 No Content")
                writer.write(b"HTTP/1.1 " + status + b"\r\ncontent-length: 0\r\n\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=512)
    ready.put("receiver")
    while not stop.is_set():
        await asyncio.sleep(0.05)
    server.close()
    out.put((seen, samples))


# -- the workers ----------------------------------------------------------------------------

def worker_process(url: str, prefix: str, settings: dict[str, Any], ready: Any,
                   go: MpEvent, stop: MpEvent, out: Any) -> None:
    asyncio.run(_worker(url, prefix, settings, ready, go, stop, out))


async def _worker(url: str, prefix: str, settings: dict[str, Any], ready: Any, go: MpEvent,
                  stop: MpEvent, out: Any) -> None:
    stack = Stack(url, prefix, WebhookSettings(**settings))
    worker = WebhookWorker(stack.hooks)
    ready.put("worker")
    while not go.is_set():
        await asyncio.sleep(0.005)
    task = asyncio.create_task(worker.run())
    while not stop.is_set():
        await asyncio.sleep(0.05)
    worker.stop()
    await task
    out.put(worker.attempts)
    await stack.close()


class Stack:
    def __init__(self, url: str, prefix: str, settings: WebhookSettings) -> None:
        self.store = RedisStore.from_url(url, prefix=prefix)
        self.matches = MatchService(self.store, ttl_finished=3600, ttl_idle=3600)
        self.players = PlayerService(cast(DocStore, self.store), self.matches)
        self.hooks = WebhookService(cast(DocStore, self.store), self.players, self.matches,
                                    settings)
        self.apps: list[str] = []

    async def app(self) -> Caller:
        _, key = await self.players.apps.add("Bench hooks")
        caller = await self.players.authenticate(key)
        assert isinstance(caller, Caller)
        self.apps.append(caller.app)
        return caller

    async def pending(self) -> int:
        """Deliveries waiting in the lanes of every app made here."""
        return sum([await self.hooks.pending(app) for app in self.apps])

    async def close(self) -> None:
        await self.hooks.aclose()
        await self.players.aclose()
        await self.store.close()


# -- the runs -------------------------------------------------------------------------------

class Run:
    """One phase: a receiver and ``workers`` worker processes with ``settings``."""

    def __init__(self, url: str, prefix: str, port: int, workers: int,
                 settings: dict[str, Any]) -> None:
        self.ctx = multiprocessing.get_context("spawn")
        ctx = self.ctx
        self.ready, self.go, self.stop = ctx.Queue(), ctx.Event(), ctx.Event()
        self.rstop, self.rout, self.wout = ctx.Event(), ctx.Queue(), ctx.Queue()
        self.receiver = ctx.Process(target=receiver_process,
                                    args=(port, self.ready, self.rstop, self.rout),
                                    daemon=True)
        self.workers = [ctx.Process(target=worker_process, args=(
            url, prefix, settings, self.ready, self.go, self.stop, self.wout), daemon=True)
            for _ in range(workers)]

    async def start(self) -> None:
        for proc in (self.receiver, *self.workers):
            proc.start()
        for _ in range(1 + len(self.workers)):
            await asyncio.to_thread(self.ready.get, True, 60)

    async def finish(self) -> tuple[list[tuple[float, str, str]],
                                    list[tuple[str, dict[str, str], bytes]], list[int]]:
        self.stop.set()
        attempts = [await asyncio.to_thread(self.wout.get, True, 60) for _ in self.workers]
        self.rstop.set()
        seen, samples = await asyncio.to_thread(self.rout.get, True, 60)
        for proc in (self.receiver, *self.workers):
            proc.join(10)
            if proc.is_alive():
                proc.terminate()
        return seen, samples, attempts


async def deliveries(url: str, args: argparse.Namespace, endpoints: int) -> dict[str, Any]:
    prefix = f"bench-hooks:{uuid.uuid4().hex[:8]}:"
    stack = Stack(url, prefix, WebhookSettings(**LOOPBACK))
    run = Run(url, prefix, args.port, args.workers, scaled(1.0))
    try:
        await run.start()
        secrets: dict[str, str] = {}
        apps: list[Caller] = []
        for e in range(endpoints):
            app = await stack.app()
            created = await stack.hooks.create(app, CreateWebhookRequest(
                url=f"http://127.0.0.1:{args.port}/e{e}",
                events=["match_started", "your_turn"]))
            secrets[f"/e{e}"] = created.secret
            apps.append(app)
        t = time.perf_counter()
        made = 0
        sem = asyncio.Semaphore(32)

        async def one(i: int) -> None:
            async with sem:
                await stack.players.create_match(apps[i % endpoints],
                                                  CreateMatchRequest.model_validate({
                    "game": "ny1901", "seats": [{"user": f"u{i}a"}, {"user": f"u{i}b"}]}))

        while stack.hooks.enqueued < args.events:
            batch = max(1, (args.events - stack.hooks.enqueued + 2) // 3)
            await asyncio.gather(*(one(made + i) for i in range(batch)))
            made += batch
        enqueue_s = time.perf_counter() - t
        queued = await stack.pending()
        print(f"  {endpoints} endpoint(s): {made} matches -> {queued} messages queued in "
              f"{enqueue_s:.1f} s ({queued / enqueue_s:.0f}/s); workers go", flush=True)
        go_at = time.time()
        run.go.set()
        while await stack.pending() > 0:
            await asyncio.sleep(0.02)
            if time.time() - go_at > 300:
                print("  giving up after 300 s", flush=True)
                break
        seen, samples, attempts = await run.finish()
        times = sorted(s[0] for s in seen)
        ids = [s[2] for s in seen]
        verified = bad = 0
        for path, headers, body in samples:
            try:
                Webhook(secrets[path]).verify(body, headers)
                verified += 1
            except Exception:
                bad += 1
        p10, p90 = _pct(times, 0.1), _pct(times, 0.9)
        steady = 0.8 * len(times) / max(1e-6, p90 - p10)
        return {
            "endpoints": endpoints, "workers": args.workers, "matches": made,
            "messages": queued,
            "enqueue_per_s (match writes -> outbox)": round(queued / enqueue_s),
            "delivered (receiver requests)": len(seen),
            "distinct ids": len(set(ids)), "duplicates": len(ids) - len(set(ids)),
            "attempts per worker": attempts,
            "deliveries_per_s (workers' start..last arrival)": round(
                len(seen) / max(1e-6, times[-1] - go_at)),
            "deliveries_per_s steady (p10..p90 arrivals)": round(steady),
            "first arrival after go ms": round((times[0] - go_at) * 1000),
            "signatures verified (sample)": verified, "signatures bad": bad,
            "load_average": os.getloadavg(),
        }
    finally:
        await cleanup(stack, prefix)


@dataclass
class Failing:
    """A failing endpoint's run: the bench's stack, the worker processes, the settings, the
    app, the endpoint and the pings queued to it."""

    stack: Stack
    run: Run
    settings: dict[str, Any]
    app: Caller
    endpoint: str
    pings: list[str]


@contextlib.asynccontextmanager
async def failing(url: str, args: argparse.Namespace, k: float, path: str,
                  pings: int) -> AsyncIterator[Failing]:
    """Workers with the settings scaled by ``k`` started, ``pings`` pings queued to a new
    endpoint at the receiver's ``path`` (answering 500); the keys deleted afterwards."""
    prefix = f"bench-hooks:{uuid.uuid4().hex[:8]}:"
    settings = scaled(k)
    stack = Stack(url, prefix, WebhookSettings(**LOOPBACK))
    run = Run(url, prefix, args.port, args.workers, settings)
    try:
        await run.start()
        run.go.set()
        app = await stack.app()
        created = await stack.hooks.create(app, CreateWebhookRequest(
            url=f"http://127.0.0.1:{args.port}{path}", events=["match_started"]))
        ids = [(await stack.hooks.ping(app, created.id)).event_id for _ in range(pings)]
        yield Failing(stack, run, settings, app, created.id, ids)
    finally:
        await cleanup(stack, prefix)


async def retries(url: str, args: argparse.Namespace) -> dict[str, Any]:
    k = args.backoff_first / 5.0
    async with failing(url, args, k, "/fail", 4) as f:
        stack, app = f.stack, f.app
        print(f"  retry schedule: 4 pings to a 500 receiver, base {args.backoff_first} s, "
              f"watching {args.retry_watch:.0f} s", flush=True)
        await asyncio.sleep(args.retry_watch)
        seen, _, _ = await f.run.finish()
        per_msg: dict[str, list[float]] = {}
        for at, _, msg in sorted(seen):
            per_msg.setdefault(msg, []).append(at)
        gaps: dict[int, list[float]] = {}
        for ats in per_msg.values():
            for n, (a, b) in enumerate(itertools.pairwise(ats), start=1):
                gaps.setdefault(n, []).append((b - a) / args.backoff_first)
        hook = await stack.hooks.endpoints.get(app.app, f.endpoint)
        health = await stack.hooks.endpoints.health(f.endpoint)
        return {
            "base_s": args.backoff_first, "scale k": k, "settings": f.settings,
            "messages": len(per_msg), "attempts": len(seen),
            "attempts per message (median)": statistics.median(len(v) for v in per_msg.values()),
            "gap after attempt n, in multiples of the base (median, min, max; expected "
            "3^(n-1) +-20 %)": {n: (round(statistics.median(v), 2), round(min(v), 2),
                                   round(max(v), 2), len(v)) for n, v in sorted(gaps.items())},
            "endpoint still enabled": hook is not None and hook.enabled,
            "endpoint failures in a row": health.failures,
            "load_average": os.getloadavg(),
        }


async def disabling(url: str, args: argparse.Namespace) -> dict[str, Any]:
    k = 1 / 3600
    async with failing(url, args, k, "/fail2", 5) as f:
        stack, app = f.stack, f.app
        print("  disabling: 5 pings to a 500 receiver, 6 h scaled to 6 s", flush=True)
        disabled_at = None
        end = time.time() + 30
        while time.time() < end:
            hook = await stack.hooks.endpoints.get(app.app, f.endpoint)
            if hook is not None and not hook.enabled:
                disabled_at = hook.disabled_at
                break
            await asyncio.sleep(0.05)
        end = time.time() + 8
        while time.time() < end and await stack.pending():
            await asyncio.sleep(0.05)
        seen, _, _ = await f.run.finish()
        first = min(s[0] for s in seen)
        health = await stack.hooks.endpoints.health(f.endpoint)
        done = []
        for msg in f.pings:
            loaded = await stack.hooks.outbox.load(msg)
            done.append(loaded[1].done if loaded else None)
        return {
            "scale k": k, "settings": f.settings,
            "disabled": disabled_at is not None,
            "disabled after first failure s (scaled; x3600 = real)": None
            if disabled_at is None else round(disabled_at / 1000 - first, 2),
            "failed attempts before disabling (receiver)": sum(
                1 for s in seen if disabled_at is None or s[0] * 1000 <= disabled_at + 5),
            "attempts in all": len(seen),
            "failures counted": {"failures": health.failures, "since": health.since},
            "messages afterwards": {d: done.count(d) for d in set(done)},
            "pending in the schedule": await stack.pending(),
            "load_average": os.getloadavg(),
        }


async def cleanup(stack: Stack, prefix: str) -> None:
    client = stack.store.client
    async for key in client.scan_iter(match=prefix + "*", count=1000):
        await client.delete(key)
    await stack.close()


async def main_async(url: str, args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for endpoints in args.endpoints if "deliveries" in args.parts else []:
        print(f"deliveries, {endpoints} endpoint(s)", flush=True)
        out[f"deliveries {endpoints} endpoints"] = await deliveries(url, args, endpoints)
        print(json.dumps(out[f"deliveries {endpoints} endpoints"], indent=2), flush=True)
    if "retries" in args.parts:
        out["retry schedule"] = await retries(url, args)
        print(json.dumps(out["retry schedule"], indent=2), flush=True)
    if "disabling" in args.parts:
        out["disabling"] = await disabling(url, args)
        print(json.dumps(out["disabling"], indent=2), flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis-url", default=None)
    parser.add_argument("--port", type=int, default=18300)
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--endpoints", type=lambda s: [int(x) for x in s.split(",")],
                        default=[1, 8])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--backoff-first", type=float, default=0.2)
    parser.add_argument("--retry-watch", type=float, default=30.0)
    parser.add_argument("--quick", action="store_true", help="500 events, 15 s retry watch")
    parser.add_argument("--json", default=None)
    parser.add_argument("--parts", type=lambda s: s.split(","), default=list(PARTS),
                        help="a comma list of " + ", ".join(PARTS))
    args = parser.parse_args(argv)
    if unknown := set(args.parts) - set(PARTS):
        parser.error(f"unknown part(s): {', '.join(sorted(unknown))}")
    if args.quick:
        args.events, args.retry_watch = min(args.events, 500), min(args.retry_watch, 15.0)
    url = args.redis_url or os.environ.get("SKYLINE_BENCH_REDIS_URL") or \
        "redis://127.0.0.1:6379"
    print(f"load average before: {os.getloadavg()}", flush=True)
    result = asyncio.run(main_async(url, args))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
