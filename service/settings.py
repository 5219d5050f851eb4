"""Every setting of every command, declared once: ``Settings``, one field per setting, one
default each, read from ``SKYLINE_<FIELD>`` and given as ``--<field>`` on the command line.

``skyline serve``, ``worker``, ``show`` and ``verify`` all build one ``Settings`` (the CLI's
options take their defaults from it: a flag wins over the environment, the environment over
the default) and hand it to ``service.composition.build_services``. Where a domain module
owns a default (``DEFAULT_WAITING_TTL``, ``DEFAULT_POLICIES`` ...) the field refers to it;
nothing here writes it again. Text from the environment or the command line is read by the
same parsers (``parse_*`` below), so ``SKYLINE_GUEST_TTL=30d`` and ``--guest-ttl 30d`` agree.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import BeforeValidator, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from service.bots import Budget
from service.clocks import MIN_MOVE_SECONDS
from service.limits import (
    BUDGETS,
    DEFAULT_POLICIES,
    DEFAULT_QUOTAS,
    LimitSettings,
    Quotas,
    parse_policy,
    storage_uri,
)
from service.limits import Policy as RatePolicy
from service.limits.policies import DEFAULT_WAITING_TABLES, DEFAULT_WAITING_TABLES_ADDRESS
from service.live import (
    DEFAULT_MAX_WATCHERS,
    DEFAULT_MAX_WATCHERS_PER_CLIENT,
    DEFAULT_RESUME_WINDOW,
)
from service.live.replays import DEFAULT_RATE as DEFAULT_REPLAY_RATE
from service.matches.seat_tickets import DEFAULT_TICKET_SECONDS
from service.matches.storage import DEFAULT_WAITING_TTL
from service.players.expiry import DEFAULT_GUEST_TTL
from service.players.service import DEFAULT_AUDIENCE
from service.queue.rules import TICKET_SECONDS
from service.store import DEFAULT_DATA_DIR, DEFAULT_MAX_CONNECTIONS
from service.store.base import DUE_RECLAIM_IDLE_MS
from service.webhooks import WebhookSettings
from service.webhooks.budget import GUEST_APP_DEFAULT, GUEST_DEFAULT, Window, parse_window
from service.webhooks.ssrf import parse_networks
from service.workers.bots import DEFAULT_CONCURRENCY
from service.workers.heartbeat import BEAT_SECONDS, DEFAULT_STALE_SECONDS

ENV_PREFIX = "SKYLINE_"
WEBHOOK_DEFAULTS = WebhookSettings()
"""The webhook defaults (``service.webhooks``), which the ``webhook_*`` fields start from."""
HOUR = 3600.0
DAY = 86400


# -- parsers: text (an environment variable, a flag) -> value; ValueError when it is not ------
def parse_int(value: str) -> int:
    """An integer in ASCII digits (``int`` also reads other scripts' digits: ``"٣"`` is 3)."""
    text = value.strip()
    if not (text.isascii() and text.lstrip("+-").isdigit()):
        raise ValueError(f"not an integer in ASCII digits: {value!r}")
    return int(text)


def parse_positive(value: str) -> int:
    number = parse_int(value)
    if number <= 0:
        raise ValueError("must be a positive integer")
    return number


def parse_count(value: str) -> int:
    number = parse_int(value)
    if number < 0:
        raise ValueError("must be 0 or a positive integer")
    return number


def parse_seconds(value: str) -> float:
    if not value.isascii():
        raise ValueError(f"not a number in ASCII digits: {value!r}")
    number = float(value)
    if not number >= 0 or number == float("inf"):
        raise ValueError("must be a non-negative number of seconds")
    return number


def parse_ttl(value: str) -> int | None:
    """A TTL in seconds; ``0``, ``none`` or ``never`` keep matches forever (None)."""
    if value.strip().lower() in {"", "0", "none", "never"}:
        return None
    seconds = parse_int(value)
    if seconds < 0:
        raise ValueError("a TTL cannot be negative")
    return seconds


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": DAY}


def parse_guest_ttl(value: str) -> float:
    """Seconds, or a number with a unit (``30d``, ``12h``, ``90m``, ``45s``); ``0``,
    ``none`` or ``never``: guests never expire (0)."""
    raw = value.strip().lower()
    if raw in {"", "0", "none", "never"}:
        return 0.0
    unit = _UNITS.get(raw[-1:], 0)
    number = parse_int(raw[:-1] if unit else raw)
    if number < 0:
        raise ValueError("a TTL cannot be negative")
    return float(number * (unit or 1))


def parse_on_off(value: str) -> bool:
    word = value.strip().lower()
    if word in {"on", "1", "true", "yes"}:
        return True
    if word in {"off", "0", "false", "no", ""}:
        return False
    raise ValueError("must be on or off")


def parse_list(value: str) -> tuple[str, ...]:
    """``"a, b"`` -> ``("a", "b")``."""
    return tuple(item.strip() for item in value.split(",") if item.strip())


def parse_trusted(raw: str) -> tuple[str, ...]:
    """``"10.0.0.0/8, 127.0.0.1"`` -> the entries; a malformed address is a ValueError."""
    entries = parse_list(raw)
    for entry in entries:
        if entry != "*" and not entry.startswith("/"):
            ipaddress.ip_network(entry, strict=False)  # raises ValueError
    return entries


def parse_networks_text(value: str) -> tuple[str, ...]:
    return tuple(str(network) for network in parse_networks(value))


def parse_budget(value: str) -> Budget:
    if not value.isascii():
        raise ValueError(f"not a budget in ASCII digits: {value!r}")
    return Budget.parse(value)


def parse_rate(budget: str) -> Callable[[str], RatePolicy]:
    def parse(value: str) -> RatePolicy:
        return parse_policy(budget, value)

    return parse


def parse_optional_text(value: str) -> str | None:
    return value.strip() or None


def _text(parse: Callable[[str], Any]) -> BeforeValidator:
    """Validates with ``parse`` what comes as text (the environment, a test's string);
    anything else is a value already."""
    return BeforeValidator(lambda value: parse(value) if isinstance(value, str) else value)


def _zero_none(value: Any) -> Any:
    return None if value == 0 else value


Seconds = Annotated[float, _text(parse_seconds)]
Positive = Annotated[int, _text(parse_positive)]
Count = Annotated[int, _text(parse_count)]
OnOff = Annotated[bool, _text(parse_on_off)]
Ttl = Annotated[int | None, _text(parse_ttl)]
Limit = Annotated[float | None, BeforeValidator(_zero_none), _text(parse_seconds)]
"""Seconds; 0 (or None): no limit."""
Rate = Annotated[RatePolicy, NoDecode]
"""A budget, ``REQUESTS/SECONDS`` as text (``Settings._rate`` knows whose)."""
Texts = Annotated[tuple[str, ...], NoDecode, _text(parse_list)]
OptionalText = Annotated[str | None, _text(parse_optional_text)]


def _window(value: Any) -> Any:
    return parse_window(value) if isinstance(value, str) else value


class Settings(BaseSettings):
    """Everything the ``skyline`` commands configure. ``Settings()`` reads ``SKYLINE_*``;
    keyword arguments win over the environment (the CLI passes its flags so)."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, frozen=True, extra="forbid", arbitrary_types_allowed=True,
        use_attribute_docstrings=True,
    )

    # -- the store --------------------------------------------------------------------------
    redis_url: OptionalText = None
    """redis://host:port/db; None: the embedded SQLite store in ``data_dir``."""
    redis_cluster: OptionalText = None
    """host:port,host:port seed nodes of a Redis Cluster."""
    redis_prefix: str = "skyline:"
    """Key prefix in Redis (``--redis-prefix``, ``--prefix``)."""
    redis_max_connections: Positive = DEFAULT_MAX_CONNECTIONS
    """Command connections to Redis (per node on a cluster); watchers use one pub/sub
    connection per node besides."""
    allow_evicting_redis: OnOff = False
    """Start on a Redis whose ``maxmemory-policy`` evicts keys (checked by ``serve`` and
    ``worker`` before they start: ``cli.check_redis_memory_policy``)."""
    data_dir: str = DEFAULT_DATA_DIR
    """The embedded store's folder (used without Redis); ``":memory:"``: nothing kept."""

    # -- the HTTP server (``serve``) ------------------------------------------------------
    host: str = "127.0.0.1"
    port: Annotated[int, _text(parse_int)] = 8000
    log_level: str = "info"
    cors_origins: Texts = ()
    """Browser origins allowed by CORS (comma-separated in the environment)."""
    trusted_proxies: Annotated[tuple[str, ...], NoDecode, _text(parse_trusted)] = ()
    """Peers (addresses, CIDR ranges) whose ``X-Forwarded-For`` / ``-Proto`` (and
    ``X-Request-Id``) are believed; none by default (``service.api.proxies``)."""
    max_body_bytes: Positive = 64 * 1024
    """The largest request body and WebSocket message."""
    max_header_bytes: Count = 64 * 1024
    """Most bytes a request's line and headers may take (0: no limit): the body cap; nginx
    in front lets through at most 4 lines of 8 KiB (deploy/nginx.conf)."""
    header_timeout: Limit = 10.0
    """Seconds a client has to send a request's line and headers (None: no limit)."""
    body_timeout: Limit = 30.0
    """Seconds a client has to send a request's body once its headers are in: 64 KiB, the
    largest body, at about 2 KB/s."""
    ws_compression: OnOff = False
    """Offer permessage-deflate to WebSocket clients."""
    sse_max_seconds: Limit = None
    """An event stream ends after this long (the client reconnects with ``Last-Event-ID``
    and loses nothing); None: only when the match ends."""
    max_watchers: Positive = DEFAULT_MAX_WATCHERS
    """Event streams and subscriptions one replica holds at once (past it: 503)."""
    max_watchers_per_client: Positive = DEFAULT_MAX_WATCHERS_PER_CLIENT
    """Streams one client holds on one replica (past it: 429 ``too_many_streams``)."""
    resume_window: Positive = DEFAULT_RESUME_WINDOW
    """A stream resumed at most this many versions behind gets each one; further behind,
    one snapshot of the current state."""
    replay_budget: Count = DEFAULT_REPLAY_RATE
    """Versions per second one client's resumed streams may have replayed on this replica
    (``live.replays``); 0, or ``rate_limits`` off: unlimited."""
    stream_ticket_seconds: Positive = DEFAULT_TICKET_SECONDS
    """How long a stream ticket is accepted."""
    queue_ticket_seconds: Positive = TICKET_SECONDS
    """A quick-match ticket not polled for this long expires."""
    jwt_audience: str = DEFAULT_AUDIENCE
    """The ``aud`` every app-signed JWT must carry."""

    # -- rate limits and quotas (``service.limits``) ---------------------------------------
    rate_limits: OnOff = True
    """Rate limits per client and quotas of unfinished matches per creator (off: tests and
    benchmarks; also switches off the replay and webhook guest budgets)."""
    rate_create: Rate = DEFAULT_POLICIES["create"]
    rate_act: Rate = DEFAULT_POLICIES["act"]
    rate_read: Rate = DEFAULT_POLICIES["read"]
    rate_stream: Rate = DEFAULT_POLICIES["stream"]
    rate_guests: Rate = DEFAULT_POLICIES["guests"]
    quota_player: Count = DEFAULT_QUOTAS.player
    quota_app: Count = DEFAULT_QUOTAS.app
    quota_address: Count = DEFAULT_QUOTAS.address
    max_waiting_tables: Count = DEFAULT_WAITING_TABLES
    max_waiting_tables_per_address: Count = DEFAULT_WAITING_TABLES_ADDRESS
    limits: LimitSettings | None = None
    """A whole ``LimitSettings`` (tests); None: the one the fields above make."""

    # -- matches and players ---------------------------------------------------------------
    ttl_finished: Ttl = 7 * DAY
    """Seconds a finished match is kept after its last write (None: forever)."""
    ttl_idle: Ttl = 30 * DAY
    """Seconds an unfinished match is kept after its last write (None: forever)."""
    waiting_ttl: Positive = DEFAULT_WAITING_TTL
    """A match waiting for players that nobody touches for this long is cancelled."""
    guest_ttl: Annotated[float, _text(parse_guest_ttl)] = DEFAULT_GUEST_TTL
    """Seconds a guest may stay idle before it expires (0: never; ``players.expiry``)."""
    allow_chosen_seeds: OnOff = False
    """Take a creator's chosen seed whoever sits in the match; off: refused (400
    ``seed_not_allowed``) when players other than the creator sit there."""
    min_seconds_per_move: Positive = MIN_MOVE_SECONDS
    """The shortest correspondence deadline (``secondsPerMove``) a new match may take."""

    # -- the worker loops: bots, clocks, webhooks, guests ---------------------------------
    worker: OnOff = True
    """``serve`` runs the worker loops itself (off: ``skyline worker`` processes do)."""
    worker_concurrency: Positive = DEFAULT_CONCURRENCY
    """Matches the bot worker plays at once (``serve --worker-concurrency``, ``worker
    --concurrency``)."""
    bot_budget: Annotated[Budget | None, NoDecode, _text(parse_budget)] = None
    """Thinking per move of a search bot; None: per game."""
    worker_consumer: OptionalText = None
    """The bot worker's name in the consumer group; None: host:pid (``serve`` on the
    embedded store: ``embedded``)."""
    worker_reclaim_idle_ms: Positive = DUE_RECLAIM_IDLE_MS
    """Take over signals another worker left pending this long."""
    worker_processes: Count = 0
    """Bots think in this many processes; 0: in threads of this one."""
    heartbeat_seconds: Seconds = BEAT_SECONDS
    """Seconds between two heartbeats of a process's worker loops."""
    worker_stale_seconds: Seconds = DEFAULT_STALE_SECONDS
    """``/readyz`` reports ``degraded`` when no worker has beaten for this long (0: no
    check)."""
    worker_options: dict[str, Any] = {}
    """More keyword arguments of ``service.workers.bots.BotWorker`` (tests)."""

    # -- webhooks (``service.webhooks``) ------------------------------------------------------
    webhook_allow_http: OnOff = WEBHOOK_DEFAULTS.allow_http
    webhook_allow_networks: Annotated[tuple[str, ...], NoDecode,
                                      _text(parse_networks_text)] = WEBHOOK_DEFAULTS.allow_networks
    webhook_connect_timeout: Seconds = WEBHOOK_DEFAULTS.connect_timeout
    webhook_read_timeout: Seconds = WEBHOOK_DEFAULTS.read_timeout
    webhook_retry_hours: Seconds = WEBHOOK_DEFAULTS.retry_seconds / HOUR
    webhook_disable_after: Positive = WEBHOOK_DEFAULTS.disable_after
    webhook_disable_hours: Seconds = WEBHOOK_DEFAULTS.disable_seconds / HOUR
    webhook_guest_budget: Annotated[Window | None, NoDecode,
                                    BeforeValidator(_window)] = GUEST_DEFAULT
    """Deliveries about one guest per window (None: no budget; ``notify.budget``)."""
    webhook_guest_app_budget: Annotated[Window | None, NoDecode,
                                        BeforeValidator(_window)] = GUEST_APP_DEFAULT
    """Deliveries about all of one app's guests per window."""
    webhooks: WebhookSettings | None = None
    """A whole ``WebhookSettings`` (tests); None: the one the fields above make."""

    @field_validator(*(f"rate_{budget}" for budget in BUDGETS), mode="before")
    @classmethod
    def _rate(cls, value: Any, info: ValidationInfo) -> Any:
        name = (info.field_name or "").removeprefix("rate_")
        return parse_rate(name)(value) if isinstance(value, str) else value

    # -- what the services take, made from the fields ---------------------------------------
    def limit_settings(self) -> LimitSettings:
        """The rate limits and quotas (``limits``, else the ``rate_*`` / ``quota_*``
        fields)."""
        if self.limits is not None:
            return self.limits
        return LimitSettings(
            enabled=self.rate_limits,
            policies={budget: getattr(self, f"rate_{budget}") for budget in BUDGETS},
            quotas=Quotas(player=self.quota_player, app=self.quota_app,
                          address=self.quota_address),
            waiting_tables=self.max_waiting_tables,
            waiting_tables_address=self.max_waiting_tables_per_address,
        )

    def webhook_settings(self) -> WebhookSettings:
        """How webhooks are delivered (``webhooks``, else the ``webhook_*`` fields; the
        guest budgets are off with the rate limits)."""
        if self.webhooks is not None:
            return self.webhooks
        limited = self.limit_settings().enabled
        return WebhookSettings(
            guest_budget=self.webhook_guest_budget if limited else None,
            guest_app_budget=self.webhook_guest_app_budget if limited else None,
            budget_uri=self.counting_uri, budget_prefix=self.redis_prefix,
            allow_http=self.webhook_allow_http, allow_networks=self.webhook_allow_networks,
            connect_timeout=self.webhook_connect_timeout,
            read_timeout=self.webhook_read_timeout,
            retry_seconds=self.webhook_retry_hours * HOUR,
            disable_after=self.webhook_disable_after,
            disable_seconds=self.webhook_disable_hours * HOUR,
            lease_seconds=max(WEBHOOK_DEFAULTS.lease_seconds,
                              3 * (self.webhook_connect_timeout + self.webhook_read_timeout)),
        )

    @property
    def counting_uri(self) -> str:
        """Where counters every process shares live (``limits`` storage URI: the store's
        Redis, else memory)."""
        return storage_uri(self.redis_url, self.redis_cluster)

    @property
    def bot_options(self) -> dict[str, Any]:
        """``BotWorker``'s keyword arguments."""
        options: dict[str, Any] = {
            "concurrency": self.worker_concurrency, "budget": self.bot_budget,
            "reclaim_idle_ms": self.worker_reclaim_idle_ms, "processes": self.worker_processes,
        }
        if self.worker_consumer is not None:
            options["consumer"] = self.worker_consumer
        return {**options, **self.worker_options}


def default_of(name: str) -> Any:
    """A field's one default (before the environment is read)."""
    return Settings.model_fields[name].default
