"""Replay amplification benchmark (issue 31, item 8): many resumed streams of one finished
match, each replaying the resume window for its watcher alone, and what an unrelated client
sees meanwhile -- without a replay budget (``--replay-budget 0``: every build before issue
31) and with the default one (``service.live.replays``).

Run: ``.venv/bin/python -m bench.replays`` (``--quick``: a shorter attack; ``--json PATH``:
every figure). Everything stays on 127.0.0.1, port ``--port`` (24300) and the next one. The
server trusts 127.0.0.1 as a proxy, so each client names its address in
``X-Forwarded-For``: the attacker is 203.0.113.1, the unrelated client 198.51.100.7.

One 2-seat New York match is played to its end through REST (random legal moves; about 90
versions), with another match beside it for the unrelated client. Then ``--replayers`` (30)
connections of the attacker each resume the finished match's stream at ``Last-Event-ID:
1`` -- the whole match replayed for it alone, past the 16 versions a replica keeps framed
-- read it to its end and resume again, for ``--seconds`` (20). Meanwhile the unrelated client
reads the other match's state every 20 ms. Reported per phase: the unrelated reads' p50,
p99 and max latency; the replayed versions the attacker received per second.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx

from bench.hardening import ATTACKER, BYSTANDER, pct


@contextlib.contextmanager
def served(port: int, *extra: str) -> Iterator[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKYLINE_")}
    process = subprocess.Popen(
        [sys.executable, "-m", "service.cli", "serve", "--host", "127.0.0.1", "--port",
         str(port), "--data-dir", ":memory:", "--log-level", "warning",
         "--trusted-proxies", "127.0.0.1", "--rate-read", "100000/60", *extra],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{base}/healthz", timeout=1).is_success:
                    break
            if process.poll() is not None:
                raise RuntimeError(f"serve exited: {process.returncode}")
            time.sleep(0.1)
        yield base
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def play_to_end(http: httpx.Client, seed: int) -> tuple[str, int]:
    """A 2-seat New York match played to its end with random legal moves: id, version."""
    made = http.post("/v1/matches", json={"game": "ny1901", "players": 2, "seed": seed},
                     headers=BYSTANDER)
    assert made.status_code == 201, made.text
    body = made.json()
    match_id = body["matchId"]
    tokens = {s["seat"]: s["token"] for s in body["seats"]}
    rng = random.Random(seed)
    while True:
        state = http.get(f"/v1/matches/{match_id}", headers=BYSTANDER).json()
        if state["status"] == "finished" or not state["activeSeats"]:
            return match_id, state["version"]
        seat = rng.choice(state["activeSeats"])
        auth = {**BYSTANDER, "Authorization": f"Bearer {tokens[seat]}"}
        legal = http.get(f"/v1/matches/{match_id}/legal-moves", headers=auth).json()
        move = rng.choice(legal["moves"])
        answer = http.post(f"/v1/matches/{match_id}/actions", json={"action": move},
                           headers=auth)
        assert answer.status_code == 200, answer.text


async def replayer(client: httpx.AsyncClient, match_id: str, stop: asyncio.Event,
                   counts: list[int]) -> None:
    while not stop.is_set():
        try:
            async with client.stream(
                    "GET", f"/v1/matches/{match_id}/events",
                    headers={**ATTACKER, "Last-Event-ID": "1"}) as response:
                if response.status_code != 200:
                    await asyncio.sleep(0.2)
                    continue
                async for line in response.aiter_lines():
                    if line.startswith("id:"):
                        counts[0] += 1
                    if stop.is_set():
                        break
        except httpx.HTTPError:
            await asyncio.sleep(0.1)


async def bystander(client: httpx.AsyncClient, url: str, stop: asyncio.Event,
                    latencies: list[float]) -> None:
    while not stop.is_set():
        start = time.perf_counter()
        await client.get(url, headers=BYSTANDER)
        latencies.append((time.perf_counter() - start) * 1000)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.02)


async def attack(base: str, match_id: str, other: str, replayers: int,
                 seconds: float) -> dict[str, Any]:
    stop = asyncio.Event()
    latencies: list[float] = []
    counts = [0]
    limits = httpx.Limits(max_connections=replayers + 10)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as attacker, \
            httpx.AsyncClient(base_url=base, timeout=60) as calm:
        tasks = [asyncio.create_task(replayer(attacker, match_id, stop, counts))
                 for _ in range(replayers)]
        watcher = asyncio.create_task(bystander(calm, f"/v1/matches/{other}", stop, latencies))
        await asyncio.sleep(seconds)
        stop.set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await watcher
    return {
        "unrelated_reads": len(latencies),
        "p50_ms": round(pct(latencies, 0.5), 1),
        "p99_ms": round(pct(latencies, 0.99), 1),
        "max_ms": round(max(latencies), 1) if latencies else None,
        "replayed_versions_per_s": round(counts[0] / seconds, 1),
    }


def phase(port: int, budget: str, replayers: int, seconds: float) -> dict[str, Any]:
    with served(port, "--replay-budget", budget) as base, \
            httpx.Client(base_url=base, timeout=30) as http:
        match_id, version = play_to_end(http, 7)
        other, _ = play_to_end(http, 8)
        figures = asyncio.run(attack(base, match_id, other, replayers, seconds))
        figures.update(replay_budget=budget, versions=version)
        return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.replays", description=__doc__)
    parser.add_argument("--port", type=int, default=24300)
    parser.add_argument("--replayers", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    seconds = 6.0 if args.quick else args.seconds
    results = {}
    for name, budget, port in (("before", "0", args.port), ("after", "200", args.port + 1)):
        print(f"replays: {name} (--replay-budget {budget}), {args.replayers} replayers, "
              f"{seconds:g} s ...", flush=True)
        results[name] = phase(port, budget, args.replayers, seconds)
        print(f"  {results[name]}", flush=True)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
