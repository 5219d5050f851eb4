"""Service load benchmark: Skyline's REST act endpoint and GraphQL act mutation against a bare
Starlette endpoint doing the same Redis compare-and-set with no game logic (the stack's limit).

Run: ``.venv/bin/python -m bench.load`` (about 4 minutes) or ``--quick`` (about 1-2 minutes).
``--redis-url`` uses a Redis you name (keys under a fresh prefix, deleted at the end);
by default a private ``redis-server`` is started on a free port (persistence off) and
stopped afterwards. ``--json PATH`` also writes the raw figures; ``--profile rest|graphql``
runs that server under cProfile and prints where its time goes. ``--build DIR`` runs the
servers from another checkout of the repository (e.g. ``git archive <commit> | tar -x -C
DIR``): they start with ``DIR`` as their working directory and ``PYTHONPATH``, so they import
that build's ``service`` package (and its ``bench/load.py`` server factories), while the load
generator, the storage walk and the report stay this checkout's code -- the same client for
both builds of a before/after comparison.

What runs
---------
Two uvicorn processes (``python -m uvicorn ... --factory``, access log off, the same flags
for both): the Skyline app (serves ``rest`` and ``graphql``) and the bare app; a third, a
second Skyline replica, for the scaling cells. One load-generator process per cell
(``--drive``: asyncio, one httpx client and keep-alive connection per virtual client), and
Redis -- all on this machine. Cells run interleaved (for each client count: bare, REST,
GraphQL back to back; for scaling: one replica, then two) so that load from elsewhere on the
machine shifts the cells compared with each other alike.

- ``rest``: the real app (``service.app.create_app``, what ``skyline serve`` runs),
  ``POST /v1/matches/{id}/actions`` with ``{"action": <move>}`` and the seat's token. The
  answer is the full ``ActResponse`` (events + the caller's new view).
- ``graphql``: the same app, ``mutation act(matchId, action)`` selecting ``__typename`` and
  ``version`` of ``ActionAccepted``.
- ``bare``: a Starlette endpoint on the same ``RedisStore`` code: parse the JSON body, ``load``
  the record, ``compare_and_set`` it back (same TTL handling, the request body as the log
  entry) and answer ``{"matchId", "version"}``. No auth, no validation, no game.

What an "action" is (identical for all three targets)
----------------------------------------------------
Every virtual client owns one New York 1901 match (2 seats, holds both tokens) and plays it
to the end with uniformly random legal moves, then starts a new one. The client runs the
engine itself from the match's seed (engines are deterministic, and it is the only writer),
so it knows the legal moves without asking: each measured request is exactly one act, and
nothing else reaches the server except one create per ~170 moves. The bare target gets the
very same move bodies. Every measured act must answer 2xx (``errors`` counts the others).

Figures
-------
Throughput: 2xx acts completed in the measurement window (after a warm-up) per second.
Latency: p50/p99 of those requests, as the client saw them. Round trips per action: the
store's ``round_trips`` counter (every Redis command it sends, retries included; read from a
``/_bench/stats`` route this benchmark adds to each server) over acts, for the whole run,
less one per match created (its one ``EVALSHA``). Server CPU per action:
the server process's CPU time over the run / acts -- less sensitive than throughput to
other load on the machine (client CPU per action likewise, for the load generator: on 2
cores it is the bare cell's limit).
Stored bytes per match: ``MEMORY USAGE`` of the match's one key (a hash: record, version and
log chunks) for complete matches of every game at every player count, played through REST
with random legal moves, and the record and log payload sizes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ENV_URL = "SKYLINE_BENCH_REDIS_URL"
ENV_PREFIX = "SKYLINE_BENCH_PREFIX"
GAME = "ny1901"
PLAYERS = 2
BARE_RECORD_BYTES = 400  # about a 2-seat New York 1901 record (header + state); see storage
BARE_TTL = 30 * 24 * 3600  # the service's idle TTL: the CAS script sets it on every write
ROOT = Path(__file__).resolve().parent.parent

ACT_MUTATION = (
    "mutation($id: ID!, $a: ActionInput!) { act(matchId: $id, action: $a) "
    "{ __typename ... on ActionAccepted { version } } }"
)


# -- the servers (run by uvicorn in subprocesses) ---------------------------------------------


def _stats_route(store_of: Callable[[Any], Any]) -> Any:
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def stats(request: Request) -> JSONResponse:
        store = store_of(request.app)
        return JSONResponse(
            {"roundTrips": store.round_trips, "scriptLoads": store.script_loads}
        )

    return Route("/_bench/stats", stats, methods=["GET"])


def skyline_app() -> Any:
    """The real Skyline app on ``$SKYLINE_BENCH_REDIS_URL`` (+ ``/_bench/stats``)."""
    from service.app import Settings, create_app
    from service.limits import LimitSettings

    # Limits off (`--rate-limits off`): the load generator is one client at full speed.
    settings = Settings(redis_url=os.environ[ENV_URL], redis_prefix=os.environ[ENV_PREFIX],
                        limits=LimitSettings(enabled=False))
    app = create_app(settings=settings)
    app.router.routes.append(_stats_route(lambda a: a.state.store))
    return app


def bare_app() -> Any:
    """Load + compare-and-set on the same ``RedisStore``, nothing else."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from service.store.redis import RedisStore

    store = RedisStore.from_url(os.environ[ENV_URL], prefix=os.environ[ENV_PREFIX])

    async def create(request: Request) -> JSONResponse:
        match_id = secrets.token_urlsafe(12)
        await store.create(match_id, b"r" * BARE_RECORD_BYTES, BARE_TTL)
        return JSONResponse({"matchId": match_id, "version": 0}, status_code=201)

    async def act(request: Request) -> JSONResponse:
        body = await request.body()
        data = json.loads(body)
        if not isinstance(data, dict) or "action" not in data:
            return JSONResponse({"code": "malformed"}, status_code=400)
        match_id = request.path_params["match_id"]
        for _ in range(16):
            version, record = await store.load(match_id)
            if await store.compare_and_set(match_id, version, record, body, BARE_TTL):
                return JSONResponse({"matchId": match_id, "version": version + 1})
        return JSONResponse({"code": "busy"}, status_code=503)

    async def readyz(request: Request) -> JSONResponse:
        return JSONResponse({"ready": await store.ping()})

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await store.close()

    app = Starlette(
        routes=[
            Route("/bare/matches", create, methods=["POST"]),
            Route("/bare/matches/{match_id}/actions", act, methods=["POST"]),
            Route("/readyz", readyz, methods=["GET"]),
        ],
        lifespan=lifespan,
    )
    app.state.store = store
    app.router.routes.append(_stats_route(lambda a: a.state.store))
    return app


# -- the load generator (``--drive``, its own process) ----------------------------------------


def _camel_keys(value: Any) -> Any:
    from service.api.graphql.convert import camel

    if isinstance(value, dict):
        return {camel(k): _camel_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_camel_keys(v) for v in value]
    return value


def graphql_input(wire: dict[str, Any]) -> dict[str, Any]:
    """The ``ActionInput`` of a wire move: ``{game: {camel(type): fields or true}}``."""
    from service.api.graphql.convert import camel

    fields = {k: v for k, v in wire.items() if k != "type"}
    return {camel(GAME): {camel(str(wire["type"])): _camel_keys(fields) or True}}


@dataclass
class Worker:
    """One virtual client: plays its own match(es) with random legal moves."""

    target: str
    url: str
    client: Any  # httpx.AsyncClient
    seed: int
    latencies: list[float] = field(default_factory=list)
    acts: int = 0
    creates: int = 0
    errors: int = 0
    first_error: str | None = None

    def __post_init__(self) -> None:
        from service import games

        self.engine = games.get(GAME)
        self.rng = random.Random(self.seed)
        self.match_id = ""
        self.tokens: dict[int, str] = {}
        self.state: Any = None

    async def new_match(self) -> None:
        seed = self.rng.randrange(2**31)
        if self.target == "bare":
            response = await self.client.post(f"{self.url}/bare/matches", json={})
        else:
            response = await self.client.post(
                f"{self.url}/v1/matches", json={"game": GAME, "players": PLAYERS, "seed": seed}
            )
        assert response.status_code == 201, response.text
        created = response.json()
        self.match_id = created["matchId"]
        self.tokens = {s["seat"]: s["token"] for s in created.get("seats", [])}
        self.state = self.engine.setup(PLAYERS, None, seed)
        self.creates += 1

    def _request(self, seat: int, wire: dict[str, Any]) -> tuple[str, bytes, dict[str, str]]:
        headers = {"content-type": "application/json"}
        if self.target == "bare":
            url = f"{self.url}/bare/matches/{self.match_id}/actions"
            body = json.dumps({"action": wire})
        elif self.target == "rest":
            url = f"{self.url}/v1/matches/{self.match_id}/actions"
            body = json.dumps({"action": wire})
            headers["authorization"] = f"Bearer {self.tokens[seat]}"
        else:
            url = f"{self.url}/graphql"
            body = json.dumps({"query": ACT_MUTATION,
                               "variables": {"id": self.match_id, "a": graphql_input(wire)}})
            headers["authorization"] = f"Bearer {self.tokens[seat]}"
        return url, body.encode(), headers

    async def run(self, start: float, end: float) -> None:
        from service.games.base import dump_action

        engine = self.engine
        while time.perf_counter() < end:
            active = engine.active_seats(self.state)
            if not active or engine.result(self.state) is not None:
                await self.new_match()
                continue
            seat = min(active)
            move = self.rng.choice(engine.legal_actions(self.state, seat))
            url, body, headers = self._request(seat, dump_action(engine, move))
            sent = time.perf_counter()
            response = await self.client.post(url, content=body, headers=headers)
            done = time.perf_counter()
            ok = response.status_code == 200 and (
                self.target != "graphql" or b'"ActionAccepted"' in response.content
            )
            if not ok:
                self.errors += 1
                self.first_error = self.first_error or f"{response.status_code} {response.text}"
                await self.new_match()  # out of step with the server: start afresh
                continue
            self.acts += 1
            if start <= done <= end:
                self.latencies.append(done - sent)
            self.state, _ = engine.apply(self.state, seat, move)


async def drive(target: str, urls: list[str], concurrency: int, warmup: float,
                duration: float, seed: int) -> dict[str, Any]:
    import httpx

    # One client (one keep-alive connection) per virtual client: a shared httpx pool costs
    # the generator more CPU per request as the connection count grows.
    clients = [httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=1))
               for _ in range(concurrency)]
    try:
        workers = [Worker(target, urls[i % len(urls)], clients[i], seed * 10_000 + i)
                   for i in range(concurrency)]
        await asyncio.gather(*(w.new_match() for w in workers))
        creates0 = sum(w.creates for w in workers)
        cpu0 = time.process_time()
        start = time.perf_counter() + warmup
        end = start + duration
        await asyncio.gather(*(w.run(start, end) for w in workers))
        cpu = time.process_time() - cpu0
    finally:
        for client in clients:
            await client.aclose()
    latencies = sorted(x for w in workers for x in w.latencies)
    errors = sum(w.errors for w in workers)
    return {
        "measured": len(latencies),
        "throughput": len(latencies) / duration,
        "p50_ms": 1000 * _quantile(latencies, 0.50),
        "p99_ms": 1000 * _quantile(latencies, 0.99),
        "acts": sum(w.acts for w in workers),
        "creates": sum(w.creates for w in workers),
        "creates_during_run": sum(w.creates for w in workers) - creates0,
        "errors": errors,
        "first_error": next((w.first_error for w in workers if w.first_error), None),
        "driver_cpu_s": cpu,
    }


def _quantile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    index = min(len(values) - 1, max(0, round(q * (len(values) - 1))))
    return values[index]


# -- the orchestrator ---------------------------------------------------------------------------


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Server:
    kind: str
    port: int
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)  # lets cProfile write its file
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


def start_server(kind: str, redis_url: str, prefix: str, workdir: Path,
                 profile: Path | None = None, build: Path | None = None) -> Server:
    """A uvicorn process serving ``kind`` ("bare" or "skyline"), from ``build`` (a checkout
    of the repository) if given, else from this one."""
    import httpx

    from tests.support.redis_servers import free_port

    port = free_port()
    factory = "bench.load:bare_app" if kind == "bare" else "bench.load:skyline_app"
    launcher = [sys.executable]
    if profile is not None:
        launcher += ["-m", "cProfile", "-o", str(profile)]
    args = [*launcher, "-m", "uvicorn", factory, "--factory", "--host", "127.0.0.1",
            "--port", str(port), "--log-level", "warning", "--no-access-log"]
    env = {**os.environ, ENV_URL: redis_url, ENV_PREFIX: prefix}
    home = ROOT if build is None else build
    if build is not None:
        env["PYTHONPATH"] = os.pathsep.join(
            [str(build), *filter(None, [os.environ.get("PYTHONPATH")])])
    log = workdir / f"server-{kind}-{port}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=env,
                                   cwd=home)
    server = Server(kind, port, process, log)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{kind} server exited:\n{log.read_text()[-2000:]}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(server.url + "/readyz", timeout=2).status_code == 200:
                return server
        time.sleep(0.1)
    server.stop()
    raise RuntimeError(f"{kind} server did not start:\n{log.read_text()[-2000:]}")


def _round_trips(servers: list[Server]) -> int:
    import httpx

    return sum(httpx.get(s.url + "/_bench/stats", timeout=10).json()["roundTrips"]
               for s in servers)


def run_cell(target: str, servers: list[Server], concurrency: int, warmup: float,
             duration: float, seed: int) -> dict[str, Any]:
    trips0 = _round_trips(servers)
    cpu0 = sum(_cpu_seconds(s.process.pid) for s in servers)
    load0 = os.getloadavg()[0]
    out = subprocess.run(
        [sys.executable, "-m", "bench.load", "--drive", target,
         "--urls", ",".join(s.url for s in servers), "--concurrency", str(concurrency),
         "--warmup", str(warmup), "--duration", str(duration), "--seed", str(seed)],
        cwd=ROOT, capture_output=True, text=True, timeout=warmup + duration + 300,
    )
    if out.returncode != 0:
        raise RuntimeError(f"load generator failed:\n{out.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    # One round trip per create (one EVALSHA), done before and during the run: not acts.
    trips = _round_trips(servers) - trips0 - result["creates"]
    cpu = sum(_cpu_seconds(s.process.pid) for s in servers) - cpu0
    acts = max(result["acts"], 1)
    result.update(
        target=target, replicas=len(servers), concurrency=concurrency,
        round_trips_per_action=trips / acts,
        server_cpu_ms_per_action=1000 * cpu / acts,
        load_before=load0, load_after=os.getloadavg()[0],
    )
    return result


def measure_storage(server: Server, redis_url: str, prefix: str, matches: int
                    ) -> list[dict[str, Any]]:
    """Play ``matches`` complete matches of each game through REST (random legal moves,
    computed locally) and measure what Redis keeps for each."""
    import httpx
    import redis

    from service import games
    client = redis.Redis.from_url(redis_url)
    rows = []
    with httpx.Client(base_url=server.url, timeout=60) as http:
        for engine in games.all():
            for players in range(engine.min_players, engine.max_players + 1):
                for seed in range(matches):
                    rows.append(_stored_match(http, client, prefix, engine, players, seed))
    client.close()
    return rows


def _stored_match(http: Any, client: Any, prefix: str, engine: Any, players: int, seed: int
                  ) -> dict[str, Any]:
    """Play one complete match through REST; what Redis keeps for it."""
    from service.games.base import dump_action

    created = http.post("/v1/matches", json={"game": engine.id, "players": players,
                                             "seed": seed})
    assert created.status_code == 201, created.text
    body = created.json()
    match_id = body["matchId"]
    tokens = {s["seat"]: s["token"] for s in body["seats"]}
    state = engine.setup(players, None, seed)
    rng = random.Random(seed)
    moves = 0
    while engine.result(state) is None and engine.active_seats(state):
        seat = min(engine.active_seats(state))
        move = rng.choice(engine.legal_actions(state, seat))
        answer = http.post(f"/v1/matches/{match_id}/actions",
                           json={"action": dump_action(engine, move)},
                           headers={"Authorization": f"Bearer {tokens[seat]}"})
        assert answer.status_code == 200, answer.text
        state, _ = engine.apply(state, seat, move)
        moves += 1
    key = f"{prefix}match:{{{match_id}}}"  # RedisStore.key
    chunks = [f for f in client.hkeys(key) if f.startswith(b"l")]
    return {
        "game": engine.id,
        "players": players,
        "moves": moves,
        "record_bytes": client.hstrlen(key, "r"),
        "log_payload_bytes": sum(client.hstrlen(key, f) for f in chunks),
        "memory": client.memory_usage(key, samples=0),
    }


def _delete_prefix(redis_url: str, prefix: str) -> None:
    import redis

    client = redis.Redis.from_url(redis_url)
    try:
        for key in list(client.scan_iter(match=prefix + "*", count=1000)):
            client.delete(key)
    finally:
        client.close()


def report(cells: list[dict[str, Any]], storage: list[dict[str, Any]], args: Any) -> str:
    bare = {c["concurrency"]: c["throughput"] for c in cells
            if c["target"] == "bare" and c["replicas"] == 1}
    bare_cpu = {c["concurrency"]: c["server_cpu_ms_per_action"] for c in cells
                if c["target"] == "bare" and c["replicas"] == 1}
    rest1 = {c["concurrency"]: c["throughput"] for c in cells
             if c["target"] == "rest" and c["replicas"] == 1}
    lines = [
        f"Service load, {args.duration:g} s per cell after {args.warmup:g} s warm-up, "
        f"{os.cpu_count()} cores, Redis {args.redis_version}",
        "",
        "| target | replicas | clients | actions/s | vs bare | p50 ms | p99 ms "
        "| Redis round trips/action | server CPU ms/action | vs bare (CPU) "
        "| client CPU ms/action | errors | load avg |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
        "| ---: |",
    ]
    for c in cells:
        ratio = cpu_ratio = ""
        if c["target"] != "bare" and c["concurrency"] in bare_cpu:
            cpu_ratio = f"{100 * bare_cpu[c['concurrency']] / c['server_cpu_ms_per_action']:.0f} %"
        if c["replicas"] == 1 and c["concurrency"] in bare and c["target"] != "bare":
            ratio = f"{100 * c['throughput'] / bare[c['concurrency']]:.0f} %"
        elif c["replicas"] > 1 and c["concurrency"] in rest1:
            ratio = f"{c['throughput'] / rest1[c['concurrency']]:.2f}x REST 1 replica"
        lines.append(
            f"| {c['target']} | {c['replicas']} | {c['concurrency']} | {c['throughput']:.0f} "
            f"| {ratio} | {c['p50_ms']:.1f} | {c['p99_ms']:.1f} "
            f"| {c['round_trips_per_action']:.3f} | {c['server_cpu_ms_per_action']:.2f} "
            f"| {cpu_ratio} | {1000 * c['driver_cpu_s'] / max(c['acts'], 1):.2f} "
            f"| {c['errors']} | {c['load_before']:.1f} |"
        )
    lines += [
        "",
        "| game | players | moves | record bytes | log payload bytes | MEMORY USAGE |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in storage:
        lines.append(
            f"| {row['game']} | {row['players']} | {row['moves']} | {row['record_bytes']} "
            f"| {row['log_payload_bytes']} | {row['memory']} "
            f"({row['memory'] / 1024:.1f} KiB) |"
        )
    if storage:
        worst = max(storage, key=lambda row: row["memory"])
        lines.append(
            f"\nLargest: {worst['memory'] / 1024:.1f} KiB ({worst['game']}, "
            f"{worst['players']} players, {worst['moves']} moves); goal <= 8 KiB."
        )
    return "\n".join(lines)


def _profile_summary(path: Path, lines: int = 30) -> str:
    import io
    import pstats

    out = io.StringIO()
    stats = pstats.Stats(str(path), stream=out)
    stats.sort_stats("cumulative").print_stats(lines)
    stats.sort_stats("tottime").print_stats(lines)
    return out.getvalue()


def orchestrate(args: argparse.Namespace) -> int:
    from tests.support.redis_servers import RedisServer

    concurrencies = [int(c) for c in args.concurrency.split(",")]
    scale_levels = [c for c in concurrencies if c >= 16] if not args.quick else [
        max(concurrencies)]
    own: RedisServer | None = None
    redis_url = args.redis_url
    if redis_url is None:
        own = RedisServer.start()
        redis_url = own.url
    prefix = f"bench:{uuid.uuid4().hex[:8]}:"
    cells: list[dict[str, Any]] = []
    storage: list[dict[str, Any]] = []
    workdir = Path(tempfile.mkdtemp(prefix="skyline-bench-"))
    try:
        import redis

        info = redis.Redis.from_url(redis_url).info("server")
        args.redis_version = info.get("redis_version", "?")
        # Cells run interleaved (for each client count: bare, REST, GraphQL back to back)
        # so that load from elsewhere on the machine shifts all three alike. REST and
        # GraphQL are two endpoints of one Skyline server; an idle server costs nothing.
        targets = [args.profile] if args.profile else ["bare", "rest", "graphql"]
        profile = workdir / f"{args.profile}.prof" if args.profile else None
        servers: dict[str, Server] = {}
        extra: Server | None = None
        try:
            for kind in sorted({"bare" if t == "bare" else "skyline" for t in targets}):
                servers[kind] = start_server(kind, redis_url, prefix, workdir, profile,
                                             args.build)
            for c in concurrencies:
                for n, target in enumerate(targets):
                    server = servers["bare" if target == "bare" else "skyline"]
                    cells.append(run_cell(target, [server], c, args.warmup, args.duration,
                                          100 * n + c))
                    _progress(cells[-1])
            if not args.profile:
                storage = measure_storage(servers["skyline"], redis_url, prefix,
                                          1 if args.quick else 3)
                # Scaling: REST on one replica, then on two, back to back.
                extra = start_server("skyline", redis_url, prefix, workdir,
                                     build=args.build)
                for c in scale_levels:
                    for replicas in ([servers["skyline"]], [servers["skyline"], extra]):
                        cells.append(run_cell("rest", replicas, c, args.warmup,
                                              args.duration, 1000 + c))
                        _progress(cells[-1])
        finally:
            for server in [*servers.values(), *([extra] if extra else [])]:
                server.stop()
        if profile is not None:
            print(_profile_summary(profile))
    finally:
        if own is not None:
            own.close()
        else:
            _delete_prefix(redis_url, prefix)
        shutil.rmtree(workdir, ignore_errors=True)  # server logs, profiles (printed above)
    print(report(cells, storage, args))
    if args.json:
        Path(args.json).write_text(json.dumps({"cells": cells, "storage": storage}, indent=2))
    return 0


def _progress(cell: dict[str, Any]) -> None:
    print(f"  {cell['target']:8} x{cell['replicas']} c={cell['concurrency']:<3} "
          f"{cell['throughput']:7.0f}/s p50 {cell['p50_ms']:6.1f} ms p99 {cell['p99_ms']:6.1f} ms"
          f" rt/act {cell['round_trips_per_action']:.3f} cpu/act "
          f"{cell['server_cpu_ms_per_action']:.2f} ms errors {cell['errors']}",
          file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.load", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="short cells (under 3 minutes in all)")
    parser.add_argument("--redis-url", help="use this Redis (default: start a private one)")
    parser.add_argument("--concurrency", default="1,16,64", help="clients per cell")
    parser.add_argument("--duration", type=float, help="measured seconds per cell")
    parser.add_argument("--warmup", type=float, help="unmeasured seconds before each cell")
    parser.add_argument("--json", help="also write the raw figures to this file")
    parser.add_argument("--profile", choices=["bare", "rest", "graphql"],
                        help="run only this target, under cProfile, and print the profile")
    parser.add_argument("--build", type=Path,
                        help="run the servers from this checkout (its service package); "
                             "the load generator stays this one")
    # internal: the load generator
    parser.add_argument("--drive", choices=["bare", "rest", "graphql"], help=argparse.SUPPRESS)
    parser.add_argument("--urls", help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.build is not None:
        args.build = args.build.resolve()
        if not (args.build / "service" / "__init__.py").is_file():
            parser.error(f"--build {args.build}: no service package there")
    if args.duration is None:
        args.duration = 4.0 if args.quick else 12.0
    if args.warmup is None:
        args.warmup = 1.0 if args.quick else 3.0
    if args.drive:
        concurrency = int(args.concurrency)
        result = asyncio.run(drive(args.drive, args.urls.split(","), concurrency,
                                   args.warmup, args.duration, args.seed))
        print(json.dumps(result))
        return 0
    return orchestrate(args)


if __name__ == "__main__":
    sys.exit(main())
