"""Applying rate limits and quotas (``service.limits``) to HTTP and WebSocket requests.

``RateLimits`` (ASGI middleware) charges every request to one budget, the one its operation
declares (``service.api.operations``: ``create`` for ``createMatch``, ``createPlayer``,
``enqueue``; ``stream`` for the event streams; ``Budgets``), else ``act`` for a write and
``read`` for anything else (``/graphql`` included); a WebSocket to ``stream``; per client.
A client is a credential only once this replica saw it
verified as a client of its own (``service.identity.checked``: an app key, an app's user's
JWT, a seat token of a match an app key created; ``service.limits.verified``); every other
request -- no credential, one not checked yet, one anyone may mint for nothing (a guest's
player token, a seat token of an anonymous or a guest's match, a spectator token), a made-up
one -- is charged to its address (behind ``--trusted-proxies`` only the forwarded one).
Answers carry ``RateLimit-Policy`` and ``RateLimit`` (IETF httpapi RateLimit draft); past the
budget: 429 ``rate_limited`` with ``Retry-After``. A credential the service refuses (401) is
charged to the sender's address once more, and an address that spent a budget on refused
credentials is refused before its next credential is checked.

GraphQL's ``createMatch`` and ``act`` are charged to ``create`` and ``act`` as well
(``charge``), like their REST twins, under the client the middleware chose. ``creation_quota``
counts a new match against its creator's quota of unfinished matches; ``stream_client`` is
whom the live hub's per-client cap counts.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Awaitable, Callable, Iterable, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.errors import ApiError
from service.i18n import T
from service.identity import checked
from service.identity.callers import Caller, Credential, credential_key
from service.limits import (
    ActiveMatchQuota,
    Creator,
    Decision,
    LimitSettings,
    RateLimiter,
    client_key,
)
from service.limits.verified import VerifiedClients
from service.live import LiveHub
from service.matches.records import MatchRecord
from service.queue.records import Seat
from service.store import DocStore, MatchStore
from service.tables import WaitingTablesCap

from .languages import lang_of_scope
from .proxies import client_address

_WRITES = ("POST", "PUT", "PATCH", "DELETE")
WRITE_BUDGET = "act"
"""The budget of a write no operation declares."""
READ_BUDGET = "read"
"""The budget of any other request no operation declares."""
GRAPHQL = "/graphql"
GUEST_TOKEN = "skp_"
"""A guest's player token (``service.identity.auth``): minted by anyone, so counted per
address as well."""
GUESTS = "/v1/players"
REFUSED_CREDENTIAL = "bad:"
"""Key prefix of an address's refused credentials, per budget."""
CLIENT = "skyline.client"
"""The scope entry naming the client the middleware charged (for ``charge``)."""


@dataclass
class Limits:
    """A server's rate limiter and creation quota (None of either: switched off)."""

    rates: RateLimiter | None
    quota: ActiveMatchQuota | None
    verified: VerifiedClients = field(default_factory=VerifiedClients)
    """Credentials seen verified as clients of their own (charged to their own budgets)."""
    tables: WaitingTablesCap | None = None
    """Public tables waiting in the lobby per creator (issue 31 item 9; None: no cap)."""

    async def aclose(self) -> None:
        if self.rates is not None:
            await self.rates.aclose()


def build_limits(settings: LimitSettings, store: MatchStore, *, uri: str,
                 key_prefix: str) -> Limits:
    """The limits ``settings`` ask for, counted in ``uri`` (``limits.storage_uri``)."""
    if not settings.enabled:
        return Limits(None, None)

    async def unfinished(match_ids: Sequence[str]) -> list[bool | None]:
        loaded = await store.load_many(match_ids)
        records = [None if item is None else MatchRecord.decode(item[1]) for item in loaded]
        return [None if r is None else not (r.finished or r.cancelled) for r in records]

    async def waiting(match_ids: Sequence[str]) -> list[bool | None]:
        loaded = await store.load_many(match_ids)
        records = [None if item is None else MatchRecord.decode(item[1]) for item in loaded]
        return [None if r is None else r.waiting and r.visibility == "public"
                for r in records]

    tables = None
    if settings.waiting_tables > 0 or settings.waiting_tables_address > 0:
        tables = WaitingTablesCap(cast(DocStore, store), waiting,
                                  per_player=settings.waiting_tables,
                                  per_address=settings.waiting_tables_address)
    return Limits(
        RateLimiter(uri, settings.policies, key_prefix=key_prefix),
        ActiveMatchQuota(cast(DocStore, store), settings.quotas, unfinished),
        tables=tables,
    )


class Charged(Protocol):
    """What budgets read of an operation (``service.api.operations.Operation``)."""

    @property
    def method(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def budget(self) -> str: ...


@dataclass(frozen=True)
class Budgets:
    """Which budget each request is charged to, from the operation table: per method (a
    method that writes nothing is looked up as GET), the paths whose operation's budget is
    not the method's default (``act`` for a write, ``read`` otherwise)."""

    literal: dict[tuple[str, str], str]
    patterns: dict[str, list[tuple[re.Pattern[str], str]]]

    @classmethod
    def of(cls, operations: Iterable[Charged]) -> Budgets:
        """From each operation's method, OpenAPI path and budget."""
        literal: dict[tuple[str, str], str] = {}
        patterns: dict[str, list[tuple[re.Pattern[str], str]]] = {}
        for method, path, budget in ((op.method, op.path, op.budget) for op in operations):
            if budget == _default(method, path):
                continue
            if "{" not in path:
                literal[method, path] = budget
            else:
                pattern = re.compile("^" + re.sub(r"\{[^}]+\}", "[^/]+", path) + "$")
                patterns.setdefault(method, []).append((pattern, budget))
        return cls(literal, patterns)

    def of_request(self, method: str, path: str) -> str:
        method = method if method in _WRITES else "GET"
        found = self.literal.get((method, path))
        if found is not None:
            return found
        for pattern, budget in self.patterns.get(method, ()):
            if pattern.match(path):
                return budget
        return _default(method, path)


def _default(method: str, path: str) -> str:
    return WRITE_BUDGET if method in _WRITES and path != GRAPHQL else READ_BUDGET


@functools.cache
def table_budgets() -> Budgets:
    """The budgets of the operation table (``service.api.operations``)."""
    from .operations import OPERATIONS

    return Budgets.of(OPERATIONS)


def budget_of(scope: Scope, budgets: Budgets | None = None) -> str | None:
    """The budget a request is charged to (None: not charged, a CORS preflight)."""
    if scope["type"] == "websocket":
        return "stream"
    method, path = scope["method"], scope["path"]
    if method == "OPTIONS":
        return None
    return (budgets or table_budgets()).of_request(method, path)


def _bearer(scope: Scope) -> str | None:
    """The raw bearer credential of the request (not checked here), if any."""
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").strip().partition(" ")
            token = token.strip()
            return token if scheme.lower() == "bearer" and token else None
    return None


def rate_limited(decision: Decision) -> ApiError:
    return ApiError.of(
        "rate_limited",
        T("Too many {budget} requests: at most {quota} per {window} s. Retry after "
          "{seconds} s.", budget=decision.policy.name, quota=decision.policy.quota,
          window=decision.policy.window, seconds=decision.reset),
        retryAfter=decision.reset,
    )


async def charge(limits: Limits | None, scope: MutableMapping[str, Any], budget: str) -> None:
    """Charge one request of ``scope``'s client to ``budget``; 429 ``rate_limited`` past it
    (GraphQL's ``createMatch`` and ``act``)."""
    if limits is None or limits.rates is None:
        return
    client = scope.get(CLIENT) or client_key(None, client_address(scope))
    decision = await limits.rates.hit(budget, client)
    if decision is not None and not decision.allowed:
        raise rate_limited(decision)


def creator_of(credential: Credential, scope: MutableMapping[str, Any]) -> Creator:
    """Whose quota a creation counts against: the app (its key), the player, else the
    address (a seat token creates nothing of its own)."""
    if isinstance(credential, Caller):
        if credential.player is None:
            return Creator("app", credential.app)
        return Creator("player", credential.player)
    return Creator("address", client_address(scope))


def creators_of(credential: Credential, scope: MutableMapping[str, Any]) -> list[Creator]:
    """Every quota a creation counts against: its creator's, and for a guest (minted by
    anyone for nothing) its address's as well (issue 31, item 6)."""
    creator = creator_of(credential, scope)
    if isinstance(credential, Caller) and credential.anonymous:
        return [creator, Creator("address", client_address(scope))]
    return [creator]


def creation_quota(
    limits: Limits | None, credential: Credential, scope: MutableMapping[str, Any]
) -> Callable[[str, MatchRecord], Awaitable[None]] | None:
    """The ``before_write`` of a creation that counts it against its creators' quotas
    (429 ``quota_exceeded``) and, for a public table that waits for players in the lobby,
    against the creator's cap of those (429 ``too_many_waiting_tables``: per player, and
    for a guest also per address; an app key is not capped); None when limits are off.
    All are taken before anything is written, and a refusal gives back what was taken: a
    refused creation leaves no entry."""
    if limits is None or (limits.quota is None and limits.tables is None):
        return None
    quota, tables = limits.quota, limits.tables
    creators = creators_of(credential, scope) if quota is not None else []
    listed: list[tuple[str, str]] = []
    if isinstance(credential, Caller) and credential.player is not None:
        listed.append(("player", credential.player))
        if (_bearer(scope) or "").startswith(GUEST_TOKEN):  # minted anonymously
            listed.append(("address", client_address(scope)))

    async def take(match_id: str, record: MatchRecord) -> None:
        taken: list[Creator] = []
        try:
            if quota is not None:
                for creator in creators:
                    await quota.take(creator, match_id)
                    taken.append(creator)
            if tables is not None and record.waiting and record.visibility == "public":
                for kind, who in listed:
                    await tables.take(kind, who, match_id)
        except BaseException:
            if quota is not None:
                for creator in taken:
                    await quota.release(creator, match_id)
            raise

    return take


async def queue_quota(limits: Limits | None, credential: Credential,
                      scope: MutableMapping[str, Any]) -> str | None:
    """Before quick match: 429 ``quota_exceeded`` when the caller (a guest: or its address)
    already holds its cap of unfinished matches (the match formed is counted then,
    ``formed_quota``). Answers the address a guest's match is to count against (the
    ``quota`` of ``QueueService.enqueue``), None for others or with quotas off."""
    if limits is None or limits.quota is None:
        return None
    address = None
    for creator in creators_of(credential, scope):
        await limits.quota.check(creator)
        if creator.kind == "address":
            address = creator.id
    return address


def formed_quota(limits: Limits) -> Callable[[str, Sequence[Seat]], Awaitable[None]] | None:
    """Counts a quick match against each of its players' quotas as it is formed, and a
    guest's against its address's too (the address it enqueued from: ``queue_quota``),
    whoever's request formed the match."""
    quota = limits.quota
    if quota is None:
        return None
    counted = quota

    async def count(match_id: str, seats: Sequence[Seat]) -> None:
        for seat in seats:
            await counted.count(Creator("player", seat.player), match_id)
        for address in sorted({s.quota for s in seats if s.quota is not None}):
            await counted.count(Creator("address", address), match_id)

    return count


async def charge_guest(limits: Limits | None, scope: MutableMapping[str, Any]) -> None:
    """A guest created over GraphQL: the ``create`` budget and the address's ``guests``."""
    await charge(limits, scope, "create")
    if limits is None or limits.rates is None:
        return
    decision = await limits.rates.hit("guests", client_key(None, client_address(scope)))
    if decision is not None and not decision.allowed:
        raise rate_limited(decision)


def limits_of(app: Any) -> Limits | None:
    limits: Limits | None = getattr(app.state, "limits", None)
    return limits


def budgets_on(scope: MutableMapping[str, Any]) -> bool:
    """Whether the server counts budgets (not ``--rate-limits off``)."""
    app = scope.get("app")
    limits = limits_of(app) if app is not None else None
    return limits is not None and limits.rates is not None


def stream_client(scope: MutableMapping[str, Any], credential: Credential,
                  holder: checked.Checked | None, *, seat_key: str | None = None) -> str:
    """Whom the live hub's per-client stream cap counts for a stream opened with
    ``credential`` (or a ticket's seat, ``seat_key``): the credential when ``holder`` saw it
    verified as a client of its own (a player or app ``Caller`` unless a guest), else the
    sender's address -- made-up and freely minted tokens share their address's slots."""
    if not budgets_on(scope):
        # ``--rate-limits off`` (benchmarks): every credential its own slots, as before.
        key = credential_key(credential) if credential is not None else seat_key
        if key is not None:
            return LiveHub.client_key(token=key)
        return LiveHub.client_key(address=client_address(scope))
    own = checked.own_client(credential, holder, seat_key=seat_key)
    if own is not None:
        return LiveHub.client_key(token=own)
    return LiveHub.client_key(address=client_address(scope))


class RateLimits:
    """Charge each request to its budget (see the module docstring)."""

    def __init__(self, app: ASGIApp, limits: Limits, budgets: Budgets | None = None) -> None:
        self.app = app
        self.limiter = limits.rates
        self.verified = limits.verified
        self.budgets = budgets or table_budgets()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        limiter = self.limiter
        budget = budget_of(scope, self.budgets) if scope["type"] in ("http", "websocket") else None
        if limiter is None or budget is None:
            await self.app(scope, receive, send)
            return
        address = client_address(scope)
        credential = _bearer(scope)
        refused_key = REFUSED_CREDENTIAL + address
        if credential is not None:
            # Credentials refused lately from this address: no fresh budget from made-up ones.
            spent = await limiter.peek(budget, refused_key)
            if spent is not None and not spent.allowed:
                await self._refuse(scope, receive, send, spent)
                return
        verified = credential is not None and self.verified.knows(credential)
        client = client_key(credential if verified else None, address)
        scope[CLIENT] = client
        holder = checked.watch()
        decision = await limiter.hit(budget, client)
        if decision is not None and not decision.allowed:
            await self._refuse(scope, receive, send, decision)
            return
        if scope["type"] == "http" and scope["method"] == "POST" and scope["path"] == GUESTS:
            # Guests per address, whatever credential the request carries (issue 31, item 6).
            guests = await limiter.hit("guests", client_key(None, address))
            if guests is not None and not guests.allowed:
                await self._refuse(scope, receive, send, guests)
                return
        status = 0
        extra = [(k.lower().encode(), v.encode()) for k, v in decision.headers()] \
            if decision is not None else []

        async def with_headers(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", ()), *extra]
            await send(message)

        try:
            await self.app(scope, receive, with_headers if extra else send)
        finally:
            if credential is not None:
                if status == 401:
                    self.verified.forget(credential)
                    await limiter.hit(budget, refused_key)
                elif holder.own and holder.credential == credential:
                    self.verified.add(credential)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send,
                      decision: Decision) -> None:
        body = json.dumps(rate_limited(decision).to_json(lang_of_scope(scope))).encode()
        headers = [
            (b"content-type", b"application/problem+json"),
            (b"content-length", str(len(body)).encode()),
            *((k.lower().encode(), v.encode()) for k, v in decision.headers()),
        ]
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": 429, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        # A WebSocket: a 429 answer to the upgrade where the server can send one, else the
        # handshake is closed (close code 4429).
        if "websocket.http.response" in scope.get("extensions", {}):
            await send({"type": "websocket.http.response.start", "status": 429,
                        "headers": headers})
            await send({"type": "websocket.http.response.body", "body": body})
            return
        await receive()  # websocket.connect
        await send({"type": "websocket.close", "code": 4429, "reason": "rate_limited"})
