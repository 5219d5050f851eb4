"""Hardening benchmark (issue 31, items 1, 2 and 6): the attacks that free credentials once
made cheap, replayed against one ``skyline serve`` (embedded store in memory, its default
limits except a smaller ``read`` budget, so that the attacks fit in seconds), and what an
unrelated client sees meanwhile.

Run: ``.venv/bin/python -m bench.hardening`` (``--quick``: smaller attacks; ``--json PATH``:
every figure; ``--before DIR``: an earlier build to compare with, e.g.
``git archive cac2e05 service | tar -x -C /tmp/before``, then ``--before /tmp/before``;
without it only this build is measured). Everything stays
on 127.0.0.1, port ``--port`` (24100). The server trusts 127.0.0.1 as a proxy, so each client
names its address in ``X-Forwarded-For``: the attacker is 203.0.113.1, the unrelated client
198.51.100.7.

- **made-up tokens** (item 1): ``--requests`` (1,000) reads of ``/v1/games``, each with a
  new made-up bearer token, against a ``read`` budget of 600 a minute: how many were served.
- **seat-token streams** (item 2): the attacker creates matches anonymously and opens a
  stream with every seat token (``--streams``, 100, held open together): how many were
  admitted (the per-client cap is 32).
- **guests** (item 6): ``--guests`` (100) guests created at once from one address: how many.
- **quick match** (item 6): one guest queues ``--quick-matches`` (150) times in a row for a
  bot-filled match: how many matches it got (its quota is 100).

The unrelated client reads one match's state every 20 ms throughout; reported: its p50 and
p99 latency and how many of its reads were refused.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

ATTACKER = {"X-Forwarded-For": "203.0.113.1"}
BYSTANDER = {"X-Forwarded-For": "198.51.100.7"}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


@contextlib.contextmanager
def served(build: str | None, port: int) -> Iterator[str]:
    """This build's ``skyline serve``, or (``build``: a directory holding an earlier
    ``service`` package, e.g. ``git archive <commit> service | tar -x -C DIR``) that one's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKYLINE_")}
    if build is not None:
        env["PYTHONPATH"] = build
    process = subprocess.Popen(
        [sys.executable, "-c", "import sys; from service.cli import main; sys.exit(main())",
         "serve", "--host", "127.0.0.1", "--port", str(port), "--data-dir", ":memory:",
         "--log-level", "warning", "--trusted-proxies", "127.0.0.1", "--rate-read", "600/60"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        cwd="/")  # not a checkout: each binary imports its own build
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{base}/healthz", timeout=1, headers=BYSTANDER).is_success:
                    break
            if process.poll() is not None:
                raise RuntimeError(f"serve ({build or 'this build'}) exited: {process.returncode}")
            time.sleep(0.1)
        else:
            raise RuntimeError(f"serve ({build or 'this build'}) did not answer within 180 s")
        yield base
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


async def bystander(client: httpx.AsyncClient, url: str, stop: asyncio.Event,
                    latencies: list[float], refused: list[int], every: float = 0.02) -> None:
    """GET ``url`` until ``stop``, ``every`` seconds after each answer: each latency (ms),
    and the status of each answer that was not 200."""
    while not stop.is_set():
        start = time.perf_counter()
        answer = await client.get(url, headers=BYSTANDER)
        latencies.append((time.perf_counter() - start) * 1000)
        if answer.status_code != 200:
            refused.append(answer.status_code)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), every)


async def made_up_tokens(client: httpx.AsyncClient, count: int) -> int:
    served_ = 0
    for start in range(0, count, 50):
        answers = await asyncio.gather(*(
            client.get("/v1/games", headers={**ATTACKER, "Authorization": f"Bearer sky_x{n}"})
            for n in range(start, min(count, start + 50))))
        served_ += sum(a.status_code == 200 for a in answers)
    return served_


async def seat_streams(client: httpx.AsyncClient, count: int) -> int:
    tokens: list[tuple[str, str]] = []
    while len(tokens) < count:
        made = await client.post("/v1/matches", headers=ATTACKER,
                                 json={"game": "ny1901", "players": 4})
        if made.status_code != 201:
            break
        body = made.json()
        tokens += [(body["matchId"], s["token"]) for s in body["seats"]]
    admitted = 0
    async with contextlib.AsyncExitStack() as stack:
        async def one(match_id: str, token: str) -> None:
            nonlocal admitted
            response = await stack.enter_async_context(client.stream(
                "GET", f"/v1/matches/{match_id}/events",
                headers={**ATTACKER, "Authorization": f"Bearer {token}"}))
            if response.status_code == 200:
                admitted += 1

        for match_id, token in tokens[:count]:
            with contextlib.suppress(httpx.HTTPError):
                await one(match_id, token)
        await asyncio.sleep(1.0)  # held open together
    return admitted


async def guests(client: httpx.AsyncClient, count: int) -> int:
    answers = await asyncio.gather(*(
        client.post("/v1/players", headers=ATTACKER, json={"name": f"G{n}"})
        for n in range(count)))
    return sum(a.status_code == 201 for a in answers)


async def quick_matches(client: httpx.AsyncClient, count: int) -> int:
    made = await client.post("/v1/players", headers={"X-Forwarded-For": "203.0.113.2"},
                             json={"name": "Quick"})
    if made.status_code != 201:
        return 0
    auth = {"X-Forwarded-For": "203.0.113.2", "Authorization": f"Bearer {made.json()['token']}"}
    matched = 0
    for _ in range(count):
        answer = await client.post("/v1/queue", headers=auth, json={
            "game": "ny1901", "players": 2, "fillWithBotsAfterSeconds": 0})
        if answer.status_code in (200, 201) and answer.json().get("status") == "matched":
            matched += 1
    return matched


async def phase(build: str | None, port: int, args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with served(build, port) as base:
        limits = httpx.Limits(max_connections=400, max_keepalive_connections=100)
        async with httpx.AsyncClient(base_url=base, timeout=30, limits=limits) as client:
            match = (await client.post("/v1/matches", headers=BYSTANDER,
                                       json={"game": "ny1901", "players": 2})).json()
            url = f"/v1/matches/{match['matchId']}"
            latencies: list[float] = []
            refused: list[int] = []
            stop = asyncio.Event()
            reader = asyncio.create_task(bystander(client, url, stop, latencies, refused))
            started = time.perf_counter()
            out["made_up_tokens_served"] = await made_up_tokens(client, args.requests)
            out["seat_streams_admitted"] = await seat_streams(client, args.streams)
            out["guests_created"] = await guests(client, args.guests)
            out["quick_matches"] = await quick_matches(client, args.quick_matches)
            out["attack_seconds"] = round(time.perf_counter() - started, 1)
            stop.set()
            await reader
            out["bystander_p50_ms"] = round(pct(latencies, 0.5), 1)
            out["bystander_p99_ms"] = round(pct(latencies, 0.99), 1)
            out["bystander_reads"] = len(latencies)
            out["bystander_refused"] = len(refused)
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.hardening")
    parser.add_argument("--port", type=int, default=24100)
    parser.add_argument("--before", default=None, help="a directory holding an earlier build's "
                        "service package (git archive COMMIT service | tar -x -C DIR)")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    args.requests = 700 if args.quick else 1000
    args.streams = 60 if args.quick else 100
    args.guests = 80 if args.quick else 100
    args.quick_matches = 110 if args.quick else 150
    results: dict[str, Any] = {}
    phases = ([("before", args.before)] if args.before else []) + [("after", None)]
    for n, (name, build) in enumerate(phases):
        results[name] = asyncio.run(phase(build, args.port + n, args))
        print(name, json.dumps(results[name]), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
