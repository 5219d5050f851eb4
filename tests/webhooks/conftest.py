"""Webhook fixtures: a real HTTP receiver on 127.0.0.1 that verifies every delivery's
signature with the ``standardwebhooks`` library, and a stack of services (match, player,
webhook service, workers) on the embedded store, Redis or a Redis Cluster.

Deliveries go to loopback, so every stack allows ``127.0.0.0/8`` and plain http explicitly
(the default refuses both), with backoffs of a few tens of milliseconds."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast

import pytest
from standardwebhooks import Webhook

from service import games
from service.identity.callers import Caller
from service.matches import MatchService
from service.matches.models import CreateMatchRequest
from service.players import PlayerService
from service.store import DocStore, MatchStore
from service.store.redis import RedisStore
from service.store.sqlite import SqliteStore
from service.webhooks import WebhookService, WebhookSettings
from service.webhooks.models import CreateWebhookRequest
from service.workers.webhooks import WebhookWorker
from tests.api.conftest import TOY

FAST = WebhookSettings(
    allow_http=True, allow_networks=("127.0.0.0/8",), connect_timeout=0.5,
    read_timeout=0.5, backoff_first=0.05, backoff_factor=2.0, backoff_max=0.2, jitter=0.2,
    lease_seconds=1.5, retry_seconds=60.0, disable_after=1000, disable_seconds=0.0,
)
"""Short timeouts and backoffs for the tests; loopback allowed explicitly."""
WAIT = 20.0
"""The most a test waits for a condition (it normally holds in well under a second)."""


# -- the receiver ---------------------------------------------------------------------------

Plan = Callable[[str, int, dict[str, Any]], tuple[str, float]]
"""(path, how many requests that path had before, the body) -> (what to do, seconds to wait first):
``ok``, ``fail`` (500), ``redirect`` (307 to /elsewhere), ``drop`` (close the connection
without answering: the receiver dies mid-delivery), ``trickle`` (a 200 whose body comes a
byte every "seconds", never ending: each read is prompt, the answer never is)."""


def always_ok(path: str, count: int, body: dict[str, Any]) -> tuple[str, float]:
    return "ok", 0.0


@dataclass
class Got:
    path: str
    id: str
    body: dict[str, Any]


@dataclass
class Receiver:
    """An HTTP server in a thread; ``secrets`` (path -> the endpoint's current secret) must
    verify every delivery it answers 2xx to (a delivery that does not verify is answered
    400 and kept in ``bad``)."""

    port: int = 0
    plan: Plan = always_ok
    secrets: dict[str, str] = field(default_factory=dict)
    got: list[Got] = field(default_factory=list)
    bad: list[str] = field(default_factory=list)
    requests: dict[str, int] = field(default_factory=dict)
    in_flight: dict[str, int] = field(default_factory=dict)
    """Requests being answered now, per path."""
    peak: dict[str, int] = field(default_factory=dict)
    """The most requests answered at once, per path."""
    trickled: list[float] = field(default_factory=list)
    """The gaps (s) between two bytes of trickled answers."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)
    server: ThreadingHTTPServer | None = None

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def start(self) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                with receiver.lock:
                    count = receiver.requests.get(self.path, 0)
                    receiver.requests[self.path] = count + 1
                    now = receiver.in_flight.get(self.path, 0) + 1
                    receiver.in_flight[self.path] = now
                    receiver.peak[self.path] = max(receiver.peak.get(self.path, 0), now)
                try:
                    self._handle(count, body)
                finally:
                    with receiver.lock:
                        receiver.in_flight[self.path] -= 1

            def _handle(self, count: int, body: bytes) -> None:
                action, delay = receiver.plan(self.path, count, json.loads(body or b"{}"))
                if action == "trickle":
                    self._trickle(delay)
                    return
                if delay:
                    time.sleep(delay)
                if action == "drop":
                    self.close_connection = True
                    with contextlib.suppress(OSError):
                        self.connection.shutdown(2)
                    return
                if action == "fail":
                    self._answer(500)
                    return
                if action == "redirect":
                    self.send_response(307)
                    self.send_header("Location", receiver.url("/elsewhere"))
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                secret = receiver.secrets.get(self.path)
                try:
                    assert secret is not None, f"no secret for {self.path}"
                    data = Webhook(secret).verify(body, dict(self.headers.items()))
                except Exception as error:
                    with receiver.lock:
                        receiver.bad.append(f"{self.path}: {error!r}")
                    self._answer(400)
                    return
                with receiver.lock:
                    receiver.got.append(Got(self.path, self.headers["webhook-id"], data))
                self._answer(204)

            def _trickle(self, every: float) -> None:
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n")
                    self.wfile.flush()
                    last = time.monotonic()
                    while not receiver.stopping.wait(every):
                        self.wfile.write(b"x")
                        self.wfile.flush()
                        now = time.monotonic()
                        with receiver.lock:
                            receiver.trickled.append(now - last)
                        last = now

            def _answer(self, status: int) -> None:
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

        ThreadingHTTPServer.allow_reuse_address = True
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.stopping.set()
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def ids(self, path: str | None = None) -> set[str]:
        with self.lock:
            return {g.id for g in self.got if path is None or g.path == path}

    def bodies(self, path: str | None = None) -> list[dict[str, Any]]:
        with self.lock:
            return [g.body for g in self.got if path is None or g.path == path]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    found.start()
    yield found
    found.stop()


# -- the services ---------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def toy_game() -> Iterator[None]:
    games.register(TOY, "tests.toy_game:engine")
    yield
    games.unregister(TOY)


class Stack:
    """The services of one replica on ``store``, and its workers."""

    def __init__(self, store: MatchStore, settings: WebhookSettings = FAST) -> None:
        self.store = store
        self.matches = MatchService(store, ttl_finished=None, ttl_idle=None)
        self.players = PlayerService(cast(DocStore, store), self.matches)
        self.hooks = WebhookService(cast(DocStore, store), self.players, self.matches,
                                    settings)
        self.workers: list[tuple[WebhookWorker, asyncio.Task[None]]] = []
        self.apps: list[str] = []

    def start_worker(self, **options: Any) -> tuple[WebhookWorker, asyncio.Task[None]]:
        options.setdefault("idle_seconds", 0.05)
        worker = WebhookWorker(self.hooks, **options)
        pair = (worker, asyncio.create_task(worker.run()))
        self.workers.append(pair)
        return pair

    async def app(self) -> Caller:
        """A new app's key, as a checked caller."""
        _, key = await self.players.apps.add("Hooks")
        caller = await self.players.authenticate(key)
        assert isinstance(caller, Caller)
        self.apps.append(caller.app)
        return caller

    async def pending(self) -> int:
        """Deliveries waiting (or being attempted) for every app made here."""
        return sum([await self.hooks.pending(app) for app in self.apps])

    async def endpoint(self, app: Caller, receiver: Receiver, path: str,
                       events: list[str] | None = None, **extra: Any) -> str:
        created = await self.hooks.create(app, CreateWebhookRequest(
            url=receiver.url(path), events=events or ["match_started", "your_turn"], **extra))
        receiver.secrets[path] = created.secret
        return created.id

    async def match(self, app: Caller, users: tuple[str, str] = ("u1", "u2")) -> str:
        created = await self.players.create_match(app, CreateMatchRequest.model_validate(
            {"game": TOY, "seats": [{"user": u} for u in users], "options": {"rounds": 1}}))
        return created.match_id

    async def close(self) -> None:
        for worker, task in self.workers:
            worker.stop()
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.hooks.aclose()
        await self.players.aclose()


STORES = ["embedded", "redis"]


@pytest.fixture(params=STORES)
async def store(request: pytest.FixtureRequest) -> AsyncIterator[MatchStore]:
    if request.param == "embedded":
        found: MatchStore = SqliteStore(":memory:")
    else:
        url = request.getfixturevalue("redis_url")
        found = RedisStore.from_url(url, prefix=request.getfixturevalue("redis_prefix"))
    yield found
    await found.close()


@pytest.fixture
async def stack(store: MatchStore) -> AsyncIterator[Stack]:
    found = Stack(store)
    yield found
    await found.close()


async def until(condition: Callable[[], bool], what: str, seconds: float = WAIT) -> None:
    """Wait for ``condition`` (polled), at most ``seconds``."""
    try:
        async with asyncio.timeout(seconds):
            while not condition():
                await asyncio.sleep(0.02)
    except TimeoutError:
        raise AssertionError(f"timed out waiting for {what}") from None


def kinds(bodies: list[dict[str, Any]]) -> list[str]:
    return sorted(str(b["type"]) for b in bodies)


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True)
