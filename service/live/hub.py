"""``LiveHub``: one store watch per match per replica, fanned out to every local watcher.

A replica may hold thousands of event streams and GraphQL subscriptions. Each match that has
at least one local watcher gets one *topic*: a single ``store.watch`` (on Redis, one channel
of the store's one shared pub/sub connection) whose versions wake every local watcher of the
match. Watchers learn only the newest version (a wake-up); the matches layer reads what
changed from the log once per version, not once per watcher. The version in the store stays
the truth: a topic yields only versions the store's own ``watch`` yielded, in order.

Admission: ``admit(client)`` reserves a watcher slot before a stream starts -- past the
client's cap ``429 too_many_streams``, past the replica's ``503 replica_full``, both with
``Retry-After``. A stream once admitted is never cut for a cap. ``shutdown()`` tells every
stream to end with a reconnection delay (the transports add a jittered ``retry:``).

Store failures: a topic whose store watch raises ``StoreUnavailable`` starts it again itself,
with exponential backoff and jitter (``retry_base`` .. ``retry_cap`` seconds), from the last
version it saw; its watchers keep their streams and learn nothing was lost (the versions
continue in order). Only a *persistent* outage ends them: failures without a success in
between for ``outage_seconds`` (a success: the watch yielded a version, or ran
``outage_seconds`` before it failed). A connection storm that keeps the store's command
pool busy, or a wake-up connection that drops and reconnects, is not an outage.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import random
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field

from service.errors import ApiError
from service.i18n import T
from service.store import MatchStore, StoreUnavailable

from .replays import ReplayBudget

log = logging.getLogger("skyline.live")

DEFAULT_MAX_WATCHERS = 16_000
"""Streams one replica holds at once (keep it under the process's open-file limit)."""
DEFAULT_MAX_WATCHERS_PER_CLIENT = 32
"""Streams one client (a credential, else an address) holds at once on one replica."""
DEFAULT_RESUME_WINDOW = 100
"""Versions a resuming watcher may be behind and still receive each one (the matches layer
sends one snapshot to a watcher further behind)."""
FULL_RETRY_AFTER = 5
"""Seconds a refused stream is told to wait (``Retry-After``)."""
DEFAULT_OUTAGE_SECONDS = 15.0
"""Seconds a topic's store watch may keep failing (restarted with backoff) before its
watchers' streams end with ``store_unavailable``."""
WATCH_RETRY_BASE = 0.1
WATCH_RETRY_CAP = 2.0


class Shutdown(Exception):
    """The replica is stopping: the stream should end and the client reconnect elsewhere."""


@dataclass
class _Topic:
    """One match's versions on this replica."""

    match_id: str
    latest: int = -1
    watchers: int = 0
    error: BaseException | None = None
    ended: bool = False
    changed: asyncio.Future[None] = field(default_factory=lambda: _future())
    task: asyncio.Task[None] | None = None

    def wake(self) -> None:
        changed, self.changed = self.changed, _future()
        if not changed.done():
            changed.set_result(None)


def _future() -> asyncio.Future[None]:
    return asyncio.get_running_loop().create_future()


class Lease:
    """A watcher slot taken by ``LiveHub.admit``; ``release()`` gives it back (idempotent)."""

    def __init__(self, hub: LiveHub, client: str) -> None:
        self._hub = hub
        self.client = client
        self._held = True

    def release(self) -> None:
        if self._held:
            self._held = False
            self._hub._release(self.client)


class LiveHub:
    """Fan-out of match versions to this replica's watchers (see the module docstring).

    Counters for ``/metrics``: ``watchers`` (admitted now), ``topics`` (matches watched
    now), ``wakeups`` (new versions seen by the topics), ``watch_retries`` (store watches
    restarted after a failure), ``refused`` by reason."""

    def __init__(
        self,
        store: MatchStore,
        *,
        max_watchers: int = DEFAULT_MAX_WATCHERS,
        max_watchers_per_client: int = DEFAULT_MAX_WATCHERS_PER_CLIENT,
        outage_seconds: float = DEFAULT_OUTAGE_SECONDS,
        retry_base: float = WATCH_RETRY_BASE,
        retry_cap: float = WATCH_RETRY_CAP,
        replays: ReplayBudget | None = None,
    ) -> None:
        self.store = store
        self.replays = replays if replays is not None else ReplayBudget()
        """Per-client budgets of replayed versions (``live.replays``)."""
        self.max_watchers = max_watchers
        self.max_watchers_per_client = max_watchers_per_client
        self.outage_seconds = outage_seconds
        self.retry_base = retry_base
        self.retry_cap = retry_cap
        self.watchers = 0
        self.wakeups = 0
        self.watch_retries = 0
        """Topic store watches started again after a ``StoreUnavailable``."""
        self.refused: dict[str, int] = {"too_many_streams": 0, "replica_full": 0}
        self._per_client: dict[str, int] = {}
        self._topics: dict[str, _Topic] = {}
        self._stopping: asyncio.Event | None = None

    # -- admission -------------------------------------------------------------------------

    def admit(self, client: str) -> Lease:
        """A watcher slot for ``client``, or the refusal (nothing is reserved then)."""
        if self.stopping:
            raise ApiError.of(
                "replica_full", T("This server is restarting; connect again."),
                retryAfter=1,
            )
        held = self._per_client.get(client, 0)
        if held >= self.max_watchers_per_client:
            self.refused["too_many_streams"] += 1
            raise ApiError.of(
                "too_many_streams",
                T("One client may hold {limit} event streams at once on this server; close "
                  "one first.", limit=self.max_watchers_per_client),
                retryAfter=FULL_RETRY_AFTER,
            )
        if self.watchers >= self.max_watchers:
            self.refused["replica_full"] += 1
            raise ApiError.of(
                "replica_full",
                T("This server holds as many event streams as it can; try again shortly."),
                retryAfter=FULL_RETRY_AFTER,
            )
        self._per_client[client] = held + 1
        self.watchers += 1
        return Lease(self, client)

    def _release(self, client: str) -> None:
        self.watchers -= 1
        left = self._per_client.get(client, 1) - 1
        if left > 0:
            self._per_client[client] = left
        else:
            self._per_client.pop(client, None)

    @staticmethod
    def client_key(*, token: str | None = None, match_id: str = "", seat: int | None = None,
                   address: str | None = None) -> str:
        """Whom the per-client cap counts: a credential where there is one (a token, by its
        digest; a seat authenticated otherwise, e.g. by a stream ticket), else an address."""
        if token is not None:
            return "token:" + hashlib.blake2b(token.encode(), digest_size=12).hexdigest()
        if seat is not None:
            return f"seat:{match_id}:{seat}"
        return f"address:{address or 'unknown'}"

    # -- shutdown --------------------------------------------------------------------------

    @property
    def stopping(self) -> bool:
        return self._stopping is not None and self._stopping.is_set()

    async def stopped(self) -> None:
        """Return once the replica is stopping (``shutdown``): for streams that do not go
        through ``updates`` (the player feed)."""
        if self._stopping is None:
            self._stopping = asyncio.Event()
        await self._stopping.wait()

    def shutdown(self) -> None:
        """Every stream ends at its next step with ``Shutdown``; new ones are refused."""
        if self._stopping is None:
            self._stopping = asyncio.Event()
        self._stopping.set()
        for topic in list(self._topics.values()):
            topic.wake()

    @staticmethod
    def reconnect_delay_ms(base_ms: int = 1000, spread_ms: int = 9000) -> int:
        """A jittered reconnection delay, so that the streams of a stopping replica do not
        all arrive at the next one in the same instant."""
        return base_ms + random.randrange(spread_ms + 1)

    # -- versions --------------------------------------------------------------------------

    @property
    def topics(self) -> int:
        return len(self._topics)

    async def updates(self, match_id: str, after: int) -> AsyncGenerator[int, None]:
        """The newest version of the match each time it passes ``after`` (then the last one
        yielded), increasing; one store watch serves every local caller. Raises what the
        store's watch raises (``MatchNotFound`` at the start, ``StoreUnavailable``); ends
        when the match disappears; raises ``Shutdown`` when the replica stops."""
        topic = self._topics.get(match_id)
        if topic is None:
            topic = self._topics[match_id] = _Topic(match_id)
            topic.task = asyncio.create_task(self._run(topic))
        topic.watchers += 1
        try:
            cursor = after
            while True:
                if self.stopping:
                    raise Shutdown
                if topic.latest > cursor:
                    cursor = topic.latest
                    yield cursor
                    continue
                if topic.error is not None:
                    raise topic.error
                if topic.ended:
                    return
                await asyncio.shield(topic.changed)
        finally:
            topic.watchers -= 1
            if topic.watchers == 0 and self._topics.get(match_id) is topic:
                del self._topics[match_id]
                if topic.task is not None:
                    topic.task.cancel()

    async def _run(self, topic: _Topic) -> None:
        """The topic's one store watch: every version it yields wakes the watchers. A
        ``StoreUnavailable`` restarts it (backoff, from the last version seen); only one
        lasting ``outage_seconds`` reaches the watchers (see the module docstring)."""
        loop = asyncio.get_running_loop()
        failing_since: float | None = None
        delay = self.retry_base
        try:
            while True:
                started = loop.time()
                yielded = False
                watch = self.store.watch(topic.match_id, max(topic.latest, 0))
                try:
                    async for version in watch:
                        yielded = True
                        failing_since, delay = None, self.retry_base
                        if version > topic.latest:
                            topic.latest = version
                            self.wakeups += 1
                            topic.wake()
                    topic.ended = True
                    return
                except StoreUnavailable as exc:
                    now = loop.time()
                    if yielded or now - started >= self.outage_seconds:
                        failing_since, delay = None, self.retry_base  # it had worked
                    if failing_since is None:
                        failing_since = started
                    if now - failing_since >= self.outage_seconds:
                        log.warning("watch of match %s failed for %.0f s; ending its %d "
                                    "streams: %s", topic.match_id, now - failing_since,
                                    topic.watchers, exc)
                        topic.error = exc  # reaches every watcher of the topic
                        return
                    self.watch_retries += 1
                    log.debug("watch of match %s failed (%s); again in %.2f s",
                              topic.match_id, exc, delay)
                finally:
                    with contextlib.suppress(Exception):
                        await watch.aclose()
                await asyncio.sleep(delay * random.uniform(0.5, 1.0))
                delay = min(delay * 2, self.retry_cap)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # MatchNotFound, a bug: reaches every watcher of the topic
            topic.error = exc
        finally:
            if self._topics.get(topic.match_id) is topic and (topic.error or topic.ended):
                del self._topics[topic.match_id]  # the next watcher starts a fresh watch
            topic.wake()
