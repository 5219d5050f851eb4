"""``WebhookService``: an app's webhook endpoints (REST ``/v1/apps/me/webhooks``, GraphQL
``webhooks`` ...), the listener that turns every stored match version into messages for the
endpoints of the match's app, and one delivery attempt (``deliver``, the worker's).

Retries: an attempt that gets no 2xx is retried after ``backoff_first`` seconds, then
``backoff_factor`` times longer each time, at most ``backoff_max`` apart, each delay with
+-``jitter`` of itself at random, until ``retry_seconds`` after the event was first due (then
it is given up, and logged). An endpoint whose last ``disable_after`` attempts all failed,
over at least ``disable_seconds``, is disabled (its pending messages are dropped) until the
app enables it again.
"""

from __future__ import annotations

import asyncio
import logging
import random
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from service.errors import ApiError
from service.i18n import T
from service.identity.callers import Caller, Credential
from service.matches import MatchService
from service.matches.storage import Written
from service.players import PlayerService
from service.players.docs import Docs
from service.players.records import PlayerRecord
from service.store import DocStore

from . import payloads, signing
from .budget import GUEST_APP_DEFAULT, GUEST_DEFAULT, GuestBudget, Window
from .endpoints import MAX_ENDPOINTS, Endpoint, Endpoints, Health, new_endpoint_id
from .models import (
    DELIVERIES_DEFAULT,
    DELIVERIES_MAX,
    EVENT_KINDS,
    WARN_DEFAULT_SECONDS,
    WARN_MAX_SECONDS,
    WARN_MIN_SECONDS,
    CreateWebhookRequest,
    DeliveriesPage,
    DeliveryAttempt,
    PingQueued,
    UpdateWebhookRequest,
    Webhook,
    WebhookCreated,
    WebhookList,
    WebhookSecret,
)
from .outbox import LoggedAttempt, Message, Outbox, message_id
from .sender import Outcome, Sender
from .ssrf import UrlPolicy, parse_networks

log = logging.getLogger("skyline.webhooks")


@dataclass(frozen=True)
class WebhookSettings:
    """The operator's webhook settings (``--webhook-*`` flags, docs/clocks-and-notifications.md)."""

    allow_http: bool = False
    allow_networks: tuple[str, ...] = ()
    """CIDR ranges deliveries may reach although they are internal (tests: loopback)."""
    connect_timeout: float = 5.0
    read_timeout: float = 10.0
    retry_seconds: float = 24 * 3600.0
    backoff_first: float = 5.0
    backoff_factor: float = 3.0
    backoff_max: float = 4 * 3600.0
    jitter: float = 0.2
    disable_after: int = 20
    disable_seconds: float = 6 * 3600.0
    lease_seconds: float = 60.0
    """A claimed delivery goes back to the schedule after this long (a worker that died):
    more than the connect and read timeouts together."""
    max_endpoints: int = MAX_ENDPOINTS
    guest_budget: Window | None = GUEST_DEFAULT
    """Deliveries about one guest per window (``--webhook-guest-budget``; None: no budget).
    ``budget.py``, docs/security.md."""
    guest_app_budget: Window | None = GUEST_APP_DEFAULT
    """Deliveries about all of an app's guests per window (``--webhook-guest-app-budget``)."""
    budget_uri: str = "async+memory://"
    """Where the budgets are counted (``limits`` storage URI: the store's Redis)."""
    budget_prefix: str = ""

    attempt_timeout: float | None = None
    """The most one attempt may take in all; None: the connect and read timeouts together."""

    @property
    def attempt_seconds(self) -> float:
        """The whole of one attempt -- resolving, connecting, sending, the answer -- ends
        within this (issue 31: a receiver trickling its answer a byte at a time never let the
        read timeout, which is per read, fire): ``attempt_timeout``, by default the connect
        and read timeouts together."""
        if self.attempt_timeout is not None:
            return self.attempt_timeout
        return self.connect_timeout + self.read_timeout

    def backoff(self, attempt: int) -> float:
        """Seconds before retrying after failed attempt number ``attempt`` (1, 2, ...)."""
        delay = min(self.backoff_first * self.backoff_factor ** (attempt - 1),
                    self.backoff_max)
        return max(0.0, delay * (1 + random.uniform(-self.jitter, self.jitter)))


def _ms(value: int | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(value / 1000, UTC)


def _out(endpoint: Endpoint, health: Health) -> Webhook:
    return Webhook(id=endpoint.id, url=endpoint.url, events=list(endpoint.events),
                   warn_before_seconds=endpoint.warn_before, enabled=endpoint.enabled,
                   disabled_at=_ms(endpoint.disabled_at), failures=health.failures,
                   created_at=datetime.fromtimestamp(endpoint.created / 1000, UTC))


def _reset(_: Health) -> Health:
    return Health()


def not_found() -> ApiError:
    return ApiError.of("webhook_not_found", "No webhook with that id in this app.")


def _app_of(caller: Credential) -> str:
    if not isinstance(caller, Caller) or not caller.is_app:
        raise ApiError.of("unauthorized", "This needs the app's key (ska_…).")
    return caller.app


def _check_events(kinds: list[str]) -> tuple[str, ...]:
    unknown = [k for k in kinds if k not in EVENT_KINDS]
    if unknown:
        raise ApiError.of("bad_webhook", T("Unknown event kind {kind}; known: {known}.",
                                           kind=repr(unknown[0][:40]),
                                           known=", ".join(EVENT_KINDS)))
    if not kinds:
        raise ApiError.of("bad_webhook", "Name at least one event kind.")
    return tuple(dict.fromkeys(kinds))


def _check_warn(seconds: int) -> int:
    if not WARN_MIN_SECONDS <= seconds <= WARN_MAX_SECONDS:
        raise ApiError.of("bad_webhook", T(
            "warnBeforeSeconds must be {low} to {high} (7 days).",
            low=WARN_MIN_SECONDS, high=WARN_MAX_SECONDS))
    return seconds


class WebhookService:
    def __init__(self, store: DocStore, players: PlayerService, matches: MatchService,
                 settings: WebhookSettings | None = None, *,
                 clock: Callable[[], float] = time.time) -> None:
        self.settings = settings or WebhookSettings()
        self.store = store
        self.players = players
        self.matches = matches
        self.clock = clock
        self.endpoints = Endpoints(Docs(store))
        self.outbox = Outbox(store)
        self.policy = UrlPolicy(allow_http=self.settings.allow_http,
                                allow_networks=parse_networks(self.settings.allow_networks))
        self._sender: Sender | None = None
        self.budget: GuestBudget | None = None
        if self.settings.guest_budget is not None or self.settings.guest_app_budget is not None:
            self.budget = GuestBudget(self.settings.budget_uri,
                                      per_guest=self.settings.guest_budget,
                                      per_app=self.settings.guest_app_budget,
                                      key_prefix=self.settings.budget_prefix)
        self.enqueued = 0
        """Messages this replica stored (tests, metrics)."""
        self.queued = asyncio.Event()
        """Set when this replica stores a message: a worker here looks at once."""
        matches.subscribe(self.on_write)

    @property
    def sender(self) -> Sender:
        if self._sender is None:
            self._sender = Sender(self.policy, connect_timeout=self.settings.connect_timeout,
                                  read_timeout=self.settings.read_timeout,
                                  deadline=self.settings.attempt_seconds)
        return self._sender

    async def aclose(self) -> None:
        if self._sender is not None:
            await self._sender.aclose()
            self._sender = None
        if self.budget is not None:
            await self.budget.aclose()

    # -- endpoints ------------------------------------------------------------------------

    async def _own(self, caller: Credential, endpoint_id: str) -> Endpoint:
        app = _app_of(caller)
        found = await self.endpoints.get(app, endpoint_id)
        if found is None:
            raise not_found()
        return found

    async def _answer(self, endpoint: Endpoint) -> Webhook:
        return _out(endpoint, await self.endpoints.health(endpoint.id))

    async def all(self, caller: Credential) -> WebhookList:
        app = _app_of(caller)
        found = await self.endpoints.all(app)
        healths = await self.endpoints.healths([e.id for e in found])
        return WebhookList(items=[_out(e, h) for e, h in zip(found, healths, strict=True)])

    async def get(self, caller: Credential, endpoint_id: str) -> Webhook:
        return await self._answer(await self._own(caller, endpoint_id))

    async def create(self, caller: Credential, req: CreateWebhookRequest) -> WebhookCreated:
        app = _app_of(caller)
        kinds = _check_events(req.events)
        warn = _check_warn(req.warn_before_seconds if req.warn_before_seconds is not None
                           else WARN_DEFAULT_SECONDS)
        await self.policy.check(req.url, resolve_required=False)
        endpoint = Endpoint(id=new_endpoint_id(), app=app, url=req.url, events=kinds,
                            warn_before=warn, secret=signing.new_secret(),
                            created=int(self.clock() * 1000))
        limit = self.settings.max_endpoints

        def add(current: list[Endpoint]) -> list[Endpoint]:
            if len(current) >= limit:
                raise ApiError.of("bad_webhook", T("An app has at most {limit} webhooks; "
                                                   "delete one first.", limit=limit))
            return [*current, endpoint]

        await self.endpoints.change(app, add)
        out = _out(endpoint, Health())
        return WebhookCreated(**out.model_dump(), secret=endpoint.secret)

    async def _change(self, caller: Credential, endpoint_id: str,
                      change: Callable[[Endpoint], Endpoint]) -> Endpoint:
        app = _app_of(caller)
        changed: list[Endpoint] = []

        def apply(current: list[Endpoint]) -> list[Endpoint]:
            changed.clear()
            out = []
            for endpoint in current:
                if endpoint.id == endpoint_id:
                    endpoint = change(endpoint)
                    changed.append(endpoint)
                out.append(endpoint)
            if not changed:
                raise not_found()
            return out

        await self.endpoints.change(app, apply)
        return changed[0]

    async def update(self, caller: Credential, endpoint_id: str,
                     req: UpdateWebhookRequest) -> Webhook:
        await self._own(caller, endpoint_id)
        changes: dict[str, object] = {}
        if req.events is not None:
            changes["events"] = _check_events(req.events)
        if req.warn_before_seconds is not None:
            changes["warn_before"] = _check_warn(req.warn_before_seconds)
        if req.url is not None:
            await self.policy.check(req.url, resolve_required=False)
            changes["url"] = req.url
        return await self._answer(await self._change(caller, endpoint_id,
                                                     lambda e: e.but(**changes)))

    async def delete(self, caller: Credential, endpoint_id: str) -> Webhook:
        """The endpoint goes at once; its pending deliveries are dropped as they come due."""
        app = _app_of(caller)
        gone: list[Endpoint] = []

        def remove(current: list[Endpoint]) -> list[Endpoint]:
            gone[:] = [e for e in current if e.id == endpoint_id]
            if not gone:
                raise not_found()
            return [e for e in current if e.id != endpoint_id]

        await self.endpoints.change(app, remove)
        return _out(gone[0], await self.endpoints.health(endpoint_id))

    async def enable(self, caller: Credential, endpoint_id: str) -> Webhook:
        """Enabled again, its failure run forgotten."""
        await self._own(caller, endpoint_id)
        await self.endpoints.set_health(endpoint_id, _reset)
        return await self._answer(await self._change(caller, endpoint_id,
                                                     lambda e: e.but(disabled_at=None)))

    async def rotate_secret(self, caller: Credential, endpoint_id: str) -> WebhookSecret:
        secret = signing.new_secret()
        await self._own(caller, endpoint_id)
        changed = await self._change(caller, endpoint_id, lambda e: e.but(secret=secret))
        return WebhookSecret(id=changed.id, secret=secret)

    async def ping(self, caller: Credential, endpoint_id: str) -> PingQueued:
        endpoint = await self._own(caller, endpoint_id)
        now = await self.outbox.now_ms()
        msg = message_id(endpoint.app, endpoint.id, "ping", now, secrets.token_hex(8))
        await self.outbox.enqueue(payloads.ping(endpoint.app, endpoint, msg, now))
        self.queued.set()
        return PingQueued(webhook_id=endpoint.id, event_id=msg)

    async def pending(self, app_id: str) -> int:
        """Deliveries of the app's endpoints waiting (or being attempted): tests, tools."""
        return await self.outbox.pending([e.id for e in await self.endpoints.all(app_id)])

    async def deliveries(self, caller: Credential, endpoint_id: str, cursor: str | None,
                         limit: int | None) -> DeliveriesPage:
        endpoint = await self._own(caller, endpoint_id)
        size = DELIVERIES_DEFAULT if limit is None else limit
        if not 1 <= size <= DELIVERIES_MAX:
            raise ApiError.of("malformed", T("limit must be 1 to {limit}.",
                                             limit=DELIVERIES_MAX))
        items, after = await self.outbox.read_log(endpoint.id, cursor, size)
        return DeliveriesPage(items=[DeliveryAttempt(
            event_id=i.event_id, type=i.type, attempt=i.attempt, at=_ms(i.at),
            status=i.status, error=i.error, duration_ms=i.duration_ms, outcome=i.outcome,
            next_retry_at=_ms(i.next_at)) for i in items], next_cursor=after)

    # -- events ---------------------------------------------------------------------------

    async def on_write(self, written: Written) -> None:
        """A match version landed: store and schedule its events for the endpoints of the
        match's app (nothing to do, and no store read within ``CACHE_SECONDS``, for an app
        without endpoints)."""
        app = written.after.app
        if not app:
            return
        endpoints = [e for e in await self.endpoints.cached(app) if e.enabled]
        if not endpoints:
            return
        wanted = payloads.players_of(written)
        found = await self.players.directory.get_many(wanted)
        records = {r.id: r for r in found if r is not None}
        now = await self.outbox.now_ms()
        messages = payloads.messages(written, endpoints, records, now)
        if self.budget is not None:
            messages = await self._within_budget(app, messages, records)
        queued = await asyncio.gather(*(self.outbox.enqueue(m) for m in messages))
        self.enqueued += sum(queued)
        if any(queued):
            self.queued.set()

    async def _within_budget(self, app: str, messages: list[Message],
                             records: dict[str, PlayerRecord]) -> list[Message]:
        """``messages`` less those about guests over their budgets (``budget.py``): an
        app's users (signed in with its JWTs: a ``sub``) are never budgeted."""
        assert self.budget is not None
        about: dict[str, list[Message]] = {}
        for message in messages:
            about.setdefault(payloads.player_of(message), []).append(message)
        kept: list[Message] = []
        for player, theirs in about.items():
            record = records.get(player)
            user = record is not None and record.sub is not None
            if user or await self.budget.admit(app, player, len(theirs)):
                kept.extend(theirs)
        return kept

    # -- delivery (the worker's) ----------------------------------------------------------

    async def deliver(self, endpoint_id: str, msg_id: str, claimed_ms: int) -> str:
        """One attempt at a message claimed from ``endpoint_id``'s lane; what became of it:
        ``delivered``, ``retrying``, ``failed``, ``stale``, ``dropped``, ``busy`` (another
        worker has it), ``gone`` (nothing stored under it)."""
        loaded = await self.outbox.load(msg_id)
        if loaded is None:
            await self.outbox.settle("", endpoint_id, msg_id, claimed_ms, None)
            return "gone"
        version, message = loaded
        if message.done is not None:
            await self.outbox.settle(message.app, endpoint_id, msg_id, claimed_ms, None)
            return message.done
        endpoint = await self.endpoints.get(message.app, message.endpoint)
        if endpoint is None or not endpoint.enabled:
            return await self._finish(version, message, claimed_ms, "dropped")
        if message.check is not None and not await self._still_true(message):
            return await self._finish(version, message, claimed_ms, "stale")
        attempt = message.but(attempts=message.attempts + 1)
        if not await self.outbox.save(version, attempt):
            return "busy"
        version += 1
        now = self.clock()
        payload = message.body.encode()
        outcome = await self.sender.post(
            endpoint.url, signing.headers(endpoint.secret, msg_id, payload, now), payload)
        store_now = await self.outbox.now_ms()
        if outcome.ok:
            await self._log(endpoint, attempt, outcome, store_now, "delivered", None)
            await self._finish(version, attempt, claimed_ms, "delivered")
            health = await self.endpoints.health(endpoint.id)
            if health.failures:
                await self.endpoints.set_health(endpoint.id, _reset)
            return "delivered"
        health = await self.endpoints.set_health(endpoint.id, lambda h: Health(
            h.failures + 1, h.since if h.since is not None else store_now))
        settings = self.settings
        if (health.failures >= settings.disable_after and health.since is not None
                and store_now - health.since >= settings.disable_seconds * 1000):
            await self._disable(endpoint, store_now, health)
            await self._log(endpoint, attempt, outcome, store_now, "failed", None)
            return await self._finish(version, attempt, claimed_ms, "dropped")
        next_at = store_now + int(settings.backoff(attempt.attempts) * 1000)
        if next_at - message.due > settings.retry_seconds * 1000:
            log.warning("webhook %s to %s (%s, %d attempts) given up: last %s %s",
                        msg_id, endpoint.id, message.type, attempt.attempts,
                        outcome.status, outcome.error)
            await self._log(endpoint, attempt, outcome, store_now, "failed", None)
            return await self._finish(version, attempt, claimed_ms, "failed")
        await self._log(endpoint, attempt, outcome, store_now, "retrying", next_at)
        await self.outbox.settle(message.app, message.endpoint, msg_id, claimed_ms, next_at)
        return "retrying"

    async def _still_true(self, message: Message) -> bool:
        """A ``timeout_soon`` warning: the seat still runs the same clock, not yet out."""
        check = message.check
        assert check is not None
        loaded = await self.matches.load_records([check.match_id])
        if not loaded or loaded[0] is None:
            return False
        now = await self.outbox.now_ms()
        return (payloads.deadlines(loaded[0][1]).get(check.seat) == check.deadline
                and now < check.deadline)

    async def _finish(self, version: int, message: Message, claimed_ms: int,
                      done: str) -> str:
        await self.outbox.save(version, message.but(done=done))
        await self.outbox.settle(message.app, message.endpoint, message.id, claimed_ms, None)
        return done

    async def _disable(self, endpoint: Endpoint, now: int, health: Health) -> None:
        log.warning("webhook endpoint %s of %s disabled after %d failed attempts in a row",
                    endpoint.id, endpoint.app, health.failures)

        def disable(current: list[Endpoint]) -> list[Endpoint]:
            return [e.but(disabled_at=now) if e.id == endpoint.id and e.enabled else e
                    for e in current]

        await self.endpoints.change(endpoint.app, disable)

    async def _log(self, endpoint: Endpoint, message: Message, outcome: Outcome, now: int,
                   result: str, next_at: int | None) -> None:
        await self.outbox.log(endpoint.id, LoggedAttempt(
            event_id=message.id, type=message.type, attempt=message.attempts, at=now,
            status=outcome.status, error=outcome.error, duration_ms=outcome.duration_ms,
            outcome=result, next_at=next_at))
