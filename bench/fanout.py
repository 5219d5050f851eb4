"""Fan-out benchmark (issue 15, "Live connections at scale"): many live viewers of matches on
one Skyline replica -- how many it holds, how fast a move reaches them all, what each costs.

Run: ``.venv/bin/python -m bench.fanout`` (every scenario on a private Redis, then on a
private 3-primary cluster: ``--scenario all --store redis,cluster``; about 15 minutes with the
issue's sizes), ``--quick`` (small sizes, 2-3 minutes), ``--scenario
capacity|latency|cpu|resume|bytes|all`` (comma-separated lists work), ``--store
redis|cluster|embedded`` (or a list), ``--json PATH`` (every figure), ``--server-arg ARG``
(repeatable: passed to ``skyline serve``, e.g. ``--server-arg=--max-watchers=20000``),
``--server-root DIR`` (serve another checkout, e.g. one exported with ``git archive``, for
a before/after). Sizes are options (``--help``); the defaults are the issue's numbers.

What runs
---------
- **Redis**: ``--store redis`` starts a private ``redis-server`` (persistence off, a port in
  7400-7499; ``--redis-url`` uses yours instead, keys under a fresh prefix, deleted at the
  end); ``cluster`` a private 3 primaries + 3 replicas (``RedisClusterProcesses``, as the
  store tests); ``embedded`` the SQLite store in a temporary folder.
- **The replica**: ``python -m service.cli serve`` (``skyline serve``) on a port in
  8200-8299, ``--log-level warning`` (no access log), its open-file soft limit raised to the
  hard limit, a fresh process per scenario (so that its RSS starts clean). ``--limits
  raise`` (the default) adds ``--max-watchers-per-client`` (every watcher here comes from
  127.0.0.1, one "client" to the per-address cap) and, if a scenario needs more than the
  default 16,000, ``--max-watchers``, when the served code has those flags; ``--limits
  keep`` leaves the server's defaults.
- **Watchers**: ``--client-procs`` processes of ``bench.fanout_client`` (default 2: one
  process holds 12,000 sockets, but shares of the parsing across two cores keep the clients
  from being the bottleneck), each with its share of the matches. SSE watchers are raw
  asyncio streams (request written by hand, chunked and gzip decoding, SSE parsing), GraphQL
  subscriptions use ``websockets`` (``graphql-transport-ws``). Every watcher checks it got
  every version, in order, once (*violations*: gaps, repeats, going back; a watcher still
  behind the last version when the scenario ends counts in *behind*). All watchers are
  spectators unless ``--sse-seated`` gives some SSE watchers of each match a seat's token.
  Connections are opened ``--connect-concurrency`` at a time per process (a slot is held
  until the first event).
- **Moves**: this process plays them (``POST /v1/matches/{id}/actions`` with the active seat's
  token), choosing uniformly among the legal moves by running the engine itself from the
  match's seed, as ``bench.load`` does.

Scenarios
---------
``capacity``
  ``--matches`` (1,000) New York 1901 4-player matches, ``--sse-per-match`` (10) SSE
  watchers and ``--graphql-per-match`` (2) GraphQL subscriptions on each, all held at once
  (``--sse-mode`` full or patch). Warm-up (a few requests, one SSE stream of each mode, one
  subscription) then the server's RSS; all SSE watchers connected, RSS again; all GraphQL
  subscriptions connected, RSS again. Per idle watcher: (RSS after - RSS before) / watchers
  connected, for SSE and for GraphQL separately. Then ``--hold`` seconds of ordinary REST
  traffic: ``--rest-rate`` GETs of match states per second, a ``/readyz`` probe a second, a
  move every ``--move-every`` seconds on one of ``--moving-matches`` matches (whose watchers
  must then receive it). Reported: HTTP statuses (503s anywhere: the goal is none), failed
  watchers by reason, violations, the replica's Redis connections from ``CLIENT LIST`` on
  every node (matched to the replica by its own sockets' ports, ``/proc/<pid>/net/tcp``;
  *pub/sub* = a connection with subscriptions, *commands* = the others; names as
  ``CLIENT SETNAME`` gave them), its open files, ``/metrics`` lines about watchers.
``latency`` and ``cpu`` (one experiment, run once for both)
  One match, ``--latency-watchers`` (5,000) SSE watchers in each ``--modes`` mode in turn
  (patch, then full; fresh watcher processes, the same server). ``--moves`` (20) moves, one
  at a time: the next move is posted once every watcher has the previous one (or after 30 s),
  ``--move-gap`` later. Latency of a move: from its acknowledgement (the POST's response, as
  this process received it) to its arrival at the *last* watcher (p50/p99/max over the
  moves; the same over every watcher's arrival too). CPU: the server process's CPU time
  (``/proc/<pid>/stat``) from the first move to the last arrival, divided by versions x
  watchers; ``net`` subtracts the idle rate measured over ``--idle-window`` seconds before.
  Patch streams are replayed with ``jsonpatch`` at the end: every patch applied to the view
  so far, and the view at every version compared with the match state this process read
  over REST (as a spectator) once every watcher had that version (one GET per move, inside
  the CPU window: negligible next to the fan-out).
``resume``
  A match played to ``--resume-versions`` (250) versions; ``--resume-readers`` (20)
  concurrent ``GET /events?after=0`` (``--resume-after``; each a new connection, read until
  the current version, then closed), ``--resume-rounds`` times per ``--resume-modes`` mode.
  Reported: the server CPU and wall time per round, and the p50/p90 of an unrelated ``GET
  /v1/matches/{other}`` issued back to back while the round runs, against the same GET with
  nothing else running (``--probe-seconds`` before the rounds).
``bytes``
  One New York 1901 4-player match played to its end (seed ``--bytes-seed``) while four
  spectators follow it from version 0: full and patch mode, each with ``Accept-Encoding:
  identity`` and ``gzip``. Reported: bytes of the SSE body as received (compressed bytes
  when the server compressed; after removing the chunked framing) and on the wire (with
  headers and framing), per variant and per version; every stream replayed and its view at
  every version compared with the state read over REST after each move.

Figures are for this machine (2 cores shared by the server, Redis and the watcher processes)
and compare settings with each other; the clients' CPU is reported so that a saturated
client is visible.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
GAME = "ny1901"
PLAYERS = 4
SERVER_PORTS = range(8200, 8300)
REDIS_PORTS = range(7400, 7500)
MOVE_TIMEOUT = 30.0
RAISED_PER_CLIENT = 1_000_000
T0 = time.monotonic()


def log(message: str) -> None:
    print(f"[{time.monotonic() - T0:7.1f}s] {message}", file=sys.stderr, flush=True)


# -- processes: CPU, memory, sockets (Linux /proc) -------------------------------------------


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def socket_ports(pid: int) -> tuple[set[int], Counter[int]]:
    """The local ports of ``pid``'s TCP sockets, and how many of them go to each remote port."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    local: set[int] = set()
    remote: Counter[int] = Counter()
    for table in ("tcp", "tcp6"):
        path = Path(f"/proc/{pid}/net/{table}")
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            parts = line.split()
            if len(parts) > 9 and parts[9] in inodes:
                local.add(int(parts[1].rsplit(":", 1)[1], 16))
                remote[int(parts[2].rsplit(":", 1)[1], 16)] += 1
    return local, remote


def quantile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(1000 * seconds, 2)


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port(ports: range) -> int:
    candidates = list(ports)
    random.shuffle(candidates)
    for port in candidates:
        if _port_free(port):
            return port
    raise RuntimeError(f"no free port in {ports.start}-{ports.stop - 1}")


def _raise_open_files() -> None:
    from bench.fanout_client import raise_open_files

    raise_open_files()


# -- the store ----------------------------------------------------------------------------------


class Store:
    """The Redis (single node or cluster) or embedded store one run uses."""

    def __init__(self, kind: str, args: argparse.Namespace) -> None:
        self.kind = kind
        self.args = args
        self.redis: Any = None
        self.cluster: Any = None
        self.url: str | None = None
        self.prefixes: list[str] = []
        self.tempdirs: list[tempfile.TemporaryDirectory[str]] = []

    def start(self) -> Store:
        # Imported by name: the test helpers are not part of what mypy checks here.
        servers: Any = importlib.import_module("tests.support.redis_servers")
        RedisServer, RedisClusterProcesses = servers.RedisServer, servers.RedisClusterProcesses
        if self.kind == "redis":
            if self.args.redis_url:
                self.url = self.args.redis_url
            else:
                extra = list(self.args.redis_arg or [])
                self.redis = RedisServer.start(port=free_port(REDIS_PORTS), extra_args=extra)
                self.url = self.redis.url
        elif self.kind == "cluster":
            self.cluster = RedisClusterProcesses.start(primaries=3)
        elif self.kind != "embedded":
            raise ValueError(f"unknown store {self.kind!r}")
        return self

    def flags(self) -> list[str]:
        """``skyline serve`` flags for a fresh run (a new key prefix, or a new folder)."""
        prefix = f"fanout:{uuid.uuid4().hex[:8]}:"
        self.prefixes.append(prefix)
        if self.kind == "redis":
            assert self.url is not None
            return ["--redis-url", self.url, "--redis-prefix", prefix]
        if self.kind == "cluster":
            return ["--redis-cluster", self.cluster.nodes_arg, "--redis-prefix", prefix]
        folder = tempfile.TemporaryDirectory(prefix="skyline-fanout-")
        self.tempdirs.append(folder)
        return ["--data-dir", folder.name]

    def nodes(self) -> list[tuple[str, int]]:
        if self.kind == "cluster":
            return [(n.host, n.port) for n in self.cluster.nodes if n.alive]
        if self.kind == "redis" and self.url:
            from redis.connection import parse_url

            parsed: dict[str, Any] = parse_url(self.url)  # type: ignore[no-untyped-call]
            return [(str(parsed.get("host", "127.0.0.1")), int(parsed.get("port", 6379)))]
        return []

    def version(self) -> str | None:
        nodes = self.nodes()
        if not nodes:
            return None
        import redis

        with contextlib.closing(redis.Redis(host=nodes[0][0], port=nodes[0][1])) as client:
            return str(client.info("server").get("redis_version"))

    def close(self) -> None:
        if self.redis is not None:
            self.redis.close()
        elif self.kind == "redis" and self.url:
            import redis

            with contextlib.closing(redis.Redis.from_url(self.url)) as client:
                for prefix in self.prefixes:
                    for key in list(client.scan_iter(match=prefix + "*", count=1000)):
                        client.delete(key)
        if self.cluster is not None:
            self.cluster.close()
        for folder in self.tempdirs:
            folder.cleanup()


def redis_connections(server_pid: int, nodes: list[tuple[str, int]]) -> dict[str, Any]:
    """The replica's connections on every Redis node, from ``CLIENT LIST``: those whose
    client port is one of the replica's own sockets."""
    import redis

    local, remote = socket_ports(server_pid)
    per_node = []
    totals: Counter[str] = Counter()
    names: Counter[str] = Counter()
    for host, port in nodes:
        client: Any = redis.Redis(host=host, port=port, socket_timeout=10)
        try:
            role = str(client.execute_command("ROLE")[0].decode())
            entries = client.client_list()
        finally:
            client.close()
        counts: Counter[str] = Counter()
        for entry in entries:
            addr = str(entry.get("addr", ""))
            if int(addr.rsplit(":", 1)[1] or 0) not in local:
                continue
            subs = sum(int(entry.get(k, 0) or 0) for k in ("sub", "psub", "ssub"))
            flags = str(entry.get("flags", ""))
            pubsub = subs > 0 or "P" in flags or str(entry.get("cmd", "")).endswith("subscribe")
            counts["pubsub" if pubsub else "commands"] += 1
            counts["subscriptions"] += subs
            names[str(entry.get("name") or "(unnamed)")] += 1
        per_node.append({"node": f"{host}:{port}", "role": role, **counts})
        totals.update(counts)
    return {
        "pubsub": totals["pubsub"], "commands": totals["commands"],
        "subscriptions": totals["subscriptions"], "names": dict(names), "nodes": per_node,
        "tcp_to_redis": sum(remote[p] for _, p in nodes),
    }


def pool_size(server_root: str) -> int | None:
    """The store's command-pool bound in the served code (None: it has none it names)."""
    code = ("from service.store import redis as r; "
            "print(getattr(r, 'DEFAULT_MAX_CONNECTIONS', ''))")
    with contextlib.suppress(Exception):
        out = subprocess.run([sys.executable, "-c", code], cwd=server_root, timeout=60,
                             capture_output=True, text=True)
        return int(out.stdout.strip().splitlines()[-1])
    return None


# -- the server -----------------------------------------------------------------------------------


@dataclass
class Server:
    port: int
    process: subprocess.Popen[bytes]
    log_path: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        return self.process.pid

    def cpu(self) -> float:
        return cpu_seconds(self.pid)

    def rss(self) -> int:
        return rss_bytes(self.pid)

    def alive(self) -> bool:
        return self.process.poll() is None

    def log_tail(self, chars: int = 3000) -> str:
        with contextlib.suppress(OSError):
            return self.log_path.read_text(errors="replace")[-chars:]
        return ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


def serve_flags(server_root: str) -> set[str]:
    """The flags ``skyline serve`` takes in the served code."""
    out = subprocess.run([sys.executable, "-m", "service.cli", "serve", "--help"],
                         cwd=server_root, capture_output=True, text=True, timeout=120)
    return {word.split("=")[0].rstrip(",") for word in out.stdout.split()
            if word.startswith("--")}


def limit_flags(args: argparse.Namespace) -> list[str]:
    """With ``--limits raise`` (the default): rate limits off and the per-client stream cap
    lifted, since every watcher of this benchmark comes from one address (and the replica
    cap raised when a scenario needs more). Flags the served code does not know are left
    out; ``--server-arg`` comes after and wins."""
    if args.limits != "raise":
        return []
    if args.serve_flags is None:
        args.serve_flags = serve_flags(args.server_root)
    flags = []
    if "--rate-limits" in args.serve_flags:
        flags.append("--rate-limits=off")  # every watcher opens its stream from one address
    if "--max-watchers-per-client" in args.serve_flags:
        flags.append(f"--max-watchers-per-client={RAISED_PER_CLIENT}")
    needed = max(args.matches * (args.sse_per_match + args.graphql_per_match),
                 args.latency_watchers) + 100
    if "--max-watchers" in args.serve_flags and needed > 16_000:
        flags.append(f"--max-watchers={needed}")
    return flags


async def start_server(args: argparse.Namespace, store: Store, workdir: Path) -> Server:
    port = free_port(SERVER_PORTS)
    limits = await asyncio.to_thread(limit_flags, args)
    command = [sys.executable, "-m", "service.cli", "serve", "--host", "127.0.0.1",
               "--port", str(port), "--log-level", "warning", *store.flags(), *limits,
               *(args.server_arg or [])]
    log_path = workdir / f"server-{port}.log"
    with log_path.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                   cwd=args.server_root)
    server = Server(port, process, log_path)
    deadline = time.monotonic() + 60
    async with httpx.AsyncClient(timeout=2) as http:
        while time.monotonic() < deadline:
            if not server.alive():
                raise RuntimeError(f"server exited:\n{server.log_tail()}")
            with contextlib.suppress(httpx.HTTPError):
                if (await http.get(server.url + "/readyz")).status_code == 200:
                    log(f"server pid {server.pid} on {server.url} ({' '.join(command[4:])})")
                    return server
            await asyncio.sleep(0.2)
    server.stop()
    raise RuntimeError(f"server did not start:\n{server.log_tail()}")


# -- matches and moves ----------------------------------------------------------------------------


def match_length(seed: int) -> int:
    """How many moves the random player below makes in the match of ``seed``."""
    from service import games

    engine: Any = games.get(GAME)
    state = engine.setup(PLAYERS, None, seed)
    rng = random.Random(seed)
    moves = 0
    while engine.result(state) is None and engine.active_seats(state):
        seat = min(engine.active_seats(state))
        state, _ = engine.apply(state, seat, rng.choice(engine.legal_actions(state, seat)))
        moves += 1
    return moves


def seed_lasting(moves: int, start: int = 1) -> int:
    """The first seed from ``start`` whose match lasts more than ``moves`` moves."""
    seed = start
    while match_length(seed) <= moves:
        seed += 1
    return seed


@dataclass
class Match:
    """A match this process plays: the engine state mirrors the server's."""

    id: str
    seed: int
    tokens: dict[int, str]
    state: Any
    engine: Any
    rng: random.Random
    version: int = 0

    @property
    def finished(self) -> bool:
        return bool(self.engine.result(self.state) is not None
                    or not self.engine.active_seats(self.state))


async def create_match(http: httpx.AsyncClient, seed: int) -> Match:
    from service import games

    response = await http.post("/v1/matches", json={"game": GAME, "players": PLAYERS,
                                                    "seed": seed})
    if response.status_code != 201:
        raise RuntimeError(f"create: {response.status_code} {response.text[:300]}")
    body = response.json()
    engine: Any = games.get(GAME)
    return Match(body["matchId"], seed, {s["seat"]: s["token"] for s in body["seats"]},
                 engine.setup(PLAYERS, None, seed), engine, random.Random(seed),
                 int(body.get("version", 0)))


async def create_matches(http: httpx.AsyncClient, count: int, seeds: list[int]) -> list[Match]:
    sem = asyncio.Semaphore(8)

    async def one(i: int) -> Match:
        async with sem:
            return await create_match(http, seeds[i % len(seeds)])

    return list(await asyncio.gather(*(one(i) for i in range(count))))


@dataclass
class Ack:
    version: int
    at: float
    seconds: float
    status: int


async def play(http: httpx.AsyncClient, match: Match) -> Ack:
    """One random legal move of the active seat; the server's answer."""
    from service.games.base import dump_action

    engine = match.engine
    seat = min(engine.active_seats(match.state))
    move = match.rng.choice(engine.legal_actions(match.state, seat))
    sent = time.monotonic()
    response = await http.post(f"/v1/matches/{match.id}/actions",
                               json={"action": dump_action(engine, move)},
                               headers={"Authorization": f"Bearer {match.tokens[seat]}"})
    at = time.monotonic()
    if response.status_code != 200:
        raise RuntimeError(f"move on {match.id}: {response.status_code} {response.text[:300]}")
    match.state, _ = engine.apply(match.state, seat, move)
    match.version = int(response.json()["version"])
    return Ack(match.version, at, at - sent, response.status_code)


async def spectator_state(http: httpx.AsyncClient, match_id: str) -> dict[str, Any]:
    response = await http.get(f"/v1/matches/{match_id}")
    response.raise_for_status()
    state: dict[str, Any] = response.json()
    return state


# -- the watcher processes ------------------------------------------------------------------------


class Clients:
    """The ``bench.fanout_client`` processes of one run, driven over stdin/stdout."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.procs: list[asyncio.subprocess.Process] = []
        self.readers: list[asyncio.Task[None]] = []
        self.status: list[dict[str, Any]] = []
        self.phases: list[dict[str, dict[str, Any]]] = []
        self.caught: list[int] = []
        self.finals: list[dict[str, Any] | None] = []
        self.ready: list[asyncio.Event] = []
        self.changed = asyncio.Event()
        self.expect_seq = 0
        self.workdir: Path | None = None
        self.files: list[Any] = []

    @classmethod
    async def start(cls, label: str, port: int, shares: list[list[dict[str, Any]]],
                    workdir: Path, **options: Any) -> Clients:
        clients = cls(label)
        clients.workdir = workdir
        label = label.replace("/", "-")
        for n, groups in enumerate(shares):
            spec = {"host": "127.0.0.1", "port": port, "groups": groups, **options}
            path = workdir / f"client-{label}-{n}.json"
            path.write_text(json.dumps(spec))
            err = (workdir / f"client-{label}-{n}.err").open("wb")
            clients.files.append(err)
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bench.fanout_client", str(path), cwd=ROOT,
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=err, limit=1 << 28,
            )
            clients.procs.append(proc)
            clients.status.append({})
            clients.phases.append({})
            clients.caught.append(0)
            clients.finals.append(None)
            clients.ready.append(asyncio.Event())
            clients.readers.append(asyncio.create_task(clients._read(n, proc)))
        await asyncio.wait_for(asyncio.gather(*(e.wait() for e in clients.ready)), 60)
        return clients

    async def _read(self, n: int, proc: asyncio.subprocess.Process) -> None:
        assert proc.stdout is not None
        while True:
            line = await proc.stdout.readline()
            if not line:
                break
            message = json.loads(line)
            if "status" in message:
                self.status[n] = message["status"]
            elif "phase_done" in message:
                self.phases[n][message["phase_done"]] = message
            elif "caught_up" in message:
                self.caught[n] = int(message["caught_up"])
            elif "final" in message:
                self.finals[n] = message["final"]
            elif "ready" in message:
                self.ready[n].set()
            self.changed.set()
        self.changed.set()

    def _send(self, command: dict[str, Any]) -> None:
        data = (json.dumps(command) + "\n").encode()
        for proc in self.procs:
            if proc.stdin is not None and proc.returncode is None:
                proc.stdin.write(data)

    async def _until(self, done: Callable[[], bool], timeout: float, what: str,
                     progress: bool = True) -> bool:
        deadline = time.monotonic() + timeout
        shown = time.monotonic()
        while not done():
            if any(p.returncode is not None for p in self.procs):
                raise RuntimeError(f"a watcher process of {self.label} exited: "
                                   f"{self.stderr_tail()}")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                log(f"{self.label}: {what}: timed out after {timeout:.0f} s ({self.summary()})")
                return False
            self.changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), min(remaining, 1.0))
            if progress and time.monotonic() - shown >= 3:
                shown = time.monotonic()
                log(f"{self.label}: {what}: {self.summary()}")
        return True

    def summary(self) -> str:
        total: Counter[str] = Counter()
        cpu = []
        for status in self.status:
            for key in ("watchers", "started", "connected", "resuming", "live", "failed",
                        "done", "events", "violations", "open_sockets"):
                total[key] += int(status.get(key, 0))
            cpu.append(float(status.get("cpu_s", 0.0)))
        cpus = "/".join(f"{c:.1f}" for c in cpu)
        return (f"{total['connected']}/{total['watchers']} connected ({total['started']} "
                f"started, {total['resuming']} resuming a stream the server ended, "
                f"{total['open_sockets']} sockets), "
                f"{total['failed']} failed, {total['done']} done, {total['events']} "
                f"events, {total['violations']} violations, client CPU {cpus} s")

    async def connect(self, phase: str, timeout: float) -> dict[str, Any]:
        """Open the phase's watchers; once each has its first event (or failed)."""
        started = time.monotonic()
        self._send({"cmd": "connect", "phase": phase})
        ok = await self._until(lambda: all(phase in p for p in self.phases), timeout,
                               f"connecting {phase}")
        parts = [p.get(phase, {}) for p in self.phases]
        result: dict[str, Any] = {"complete": ok, "seconds": time.monotonic() - started}
        for key in ("watchers", "connected", "ever_connected", "failed", "done"):
            result[key] = sum(int(p.get(key, 0)) for p in parts)
        result["first_event_max_s"] = max((p.get("first_event_max_s") or 0 for p in parts),
                                          default=None)
        result["first_event_p50_s"] = max((p.get("first_event_p50_s") or 0 for p in parts),
                                          default=None)
        result["done_max_s"] = max((p.get("done_max_s") or 0 for p in parts), default=None)
        return result

    async def expect(self, targets: dict[str, int], timeout: float,
                     progress: bool = False) -> bool:
        """True once every live watcher of those matches has those versions."""
        self.expect_seq += 1
        seq = self.expect_seq
        self._send({"cmd": "expect", "targets": targets})
        return await self._until(lambda: all(c >= seq for c in self.caught), timeout,
                                 "waiting for the versions", progress)

    async def stop(self, timeout: float = 120) -> list[dict[str, Any]]:
        self._send({"cmd": "stop"})
        for proc in self.procs:
            if proc.stdin is not None:
                with contextlib.suppress(Exception):
                    proc.stdin.close()
        try:
            await asyncio.wait_for(asyncio.gather(*self.readers), timeout)
            await asyncio.wait_for(asyncio.gather(*(p.wait() for p in self.procs)), 30)
        finally:
            for proc in self.procs:
                if proc.returncode is None:
                    proc.kill()
                    await proc.wait()
            for file in self.files:
                file.close()
        missing = [n for n, f in enumerate(self.finals) if f is None]
        if missing:
            raise RuntimeError(f"watcher processes {missing} of {self.label} gave no summary: "
                               f"{self.stderr_tail()}")
        return [f for f in self.finals if f is not None]

    def stderr_tail(self) -> str:
        if self.workdir is None:
            return ""
        tails = []
        for path in sorted(self.workdir.glob(f"client-{self.label.replace('/', '-')}-*.err")):
            text = path.read_text(errors="replace")[-1500:]
            if text.strip():
                tails.append(f"{path.name}: {text}")
        return "\n".join(tails)


def merge_finals(finals: list[dict[str, Any]]) -> dict[str, Any]:
    """The watcher processes' summaries added up."""
    merged: dict[str, Any] = {"statuses": Counter(), "failures": Counter(),
                              "event_kinds": Counter(), "comments": Counter(),
                              "stream_ends": Counter(), "failure_examples": [],
                              "violation_examples": [], "behind_examples": [], "notes": [],
                              "groups": {}, "client_cpu_s": []}
    for key in ("watchers", "connected", "failed", "done", "events", "violations",
                "snapshot_skips", "reconnects", "behind"):
        merged[key] = sum(int(f.get(key, 0)) for f in finals)
    for f in finals:
        for key in ("statuses", "failures", "event_kinds", "comments", "stream_ends"):
            merged[key].update(f.get(key, {}))
        for key in ("failure_examples", "violation_examples", "behind_examples", "notes"):
            merged[key] += [x for x in f.get(key, []) if x not in merged[key]][:8]
        merged["client_cpu_s"].append(round(float(f.get("cpu_s", 0.0)), 2))
        for name, group in f.get("groups", {}).items():
            into = merged["groups"].setdefault(name, Counter())
            for key, value in group.items():
                if isinstance(value, int):
                    into[key] += value
                elif isinstance(value, dict):
                    into.setdefault(key, Counter()).update(value)
    for key in ("statuses", "failures", "event_kinds", "comments", "stream_ends"):
        merged[key] = dict(merged[key])
    merged["groups"] = {k: dict(v) for k, v in merged["groups"].items()}
    return merged


def shares(groups: list[dict[str, Any]], procs: int) -> list[list[dict[str, Any]]]:
    """Groups dealt to the processes by match, so that each match lives in one process."""
    out: list[list[dict[str, Any]]] = [[] for _ in range(procs)]
    slots: dict[str, int] = {}
    for group in groups:
        slot = slots.setdefault(group["match"], len(slots) % procs)
        out[slot].append(group)
    return [s for s in out if s]


def split_counts(groups: list[dict[str, Any]], procs: int) -> list[list[dict[str, Any]]]:
    """One match's big groups cut into ``procs`` shares of the watchers."""
    out: list[list[dict[str, Any]]] = [[] for _ in range(procs)]
    for group in groups:
        count = int(group["count"])
        for n in range(procs):
            part = count // procs + (1 if n < count % procs else 0)
            if part:
                out[n].append({**group, "count": part})
    return [s for s in out if s]


def client_options(args: argparse.Namespace, **extra: Any) -> dict[str, Any]:
    sources = [f"127.0.0.{n}" for n in range(1, args.client_addresses + 1)]
    return {"connect_concurrency": args.connect_concurrency,
            "source_hosts": sources if args.client_addresses > 1 else [],
            "connect_timeout": args.connect_timeout,
            "ws_compression": not args.no_ws_compression, **extra}


# -- REST traffic during a scenario ------------------------------------------------------------


@dataclass
class Probe:
    """Statuses and latencies of one kind of request."""

    statuses: Counter[str] = field(default_factory=Counter)
    latencies: list[tuple[float, float]] = field(default_factory=list)  # (start, seconds)
    errors: list[str] = field(default_factory=list)

    async def call(self, request: Awaitable[httpx.Response]) -> httpx.Response | None:
        start = time.monotonic()
        try:
            response = await request
        except httpx.HTTPError as exc:
            self.statuses["error"] += 1
            if len(self.errors) < 5:
                self.errors.append(f"{type(exc).__name__}: {exc}")
            return None
        self.latencies.append((start, time.monotonic() - start))
        self.statuses[str(response.status_code)] += 1
        return response

    def figures(self, window: tuple[float, float] | None = None) -> dict[str, Any]:
        values = [s for t, s in self.latencies
                  if window is None or window[0] <= t <= window[1]]
        return {"count": len(values), "statuses": dict(self.statuses),
                "p50_ms": ms(quantile(values, 0.5)), "p90_ms": ms(quantile(values, 0.9)),
                "p99_ms": ms(quantile(values, 0.99)), "errors": self.errors}


async def paced(seconds: float, rate: float, call: Callable[[int], Awaitable[None]]) -> None:
    """``call(i)`` about ``rate`` times a second for ``seconds`` (never two at once)."""
    if rate <= 0:
        return
    start = time.monotonic()
    i = 0
    while time.monotonic() - start < seconds:
        await call(i)
        i += 1
        delay = start + i / rate - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)


# -- scenarios ------------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def served(args: argparse.Namespace, store: Store, workdir: Path
                 ) -> AsyncIterator[tuple[Server, httpx.AsyncClient]]:
    server = await start_server(args, store, workdir)
    http = httpx.AsyncClient(base_url=server.url, timeout=60,
                             limits=httpx.Limits(max_connections=32))
    try:
        yield server, http
    finally:
        await http.aclose()
        server.stop()
        tail = server.log_tail(2000)
        if any(w in tail for w in ("Traceback", "ERROR", "Too many open files")):
            log(f"server log (tail):\n{tail}")


async def settle(seconds: float) -> None:
    if seconds > 0:
        await asyncio.sleep(seconds)


async def scenario_capacity(args: argparse.Namespace, store: Store, workdir: Path
                            ) -> dict[str, Any]:
    label = f"capacity/{store.kind}"
    async with served(args, store, workdir) as (server, http):
        log(f"{label}: creating {args.matches} matches")
        matches = await create_matches(http, args.matches, list(range(1, 101)))
        seated = min(args.sse_seated, args.sse_per_match)
        groups: list[dict[str, Any]] = []
        for m in matches:
            base = {"match": m.id, "mode": args.sse_mode, "encoding": "identity"}
            if args.sse_per_match - seated:
                groups.append({**base, "phase": "sse", "kind": "sse",
                               "count": args.sse_per_match - seated})
            for s in range(seated):
                groups.append({**base, "phase": "sse", "kind": "sse", "count": 1,
                               "token": m.tokens[s % PLAYERS]})
            if args.graphql_per_match:
                groups.append({"match": m.id, "phase": "graphql", "kind": "graphql",
                               "count": args.graphql_per_match})
        first = matches[0].id
        warmup = [{"phase": "warmup", "kind": "sse", "match": first, "mode": mode,
                   "until": 0, "count": 1} for mode in ("full", "patch")]
        warmup.append({"phase": "warmup", "kind": "graphql", "match": first, "until": 0,
                       "count": 1})
        dealt = shares(groups, args.client_procs)
        dealt[0] = warmup + dealt[0]
        clients = await Clients.start(label, server.port, dealt, workdir,
                                      **client_options(args))
        result: dict[str, Any] = {"scenario": "capacity", "store": store.kind,
                                  "matches": args.matches, "sse_mode": args.sse_mode,
                                  "sse_per_match": args.sse_per_match,
                                  "sse_seated_per_match": seated,
                                  "graphql_per_match": args.graphql_per_match,
                                  "client_procs": len(dealt)}
        try:
            for m in matches[:20]:
                await http.get(f"/v1/matches/{m.id}")
            result["warmup"] = await clients.connect("warmup", 60)
            await settle(args.settle)
            rss0 = server.rss()
            cpu0 = server.cpu()
            log(f"{label}: RSS with no watcher {rss0 / 2**20:.1f} MiB; connecting "
                f"{args.matches * args.sse_per_match} SSE watchers")
            result["sse"] = await clients.connect("sse", args.connect_phase_timeout)
            await settle(args.settle)
            rss_sse = server.rss()
            log(f"{label}: SSE: {result['sse']['connected']} connected in "
                f"{result['sse']['seconds']:.1f} s, RSS {rss_sse / 2**20:.1f} MiB")
            result["graphql"] = await clients.connect("graphql", args.connect_phase_timeout)
            await settle(args.settle)
            rss_gql = server.rss()
            log(f"{label}: GraphQL: {result['graphql']['connected']} connected in "
                f"{result['graphql']['seconds']:.1f} s, RSS {rss_gql / 2**20:.1f} MiB")
            n_sse = max(result["sse"]["connected"], 1)
            n_gql = max(result["graphql"]["connected"], 1)
            result["rss"] = {
                "no_watchers_mib": round(rss0 / 2**20, 1),
                "with_sse_mib": round(rss_sse / 2**20, 1),
                "with_sse_and_graphql_mib": round(rss_gql / 2**20, 1),
                "per_sse_watcher_kb": round((rss_sse - rss0) / n_sse / 1000, 1),
                "per_graphql_subscription_kb": round((rss_gql - rss_sse) / n_gql / 1000, 1),
            }
            result["connect_cpu_s"] = round(server.cpu() - cpu0, 2)
            result["server_open_files_idle"] = open_files(server.pid)
            snapshots = [redis_connections(server.pid, store.nodes())] if store.nodes() else []
            log(f"{label}: holding for {args.hold:g} s with REST traffic "
                f"({args.rest_rate:g} GET/s, a move every {args.move_every:g} s)")
            rest = {"get": Probe(), "readyz": Probe(), "move": Probe()}
            moving = matches[:max(1, min(args.moving_matches, len(matches)))]
            moved: dict[str, int] = {}

            async def get(i: int) -> None:
                await rest["get"].call(http.get(f"/v1/matches/{matches[i % len(matches)].id}"))

            async def readyz(i: int) -> None:
                await rest["readyz"].call(http.get("/readyz"))

            async def move(i: int) -> None:
                m = moving[i % len(moving)]
                if m.finished:
                    return
                start = time.monotonic()
                try:
                    ack = await play(http, m)
                except (RuntimeError, httpx.HTTPError) as exc:
                    rest["move"].statuses["error"] += 1
                    if len(rest["move"].errors) < 5:
                        rest["move"].errors.append(str(exc)[:300])
                    return
                rest["move"].statuses[str(ack.status)] += 1
                rest["move"].latencies.append((start, ack.seconds))
                moved[m.id] = ack.version

            async def sample_redis() -> None:
                await asyncio.sleep(args.hold / 2)
                if store.nodes():
                    snapshots.append(await asyncio.to_thread(
                        redis_connections, server.pid, store.nodes()))

            hold_cpu0 = server.cpu()
            await asyncio.gather(
                paced(args.hold, args.rest_rate, get), paced(args.hold, 1.0, readyz),
                paced(args.hold, 1 / args.move_every if args.move_every > 0 else 0, move),
                sample_redis(),
            )
            result["hold_cpu_s"] = round(server.cpu() - hold_cpu0, 2)
            result["rest"] = {k: p.figures() for k, p in rest.items()}
            result["moves"] = int(rest["move"].statuses.get("200", 0))
            result["moved_matches"] = len(moved)
            metrics = await http.get("/metrics")
            result["metrics"] = watcher_metrics(metrics.text)
            caught = await clients.expect(moved, 60, progress=True) if moved else True
            result["caught_up"] = caught
            result["rss"]["after_hold_mib"] = round(server.rss() / 2**20, 1)
            result["server_open_files"] = open_files(server.pid)
            result["redis_connections"] = max(
                snapshots, key=lambda s: (s["pubsub"], s["commands"]), default=None)
            result["redis_pool_size"] = await asyncio.to_thread(pool_size, args.server_root)
        finally:
            finals = await clients.stop()
        watchers = merge_finals(finals)
        result["watchers"] = watchers
        rest_503 = sum(int(p["statuses"].get("503", 0)) for p in result.get("rest", {}).values())
        result["http_503"] = int(watchers["statuses"].get("503", 0)) + rest_503
        result["server_alive"] = server.alive()
    return result


def watcher_metrics(text: str) -> dict[str, float]:
    """The /metrics samples about watchers, streams, subscriptions, hubs and limits."""
    words = ("watch", "live", "sse", "subscri", "fanout", "fan_out", "hub", "stream",
             "connection", "redis", "limit", "reject", "shed", "patch", "snapshot")
    out: dict[str, float] = {}
    for line in text.splitlines():
        if not line or line.startswith("#") or "_bucket" in line:
            continue
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if name.startswith("skyline_http_request") or not any(w in name for w in words):
            continue
        key, _, value = line.rpartition(" ")
        with contextlib.suppress(ValueError):
            out[key] = float(value)
    return out


async def scenario_fanout(args: argparse.Namespace, store: Store, workdir: Path
                          ) -> dict[str, Any]:
    """Latency and CPU per delivered version: one match, many SSE watchers, a few moves."""
    label = f"fanout/{store.kind}"
    rounds = []
    async with served(args, store, workdir) as (server, http):
        modes = [m.strip() for m in args.modes.split(",") if m.strip()]
        seed = seed_lasting(args.moves * len(modes) + 5)
        match = await create_match(http, seed)
        for mode in modes:
            if match.finished:
                break
            rounds.append(await fanout_round(args, server, http, match, mode, workdir,
                                             f"{label}/{mode}"))
        alive = server.alive()
    return {"scenario": "latency+cpu", "store": store.kind, "watchers": args.latency_watchers,
            "moves_per_mode": args.moves, "rounds": rounds, "server_alive": alive}


async def fanout_round(args: argparse.Namespace, server: Server, http: httpx.AsyncClient,
                       match: Match, mode: str, workdir: Path, label: str) -> dict[str, Any]:
    group = {"phase": "watch", "kind": "sse", "match": match.id, "mode": mode,
             "encoding": "identity", "count": args.latency_watchers}
    procs = max(1, min(args.client_procs, args.latency_watchers))
    clients = await Clients.start(label, server.port,
                                  split_counts([group], procs), workdir,
                                  **client_options(args, record_arrivals=True,
                                                   keep_streams=mode == "patch"))
    result: dict[str, Any] = {"mode": mode, "watchers": args.latency_watchers}
    acks: list[Ack] = []
    references: dict[int, str] = {}
    try:
        log(f"{label}: connecting {args.latency_watchers} SSE watchers")
        result["connect"] = await clients.connect("watch", args.connect_phase_timeout)
        await settle(args.settle)
        rss = server.rss()
        idle0, idle_t0 = server.cpu(), time.monotonic()
        await asyncio.sleep(args.idle_window)
        idle_rate = (server.cpu() - idle0) / (time.monotonic() - idle_t0)
        log(f"{label}: {result['connect']['connected']} connected; RSS "
            f"{rss / 2**20:.1f} MiB; idle CPU {100 * idle_rate:.1f} %; {args.moves} moves")
        await reference(http, match, references)
        cpu0, t0 = server.cpu(), time.monotonic()
        late = 0
        for i in range(args.moves):
            if match.finished:
                break
            target = match.version + 1
            expecting = asyncio.create_task(clients.expect({match.id: target}, MOVE_TIMEOUT))
            await asyncio.sleep(0)
            try:
                acks.append(await play(http, match))
            except BaseException:
                expecting.cancel()
                raise
            if not await expecting:
                late += 1
            if mode == "patch":
                await reference(http, match, references)  # one GET: ~nothing next to fan-out
            if (i + 1) % 5 == 0:
                log(f"{label}: move {i + 1}/{args.moves}: {clients.summary()}")
            if i + 1 < args.moves:
                await asyncio.sleep(args.move_gap)
        cpu = server.cpu() - cpu0
        net = cpu - idle_rate * (time.monotonic() - t0)
        result["rss_mib"] = round(rss / 2**20, 1)
        result["moves_timed_out"] = late
    finally:
        finals = await clients.stop()
    watchers = merge_finals(finals)
    connected = watchers["connected"]
    versions = len(acks)
    deliveries = versions * max(connected, 1)
    result["cpu"] = {
        "server_cpu_s": round(cpu, 3), "idle_cpu_per_s": round(idle_rate, 4),
        "net_cpu_s": round(net, 3),
        "us_per_version_per_watcher": round(1e6 * cpu / deliveries, 2) if versions else None,
        "net_us_per_version_per_watcher": round(1e6 * net / deliveries, 2) if versions else None,
    }
    arrivals: dict[int, list[float]] = {}
    receivers = 0  # watchers that connected and did not fail
    for final in finals:
        receivers += int(final.get("arrival_watchers", {}).get(match.id, 0))
        for version, times in final.get("arrivals", {}).get(match.id, {}).items():
            arrivals.setdefault(int(version), []).extend(times)
    last: list[float] = []
    every: list[float] = []
    missing = 0
    for ack in acks:
        times = arrivals.get(ack.version, [])
        missing += max(receivers - len(times), 0)
        if times:
            last.append(max(times) - ack.at)
            every.extend(t - ack.at for t in times)
    result["latency"] = {
        "moves": versions,
        "ack_p50_ms": ms(quantile([a.seconds for a in acks], 0.5)),
        "last_watcher_p50_ms": ms(quantile(last, 0.5)),
        "last_watcher_p99_ms": ms(quantile(last, 0.99)),
        "last_watcher_max_ms": ms(max(last, default=None)),
        "every_watcher_p50_ms": ms(quantile(every, 0.5)),
        "every_watcher_p99_ms": ms(quantile(every, 0.99)),
        "receivers": receivers,
        "missing_deliveries": missing,
    }
    if mode == "patch":
        result["verify"] = verify_streams(finals, {match.id: references})
    watchers.pop("groups", None)
    result["watchers_summary"] = watchers
    log(f"{label}: last watcher p50 {result['latency']['last_watcher_p50_ms']} ms, p99 "
        f"{result['latency']['last_watcher_p99_ms']} ms; "
        f"{result['cpu']['us_per_version_per_watcher']} us CPU per version per watcher; "
        f"{watchers['violations']} violations")
    return result


def verify_streams(finals: list[dict[str, Any]], references: dict[str, dict[int, str]]
                   ) -> dict[str, Any]:
    """The watchers' replayed streams against the match states read over REST (``references``:
    per match, the digest of the spectator's state at each version read)."""
    out: dict[str, Any] = {"distinct_streams": 0, "watchers": 0, "matching_rest": 0,
                           "differing": 0, "versions_compared": 0, "problems": []}
    for final in finals:
        for stream in final.get("streams", []):
            out["distinct_streams"] += 1
            out["watchers"] += stream["watchers"]
            wanted = references.get(stream["match"], {})
            got = {int(v): d for v, d in stream.get("digests", {}).items()}
            compared = [v for v in wanted if v in got]
            wrong = [v for v in compared if got[v] != wanted[v]]
            newest = max(wanted, default=None)
            out["versions_compared"] += len(compared) * stream["watchers"]
            if not wrong and not stream.get("problems") and stream.get("version") == newest:
                out["matching_rest"] += stream["watchers"]
                continue
            out["differing"] += stream["watchers"]
            if len(out["problems"]) < 8:
                out["problems"].append({
                    "mode": stream["mode"], "watchers": stream["watchers"],
                    "last_version": stream.get("version"), "rest_version": newest,
                    "differing_versions": wrong[:10], "problems": stream.get("problems"),
                })
    return out


async def reference(http: httpx.AsyncClient, match: Match, into: dict[int, str]) -> None:
    """The spectator's state of ``match`` now, by digest, under its version."""
    from bench.fanout_client import digest

    state = await spectator_state(http, match.id)
    into[int(state["version"])] = digest(state)


async def scenario_resume(args: argparse.Namespace, store: Store, workdir: Path
                          ) -> dict[str, Any]:
    label = f"resume/{store.kind}"
    async with served(args, store, workdir) as (server, http):
        seed = seed_lasting(args.resume_versions)
        match = await create_match(http, seed)
        other = await create_match(http, seed)
        log(f"{label}: playing {args.resume_versions} moves")
        while match.version < args.resume_versions and not match.finished:
            await play(http, match)
        target = match.version
        modes = [m.strip() for m in args.resume_modes.split(",") if m.strip()]
        after = max(0, min(args.resume_after, target - 1))
        groups = [{"phase": f"{mode}-{r}", "kind": "sse", "match": match.id, "mode": mode,
                   "after": after, "until": target, "count": args.resume_readers}
                  for mode in modes for r in range(args.resume_rounds)]
        clients = await Clients.start(label, server.port, [groups], workdir,
                                      **client_options(args, per_watcher=True,
                                                       reconnect=False,
                                                       connect_concurrency=max(
                                                           args.connect_concurrency,
                                                           args.resume_readers)))
        probe_path = f"/v1/matches/{other.id}"
        for _ in range(20):
            await http.get(probe_path)
        baseline = Probe()
        end = time.monotonic() + args.probe_seconds
        while time.monotonic() < end:
            await baseline.call(http.get(probe_path))
        result: dict[str, Any] = {"scenario": "resume", "store": store.kind,
                                  "versions": target, "after": after,
                                  "readers": args.resume_readers,
                                  "baseline_get": baseline.figures(), "rounds": []}
        log(f"{label}: unrelated GET alone: p50 {result['baseline_get']['p50_ms']} ms, p90 "
            f"{result['baseline_get']['p90_ms']} ms")
        try:
            for mode in modes:
                for r in range(args.resume_rounds):
                    phase = f"{mode}-{r}"
                    probe = Probe()
                    stop = asyncio.Event()

                    async def probing(probe: Probe = probe, stop: asyncio.Event = stop) -> None:
                        while not stop.is_set():
                            await probe.call(http.get(probe_path))

                    await asyncio.sleep(0.5)
                    cpu0, t0 = server.cpu(), time.monotonic()
                    task = asyncio.create_task(probing())
                    connect = await clients.connect(phase, args.connect_phase_timeout)
                    t1 = time.monotonic()
                    cpu = server.cpu() - cpu0
                    stop.set()
                    await task
                    row = {"mode": mode, "round": r, "seconds": round(t1 - t0, 3),
                           "server_cpu_s": round(cpu, 3),
                           "readers_done": connect["done"], "readers_failed": connect["failed"],
                           "reader_done_max_s": connect["done_max_s"],
                           "unrelated_get": probe.figures((t0, t1))}
                    result["rounds"].append(row)
                    log(f"{label}: {mode} round {r}: {row['seconds']} s, server CPU "
                        f"{row['server_cpu_s']} s, unrelated GET p90 "
                        f"{row['unrelated_get']['p90_ms']} ms "
                        f"({row['unrelated_get']['count']} GETs)")
        finally:
            finals = await clients.stop()
        per = [w for f in finals for w in f.get("per_watcher", [])]
        for mode in modes:
            rows = [r for r in result["rounds"] if r["mode"] == mode]
            readers = [w for w in per if w["mode"] == mode]
            probes = [x for r in rows for x in [r["unrelated_get"]]]
            result[mode] = {
                "server_cpu_s_per_round": quantile([r["server_cpu_s"] for r in rows], 0.5),
                "seconds_per_round": quantile([r["seconds"] for r in rows], 0.5),
                "unrelated_get_p90_ms": quantile([p["p90_ms"] for p in probes
                                                  if p["p90_ms"] is not None], 0.5),
                "body_bytes_per_reader": quantile([float(w["body_bytes"]) for w in readers],
                                                  0.5),
                "events_per_reader": quantile([float(w["events"]) for w in readers], 0.5),
                "violations": sum(int(w["violations"]) for w in readers),
                "failed": sum(1 for w in readers if w["failed"]),
            }
        merged = merge_finals(finals)
        merged.pop("groups", None)
        result["watchers_summary"] = merged
        result["server_alive"] = server.alive()
    return result


async def scenario_bytes(args: argparse.Namespace, store: Store, workdir: Path
                         ) -> dict[str, Any]:
    label = f"bytes/{store.kind}"
    encodings = [e.strip() for e in args.bytes_encodings.split(",") if e.strip()]
    async with served(args, store, workdir) as (server, http):
        match = await create_match(http, args.bytes_seed)
        groups = [{"phase": "follow", "kind": "sse", "match": match.id, "mode": mode,
                   "encoding": encoding, "count": 1}
                  for mode in ("full", "patch") for encoding in encodings]
        clients = await Clients.start(label, server.port, [groups], workdir,
                                      **client_options(args, per_watcher=True,
                                                       keep_streams=True, reconnect=False))
        references: dict[int, str] = {}
        try:
            await clients.connect("follow", 60)
            await reference(http, match, references)
            log(f"{label}: playing match {match.id} (seed {args.bytes_seed}) to its end")
            while not match.finished:
                target = match.version + 1
                expecting = asyncio.create_task(clients.expect({match.id: target}, 10))
                await asyncio.sleep(0)
                try:
                    await play(http, match)
                except BaseException:
                    expecting.cancel()
                    raise
                await expecting
                await reference(http, match, references)
            await asyncio.sleep(0.5)
        finally:
            finals = await clients.stop()
        state = await spectator_state(http, match.id)
        alive = server.alive()
    per = [w for f in finals for w in f.get("per_watcher", [])]
    versions = match.version
    full_identity = next((w["body_bytes"] for w in per if w["mode"] == "full"
                          and w["encoding"] == "identity"), None)
    variants = []
    for w in per:
        variants.append({
            "mode": w["mode"], "accept_encoding": w["encoding"],
            "content_encoding": w["content_encoding"], "body_bytes": w["body_bytes"],
            "wire_bytes": w["wire_bytes"], "events": w["events"], "last_version": w["last"],
            "bytes_per_version": round(w["body_bytes"] / max(versions, 1), 1),
            "vs_full_identity": round(w["body_bytes"] / full_identity, 4)
            if full_identity else None,
            "violations": w["violations"], "failed": w["failed"],
        })
    result = {"scenario": "bytes", "store": store.kind, "seed": args.bytes_seed,
              "versions": versions, "final_state_bytes": len(json.dumps(
                  state, separators=(",", ":"))),
              "variants": variants, "verify": verify_streams(finals, {match.id: references}),
              "server_alive": alive}
    merged = merge_finals(finals)
    merged.pop("groups", None)
    result["watchers_summary"] = merged
    for v in variants:
        log(f"{label}: {v['mode']:5} {v['accept_encoding']:8} -> {v['content_encoding']:8} "
            f"{v['body_bytes']:>10} bytes ({v['bytes_per_version']} per version)")
    return result


SCENARIOS: dict[str, Callable[[argparse.Namespace, Store, Path], Awaitable[dict[str, Any]]]] = {
    "capacity": scenario_capacity,
    "fanout": scenario_fanout,
    "resume": scenario_resume,
    "bytes": scenario_bytes,
}


# -- report ---------------------------------------------------------------------------------------


def _summaries(run: dict[str, Any]) -> list[dict[str, Any]]:
    found = [run[k] for k in ("watchers", "watchers_summary") if isinstance(run.get(k), dict)]
    return found + [r["watchers_summary"] for r in run.get("rounds", [])
                    if isinstance(r.get("watchers_summary"), dict)]


def report(runs: list[dict[str, Any]]) -> str:
    lines: list[str] = []
    for run in runs:
        head = f"## {run['scenario']} on {run['store']}"
        if "error" in run:
            lines += [head, f"FAILED: {run['error']}", ""]
            continue
        lines.append(head)
        notes = sorted({n for w in _summaries(run) for n in w.get("notes", [])})
        examples = [x for w in _summaries(run) for x in w.get("failure_examples", [])][:2]
        if notes:
            lines.append(f"notes: {'; '.join(notes)}")
        if examples:
            lines.append(f"first failures: {' | '.join(e[:200] for e in examples)}")
        if run["scenario"] == "capacity":
            w, rss, rc = run["watchers"], run["rss"], run.get("redis_connections")
            lines += [
                f"watchers: SSE {run['sse']['connected']}/{run['sse']['watchers']} "
                f"({run['sse_mode']}) in {run['sse']['seconds']:.1f} s, GraphQL "
                f"{run['graphql']['connected']}/{run['graphql']['watchers']} in "
                f"{run['graphql']['seconds']:.1f} s; failed {w['failed']} {w['failures']}",
                f"503s: {run['http_503']}; statuses {w['statuses']}; violations "
                f"{w['violations']}; behind {w['behind']}; caught up {run['caught_up']}; "
                f"streams ended by the server {w['stream_ends']} (resumed: "
                f"{w['reconnects']})",
                f"RSS: {rss['no_watchers_mib']} -> {rss['with_sse_mib']} (SSE) -> "
                f"{rss['with_sse_and_graphql_mib']} MiB (GraphQL); per SSE watcher "
                f"{rss['per_sse_watcher_kb']} KB, per GraphQL subscription "
                f"{rss['per_graphql_subscription_kb']} KB",
                "REST during hold: " + "; ".join(
                    f"{k} n={p['count']} p50 {p['p50_ms']} ms p99 {p['p99_ms']} ms "
                    f"{p['statuses']}" for k, p in run["rest"].items()),
                f"server: open files {run['server_open_files']}, CPU to connect "
                f"{run['connect_cpu_s']} s, during hold {run['hold_cpu_s']} s; client CPU "
                f"{w['client_cpu_s']} s",
            ]
            if rc:
                lines.append(
                    f"Redis connections of the replica: pub/sub {rc['pubsub']}, commands "
                    f"{rc['commands']} (pool size {run['redis_pool_size']}), per node "
                    + ", ".join(f"{n['node']} {n['role']} p{n.get('pubsub', 0)}/"
                                f"c{n.get('commands', 0)}" for n in rc["nodes"])
                    + f"; names {rc['names']}")
        elif run["scenario"] == "latency+cpu":
            lines.append("| mode | watchers | moves | last watcher p50 / p99 / max ms "
                         "| every watcher p50 / p99 ms | CPU us per version x watcher "
                         "(net of idle) | violations | verified |")
            lines.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
            for r in run["rounds"]:
                lat, cpu, ws = r["latency"], r["cpu"], r["watchers_summary"]
                verify = r.get("verify")
                checked = (f"{verify['matching_rest']}/{verify['watchers']} match REST"
                           if verify else "")
                lines.append(
                    f"| {r['mode']} | {r['connect']['connected']} | {lat['moves']} | "
                    f"{lat['last_watcher_p50_ms']} / {lat['last_watcher_p99_ms']} / "
                    f"{lat['last_watcher_max_ms']} | {lat['every_watcher_p50_ms']} / "
                    f"{lat['every_watcher_p99_ms']} | {cpu['us_per_version_per_watcher']} "
                    f"({cpu['net_us_per_version_per_watcher']}) | {ws['violations']} | "
                    f"{checked} |")
        elif run["scenario"] == "resume":
            base = run["baseline_get"]
            lines.append(f"{run['readers']} readers from after={run['after']} to "
                         f"{run['versions']}; unrelated "
                         f"GET alone p50 {base['p50_ms']} ms p90 {base['p90_ms']} ms")
            for mode in dict.fromkeys(r["mode"] for r in run["rounds"]):
                m = run[mode]
                lines.append(
                    f"{mode}: server CPU {m['server_cpu_s_per_round']} s per round, "
                    f"{m['seconds_per_round']} s, unrelated GET p90 "
                    f"{m['unrelated_get_p90_ms']} ms, {m['body_bytes_per_reader']} bytes and "
                    f"{m['events_per_reader']} events per reader, violations "
                    f"{m['violations']}, failed {m['failed']}")
        elif run["scenario"] == "bytes":
            check = run["verify"]
            lines.append(f"{run['versions']} versions (seed {run['seed']}); watchers whose view "
                         f"matched REST at every version: {check['matching_rest']}/"
                         f"{check['watchers']} ({check['versions_compared']} comparisons)")
            lines.append("| mode | Accept-Encoding | Content-Encoding | body bytes "
                         "| per version | vs full | wire bytes |")
            lines.append("| --- | --- | --- | ---: | ---: | ---: | ---: |")
            for v in run["variants"]:
                lines.append(f"| {v['mode']} | {v['accept_encoding']} | "
                             f"{v['content_encoding']} | {v['body_bytes']} | "
                             f"{v['bytes_per_version']} | {v['vs_full_identity']} | "
                             f"{v['wire_bytes']} |")
        lines.append("")
    return "\n".join(lines)


# -- main -----------------------------------------------------------------------------------------


QUICK = {"matches": 25, "latency_watchers": 200, "moves": 8, "hold": 8.0,
         "resume_versions": 80, "resume_readers": 5, "resume_rounds": 2,
         "probe_seconds": 2.0, "idle_window": 1.0, "settle": 1.0}


def scenario_names(value: str) -> list[str]:
    names: list[str] = []
    for part in value.split(","):
        part = part.strip()
        if part == "all":
            names += ["capacity", "fanout", "resume", "bytes"]
        elif part in ("latency", "cpu"):
            names.append("fanout")
        elif part in SCENARIOS:
            names.append(part)
        else:
            raise argparse.ArgumentTypeError(f"unknown scenario {part!r}")
    return list(dict.fromkeys(names))


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.fanout", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scenario", default="all",
                   help="capacity, latency, cpu, resume, bytes or all (a comma list)")
    p.add_argument("--store", default="redis,cluster",
                   help="redis, cluster or embedded (a comma list: run one after the other)")
    p.add_argument("--quick", action="store_true", help="small sizes (a few minutes)")
    p.add_argument("--json", help="also write every figure to this file")
    p.add_argument("--redis-url", help="--store redis: this Redis (default: a private one)")
    p.add_argument("--redis-arg", action="append",
                   help="an extra redis-server argument for the private Redis (repeatable)")
    p.add_argument("--server-arg", action="append",
                   help="an extra `skyline serve` argument (repeatable; use --server-arg=--x)")
    p.add_argument("--limits", choices=["raise", "keep"], default="raise",
                   help="raise: lift the server's per-client stream cap (all watchers come "
                   "from one address) and its watcher cap if a scenario needs more; keep: "
                   "the server's defaults")
    p.add_argument("--server-root", default=str(ROOT),
                   help="run the server from this source tree (default: this repository)")
    p.add_argument("--client-procs", type=int, default=2, help="watcher processes")
    p.add_argument("--connect-concurrency", type=int, default=100,
                   help="connections being opened at once per watcher process")
    p.add_argument("--connect-timeout", type=float, default=60.0,
                   help="seconds a watcher waits for its first event")
    p.add_argument("--connect-phase-timeout", type=float, default=900.0,
                   help="seconds to wait for a whole phase of watchers to connect")
    p.add_argument("--client-addresses", type=int, default=1,
                   help="watchers connect from 127.0.0.1 .. 127.0.0.N in turn (for per-address "
                   "limits; default 1: all from 127.0.0.1)")
    p.add_argument("--no-ws-compression", action="store_true",
                   help="GraphQL clients do not offer permessage-deflate")
    p.add_argument("--settle", type=float, default=3.0,
                   help="seconds to wait before reading RSS after connecting")
    capacity = p.add_argument_group("capacity")
    capacity.add_argument("--matches", type=int, default=1000)
    capacity.add_argument("--sse-per-match", type=int, default=10)
    capacity.add_argument("--sse-seated", type=int, default=0,
                          help="of which with a seat's token (seats in turn)")
    capacity.add_argument("--graphql-per-match", type=int, default=2)
    capacity.add_argument("--sse-mode", choices=["full", "patch"], default="full")
    capacity.add_argument("--hold", type=float, default=30.0,
                          help="seconds of REST traffic with every watcher connected")
    capacity.add_argument("--rest-rate", type=float, default=20.0, help="GETs per second")
    capacity.add_argument("--move-every", type=float, default=1.0,
                          help="seconds between moves during the hold (0: none)")
    capacity.add_argument("--moving-matches", type=int, default=20)
    fanout = p.add_argument_group("latency and cpu")
    fanout.add_argument("--latency-watchers", type=int, default=5000)
    fanout.add_argument("--moves", type=int, default=20)
    fanout.add_argument("--modes", default="patch,full")
    fanout.add_argument("--move-gap", type=float, default=0.5,
                        help="seconds between a move's last arrival and the next move")
    fanout.add_argument("--idle-window", type=float, default=3.0,
                        help="seconds of idle CPU measured before the moves")
    resume = p.add_argument_group("resume")
    resume.add_argument("--resume-versions", type=int, default=250)
    resume.add_argument("--resume-after", type=int, default=0,
                        help="the version the readers resume after (default 0: all of them)")
    resume.add_argument("--resume-readers", type=int, default=20)
    resume.add_argument("--resume-rounds", type=int, default=3)
    resume.add_argument("--resume-modes", default="full,patch")
    resume.add_argument("--probe-seconds", type=float, default=5.0,
                        help="seconds of the unrelated GET alone, before the rounds")
    sizes = p.add_argument_group("bytes")
    sizes.add_argument("--bytes-seed", type=int, default=1901)
    sizes.add_argument("--bytes-encodings", default="identity,gzip,br,zstd",
                       help="Accept-Encoding of the spectators, one of each per mode")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.serve_flags = None
    if args.quick:
        defaults = build_parser().parse_args([])
        for key, value in QUICK.items():
            if getattr(args, key) == getattr(defaults, key):
                setattr(args, key, value)
    try:
        scenarios = scenario_names(args.scenario)
    except argparse.ArgumentTypeError as exc:
        parser.error(str(exc))
    stores = [s.strip() for s in args.store.split(",") if s.strip()]
    _raise_open_files()
    return asyncio.run(orchestrate(args, scenarios, stores))


async def orchestrate(args: argparse.Namespace, scenarios: list[str], stores: list[str]) -> int:
    runs: list[dict[str, Any]] = []
    meta: dict[str, Any] = {
            "cpus": os.cpu_count(), "loadavg": os.getloadavg(), "python": sys.version.split()[0],
            "server_root": args.server_root, "server_args": args.server_arg or [],
            "argv": sys.argv[1:], "quick": args.quick}
    failed = False
    with tempfile.TemporaryDirectory(prefix="skyline-fanout-") as tmp:
        workdir = Path(tmp)
        for kind in stores:
            store = Store(kind, args)
            try:
                await asyncio.to_thread(store.start)
                meta.setdefault("redis_versions", {})[kind] = store.version()
                for name in scenarios:
                    log(f"== {name} on {kind}")
                    started = time.monotonic()
                    try:
                        run = await SCENARIOS[name](args, store, workdir)
                    except Exception as exc:
                        failed = True
                        log(f"{name} on {kind} failed: {type(exc).__name__}: {exc}")
                        run = {"scenario": name, "store": kind,
                               "error": f"{type(exc).__name__}: {exc}"}
                    run["seconds"] = round(time.monotonic() - started, 1)
                    runs.append(run)
                    if args.json:
                        write_json(args.json, meta, runs)
            finally:
                await asyncio.to_thread(store.close)
    print(report(runs))
    if args.json:
        write_json(args.json, meta, runs)
    return 1 if failed else 0


def write_json(path: str, meta: dict[str, Any], runs: list[dict[str, Any]]) -> None:
    Path(path).write_text(json.dumps({"meta": meta, "runs": runs}, indent=2, default=str))


if __name__ == "__main__":
    sys.exit(main())
