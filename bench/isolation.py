"""Isolation benchmark (issue 31): what a well-behaved client sees while one attacker holds
the webhook workers with slow endpoints, and what oversized headers and WebSocket messages
cost a replica's memory.

Run: ``.venv/bin/python -m bench.isolation`` (every part), ``--parts webhooks,headers,websocket``
(a comma list), ``--quick`` (fewer pings and connections), ``--json PATH`` (every figure).
Everything stays on 127.0.0.1; ports from ``--port`` (20600) up.

- **webhooks** -- the slow-endpoint attack. An app (the attacker) has 8 endpoints on a local
  receiver that answers ``200`` and then a byte of body every ``--trickle`` seconds (5), for
  ever: each read is prompt, the answer never ends. ``--slow-matches`` (20) matches of that
  app queue 3 events for each endpoint (480 deliveries). Another app has one endpoint that
  answers at once; it asks for a ping every ``--ping-every`` seconds (``--pings`` in all)
  while the attack runs. Reported: when each ping arrived after it was asked for (p50, p99,
  max; a ping that has not arrived ``--give-up`` seconds after the last one asked counts as
  not delivered), the attempts the worker made to the slow app, and the most slots it held.
  Two phases, each with a fresh embedded store (in memory) and one ``WebhookWorker`` with the
  defaults (32 slots, 4 per endpoint): ``before`` -- the issue's behaviour restored (no cap
  per app, no deadline on an attempt: what every build before issue 31 did) -- and
  ``after`` -- this build's defaults (8 slots per app, each attempt ending within the
  connect and read timeouts, 15 s). The worker, the receiver and the pings share this
  process's event loop.
- **headers** -- ``--connections`` (30) clients at once each send a request whose one header
  is 30 MB (in 1 MB writes, stopping when the server stops reading) to a ``skyline serve``
  (``--data-dir :memory:``), first with ``--max-header-bytes 0`` (no limit: every build
  before issue 31), then with the default (64 KiB). Reported: the server's resident memory
  (VmRSS) before, at its peak while the clients send (sampled every 50 ms) and 5 s after they
  are done, and what the clients got.
- **websocket** -- likewise, ``--connections`` clients each send one 15 MB message on a
  ``/graphql`` WebSocket (a ``ping`` with a 15 MB payload), first to a server whose message
  cap is 16 MiB (``--max-body-bytes 16777216``: uvicorn's default, every build before issue
  31), then with the default (64 KiB, the body cap).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import httpx

from service.identity.callers import Caller
from service.matches import MatchService
from service.matches.models import CreateMatchRequest
from service.players import PlayerService
from service.store import DocStore
from service.store.sqlite import SqliteStore
from service.webhooks import WebhookService, WebhookSettings
from service.webhooks.models import CreateWebhookRequest
from service.workers.webhooks import WebhookWorker

PARTS = ("webhooks", "headers", "websocket")
BIN = Path(sys.executable).parent
MB = 1024 * 1024


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


# -- webhooks ---------------------------------------------------------------------------------


class Receiver:
    """A raw HTTP/1.1 server: ``/slow…`` answers 200 with a body that trickles for ever,
    anything else 204 at once (its arrival time noted by ``webhook-id``)."""

    def __init__(self, trickle: float) -> None:
        self.trickle = trickle
        self.arrived: dict[str, float] = {}
        self.slow_open = 0
        self.slow_peak = 0
        self.server: asyncio.Server | None = None
        self.stopping = asyncio.Event()
        self.handlers: set[asyncio.Task[Any]] = set()
        self.writers: set[asyncio.StreamWriter] = set()

    async def start(self, port: int) -> None:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", port, backlog=512)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self.handlers.add(task)
            task.add_done_callback(self.handlers.discard)
        self.writers.add(writer)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                path = lines[0].split(" ")[1]
                headers = {k.strip().lower(): v.strip()
                           for k, _, v in (line.partition(":") for line in lines[1:] if line)}
                await reader.readexactly(int(headers.get("content-length", "0")))
                if path.startswith("/slow"):
                    await self._trickle(reader, writer)
                    return
                self.arrived[headers.get("webhook-id", "")] = time.time()
                writer.write(b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            self.writers.discard(writer)
            writer.close()

    async def _trickle(self, reader: asyncio.StreamReader,
                       writer: asyncio.StreamWriter) -> None:
        """Answer a byte every ``trickle`` seconds until the client goes (its end of the
        connection read as closed: counted at once, not at the next byte)."""
        self.slow_open += 1
        self.slow_peak = max(self.slow_peak, self.slow_open)
        try:
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 100000000\r\n\r\n")
            await writer.drain()
            while not self.stopping.is_set():
                try:
                    if await asyncio.wait_for(reader.read(1), self.trickle) == b"":
                        return  # the client closed the connection
                except TimeoutError:
                    pass
                writer.write(b"x")
                await writer.drain()
        finally:
            self.slow_open -= 1

    async def stop(self) -> None:
        self.stopping.set()
        if self.server is not None:
            self.server.close()
        for writer in list(self.writers):
            writer.close()  # the handler's next read ends
        await asyncio.wait_for(asyncio.gather(*self.handlers, return_exceptions=True), 30)


async def _app(players: PlayerService, name: str) -> Caller:
    _, key = await players.apps.add(name)
    caller = await players.authenticate(key)
    assert isinstance(caller, Caller)
    return caller


async def webhooks_phase(phase: str, args: argparse.Namespace) -> dict[str, Any]:
    settings = WebhookSettings(allow_http=True, allow_networks=("127.0.0.0/8",))
    options: dict[str, Any] = {}
    if phase == "before":
        # Every build before issue 31: the read timeout alone (per read), any number of a
        # worker's slots for one app.
        settings = replace(settings, attempt_timeout=10**6)
        options["per_app"] = 32
    store = SqliteStore(":memory:")
    matches = MatchService(store, ttl_finished=None, ttl_idle=None)
    players = PlayerService(cast(DocStore, store), matches)
    hooks = WebhookService(cast(DocStore, store), players, matches, settings)
    receiver = Receiver(args.trickle)
    await receiver.start(args.port)
    base = f"http://127.0.0.1:{args.port}"
    worker = WebhookWorker(hooks, **options)
    task: asyncio.Task[None] | None = None
    try:
        slow = await _app(players, "Attacker")
        for n in range(8):
            await hooks.create(slow, CreateWebhookRequest(
                url=f"{base}/slow{n}", events=["match_started", "your_turn"]))
        fast = await _app(players, "Bystander")
        fast_hook = (await hooks.create(fast, CreateWebhookRequest(
            url=f"{base}/fast", events=["your_turn"]))).id
        for i in range(args.slow_matches):
            await players.create_match(slow, CreateMatchRequest.model_validate(
                {"game": "ny1901", "seats": [{"user": f"a{i}"}, {"user": f"b{i}"}]}))
        print(f"  {phase}: {hooks.enqueued} deliveries queued for the attacker's 8 "
              f"endpoints; worker starts", flush=True)
        task = asyncio.create_task(worker.run())
        await asyncio.sleep(1.0)  # the attack takes hold
        asked: dict[str, float] = {}
        for n in range(args.pings):
            queued = await hooks.ping(fast, fast_hook)
            asked[queued.event_id] = time.time()
            await asyncio.sleep(args.ping_every)
            if (n + 1) % 10 == 0:
                got = sum(1 for e in asked if e in receiver.arrived)
                print(f"  {phase}: {n + 1} pings asked, {got} arrived; the attacker's "
                      f"attempts open {receiver.slow_open}", flush=True)
        end = time.time() + args.give_up
        while time.time() < end and not all(e in receiver.arrived for e in asked):
            await asyncio.sleep(0.05)
        waits = [receiver.arrived[e] - t for e, t in asked.items() if e in receiver.arrived]
        missing = len(asked) - len(waits)
        out = {
            "pings asked": len(asked), "pings delivered": len(waits),
            f"pings not delivered within {args.give_up:.0f} s of the last": missing,
            "ping p50 s": round(pct(waits, 0.5), 3) if waits else None,
            "ping p99 s": round(pct(waits, 0.99), 3) if waits else None,
            "ping max s": round(max(waits), 3) if waits else None,
            "attacker attempts ended": worker.attempts - len(waits),
            "most slots the attacker held": worker.peak_per_app[slow.app],
            "most attacker attempts open at the receiver": receiver.slow_peak,
        }
        print(f"  {phase}: {json.dumps(out)}", flush=True)
        return out
    finally:
        worker.stop()
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await receiver.stop()
        await hooks.aclose()
        await players.aclose()
        await store.close()


# -- a served replica and its memory ----------------------------------------------------------


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


@contextlib.contextmanager
def served(port: int, flags: list[str]) -> Iterator[subprocess.Popen[bytes]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKYLINE_")}
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            [str(BIN / "skyline"), "serve", "--host", "127.0.0.1", "--port", str(port),
             "--data-dir", ":memory:", "--log-level", "warning", *flags],
            env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                with contextlib.suppress(httpx.TransportError):
                    if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).is_success:
                        break
                time.sleep(0.1)
            yield process
        finally:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def watch_memory(pid: int, clients: list[threading.Thread]) -> tuple[float, float, float]:
    """(before, peak while ``clients`` run, 5 s after) resident MB of ``pid``."""
    before = rss_mb(pid)
    peak = before
    for client in clients:
        client.start()
    while any(c.is_alive() for c in clients):
        peak = max(peak, rss_mb(pid))
        time.sleep(0.05)
    time.sleep(5)
    return before, peak, rss_mb(pid)


def header_client(port: int, size: int, answers: list[str]) -> None:
    sent = 0
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ")
            with contextlib.suppress(OSError):
                while sent < size:
                    sock.sendall(b"a" * MB)
                    sent += MB
                sock.sendall(b"\r\n\r\n")
            answer = b""
            with contextlib.suppress(OSError):
                answer = sock.recv(64)
            answers.append((answer.split(b"\r\n")[0].decode("latin-1") or "closed")
                           + f" after {sent // MB} MB")
    except OSError as error:
        answers.append(f"error {error!r}")


def ws_client(port: int, size: int, answers: list[str]) -> None:
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect
    from websockets.typing import Subprotocol

    try:
        with connect(f"ws://127.0.0.1:{port}/graphql",
                     subprotocols=[Subprotocol("graphql-transport-ws")],
                     max_size=None, open_timeout=30, close_timeout=5) as ws:
            ws.send(json.dumps({"type": "connection_init", "payload": {}}))
            ws.recv(timeout=30)
            ws.send(json.dumps({"type": "ping", "payload": {"pad": "p" * size}}))
            answers.append(json.loads(ws.recv(timeout=60))["type"])
    except ConnectionClosed as closed:
        code = closed.rcvd.code if closed.rcvd is not None else None
        answers.append(f"closed {code}")
    except Exception as error:
        answers.append(f"error {type(error).__name__}")


def memory_part(part: str, args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    phases = {
        "headers": {"before": ["--max-header-bytes", "0"], "after": []},
        "websocket": {"before": ["--max-body-bytes", str(16 * MB)], "after": []},
    }[part]
    for n, (phase, flags) in enumerate(phases.items()):
        port = args.port + 10 + n
        with served(port, flags) as process:
            # Warm up: a few requests, so the baseline is a serving replica's.
            for _ in range(20):
                httpx.get(f"http://127.0.0.1:{port}/v1/games")
            answers: list[str] = []
            if part == "headers":
                clients = [threading.Thread(target=header_client,
                                            args=(port, 30 * MB, answers))
                           for _ in range(args.connections)]
            else:
                clients = [threading.Thread(target=ws_client, args=(port, 15 * MB, answers))
                           for _ in range(args.connections)]
            shown = " ".join(flags) or "defaults"
            print(f"  {part} {phase}: {args.connections} clients, {shown}", flush=True)
            before, peak, after = watch_memory(process.pid, clients)
            counted: dict[str, int] = {}
            for answer in answers:
                key = answer if part == "websocket" else answer.split(" after ")[0]
                counted[key] = counted.get(key, 0) + 1
            sent = [int(a.split(" after ")[1].split()[0]) for a in answers if " after " in a]
            out[phase] = {
                "flags": flags, "rss before MB": round(before), "rss peak MB": round(peak),
                "rss 5 s after MB": round(after), "peak - before MB": round(peak - before),
                "answers": counted,
                **({"MB each client could send (max)": max(sent)} if sent else {}),
            }
            print(f"  {part} {phase}: {json.dumps(out[phase])}", flush=True)
    return out


# -- main -----------------------------------------------------------------------------------


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    results: dict[str, Any] = {}
    parts = args.parts.split(",")
    if "webhooks" in parts:
        print("== webhooks: the slow-endpoint attack", flush=True)
        results["webhooks"] = {phase: await webhooks_phase(phase, args)
                               for phase in ("before", "after")}
    for part in ("headers", "websocket"):
        if part in parts:
            print(f"== {part}: memory", flush=True)
            results[part] = await asyncio.to_thread(memory_part, part, args)
    return results


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.isolation", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parts", default=",".join(PARTS))
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--port", type=int, default=20600)
    parser.add_argument("--trickle", type=float, default=5.0)
    parser.add_argument("--slow-matches", type=int, default=20)
    parser.add_argument("--pings", type=int, default=60)
    parser.add_argument("--ping-every", type=float, default=0.5)
    parser.add_argument("--give-up", type=float, default=60.0)
    parser.add_argument("--connections", type=int, default=30)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    # The clients' own complaints when a server cuts them off are the expected outcome.
    logging.getLogger("websockets").setLevel(logging.CRITICAL)
    unknown = set(args.parts.split(",")) - set(PARTS)
    if unknown:
        parser.error(f"unknown parts {sorted(unknown)}; known: {', '.join(PARTS)}")
    if args.quick:
        args.pings, args.give_up, args.connections = 20, 30.0, 8
    started = time.monotonic()
    results = asyncio.run(main_async(args))
    results["seconds"] = round(time.monotonic() - started)
    results["load_average"] = os.getloadavg()
    print(json.dumps(results, indent=2))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

