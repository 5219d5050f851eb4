"""Soak test (issue 20): three ``skyline serve`` replicas and one ``skyline worker`` on one
Redis, with rate limits on (the defaults), under minutes of mixed traffic -- players, bots,
spectators and abusers -- watching memory, status codes and every acknowledged move.

Run: ``.venv/bin/python -m bench.soak`` (5 minutes; ``--minutes N``) or ``--quick`` (about
1 minute, fewer clients); ``--json PATH`` also writes every figure. Not part of ``make
test``. Redis at ``--redis-url`` (default ``redis://127.0.0.1:6379``): every key under a fresh
prefix ``soak-<hex>:``, deleted at the end, also after a failure or Ctrl-C (never FLUSHDB).
Progress every ~15 s. Exit 1 when an answer was a 5xx (or a GraphQL ``Unavailable`` /
top-level error to a well-behaved client), an acknowledged move is missing from its match's
log, a log has a gap, a replayed move was answered otherwise, or a process died; 130 on
Ctrl-C (or SIGTERM).

What runs
---------
- **Processes**: three ``skyline serve --redis-url ... --redis-prefix soak-<hex>:
  --trusted-proxies 127.0.0.1`` on free ports (``--log-level warning``, each server's output
  in a temporary folder, kept and named when something went wrong) and one ``skyline worker
  --concurrency 4 --bot-budget 20,0.3s`` (on Redis the servers do not play bot seats: the
  worker does; the small search budget keeps the 2-core machine for the servers). Nothing
  else of the servers' settings is changed: rate limits, quotas, body and depth limits,
  timeouts and stream caps are the defaults (docs/security.md).
- **Client addresses**: everything comes from 127.0.0.1. The load generator plays the
  operator's reverse proxy (``--trusted-proxies 127.0.0.1``): each virtual client sends its
  own ``X-Forwarded-For`` address (``10.1.x.x`` players, ``10.2.x.x`` bot hosts, ``10.3.x.x``
  spectators, ``10.66.x.x`` abusers, ``10.9.0.1`` the final check), so per-address budgets
  are per virtual client, as behind a real proxy. Requests with a bearer credential are
  counted per credential anyway. So abusers spend their own budgets only: a legitimate
  client that gets 429 is counted apart (the goal is none).
- **Traffic** (this process, asyncio + httpx, one connection pool per replica; each request
  goes to a replica drawn at random, retries too):

  ``players`` (``--players``, 8): a guest (``POST /v1/players``) creates matches seating
  itself and 1-3 bots (New York 1901 or Ginkgopolis; random, greedy or search bots), and
  plays its seat to the end with its player token: poll the match (``If-None-Match``), on
  its turn ``GET legal-moves``, think 50-400 ms, post a random legal move with
  ``expectedVersion`` and an ``Idempotency-Key`` -- one move in four through GraphQL's
  ``act`` instead of REST. A transport error, 429 or 503 is retried with the same key (on
  another replica); 409/422 re-read; one 2xx move in twenty is posted again with its key (a
  client that lost the answer), which must answer 200 with the same version. Then the next
  match. ``pairs`` (``--pairs``, 4): an anonymous match of 2-4 human seats (and sometimes
  one bot), each seat played by its own coroutine with its seat token, as above. Every 2xx
  move (``ActionAccepted`` in GraphQL) is *acknowledged*: match id, the version it
  produced, seat, move, credential.

  ``bots`` (``--bot-hosts``, 4): all-bot matches -- a guest (or an anonymous creator) makes a
  match with bots in every seat but one and hands that seat to a bot at once (``POST
  .../seats/{seat}/bot``, acknowledged too: a log entry with ``seat: null``); then it
  watches the match until it is finished (a match that does not move for 90 s is
  *stalled*), and makes the next.

  ``spectators`` (``--spectators``, 12 SSE + ``--subscribers``, 4 GraphQL): follow a random
  unfinished match without credentials -- ``GET .../events`` in full or patch mode, gzip or
  not, or ``matchUpdated`` over ``graphql-transport-ws`` -- for 4-20 s, then reconnect
  (``Last-Event-ID`` / ``after``) on another replica; on to another match once the stream
  ends. Every version must arrive once and in order (*gaps*, *repeats*; a ``snapshot``
  after a long absence is a documented jump, counted apart), patches must apply
  (``jsonpatch``) and give the version they announce.

  ``abusers`` (all on replica 0): ``--abusers`` (4) clients cycling malformed JSON, bodies
  over 64 KiB (with a length, and chunked), JSON 5,000 levels deep (REST and GraphQL
  variables), wrong media types, made-up seat/player/app tokens and JWTs, random paths and
  methods, bad query values and headers (``after=-1``, ``limit=abc``, Arabic-Indic digits,
  ``Last-Event-ID: x``, ``If-Match: 3``, a 300-character ``Idempotency-Key``), GraphQL
  garbage and a 500-alias query, ~10 requests/s each; and the bursts, each from one address
  (or credential), faster than its budget so that 429s come: reads at 100/s (budget
  3,600/60 s), match creations at 20/s (600/60 s, then the address' quota of 1,000
  unfinished matches), illegal moves with a real seat token at 30/s (1,200/60 s), made-up
  tokens on moves at 25/s (refused credentials are charged to the address), 40 event streams
  at once from one address, held 5 s, every 20 s (32 per client, then 429
  ``too_many_streams``; 120 openings per 60 s), and slow clients one at a time (headers
  trickled, or a body that never comes: 408 expected).

Figures
-------
- **RSS** of each replica and of the worker (``/proc/<pid>/status`` ``VmRSS``) every
  ``--sample`` seconds (5); the report shows one row per ``--table-every`` seconds (30) and
  the growth from the first minute (the sample nearest 60 s; 10 s in runs under 2 minutes)
  to the end of the traffic. CPU seconds per process (``/proc/<pid>/stat``).
- **Statuses**: every answer counted by role and status (and problem ``code``); 5xx (goal
  0) listed with request, response and request id; 429s per role and code; transport errors.
- **Moves**: at the end (servers still up) every match this run created is read: its log
  as a spectator (versions 1..latest, each once), and for unfinished matches once per
  credential that acknowledged a move there (a seat's own moves show their action). Each
  acknowledged move must be the entry at its version, with its seat and the very move
  (*present*, else *missing*: goal 0). Bot moves stored are the other entries of the seats
  bots play.
- **Logs**: what each process printed besides its start line (warnings, errors, tracebacks'
  messages), with a count per process.

``--quick``: 3 players, 2 pairs, 2 bot hosts, 4 + 1 spectators, 2 misc abusers (and every
burst) for 60 s.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import jsonpatch
import redis
import websockets
from websockets.exceptions import InvalidStatus, WebSocketException

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
STARTUP_TIMEOUT = 60.0
STOP_TIMEOUT = 20.0
ROLES = ("players", "bots", "spectators", "abusers", "verify")
GAMES = ("ny1901", "ginkgopolis")
BOT_KINDS = ("random", "greedy", "search")
BOT_WEIGHTS = (0.5, 0.4, 0.1)
WORKER_BUDGET = "20,0.3s"
ABUSE_REPLICA = 0

ACT_MUTATION = (
    "mutation($id: ID!, $a: ActionInput!, $v: Int, $k: String) {"
    " act(matchId: $id, action: $a, expectedVersion: $v, idempotencyKey: $k) {"
    " __typename ... on ActionAccepted { version } ... on Problem { code }"
    " ... on Unavailable { retryAfter } } }"
)
SUBSCRIPTION = (
    "subscription($id: ID!, $after: Int) { matchUpdated(matchId: $id, after: $after) {"
    " __typename ... on MatchState { version status } ... on Problem { code } } }"
)


# -- processes --------------------------------------------------------------------------------


@dataclass
class Proc:
    """A ``skyline`` process this run started: a replica (``url``) or the worker."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path
    url: str | None = None
    port: int | None = None

    def alive(self) -> bool:
        return self.process.poll() is None

    def rss_mib(self) -> float | None:
        try:
            for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            return None
        return None

    def cpu_seconds(self) -> float | None:
        try:
            raw = Path(f"/proc/{self.process.pid}/stat").read_text()
        except OSError:
            return None
        fields = raw[raw.rindex(")") + 2:].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _free_port() -> int:
    sys.path.insert(0, str(ROOT))
    from tests.support.redis_servers import free_port

    return free_port()


def _spawn(name: str, args: list[str], log: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKYLINE_")}
    with log.open("wb") as out:
        # A session of its own: a Ctrl-C to the soak does not stop the servers before the
        # soak stops them (and counts what they said).
        return subprocess.Popen([str(BIN / "skyline"), *args], cwd=ROOT, env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)


def start_processes(replicas: int, redis_url: str, prefix: str, workdir: Path,
                    procs: list[Proc]) -> None:
    """Start the replicas and the worker (appended to ``procs`` as they start, so that a
    failure half-way still stops the ones running); returns once every ``/healthz``
    answers."""
    for i in range(replicas):
        port = _free_port()
        log = workdir / f"replica{i}.log"
        process = _spawn(f"replica{i}", [
            "serve", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
            "--redis-url", redis_url, "--redis-prefix", prefix,
            "--trusted-proxies", "127.0.0.1",
        ], log)
        procs.append(Proc(f"replica{i}", process, log, f"http://127.0.0.1:{port}", port))
    log = workdir / "worker.log"
    procs.append(Proc("worker", _spawn("worker", [
        "worker", "--redis-url", redis_url, "--redis-prefix", prefix, "--concurrency", "4",
        "--bot-budget", WORKER_BUDGET, "--log-level", "warning",
    ], log), log))
    deadline = time.monotonic() + STARTUP_TIMEOUT
    for proc in procs:
        if proc.url is None:
            continue
        while True:
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{proc.url}/healthz", timeout=1).status_code == 200:
                    break
            if not proc.alive() or time.monotonic() > deadline:
                raise RuntimeError(f"{proc.name} did not start:\n{proc.log.read_text()[-3000:]}")
            time.sleep(0.1)
    time.sleep(0.5)
    for proc in procs:
        if not proc.alive():
            raise RuntimeError(f"{proc.name} exited:\n{proc.log.read_text()[-3000:]}")


def stop_processes(procs: list[Proc]) -> dict[str, int | None]:
    """SIGINT to the replicas, SIGTERM to the worker; SIGKILL after ``STOP_TIMEOUT``.
    Returns each process' exit code."""
    for proc in procs:
        if proc.alive():
            proc.process.send_signal(signal.SIGINT if proc.url else signal.SIGTERM)
    codes: dict[str, int | None] = {}
    for proc in procs:
        try:
            codes[proc.name] = proc.process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.process.kill()
            codes[proc.name] = proc.process.wait()
    return codes


def delete_keys(redis_url: str, prefix: str) -> int:
    """Every key holding ``prefix`` (hash-tagged ones start with ``{``); the count."""
    client = redis.Redis.from_url(redis_url)
    try:
        deleted = 0
        batch: list[bytes] = []
        for key in client.scan_iter(match=f"*{prefix}*", count=1000):
            batch.append(key)
            if len(batch) >= 500:
                deleted += int(client.unlink(*batch))
                batch = []
        if batch:
            deleted += int(client.unlink(*batch))
        return deleted
    finally:
        client.close()


_LOG_NOISE = ("Traceback (most recent call last):", "During handling of the above exception",
              "The above exception was the direct cause", "skyline: serving on",
              "skyline: bot worker")


def server_log_problems(procs: list[Proc]) -> dict[str, list[str]]:
    """What each process printed besides its start line (at ``--log-level warning``: warnings,
    errors and tracebacks), a traceback as its message and exception lines (no frames)."""
    out: dict[str, list[str]] = {}
    for proc in procs:
        try:
            lines = proc.log.read_text(errors="replace").splitlines()
        except OSError:
            continue
        said = [line for line in lines if line.strip() and not line[0].isspace()
                and not line.startswith(_LOG_NOISE)]
        if said:
            out[proc.name] = said
    return out


# -- figures ----------------------------------------------------------------------------------


@dataclass
class Ack:
    """A write the service acknowledged: the version it produced. ``action`` None: a seat
    handed to a bot (its log entry has ``seat: null``)."""

    match_id: str
    version: int
    seat: int | None
    action: dict[str, Any] | None
    credential: str | None
    via: str


@dataclass
class MatchInfo:
    match_id: str
    game: str
    kind: str  # "mixed" (a guest and bots), "pair" (human seats), "all-bots"
    bots: dict[int, str]
    finished: bool = False


@dataclass
class StreamStats:
    connections: int = 0
    events: int = 0
    snapshots: int = 0
    patches: int = 0
    gaps: int = 0
    repeats: int = 0
    snapshot_jumps: int = 0
    patch_failures: int = 0
    finished_seen: int = 0
    revoked: int = 0
    problems: list[str] = field(default_factory=list)


@dataclass
class Stats:
    started: float = field(default_factory=time.monotonic)
    statuses: dict[str, Counter[str]] = field(
        default_factory=lambda: {role: Counter() for role in ROLES})
    codes: dict[str, Counter[str]] = field(
        default_factory=lambda: {role: Counter() for role in ROLES})
    per_replica: Counter[int] = field(default_factory=Counter)
    transport: dict[str, Counter[str]] = field(
        default_factory=lambda: {role: Counter() for role in ROLES})
    server_errors: list[dict[str, Any]] = field(default_factory=list)
    graphql_failures: list[dict[str, Any]] = field(default_factory=list)
    legit_429: list[dict[str, Any]] = field(default_factory=list)
    sse: StreamStats = field(default_factory=StreamStats)
    ws: StreamStats = field(default_factory=StreamStats)
    acks: list[Ack] = field(default_factory=list)
    unknown_outcomes: int = 0
    replays: int = 0
    replay_mismatches: list[dict[str, Any]] = field(default_factory=list)
    stalled: list[str] = field(default_factory=list)
    rss: list[dict[str, Any]] = field(default_factory=list)

    def count(self, role: str, replica: int, status: int, code: str | None) -> None:
        self.statuses[role][str(status)] += 1
        self.per_replica[replica] += 1
        if code is not None:
            self.codes[role][f"{status} {code}"] += 1

    def total(self, role: str | None = None) -> int:
        roles = ROLES if role is None else (role,)
        return sum(sum(self.statuses[r].values()) for r in roles)

    def of_class(self, klass: str, role: str | None = None) -> int:
        roles = ROLES if role is None else (role,)
        return sum(n for r in roles for s, n in self.statuses[r].items()
                   if s[0] == klass and len(s) == 3)

    def of_status(self, status: int, role: str | None = None) -> int:
        roles = ROLES if role is None else (role,)
        return sum(self.statuses[r][str(status)] for r in roles)


def _text(response: httpx.Response) -> str:
    try:
        return response.text[:500]
    except httpx.ResponseNotRead:
        return ""


def _problem_code(response: httpx.Response) -> str | None:
    if not response.headers.get("content-type", "").startswith("application/problem+json"):
        return None
    try:
        body = json.loads(response.content)
    except (ValueError, httpx.ResponseNotRead):
        return None
    return str(body.get("code")) if isinstance(body, dict) else None


# -- traffic ----------------------------------------------------------------------------------


@dataclass
class Sizes:
    players: int
    pairs: int
    bot_hosts: int
    spectators: int
    subscribers: int
    abusers: int


def _graphql_input(game: str, wire: dict[str, Any]) -> dict[str, Any]:
    """The GraphQL ``ActionInput`` of a REST move: ``{game: {camel(type): fields or true}}``."""
    from service.api.graphql.convert import camel

    def keys(value: Any) -> Any:
        if isinstance(value, dict):
            return {camel(k): keys(v) for k, v in value.items()}
        if isinstance(value, list):
            return [keys(v) for v in value]
        return value

    fields = {k: v for k, v in wire.items() if k != "type"}
    return {camel(game): {camel(str(wire["type"])): keys(fields) or True}}


class Soak:
    """The virtual clients and what they saw."""

    def __init__(self, replicas: list[Proc], sizes: Sizes, seconds: float, seed: int) -> None:
        self.replicas = replicas
        self.sizes = sizes
        self.seconds = seconds
        self.rng = random.Random(seed)
        self.stats = Stats()
        self.matches: dict[str, MatchInfo] = {}
        self.stopping = asyncio.Event()
        self.stopped_at = 0.0
        self._addresses: Counter[int] = Counter()
        limits = httpx.Limits(max_connections=200, max_keepalive_connections=50,
                              keepalive_expiry=3.0)  # under uvicorn's 5 s keep-alive
        timeout = httpx.Timeout(30.0, connect=10.0)
        self.clients = [httpx.AsyncClient(base_url=str(r.url), limits=limits, timeout=timeout)
                        for r in replicas]
        stream_timeout = httpx.Timeout(60.0, connect=10.0)  # pings come every 15 s
        self.stream_clients = [
            httpx.AsyncClient(base_url=str(r.url), timeout=stream_timeout,
                              limits=httpx.Limits(max_connections=100, keepalive_expiry=3.0))
            for r in replicas]
        self.abuse_client = httpx.AsyncClient(
            base_url=str(replicas[ABUSE_REPLICA].url), timeout=timeout,
            limits=httpx.Limits(max_connections=100, keepalive_expiry=3.0))

    async def aclose(self) -> None:
        for client in [*self.clients, *self.stream_clients, self.abuse_client]:
            await client.aclose()

    def address(self, role_octet: int) -> str:
        n = self._addresses[role_octet]
        self._addresses[role_octet] += 1
        return f"10.{role_octet}.{n // 250}.{n % 250 + 1}"

    def elapsed(self) -> float:
        return time.monotonic() - self.stats.started

    async def pause(self, seconds: float) -> None:
        """Sleep, or less when the soak stops."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.stopping.wait(), seconds)

    # -- requests ---------------------------------------------------------------------------

    async def send(self, role: str, method: str, path: str, *, address: str,
                   credential: str | None = None, replica: int | None = None,
                   headers: Mapping[str, str | bytes] | None = None, body: Any = None,
                   content: bytes | AsyncIterator[bytes] | None = None,
                   params: dict[str, str] | None = None,
                   client: httpx.AsyncClient | None = None) -> httpx.Response | None:
        """One request, counted; None on a transport error (counted too)."""
        index = self.rng.randrange(len(self.clients)) if replica is None else replica
        http = client or self.clients[index]
        sent: dict[str, str | bytes] = {"X-Forwarded-For": address, **(headers or {})}
        if credential is not None:
            sent["Authorization"] = f"Bearer {credential}"
        try:
            raw = [(k.encode(), v if isinstance(v, bytes) else v.encode())
                   for k, v in sent.items()]
            response = await http.request(method, path, headers=raw, json=body,
                                          content=content, params=params)
        except httpx.TransportError as exc:
            self.stats.transport[role][type(exc).__name__] += 1
            return None
        self.observe(role, index, method, path, response)
        return response

    def observe(self, role: str, replica: int, method: str, path: str,
                response: httpx.Response) -> None:
        code = _problem_code(response)
        self.stats.count(role, replica, response.status_code, code)
        if response.status_code >= 500:
            self.stats.server_errors.append({
                "t": round(self.elapsed(), 1), "role": role, "replica": replica,
                "request": f"{method} {path}", "status": response.status_code,
                "requestId": response.headers.get("x-request-id"),
                "body": _text(response),
            })
        if response.status_code == 429 and role not in ("abusers",):
            self.stats.legit_429.append({"t": round(self.elapsed(), 1), "role": role,
                                         "request": f"{method} {path}", "code": code})

    async def legit(self, role: str, method: str, path: str, *, attempts: int = 5,
                    **kwargs: Any) -> httpx.Response | None:
        """A well-behaved client's request: transport errors, 429 and 503 are retried (the
        same request: the same Idempotency-Key), on a replica drawn again, after
        ``Retry-After``."""
        response: httpx.Response | None = None
        for attempt in range(attempts):
            response = await self.send(role, method, path, **kwargs)
            if response is None:
                await asyncio.sleep(0.2 * (attempt + 1))
                continue
            if response.status_code in (429, 503):
                if self.stopping.is_set() and role != "verify":
                    return response
                retry = response.headers.get("retry-after", "1")
                await asyncio.sleep(min(float(retry) if retry.isdigit() else 1.0, 10.0))
                continue
            return response
        return response

    # -- players ----------------------------------------------------------------------------

    async def guest(self, role: str, address: str, name: str) -> tuple[str, str] | None:
        response = await self.legit(role, "POST", "/v1/players", address=address,
                                    body={"name": name})
        if response is None or response.status_code != 201:
            return None
        data = response.json()
        return str(data["id"]), str(data["token"])

    async def create(self, role: str, address: str, credential: str | None,
                     body: dict[str, Any]) -> dict[str, Any] | None:
        response = await self.legit(role, "POST", "/v1/matches", address=address,
                                    credential=credential, body=body)
        if response is None or response.status_code != 201:
            return None
        created: dict[str, Any] = response.json()
        return created

    def _bots(self, count: int) -> list[str]:
        return self.rng.choices(BOT_KINDS, BOT_WEIGHTS, k=count)

    async def play_seat(self, role: str, match: MatchInfo, seat: int, credential: str,
                        address: str) -> None:
        """Play ``seat`` of ``match`` with random legal moves until it is finished (or the
        soak stops)."""
        etag: str | None = None
        path = f"/v1/matches/{match.match_id}"
        while not self.stopping.is_set():
            headers = {"If-None-Match": etag} if etag else {}
            response = await self.legit(role, "GET", path, address=address,
                                        credential=credential, headers=headers)
            if response is None:
                continue
            if response.status_code == 304:
                await self.pause(self.rng.uniform(0.15, 0.35))
                continue
            if response.status_code != 200:
                await self.pause(1.0)
                continue
            etag = response.headers.get("etag")
            state = response.json()
            if state["status"] != "active":
                match.finished = True
                return
            if seat not in state["activeSeats"]:
                await self.pause(self.rng.uniform(0.15, 0.35))
                continue
            moves = await self.legit(role, "GET", f"{path}/legal-moves", address=address,
                                     credential=credential)
            if moves is None or moves.status_code != 200 or not moves.json()["moves"]:
                continue
            listed = moves.json()
            await self.pause(self.rng.uniform(0.05, 0.4))
            if self.stopping.is_set():
                return
            action = self.rng.choice(listed["moves"])
            if self.rng.random() < 0.25:
                await self.act_graphql(role, match, seat, credential, address, action,
                                       int(listed["version"]))
            else:
                await self.act_rest(role, match, seat, credential, address, action,
                                    int(listed["version"]))

    async def act_rest(self, role: str, match: MatchInfo, seat: int, credential: str,
                       address: str, action: dict[str, Any], version: int) -> None:
        path = f"/v1/matches/{match.match_id}/actions"
        request: dict[str, Any] = {
            "address": address, "credential": credential,
            "headers": {"Idempotency-Key": uuid.uuid4().hex},
            "body": {"action": action, "expectedVersion": version}}
        response = await self.legit(role, "POST", path, **request)
        if response is None or response.status_code in (429, 503):
            self.stats.unknown_outcomes += 1
        elif response.is_success:
            acked = int(response.json()["version"])
            self.stats.acks.append(Ack(match.match_id, acked, seat, action, credential, "rest"))
            if self.rng.random() < 0.05:
                # A client that lost the answer: the same request again, on any replica, is
                # answered with the first result and writes nothing.
                again = await self.legit(role, "POST", path, **request)
                self.stats.replays += 1
                if again is None or again.status_code != 200 \
                        or int(again.json()["version"]) != acked:
                    self.stats.replay_mismatches.append({
                        "match": match.match_id, "version": acked,
                        "status": None if again is None else again.status_code,
                        "body": "" if again is None else again.text[:300]})

    async def act_graphql(self, role: str, match: MatchInfo, seat: int, credential: str,
                          address: str, action: dict[str, Any], version: int) -> None:
        key = uuid.uuid4().hex
        variables = {"id": match.match_id, "a": _graphql_input(match.game, action),
                     "v": version, "k": key}
        for attempt in range(5):
            response = await self.legit(role, "POST", "/graphql", address=address,
                                        credential=credential,
                                        body={"query": ACT_MUTATION, "variables": variables})
            if response is None or response.status_code != 200:
                self.stats.unknown_outcomes += 1
                return
            body = response.json()
            result = (body.get("data") or {}).get("act")
            if body.get("errors") or not isinstance(result, dict):
                self.stats.graphql_failures.append({
                    "t": round(self.elapsed(), 1), "request": "act",
                    "requestId": response.headers.get("x-request-id"),
                    "body": response.text[:500]})
                return
            kind = result["__typename"]
            self.stats.codes[role][f"graphql {kind} {result.get('code', '')}".rstrip()] += 1
            if kind == "ActionAccepted":
                self.stats.acks.append(Ack(match.match_id, int(result["version"]), seat,
                                           action, credential, "graphql"))
                return
            if kind != "Unavailable":
                return  # a conflict or a refusal: re-read
            if result.get("code") != "rate_limited":
                self.stats.graphql_failures.append({
                    "t": round(self.elapsed(), 1), "request": "act",
                    "requestId": response.headers.get("x-request-id"),
                    "body": response.text[:500]})
            else:
                self.stats.legit_429.append({"t": round(self.elapsed(), 1), "role": role,
                                             "request": "graphql act", "code": "rate_limited"})
            await asyncio.sleep(min(float(result.get("retryAfter") or 1), 10.0) + 0.1 * attempt)
        self.stats.unknown_outcomes += 1

    async def player(self, n: int) -> None:
        """A guest playing matches against bots, one after the other."""
        address = self.address(1)
        me = await self.guest("players", address, f"Player {n}")
        if me is None:
            return
        player_id, token = me
        while not self.stopping.is_set():
            game = self.rng.choice(GAMES)
            seats = self.rng.randint(2, 3 if game == "ny1901" else 4)
            mine = self.rng.randrange(seats)
            kinds = self._bots(seats)
            spec = [{"player": player_id} if s == mine else {"bot": kinds[s]}
                    for s in range(seats)]
            created = await self.create("players", address, token, {"game": game,
                                                                     "seats": spec})
            if created is None:
                await self.pause(2.0)
                continue
            match = MatchInfo(created["matchId"], game, "mixed",
                              {s: kinds[s] for s in range(seats) if s != mine})
            self.matches[match.match_id] = match
            await self.play_seat("players", match, mine, token, address)

    async def pair(self, n: int) -> None:
        """Anonymous matches of human seats (each its own client with its seat token)."""
        address = self.address(1)
        while not self.stopping.is_set():
            game = self.rng.choice(GAMES)
            seats = self.rng.randint(2, 4 if game == "ny1901" else 3)
            bots: dict[int, str] = {}
            if seats > 2 and self.rng.random() < 0.5:
                bots = {seats - 1: self._bots(1)[0]}
            created = await self.create("players", address, None, {
                "game": game, "players": seats,
                "bots": {str(s): k for s, k in bots.items()}})
            if created is None:
                await self.pause(2.0)
                continue
            match = MatchInfo(created["matchId"], game, "pair", bots)
            self.matches[match.match_id] = match
            await asyncio.gather(*(
                self.play_seat("players", match, int(s["seat"]), str(s["token"]),
                               self.address(1))
                for s in created["seats"]))

    # -- bots -------------------------------------------------------------------------------

    async def bot_host(self, n: int) -> None:
        """All-bot matches: create, hand the one human seat to a bot, watch to the end."""
        address = self.address(2)
        me = await self.guest("bots", address, f"Host {n}")
        while not self.stopping.is_set():
            game = self.rng.choice(GAMES)
            seats = self.rng.randint(2, 4)
            human = self.rng.randrange(seats)
            kinds = self._bots(seats)
            if me is not None and self.rng.random() < 0.5:
                credential = me[1]
                created = await self.create("bots", address, credential, {
                    "game": game,
                    "seats": [{"player": me[0]} if s == human else {"bot": kinds[s]}
                              for s in range(seats)]})
            else:
                created = await self.create("bots", address, None, {
                    "game": game, "players": seats,
                    "bots": {str(s): kinds[s] for s in range(seats) if s != human}})
                credential = str(created["seats"][0]["token"]) if created else ""
            if created is None:
                await self.pause(2.0)
                continue
            match = MatchInfo(created["matchId"], game, "all-bots", dict(enumerate(kinds)))
            self.matches[match.match_id] = match
            handed = await self.legit(
                "bots", "POST", f"/v1/matches/{match.match_id}/seats/{human}/bot",
                address=address, credential=credential, body={"kind": kinds[human]})
            if handed is not None and handed.is_success:
                self.stats.acks.append(Ack(match.match_id, int(handed.json()["version"]),
                                           None, None, None, "handover"))
            await self.watch_until_finished(match, address)

    async def watch_until_finished(self, match: MatchInfo, address: str) -> None:
        etag: str | None = None
        moved = time.monotonic()
        while not self.stopping.is_set():
            await self.pause(2.0)
            response = await self.legit(
                "bots", "GET", f"/v1/matches/{match.match_id}", address=address,
                headers={"If-None-Match": etag} if etag else {})
            if response is None:
                continue
            if response.status_code == 200:
                moved = time.monotonic()
                etag = response.headers.get("etag")
                if response.json()["status"] != "active":
                    match.finished = True
                    return
            elif time.monotonic() - moved > 90:
                self.stats.stalled.append(match.match_id)
                return

    # -- spectators -------------------------------------------------------------------------

    def pick_match(self) -> MatchInfo | None:
        active = [m for m in self.matches.values() if not m.finished]
        return self.rng.choice(active) if active else None

    async def spectator(self, n: int) -> None:
        address = self.address(3)
        while not self.stopping.is_set():
            match = self.pick_match()
            if match is None:
                await self.pause(1.0)
                continue
            patch = self.rng.random() < 0.5
            gzip = self.rng.random() < 0.5
            last: int | None = None
            while not self.stopping.is_set():
                last, ended = await self.follow_sse(match, address, patch, gzip, last)
                if ended:
                    break

    async def follow_sse(self, match: MatchInfo, address: str, patch: bool, gzip: bool,
                         last: int | None) -> tuple[int | None, bool]:
        """One connection for 4-20 s; (last version seen, whether the stream is over)."""
        stats = self.stats.sse
        replica = self.rng.randrange(len(self.stream_clients))
        headers = {"X-Forwarded-For": address,
                   "Accept-Encoding": "gzip" if gzip else "identity"}
        if last is not None:
            headers["Last-Event-ID"] = str(last)
        params = {"mode": "patch"} if patch else {}
        path = f"/v1/matches/{match.match_id}/events"
        held: dict[str, Any] | None = None
        first = True
        try:
            async with asyncio.timeout(self.rng.uniform(4.0, 20.0)):
                async with self.stream_clients[replica].stream(
                        "GET", path, headers=headers, params=params) as response:
                    if response.status_code != 200:
                        await response.aread()
                    self.observe("spectators", replica, "GET", path, response)
                    if response.status_code == 204:
                        match.finished = True
                        return last, True
                    if response.status_code != 200:
                        await self.pause(2.0)
                        return last, response.status_code == 404
                    stats.connections += 1
                    event: dict[str, str] = {}
                    async for line in response.aiter_lines():
                        if line:
                            if not line.startswith(":"):
                                name, _, value = line.partition(":")
                                value = value[1:] if value.startswith(" ") else value
                                event[name] = (event[name] + "\n" + value
                                               if name in event else value)
                            continue
                        if "event" not in event:
                            event = {}
                            continue
                        last, held = self._sse_event(match, event, last, held, first)
                        first = False
                        event = {}
            return last, True  # the server ended the stream: the match is over
        except TimeoutError:
            return last, False
        except httpx.TransportError as exc:
            self.stats.transport["spectators"][type(exc).__name__] += 1
            await self.pause(1.0)
            return last, False

    def _sse_event(self, match: MatchInfo, event: dict[str, str], last: int | None,
                   held: dict[str, Any] | None, first: bool
                   ) -> tuple[int | None, dict[str, Any] | None]:
        stats = self.stats.sse
        kind = event.get("event", "")
        stats.events += 1
        if kind == "revoked":
            stats.revoked += 1
            return last, held
        data = json.loads(event.get("data", "null"))
        if kind in ("state", "snapshot"):
            version = int(data["version"])
            if kind == "snapshot":
                stats.snapshots += 1
            self._check_order(stats, match, kind, version, last, first)
            if data.get("status") == "finished":
                stats.finished_seen += 1
                match.finished = True
            return max(version, last or 0), data
        if kind == "patch":
            stats.patches += 1
            version, base = int(data["version"]), int(data["baseVersion"])
            self._check_order(stats, match, kind, version, last, first)
            if held is None or base != held.get("version"):
                stats.patch_failures += 1
                stats.problems.append(f"{match.match_id}: patch {base}->{version} on "
                                      f"{None if held is None else held.get('version')}")
                return max(version, last or 0), None
            try:
                held = jsonpatch.apply_patch(held, data["operations"])
            except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
                stats.patch_failures += 1
                stats.problems.append(f"{match.match_id}: patch {version}: {exc}")
                return max(version, last or 0), None
            if held is None or held.get("version") != version:
                stats.patch_failures += 1
            elif held.get("status") == "finished":
                stats.finished_seen += 1
                match.finished = True
            return max(version, last or 0), held
        return last, held  # an event kind added later: ignored

    def _check_order(self, stats: StreamStats, match: MatchInfo, kind: str, version: int,
                     last: int | None, first: bool) -> None:
        """Versions come once, in order: a fresh stream starts anywhere; a resumed one at
        ``last + 1`` (or with a snapshot, a documented jump); then one by one."""
        if last is None:
            return
        if version <= last:
            stats.repeats += 1
            stats.problems.append(f"{match.match_id}: {kind} {version} after {last}")
        elif version != last + 1:
            if kind == "snapshot":
                stats.snapshot_jumps += 1
            else:
                stats.gaps += 1
                stats.problems.append(f"{match.match_id}: {kind} {version} after {last}")

    async def subscriber(self, n: int) -> None:
        address = self.address(3)
        while not self.stopping.is_set():
            match = self.pick_match()
            if match is None:
                await self.pause(1.0)
                continue
            last: int | None = None
            while not self.stopping.is_set():
                last, ended = await self.follow_ws(match, address, last)
                if ended:
                    break

    async def follow_ws(self, match: MatchInfo, address: str,
                        last: int | None) -> tuple[int | None, bool]:
        stats = self.stats.ws
        replica = self.rng.randrange(len(self.replicas))
        url = str(self.replicas[replica].url).replace("http://", "ws://") + "/graphql"
        path = "/graphql (websocket)"
        first = True
        try:
            async with asyncio.timeout(self.rng.uniform(4.0, 20.0)):
                async with websockets.connect(
                        url, subprotocols=[websockets.Subprotocol("graphql-transport-ws")],
                        additional_headers={"X-Forwarded-For": address},
                        open_timeout=10) as ws:
                    self.stats.count("spectators", replica, 101, None)
                    stats.connections += 1
                    await ws.send(json.dumps({"type": "connection_init", "payload": {}}))
                    ack = json.loads(await ws.recv())
                    if ack.get("type") != "connection_ack":
                        stats.problems.append(f"{match.match_id}: init answered {ack}")
                        return last, True
                    await ws.send(json.dumps({"id": "1", "type": "subscribe", "payload": {
                        "query": SUBSCRIPTION,
                        "variables": {"id": match.match_id, "after": last}}}))
                    async for raw in ws:
                        message = json.loads(raw)
                        if message.get("type") == "ping":
                            await ws.send(json.dumps({"type": "pong"}))
                            continue
                        if message.get("type") == "complete":
                            return last, True
                        if message.get("type") != "next":
                            stats.problems.append(f"{match.match_id}: {str(message)[:200]}")
                            return last, True
                        update = message["payload"].get("data", {}).get("matchUpdated") or {}
                        stats.events += 1
                        if update.get("__typename") != "MatchState":
                            if update.get("code") not in ("too_many_streams", "replica_full"):
                                stats.problems.append(f"{match.match_id}: {update}")
                            return last, False
                        version = int(update["version"])
                        if last is not None and version > last + 1 and first:
                            stats.snapshot_jumps += 1  # over the resume window behind
                        else:
                            self._check_order(stats, match, "state", version, last, first)
                        first = False
                        last = max(version, last or 0)
                        if update.get("status") == "finished":
                            stats.finished_seen += 1
                            match.finished = True
            return last, True
        except TimeoutError:
            return last, False
        except InvalidStatus as exc:
            status = exc.response.status_code
            self.stats.count("spectators", replica, status, None)
            if status >= 500:
                self.stats.server_errors.append({
                    "t": round(self.elapsed(), 1), "role": "spectators", "replica": replica,
                    "request": f"GET {path}", "status": status,
                    "body": exc.response.body.decode(errors="replace")[:500]})
            await self.pause(2.0)
            return last, False
        except (OSError, WebSocketException) as exc:
            self.stats.transport["spectators"][type(exc).__name__] += 1
            await self.pause(1.0)
            return last, False

    # -- abusers ----------------------------------------------------------------------------

    async def abuse(self, role: str, method: str, path: str, **kwargs: Any) -> None:
        kwargs.setdefault("replica", ABUSE_REPLICA)
        kwargs.setdefault("client", self.abuse_client)
        await self.send(role, method, path, **kwargs)

    def known_match(self) -> str:
        if self.matches and self.rng.random() < 0.8:
            return self.rng.choice(list(self.matches))
        return uuid.uuid4().hex[:16]

    def fake_token(self) -> str:
        junk = uuid.uuid4().hex + uuid.uuid4().hex
        return self.rng.choice([
            f"sky_{junk}", f"skp_{junk[:26]}.{junk}", f"ska_{junk}",
            f"eyJhbGciOiJIUzI1NiJ9.{junk}.{junk[:20]}", "a.b.c", "x" * 300, "sky_",
        ])

    async def misc_abuser(self, n: int) -> None:
        """One of many malformed or hostile requests, about 10 a second."""
        address = self.address(66)
        deep = ("[" * 5000 + "]" * 5000).encode()
        huge = json.dumps({"name": "x" * 100_000}).encode()
        attacks: list[tuple[str, str, dict[str, Any]]] = [
            ("POST", "/v1/matches", {"content": b'{"game": "ny1901", "players": 2',
                                     "headers": {"Content-Type": "application/json"}}),
            ("POST", "/v1/matches", {"body": [1, 2, 3]}),
            ("POST", "/v1/matches", {"body": {"game": 5, "players": "two"}}),
            ("POST", "/v1/matches", {"body": {"game": "chess", "players": 2}}),
            ("POST", "/v1/matches", {"body": {"game": "ny1901", "players": 99}}),
            ("POST", "/v1/matches", {"content": deep,
                                     "headers": {"Content-Type": "application/json"}}),
            ("POST", "/v1/players", {"content": huge,
                                     "headers": {"Content-Type": "application/json"}}),
            ("POST", "/v1/players", {"content": b'{"name": "Eve"}',
                                     "headers": {"Content-Type": "text/plain"}}),
            ("POST", "/v1/players", {"body": {"name": "\u0000\u202e" * 40}}),
            ("POST", "/graphql", {"content": b'{"query": "query($v: JSON) { __typename }",'
                                  b' "variables": {"v": ' + deep + b"}}",
                                  "headers": {"Content-Type": "application/json"}}),
            ("POST", "/graphql", {"body": {"query": "{ nope { nothing } }"}}),
            ("POST", "/graphql", {"body": {"query": "query { games { "}}),
            ("POST", "/graphql", {"body": {"query": "{ " + " ".join(
                f"a{i}: __typename" for i in range(500)) + " }"}}),
            ("POST", "/graphql", {"body": {"variables": {}}}),
            ("GET", "/graphql", {"params": {"query": "mutation { deleteMe { __typename } }"}}),
            ("DELETE", "/v1/games", {}),
            ("PUT", "/v1/matches", {"body": {}}),
            ("GET", "/../../etc/passwd", {}),
            ("GET", "/v2/matches", {}),
        ]
        while not self.stopping.is_set():
            started = time.monotonic()
            choice = self.rng.randrange(len(attacks) + 10)
            if choice < len(attacks):
                method, path, kwargs = attacks[choice]
                await self.abuse("abusers", method, path, address=address, **kwargs)
            else:
                await self.abuse_dynamic(choice - len(attacks), address)
            await self.pause(max(0.0, 0.1 - (time.monotonic() - started)))

    async def abuse_dynamic(self, which: int, address: str) -> None:
        match = self.known_match()
        base = f"/v1/matches/{match}"
        if which == 0:
            await self.abuse("abusers", "GET", "/v1/me", address=address,
                             credential=self.fake_token())
        elif which == 1:
            await self.abuse("abusers", "POST", f"{base}/actions", address=address,
                             credential=self.fake_token(),
                             body={"action": {"type": "end_turn"}})
        elif which == 2:
            await self.abuse("abusers", "GET", base, address=address,
                             headers={"Authorization": self.rng.choice(
                                 ["Basic YTpi", "Bearer", "Bearer a b", "token x", "bearer"])})
        elif which == 3:
            await self.abuse("abusers", "GET", f"{base}/log", address=address,
                             params=self.rng.choice([
                                 {"after": "-1"}, {"limit": "abc"}, {"limit": "100000"},
                                 {"after": "٣"}, {"after": "３"}, {"after": "1e3"}]))
        elif which == 4:
            await self.abuse("abusers", "GET", f"{base}/events", address=address,
                             headers={"Last-Event-ID": self.rng.choice(
                                 [b"x", b"-5", "٣".encode()])})
        elif which == 5:
            await self.abuse("abusers", "GET", f"{base}/board.svg", address=address,
                             params={"highlight": self.rng.choice(["9999", "-1", "x"])})
        elif which == 6:
            await self.abuse("abusers", "GET", "/v1/games/ny1901", address=address,
                             params={"rulesVersion": self.rng.choice(["0", "x", "99", "²"])})
        elif which == 7:
            await self.abuse("abusers", "POST", f"{base}/actions", address=address,
                             credential=self.fake_token(),
                             headers={"Idempotency-Key": "k" * 300, "If-Match": "3"},
                             body={"action": {"type": "end_turn"}})
        elif which == 8:
            await self.abuse("abusers", "GET", f"/v1/{uuid.uuid4().hex}/{self.rng.random()}",
                             address=address)
        else:
            await self.abuse("abusers", "POST", f"{base}/actions", address=address,
                             credential=self.fake_token(), content=self._chunks(),
                             headers={"Content-Type": "application/json"})

    async def _chunks(self) -> AsyncIterator[bytes]:
        """A chunked body of 128 KiB (no Content-Length)."""
        for _ in range(16):
            yield b" " * 8192

    async def paced(self, rate: float, seconds: float | None,
                    make: Callable[[], Awaitable[None]]) -> None:
        """``make()`` (a coroutine) ``rate`` times a second, up to 8 at once, for ``seconds``
        (None: until the soak stops)."""
        gate = asyncio.Semaphore(8)
        tasks: set[asyncio.Task[None]] = set()
        end = None if seconds is None else time.monotonic() + seconds
        tick = time.monotonic()
        while not self.stopping.is_set() and (end is None or time.monotonic() < end):
            await gate.acquire()

            async def one() -> None:
                try:
                    await make()
                finally:
                    gate.release()

            task = asyncio.create_task(one())
            tasks.add(task)
            task.add_done_callback(tasks.discard)
            tick += 1.0 / rate
            await self.pause(max(0.0, tick - time.monotonic()))
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def burst_reads(self) -> None:
        """Reads at 100/s from one address (its budget: 3,600 per 60 s)."""
        address = self.address(66)

        async def one() -> None:
            path = self.rng.choice(["/v1/games", "/healthz", "/v1/games/ny1901"])
            await self.abuse("abusers", "GET", path, address=address)

        await self.paced(100.0, None, one)

    async def burst_creates(self) -> None:
        """Match creations at 20/s from one address (600 per 60 s; 1,000 unfinished)."""
        address = self.address(66)

        async def one() -> None:
            await self.abuse("abusers", "POST", "/v1/matches", address=address,
                             body={"game": "ny1901", "players": 2})

        await self.paced(20.0, None, one)

    async def burst_acts(self) -> None:
        """Moves at 30/s with a real seat token (1,200 per 60 s): a seat that is not to
        move, and moves the rules refuse."""
        address = self.address(66)
        created = None
        while created is None and not self.stopping.is_set():
            created = await self.create("abusers", address, None,
                                        {"game": "ny1901", "players": 2})
            if created is None:
                await self.pause(5.0)
        if created is None:
            return
        match_id = created["matchId"]
        tokens = [str(s["token"]) for s in created["seats"]]

        async def one() -> None:
            action = self.rng.choice([{"type": "end_turn"}, {"type": "acquire", "lot": "zz"},
                                      {"type": "build"}, {"type": "nope"}])
            await self.abuse("abusers", "POST", f"/v1/matches/{match_id}/actions",
                             address=address, credential=self.rng.choice(tokens),
                             headers={"Idempotency-Key": self.rng.choice(["k1", "k2"])},
                             body={"action": action})

        await self.paced(30.0, None, one)

    async def burst_bad_tokens(self) -> None:
        """Made-up tokens on moves at 25/s from one address (refused credentials are
        charged to the address: 1,200 per 60 s)."""
        address = self.address(66)

        async def one() -> None:
            await self.abuse("abusers", "POST", f"/v1/matches/{self.known_match()}/actions",
                             address=address, credential=self.fake_token(),
                             body={"action": {"type": "end_turn"}})

        await self.paced(25.0, None, one)

    async def stream_hog(self) -> None:
        """40 event streams at once from one address, every 20 s, held 5 s."""
        address = self.address(66)

        async def hold(match_id: str) -> None:
            path = f"/v1/matches/{match_id}/events"
            try:
                async with self.abuse_client.stream(
                        "GET", path, headers={"X-Forwarded-For": address}) as response:
                    if response.status_code != 200:
                        await response.aread()
                    self.observe("abusers", ABUSE_REPLICA, "GET", path, response)
                    if response.status_code == 200:
                        with contextlib.suppress(TimeoutError):
                            async with asyncio.timeout(5.0):
                                async for _ in response.aiter_raw():
                                    pass
            except httpx.TransportError as exc:
                self.stats.transport["abusers"][type(exc).__name__] += 1

        while not self.stopping.is_set():
            match = self.pick_match()
            if match is not None:
                await asyncio.gather(*(hold(match.match_id) for _ in range(40)))
            await self.pause(15.0)

    async def slow_clients(self) -> None:
        """A slow client at a time: headers trickled (10 s allowed), or a body never sent
        (30 s allowed). The answer should be 408 and the connection closed."""
        replica = self.replicas[ABUSE_REPLICA]
        while not self.stopping.is_set():
            address = self.address(66)
            body = self.rng.random() < 0.3
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", replica.port)
            except OSError as exc:
                self.stats.transport["abusers"][type(exc).__name__] += 1
                await self.pause(5.0)
                continue
            try:
                if body:
                    writer.write((f"POST /v1/players HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: "
                                  f"{address}\r\nContent-Type: application/json\r\n"
                                  f"Content-Length: 1000\r\n\r\n{{\"na").encode())
                else:
                    writer.write(f"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: "
                                 f"{address}\r\n".encode())
                await writer.drain()

                trickling = asyncio.create_task(self._trickle(writer, 0 if body else 30))
                try:
                    reading = asyncio.ensure_future(reader.readline())
                    stopping = asyncio.ensure_future(self.stopping.wait())
                    await asyncio.wait([reading, stopping], timeout=45.0,
                                       return_when=asyncio.FIRST_COMPLETED)
                    stopping.cancel()
                    if not reading.done():
                        reading.cancel()
                        if self.stopping.is_set():
                            return
                        raise TimeoutError
                    line = reading.result()
                finally:
                    trickling.cancel()
                    with contextlib.suppress(asyncio.CancelledError, OSError):
                        await trickling
                parts = line.split()
                if len(parts) >= 2 and parts[1].isdigit():
                    status = int(parts[1])
                    self.stats.count("abusers", ABUSE_REPLICA, status, "slow client")
                    if status >= 500:
                        self.stats.server_errors.append({
                            "t": round(self.elapsed(), 1), "role": "abusers",
                            "replica": ABUSE_REPLICA, "status": status,
                            "request": "slow client " + ("body" if body else "headers")})
                else:
                    self.stats.transport["abusers"]["slow client: closed"] += 1
            except (TimeoutError, OSError):
                self.stats.transport["abusers"]["slow client: no answer"] += 1
            finally:
                writer.close()
                with contextlib.suppress(OSError):
                    await writer.wait_closed()
            await self.pause(1.0)

    @staticmethod
    async def _trickle(writer: asyncio.StreamWriter, count: int) -> None:
        """One byte a second, ``count`` times."""
        for _ in range(count):
            await asyncio.sleep(1.0)
            writer.write(b"X")
            await writer.drain()

    # -- the run ----------------------------------------------------------------------------

    async def run(self, procs: list[Proc], sample: float, progress: float) -> bool:
        """The traffic for ``self.seconds``; False when a process died."""
        sizes = self.sizes
        jobs = [
            *(self.player(i) for i in range(sizes.players)),
            *(self.pair(i) for i in range(sizes.pairs)),
            *(self.bot_host(i) for i in range(sizes.bot_hosts)),
            *(self.spectator(i) for i in range(sizes.spectators)),
            *(self.subscriber(i) for i in range(sizes.subscribers)),
            *(self.misc_abuser(i) for i in range(sizes.abusers)),
        ]
        if sizes.abusers:
            jobs += [self.burst_reads(), self.burst_creates(), self.burst_acts(),
                     self.burst_bad_tokens(), self.stream_hog(), self.slow_clients()]
        tasks = [asyncio.create_task(job) for job in jobs]
        sampler = asyncio.create_task(self.sample(procs, sample, progress))
        alive = True
        try:
            end = time.monotonic() + self.seconds
            while time.monotonic() < end:
                await asyncio.sleep(min(1.0, max(0.0, end - time.monotonic())))
                if not all(p.alive() for p in procs):
                    alive = False
                    print("a process died: stopping", file=sys.stderr, flush=True)
                    break
                failed = [t for t in tasks if t.done() and not t.cancelled()
                          and t.exception() is not None]
                if failed:
                    raise RuntimeError("a client failed") from failed[0].exception()
        finally:
            self.stopping.set()
            self.stopped_at = self.elapsed()
            self.stats.rss.append(self._sample(procs))
            _, pending = await asyncio.wait(tasks, timeout=15.0)
            for task in pending:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            sampler.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sampler
        for task in tasks:
            if not task.cancelled() and task.exception() is not None:
                raise RuntimeError("a client failed") from task.exception()
        return alive

    def _sample(self, procs: list[Proc]) -> dict[str, Any]:
        return {"t": round(self.elapsed(), 1),
                **{p.name: p.rss_mib() for p in procs},
                "cpu": {p.name: p.cpu_seconds() for p in procs}}

    async def sample(self, procs: list[Proc], every: float, progress: float) -> None:
        next_progress = progress
        while True:
            self.stats.rss.append(self._sample(procs))
            if self.elapsed() >= next_progress:
                next_progress += progress
                self.print_progress(procs)
            await asyncio.sleep(every)

    def print_progress(self, procs: list[Proc]) -> None:
        s = self.stats
        rss = " ".join(f"{p.name[:1]}{p.name[-1] if p.url else ''}="
                       f"{(p.rss_mib() or 0):.0f}" for p in procs)
        transport = sum(sum(c.values()) for c in s.transport.values())
        finished = sum(m.finished for m in self.matches.values())
        print(f"[{self.elapsed():5.0f} s] {s.total():6d} requests: 2xx {s.of_class('2'):6d}"
              f"  4xx {s.of_class('4'):5d} (429 {s.of_status(429):5d}, legit "
              f"{len(s.legit_429)})  5xx {s.of_class('5')}  transport {transport}"
              f" | acks {len(s.acks)}, matches {len(self.matches)} ({finished} over)"
              f" | streams {s.sse.connections}+{s.ws.connections}"
              f" events {s.sse.events + s.ws.events} | RSS MiB {rss}", flush=True)


# -- the final check --------------------------------------------------------------------------


async def read_log(soak: Soak, match_id: str, credential: str | None
                   ) -> tuple[dict[int, dict[str, Any]], int, list[int]] | None:
    """Every entry of a match's log as ``credential`` reads it (None: a spectator): by
    version, the latest version, and the versions in order of arrival."""
    entries: dict[int, dict[str, Any]] = {}
    order: list[int] = []
    after = 0
    latest = 0
    while True:
        response = await soak.legit(
            "verify", "GET", f"/v1/matches/{match_id}/log", address="10.9.0.1",
            credential=credential, params={"after": str(after), "limit": "200"}, attempts=8)
        if response is None or response.status_code != 200:
            return None
        page = response.json()
        latest = int(page["latestVersion"])
        for entry in page["entries"]:
            entries[int(entry["version"])] = entry
            order.append(int(entry["version"]))
        if page["nextAfter"] is None:
            return entries, latest, order
        after = int(page["nextAfter"])


async def verify(soak: Soak) -> dict[str, Any]:
    """Every acknowledged write at its version in its match's log; every log whole."""
    acks_by_match: dict[str, list[Ack]] = {}
    for ack in soak.stats.acks:
        acks_by_match.setdefault(ack.match_id, []).append(ack)
    present = 0
    missing: list[dict[str, Any]] = []
    log_gaps: list[str] = []
    unreadable: list[str] = []
    entries_total = 0
    bot_moves = 0
    finished = 0
    gate = asyncio.Semaphore(8)

    async def check(match: MatchInfo) -> None:
        nonlocal present, entries_total, bot_moves, finished
        async with gate:
            state = await soak.legit("verify", "GET", f"/v1/matches/{match.match_id}",
                                     address="10.9.0.1", attempts=8)
            public = await read_log(soak, match.match_id, None)
            if state is None or state.status_code != 200 or public is None:
                unreadable.append(match.match_id)
                for ack in acks_by_match.get(match.match_id, []):
                    missing.append({"ack": ack.__dict__, "why": "match unreadable"})
                return
            is_finished = state.json()["status"] == "finished"
            finished += is_finished
            entries, latest, order = public
            entries_total += len(entries)
            if order != list(range(1, latest + 1)):
                log_gaps.append(f"{match.match_id}: {len(order)} entries, latest {latest}")
            views: dict[str | None, dict[int, dict[str, Any]]] = {None: entries}
            acked_versions: set[int] = set()
            for ack in acks_by_match.get(match.match_id, []):
                acked_versions.add(ack.version)
                who = None if is_finished or ack.action is None else ack.credential
                if who not in views:
                    read = await read_log(soak, match.match_id, who)
                    views[who] = read[0] if read is not None else {}
                entry = views[who].get(ack.version)
                ok = (entry is not None and entry.get("seat") == ack.seat
                      and (ack.action is None or entry.get("action") == ack.action))
                if ok:
                    present += 1
                else:
                    missing.append({"ack": {k: v for k, v in ack.__dict__.items()
                                            if k != "credential"},
                                    "entry": entry})
            bots = {s for s in match.bots}
            bot_moves += sum(1 for v, e in entries.items()
                             if v not in acked_versions and e.get("seat") in bots)

    await asyncio.gather(*(check(m) for m in soak.matches.values()))
    return {"acknowledged": len(soak.stats.acks), "present": present,
            "acknowledged_by_way": dict(Counter(ack.via for ack in soak.stats.acks)),
            "missing": len(missing), "missing_details": missing[:50],
            "matches": len(soak.matches), "finished": finished,
            "log_entries": entries_total, "bot_moves_stored": bot_moves,
            "log_gaps": log_gaps, "unreadable": unreadable}


# -- report -----------------------------------------------------------------------------------


def rss_summary(samples: list[dict[str, Any]], names: list[str], seconds: float
                ) -> dict[str, dict[str, float | None]]:
    """Per process: RSS at the first minute (the sample nearest 60 s; 10 s in short runs),
    at the end, the growth and the peak."""
    at = 60.0 if seconds >= 120 else 10.0
    base = min(samples, key=lambda s: abs(float(s["t"]) - at))
    end = samples[-1]
    out: dict[str, dict[str, float | None]] = {}
    for name in names:
        first, last = base.get(name), end.get(name)
        peak = max((s[name] for s in samples if s.get(name) is not None), default=None)
        out[name] = {
            "start_t": base["t"], "start": first, "end_t": end["t"], "end": last,
            "growth": None if first is None or last is None else round(last - first, 1),
            "growth_pct": None if not first or last is None
            else round(100 * (last - first) / first, 1),
            "peak": peak, "first": samples[0].get(name),
            "cpu_s": (end.get("cpu") or {}).get(name),
        }
    return out


def print_report(soak: Soak, result: dict[str, Any], names: list[str],
                 table_every: float) -> None:
    s = soak.stats
    print("\n== RSS (MiB) over time")
    print("t (s)   " + "  ".join(f"{n:>9}" for n in names))
    shown = -1e9
    for sample in s.rss:
        if sample["t"] - shown >= table_every or sample is s.rss[-1]:
            shown = sample["t"]
            print(f"{sample['t']:6.0f}  " + "  ".join(
                f"{sample.get(n) or 0:9.1f}" for n in names))
    print("\nprocess    first-minute   end     growth        peak   CPU s")
    for name, row in result["rss"].items():
        print(f"{name:9} {row['start'] or 0:8.1f}  {row['end'] or 0:8.1f}  "
              f"{row['growth'] or 0:+7.1f} ({row['growth_pct'] or 0:+.1f} %)"
              f"  {row['peak'] or 0:7.1f}  {row['cpu_s'] or 0:6.0f}")
    print(f"\n== Requests ({result['duration_s']:.0f} s of traffic, "
          f"{result['requests']['total']} answers, "
          f"{result['requests']['total'] / max(result['duration_s'], 1):.0f}/s)")
    print("role         total     2xx    3xx     4xx     429    5xx  transport")
    for role in ROLES:
        transport = sum(s.transport[role].values())
        print(f"{role:10} {s.total(role):7d} {s.of_class('2', role):7d} "
              f"{s.of_class('3', role):6d} {s.of_class('4', role):7d} "
              f"{s.of_status(429, role):7d} {s.of_class('5', role):6d} {transport:6d}")
    print(f"per replica: {dict(sorted(s.per_replica.items()))}")
    print("429 by role and code: " + json.dumps(result["requests"]["429_codes"]))
    print("abusers' answers: " + ", ".join(
        f"{k}: {v}" for k, v in sorted(s.codes["abusers"].items())))
    print("transport errors: " + json.dumps({r: dict(c) for r, c in s.transport.items() if c}))
    print(f"5xx: {len(s.server_errors)}; GraphQL failures to well-behaved clients: "
          f"{len(s.graphql_failures)}; legit 429s: {len(s.legit_429)}")
    for error in [*s.server_errors[:10], *s.graphql_failures[:10]]:
        print(f"  {error}")
    for name, stream in (("SSE", s.sse), ("GraphQL", s.ws)):
        print(f"\n{name} spectators: {stream.connections} connections, {stream.events} events"
              f" ({stream.snapshots} snapshots, {stream.patches} patches), gaps "
              f"{stream.gaps}, repeats {stream.repeats}, documented jumps "
              f"{stream.snapshot_jumps}, patch failures {stream.patch_failures}, finished "
              f"seen {stream.finished_seen}")
        for problem in stream.problems[:5]:
            print(f"  {problem}")
    moves = result["moves"]
    print(f"\n== Moves: {moves['acknowledged']} acknowledged "
          f"({', '.join(f'{n} {k}' for k, n in moves['acknowledged_by_way'].items())}),"
          f" {moves['present']} present, {moves['missing']} missing; "
          f"{moves['matches']} matches ({moves['finished']} finished), "
          f"{moves['log_entries']} log entries, {moves['bot_moves_stored']} bot moves; "
          f"log gaps {len(moves['log_gaps'])}, unreadable {len(moves['unreadable'])}; "
          f"outcome unknown {s.unknown_outcomes}; stalled all-bot matches {len(s.stalled)}")
    print(f"idempotent replays (a 2xx move posted again, same key, any replica): {s.replays},"
          f" answered otherwise {len(s.replay_mismatches)}")
    for mismatch in s.replay_mismatches[:5]:
        print(f"  {mismatch}")
    for item in moves["missing_details"][:10]:
        print(f"  missing: {item}")
    if result["server_logs"]:
        print("\nwhat the processes logged (warnings and errors):")
        for name, lines in result["server_logs"].items():
            print(f"  {name}: {result['server_log_lines'][name]} lines (tracebacks' frames "
                  f"left out), the first:")
            for line in lines[:12]:
                print(f"    {line[:300]}")


def summarize(soak: Soak, procs: list[Proc], moves: dict[str, Any], seconds: float,
              exits: dict[str, int | None], logs: dict[str, list[str]]) -> dict[str, Any]:
    s = soak.stats
    names = [p.name for p in procs]
    codes429 = {role: {k: v for k, v in s.codes[role].items() if k.startswith("429")}
                for role in ROLES}
    return {
        "duration_s": round(seconds, 1),
        "rss": rss_summary(s.rss, names, seconds),
        "rss_samples": s.rss,
        "requests": {
            "total": s.total(),
            "by_role": {role: dict(s.statuses[role]) for role in ROLES},
            "codes": {role: dict(s.codes[role]) for role in ROLES},
            "5xx": s.of_class("5"), "429": s.of_status(429), "429_codes": codes429,
            "per_replica": dict(s.per_replica),
            "transport": {role: dict(c) for role, c in s.transport.items()},
        },
        "server_errors": s.server_errors,
        "graphql_failures": s.graphql_failures,
        "legit_429": s.legit_429,
        "streams": {"sse": {k: v for k, v in s.sse.__dict__.items() if k != "problems"},
                    "graphql": {k: v for k, v in s.ws.__dict__.items() if k != "problems"},
                    "problems": [*s.sse.problems[:50], *s.ws.problems[:50]]},
        "moves": moves,
        "unknown_outcomes": s.unknown_outcomes,
        "replays": s.replays, "replay_mismatches": s.replay_mismatches,
        "stalled": s.stalled,
        "exit_codes": exits,
        "server_logs": {k: v[:50] for k, v in logs.items()},
        "server_log_lines": {k: len(v) for k, v in logs.items()},
    }


# -- main -------------------------------------------------------------------------------------


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM stops the soak as Ctrl-C does (and cleans up). While the event loop runs,
    ``soak_main`` cancels itself instead (as ``asyncio.run`` does on Ctrl-C)."""
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


async def soak_main(procs: list[Proc], args: argparse.Namespace, sizes: Sizes,
                    seconds: float) -> tuple[Soak, dict[str, Any], float, bool]:
    replicas = [p for p in procs if p.url]
    main_task = asyncio.current_task()
    assert main_task is not None
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, main_task.cancel)
    soak = Soak(replicas, sizes, seconds, args.seed)
    try:
        alive = await soak.run(procs, args.sample, args.progress)
        duration = soak.stopped_at
        print(f"traffic over after {duration:.0f} s; reading every match's log...", flush=True)
        moves = await verify(soak)
    finally:
        await soak.aclose()
    return soak, moves, duration, alive


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__.split(
        "\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=5.0, help="traffic time (default 5)")
    parser.add_argument("--quick", action="store_true",
                        help="about 1 minute, fewer clients")
    parser.add_argument("--json", default=None, help="also write every figure here")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379")
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--players", type=int, default=None, help="guests against bots (6)")
    parser.add_argument("--pairs", type=int, default=None, help="human-seat matches (3)")
    parser.add_argument("--bot-hosts", type=int, default=None, help="all-bot matches (3)")
    parser.add_argument("--spectators", type=int, default=None, help="SSE spectators (8)")
    parser.add_argument("--subscribers", type=int, default=None,
                        help="GraphQL subscription spectators (2)")
    parser.add_argument("--abusers", type=int, default=None,
                        help="misc abusers (4); 0 also drops the bursts")
    parser.add_argument("--sample", type=float, default=5.0, help="seconds between RSS samples")
    parser.add_argument("--progress", type=float, default=15.0)
    parser.add_argument("--table-every", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=20)
    args = parser.parse_args(argv)
    quick = args.quick
    seconds = 60.0 if quick else args.minutes * 60
    defaults = Sizes(players=3, pairs=2, bot_hosts=2, spectators=4, subscribers=1, abusers=2) \
        if quick else Sizes(players=8, pairs=4, bot_hosts=4, spectators=12, subscribers=4,
                            abusers=4)
    sizes = Sizes(**{k: getattr(args, k) if getattr(args, k) is not None else v
                     for k, v in defaults.__dict__.items()})
    if quick:
        args.table_every = min(args.table_every, 10.0)
    try:
        with contextlib.closing(redis.Redis.from_url(args.redis_url)) as probe:
            probe.ping()
    except (redis.RedisError, ValueError) as exc:
        print(f"soak: no Redis at {args.redis_url}: {exc}", file=sys.stderr)
        return 2
    prefix = f"soak-{uuid.uuid4().hex[:12]}:"
    workdir = Path(tempfile.mkdtemp(prefix="skyline-soak-"))
    print(f"soak: {args.replicas} replicas + 1 worker on {args.redis_url} (prefix {prefix}), "
          f"{seconds / 60:g} min, {sizes}; output of the processes in {workdir}", flush=True)
    procs: list[Proc] = []
    load_before = os.getloadavg()
    result: dict[str, Any] | None = None
    keep_logs = True
    code = 1
    try:
        with sigterm_as_interrupt():
            try:
                start_processes(args.replicas, args.redis_url, prefix, workdir, procs)
                try:
                    soak, moves, duration, alive = asyncio.run(
                        soak_main(procs, args, sizes, seconds))
                except asyncio.CancelledError:  # SIGTERM while the loop ran
                    raise KeyboardInterrupt from None
                finally:
                    signal.signal(signal.SIGTERM, _interrupt)  # the loop reset it
            finally:
                exits = stop_processes(procs)
            logs = server_log_problems(procs)
            result = summarize(soak, procs, moves, duration, exits, logs)
            result["config"] = {"replicas": args.replicas, "sizes": sizes.__dict__,
                                "seconds": seconds, "prefix": prefix,
                                "worker_budget": WORKER_BUDGET, "seed": args.seed}
            result["machine"] = {"load_before": load_before, "load_after": os.getloadavg(),
                                 "cpus": os.cpu_count(),
                                 "generator_cpu_s": round(time.process_time(), 1)}
            print(f"machine: load average {load_before[0]:.2f} before, "
                  f"{os.getloadavg()[0]:.2f} after; this process (the clients) used "
                  f"{time.process_time():.0f} s of CPU", flush=True)
            print_report(soak, result, [p.name for p in procs], args.table_every)
            failed = (result["requests"]["5xx"] > 0 or moves["missing"] > 0 or not alive
                      or bool(soak.stats.graphql_failures) or bool(moves["log_gaps"])
                      or bool(soak.stats.replay_mismatches))
            result["passed"] = not failed
            keep_logs = failed or bool(logs)
            print(f"\nsoak: {'FAILED' if failed else 'passed'} (5xx "
                  f"{result['requests']['5xx']}, missing moves {moves['missing']}, "
                  f"processes alive {alive})", flush=True)
            code = 1 if failed else 0
    except KeyboardInterrupt:
        print("\nsoak: interrupted; cleaning up", file=sys.stderr, flush=True)
        code = 130
    finally:
        if procs:
            stop_processes(procs)
        deleted = delete_keys(args.redis_url, prefix)
        print(f"soak: {deleted} Redis keys under {prefix} deleted", flush=True)
        if keep_logs:
            print(f"soak: the processes' output is kept in {workdir}", flush=True)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    if args.json and result is not None:
        Path(args.json).write_text(json.dumps(result, indent=1, default=str) + "\n")
    return code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
