"""The `skyline` command line: ``serve``, ``worker``, ``export-schema``, ``games``, ``show``,
``verify``, ``selfplay``.

Every ``serve`` flag also reads an environment variable (``SKYLINE_<FLAG>``); a flag given on
the command line wins over the environment.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

from service.clocks import MIN_MOVE_SECONDS
from service.live import (
    DEFAULT_MAX_WATCHERS,
    DEFAULT_MAX_WATCHERS_PER_CLIENT,
    DEFAULT_RESUME_WINDOW,
)

DEFAULT_HEADER_TIMEOUT = 10.0  # service.api.serving (not imported here: uvicorn loads late)
DEFAULT_BODY_TIMEOUT = 30.0
DEFAULT_MAX_HEADER_BYTES = 64 * 1024  # service.api.serving, likewise
DEFAULT_REPLAY_RATE = 200  # service.live.replays.DEFAULT_RATE (a test checks they agree)
DEFAULT_GUEST_BUDGET = "120/60"  # service.notify.budget (not imported here: it loads the service)
DEFAULT_GUEST_APP_BUDGET = "1200/60"
DEFAULT_BEAT_SECONDS = 5.0  # service.workers.heartbeat, likewise
DEFAULT_STALE_SECONDS = 30.0
ROOT = Path(__file__).resolve().parent.parent
OPENAPI_PATH = Path("openapi") / "openapi.json"
GRAPHQL_PATH = Path("schema.graphql")


def _cmd_games(_: argparse.Namespace) -> int:
    from service import games

    for engine in games.all():
        print(f"{engine.id:12} {engine.title} ({engine.min_players}-{engine.max_players} players)")
    return 0


def _optional_seconds(value: str) -> int | None:
    """A TTL in seconds; ``0``, ``none`` or ``never`` keep matches forever."""
    if value.strip().lower() in {"", "0", "none", "never"}:
        return None
    seconds = _ascii_int(value)
    if seconds < 0:
        raise argparse.ArgumentTypeError("a TTL cannot be negative")
    return seconds


def _ascii_int(value: str) -> int:
    """An integer in ASCII digits (``int`` also reads other scripts' digits: ``"٣"`` is 3)."""
    text = value.strip()
    if not (text.isascii() and text.lstrip("+-").isdigit()):
        raise argparse.ArgumentTypeError(f"not an integer in ASCII digits: {value!r}")
    return int(text)


def _positive_int(value: str) -> int:
    number = _ascii_int(value)
    if number <= 0:
        raise argparse.ArgumentTypeError("must be a positive integer")
    return number


def _trusted_proxies(value: str | tuple[str, ...]) -> tuple[str, ...]:
    from service.api.proxies import parse_trusted

    if isinstance(value, tuple):
        return value
    try:
        return parse_trusted(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not an address or CIDR range: {error}") from None


def _seconds(value: str) -> float:
    if not value.isascii():
        raise argparse.ArgumentTypeError(f"not a number in ASCII digits: {value!r}")
    number = float(value)
    if not number >= 0 or number == float("inf"):
        raise argparse.ArgumentTypeError("must be a non-negative number of seconds")
    return number


def _count(value: str) -> int:
    number = _ascii_int(value)
    if number < 0:
        raise argparse.ArgumentTypeError("must be 0 or a positive integer")
    return number


def _flag(value: str) -> bool:
    return value.strip().lower() in {"1", "true", "yes", "on"}


def _on_off(value: str) -> bool:
    word = value.strip().lower()
    if word in {"on", "1", "true", "yes"}:
        return True
    if word in {"off", "0", "false", "no"}:
        return False
    raise argparse.ArgumentTypeError("must be on or off")


def _policy(budget: str) -> Callable[[str], Any]:
    def parse(value: str) -> Any:
        from service.limits import parse_policy

        try:
            return parse_policy(budget, value)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    return parse


def _limit_settings(args: argparse.Namespace) -> Any:
    from service.limits import BUDGETS, LimitSettings, Quotas

    return LimitSettings(
        enabled=args.rate_limits,
        policies={budget: getattr(args, f"rate_{budget}") for budget in BUDGETS},
        quotas=Quotas(player=args.quota_player, app=args.quota_app,
                      address=args.quota_address),
        waiting_tables=args.max_waiting_tables,
        waiting_tables_address=args.max_waiting_tables_per_address,
    )


def _add_limit_flags(parser: argparse.ArgumentParser) -> None:
    from service.limits import BUDGETS, DEFAULT_POLICIES, DEFAULT_QUOTAS
    from service.limits.policies import (
        DEFAULT_WAITING_TABLES,
        DEFAULT_WAITING_TABLES_ADDRESS,
    )

    parser.add_argument(
        "--rate-limits", type=_on_off, default=_env("RATE_LIMITS", True, _on_off),
        metavar="on|off",
        help="rate limits per client and quotas of unfinished matches per creator "
        "(SKYLINE_RATE_LIMITS; on by default; off for tests and benchmarks)",
    )
    what = {"create": "creating matches and players", "act": "moves and other writes",
            "read": "reads", "stream": "opening event streams and WebSockets",
            "guests": "guest players created"}
    for budget in BUDGETS:
        default = DEFAULT_POLICIES[budget]
        parser.add_argument(
            f"--rate-{budget}", type=_policy(budget), metavar="REQUESTS/SECONDS",
            default=_env(f"RATE_{budget.upper()}", default, _policy(budget)),
            help=f"budget of {what[budget]} per "
            f"{'address' if budget == 'guests' else 'client'} (SKYLINE_RATE_{budget.upper()}; "
            f"default {default.spec()})",
        )
    for kind, who in (("player", "player"), ("app", "app key"),
                      ("address", "client address without a credential")):
        default_quota = getattr(DEFAULT_QUOTAS, kind)
        parser.add_argument(
            f"--quota-{kind}", type=_count,
            default=_env(f"QUOTA_{kind.upper()}", default_quota, _count),
            help=f"unfinished matches one {who} may have created (SKYLINE_QUOTA_"
            f"{kind.upper()}; default {default_quota}; 0: no cap)",
        )
    parser.add_argument(
        "--max-waiting-tables", type=_count,
        default=_env("MAX_WAITING_TABLES", DEFAULT_WAITING_TABLES, _count),
        help="public tables waiting for players in the lobby one player may have created; "
        "past it 429 too_many_waiting_tables (SKYLINE_MAX_WAITING_TABLES; default "
        f"{DEFAULT_WAITING_TABLES}; 0: no cap; app keys are not capped)",
    )
    parser.add_argument(
        "--max-waiting-tables-per-address", type=_count,
        default=_env("MAX_WAITING_TABLES_PER_ADDRESS", DEFAULT_WAITING_TABLES_ADDRESS, _count),
        help="the same for all guest players of one client address together "
        f"(SKYLINE_MAX_WAITING_TABLES_PER_ADDRESS; default {DEFAULT_WAITING_TABLES_ADDRESS}; "
        "0: no cap)",
    )


def _add_heartbeat_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--heartbeat-seconds", type=_seconds,
        default=_env("HEARTBEAT_SECONDS", DEFAULT_BEAT_SECONDS, _seconds),
        help="seconds between two heartbeats the worker loops write to the store "
        f"(SKYLINE_HEARTBEAT_SECONDS; default {DEFAULT_BEAT_SECONDS:g}); keep it well under "
        "the servers' --worker-stale-seconds",
    )


def _networks(value: str) -> tuple[str, ...]:
    from service.notify.ssrf import parse_networks

    try:
        return tuple(str(n) for n in parse_networks(value))
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not a list of CIDR ranges: {error}") from None


def _add_webhook_flags(parser: argparse.ArgumentParser) -> None:
    """How webhooks are delivered (docs/clocks-and-notifications.md): the URL policy, the
    timeouts, the retries and when an endpoint is disabled."""
    parser.add_argument(
        "--webhook-allow-http", type=_on_off, nargs="?", const=True,
        default=_env("WEBHOOK_ALLOW_HTTP", False, _on_off),
        help="accept http:// webhook URLs, not only https:// (SKYLINE_WEBHOOK_ALLOW_HTTP)")
    parser.add_argument(
        "--webhook-allow-networks", type=_networks,
        default=_env("WEBHOOK_ALLOW_NETWORKS", (), _networks), metavar="CIDR,...",
        help="internal networks webhooks may reach anyway, e.g. 10.1.0.0/16 "
        "(SKYLINE_WEBHOOK_ALLOW_NETWORKS); by default loopback, private, link-local, "
        "unique-local, multicast, reserved and cloud metadata addresses are refused")
    parser.add_argument(
        "--webhook-connect-timeout", type=_seconds,
        default=_env("WEBHOOK_CONNECT_TIMEOUT", 5.0, _seconds),
        help="seconds to connect to a receiver (SKYLINE_WEBHOOK_CONNECT_TIMEOUT)")
    parser.add_argument(
        "--webhook-read-timeout", type=_seconds,
        default=_env("WEBHOOK_READ_TIMEOUT", 10.0, _seconds),
        help="seconds a receiver has to answer (SKYLINE_WEBHOOK_READ_TIMEOUT)")
    parser.add_argument(
        "--webhook-retry-hours", type=_seconds,
        default=_env("WEBHOOK_RETRY_HOURS", 24.0, _seconds),
        help="hours an event is retried before it is given up (SKYLINE_WEBHOOK_RETRY_HOURS)")
    parser.add_argument(
        "--webhook-disable-after", type=_positive_int,
        default=_env("WEBHOOK_DISABLE_AFTER", 20, _positive_int),
        help="failed attempts in a row that disable an endpoint, if they span "
        "--webhook-disable-hours (SKYLINE_WEBHOOK_DISABLE_AFTER)")
    parser.add_argument(
        "--webhook-disable-hours", type=_seconds,
        default=_env("WEBHOOK_DISABLE_HOURS", 6.0, _seconds),
        help="the least time a failure run spans before it disables an endpoint "
        "(SKYLINE_WEBHOOK_DISABLE_HOURS)")
    parser.add_argument(
        "--webhook-guest-budget", type=_window,
        default=_env("WEBHOOK_GUEST_BUDGET", None, _window), metavar="DELIVERIES/SECONDS",
        help="deliveries about one guest player (to all of its app's endpoints) per window "
        f"(SKYLINE_WEBHOOK_GUEST_BUDGET; default {DEFAULT_GUEST_BUDGET}; 0: none; off with "
        "--rate-limits off)")
    parser.add_argument(
        "--webhook-guest-app-budget", type=_window,
        default=_env("WEBHOOK_GUEST_APP_BUDGET", None, _window),
        metavar="DELIVERIES/SECONDS",
        help="deliveries about all of one app's guests per window "
        f"(SKYLINE_WEBHOOK_GUEST_APP_BUDGET; default {DEFAULT_GUEST_APP_BUDGET}; 0: none)")


def _window(value: str) -> Any:
    """A ``--webhook-guest-*budget`` value: its window, or "off" (None stays the default)."""
    from service.notify.budget import parse_window

    try:
        return parse_window(value) or "off"
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _webhook_settings(args: argparse.Namespace) -> Any:
    from service.limits import storage_uri
    from service.notify import WebhookSettings
    from service.notify.budget import GUEST_APP_DEFAULT, GUEST_DEFAULT

    def budget(value: Any, default: Any) -> Any:
        if not getattr(args, "rate_limits", True):  # --rate-limits off: none (benchmarks)
            return None
        return default if value is None else None if value == "off" else value

    return WebhookSettings(
        guest_budget=budget(args.webhook_guest_budget, GUEST_DEFAULT),
        guest_app_budget=budget(args.webhook_guest_app_budget, GUEST_APP_DEFAULT),
        budget_uri=storage_uri(args.redis_url or None, args.redis_cluster or None),
        budget_prefix=args.redis_prefix,
        allow_http=args.webhook_allow_http, allow_networks=tuple(args.webhook_allow_networks),
        connect_timeout=args.webhook_connect_timeout, read_timeout=args.webhook_read_timeout,
        retry_seconds=args.webhook_retry_hours * 3600,
        disable_after=args.webhook_disable_after,
        disable_seconds=args.webhook_disable_hours * 3600,
        lease_seconds=max(60.0, 3 * (args.webhook_connect_timeout + args.webhook_read_timeout)),
    )


def _env(name: str, default: Any, convert: Callable[[str], Any] = str) -> Any:
    raw = os.environ.get(f"SKYLINE_{name}")
    return default if raw is None else convert(raw)


def _cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from service.api.logs import serve_log_config
    from service.api.serving import StreamAwareServer, timed_protocol, tune_collector
    from service.app import Settings, create_app

    origins = tuple(o.strip() for o in (args.cors_origins or "").split(",") if o.strip())
    settings = Settings(
        redis_url=args.redis_url or None,
        redis_cluster=args.redis_cluster or None,
        redis_prefix=args.redis_prefix,
        redis_max_connections=args.redis_max_connections,
        allow_evicting_redis=args.allow_evicting_redis,
        data_dir=args.data_dir,
        cors_origins=origins,
        ttl_finished=args.ttl_finished,
        ttl_idle=args.ttl_idle,
        guest_ttl=args.guest_ttl,
        max_body_bytes=args.max_body_bytes,
        sse_max_seconds=args.sse_max_seconds or None,
        stream_ticket_seconds=args.stream_ticket_seconds,
        queue_ticket_seconds=args.queue_ticket_seconds,
        waiting_ttl=args.waiting_ttl,
        jwt_audience=args.jwt_audience,
        trusted_proxies=args.trusted_proxies,
        max_watchers=args.max_watchers,
        max_watchers_per_client=args.max_watchers_per_client,
        resume_window=args.resume_window,
        replay_budget=args.replay_budget,
        header_timeout=args.header_timeout or None,
        body_timeout=args.body_timeout or None,
        allow_chosen_seeds=args.allow_chosen_seeds,
        min_move_seconds=args.min_seconds_per_move,
        limits=_limit_settings(args),
        worker=args.worker,
        heartbeat_seconds=args.heartbeat_seconds,
        worker_stale_seconds=args.worker_stale_seconds,
        worker_options={"budget": args.bot_budget, "concurrency": args.worker_concurrency},
        webhooks=_webhook_settings(args),
    )
    from service.store import StoreFileError

    refused = check_redis_memory_policy(args)
    if refused is not None:
        return refused
    if settings.redis_cluster:
        where = "redis cluster"
    elif settings.redis_url:
        where = "redis"
    else:
        where = f"embedded store: {_data_file(settings.data_dir)}"
    try:
        app = create_app(settings=settings)
    except StoreFileError as error:
        print(f"skyline serve: {error}", file=sys.stderr)
        return 2
    print(f"skyline: serving on http://{args.host}:{args.port} ({where})", flush=True)
    _open_files_for(settings.max_watchers)
    config = uvicorn.Config(
        app,
        host=args.host,
        port=args.port,
        log_level=args.log_level,
        log_config=serve_log_config(),  # access lines name the request id (issue 20)
        # Slow clients are cut (issue 20; docs/decisions.md): httptools with deadlines.
        http=timed_protocol(settings.header_timeout, settings.body_timeout,
                            args.max_header_bytes),  # oversized headers: 431 (issue 31)
        # Forwarded headers are read inside the app, from --trusted-proxies only
        # (service.api.proxies): uvicorn's own reading trusts 127.0.0.1 by default.
        proxy_headers=False,
        timeout_graceful_shutdown=5,
        # Sans-I/O websockets: no tasks of its own per connection, and a compression window
        # of 4 KiB instead of 32 KiB when compression is on (GraphQL subscriptions at scale,
        # issue 15; docs/decisions.md).
        ws="websockets-sansio",
        ws_per_message_deflate=args.ws_compression,
        # A WebSocket message (and so a frame) is capped like a REST body (issue 31): past
        # it the connection closes with 1009, before the payload is read.
        ws_max_size=settings.max_body_bytes,
    )
    tune_collector()
    StreamAwareServer(config, on_stopping=app.state.match_service.hub.shutdown).run()
    return 0


def _open_files_for(watchers: int) -> None:
    """Raise this process's open-file limit to what ``watchers`` streams need (each holds a
    socket), as far as the hard limit allows; say so when it cannot."""
    try:
        import resource
    except ImportError:  # not on this platform
        return
    wanted = watchers + 1024  # the streams, plus ordinary requests, the store, files
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        if target < wanted:
            print(f"skyline: the open-file limit ({hard}) holds fewer than --max-watchers "
                  f"{watchers} streams; lower it or raise `ulimit -n`", file=sys.stderr)


def _cmd_worker(args: argparse.Namespace) -> int:
    """``skyline worker``: play bot seats signalled due on Redis, fire the deadlines of timed
    matches and deliver webhooks, until SIGTERM / SIGINT."""
    import logging
    import signal

    from service.matches import MatchService
    from service.notify import WebhookService
    from service.players import PlayerService
    from service.store import open_store
    from service.workers.bots import BotWorker
    from service.workers.clocks import ClockWorker
    from service.workers.guests import GuestWorker
    from service.workers.heartbeat import Heartbeat, member_name
    from service.workers.webhooks import WebhookWorker

    if not (args.redis_url or args.redis_cluster):
        print(
            "skyline worker needs the Redis the servers use (--redis-url or --redis-cluster, "
            "or SKYLINE_REDIS_URL / SKYLINE_REDIS_CLUSTER); on the embedded store "
            "`skyline serve` plays the bots itself.",
            file=sys.stderr,
        )
        return 2
    refused = check_redis_memory_policy(args)
    if refused is not None:
        return refused
    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s %(name)s %(message)s")

    async def main() -> None:
        store = open_store(args.redis_url or None, args.redis_cluster or None, args.redis_prefix,
                           redis_max_connections=args.redis_max_connections)
        service = MatchService(store, ttl_finished=args.ttl_finished, ttl_idle=args.ttl_idle)
        # The player feed hears of the bots' moves too (their writes tell its listener).
        players = PlayerService(cast(Any, store), service, guest_ttl=args.guest_ttl)
        guest_worker = GuestWorker(players.expiry)
        # Webhooks: their events come from the bots' writes too, and this worker delivers.
        webhooks = WebhookService(cast(Any, store), players, service, _webhook_settings(args))
        webhook_worker = WebhookWorker(webhooks)
        clock_worker = ClockWorker(service.timeouts)
        worker = BotWorker(
            service, consumer=args.consumer or None, concurrency=args.concurrency,
            budget=args.bot_budget, reclaim_idle_ms=args.reclaim_idle_ms,
            processes=args.processes,
        )
        loop = asyncio.get_running_loop()
        def stop() -> None:
            worker.stop()
            webhook_worker.stop()
            clock_worker.stop()
            guest_worker.stop()

        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop)
        thinking = f"{worker.processes} processes" if worker.processes else "threads"
        print(f"skyline: bot worker {worker.consumer} (concurrency {worker.concurrency}, "
              f"thinking in {thinking})", flush=True)
        delivering = asyncio.create_task(webhook_worker.run(), name="webhooks")
        timing = asyncio.create_task(clock_worker.run(), name="clocks")
        expiring = asyncio.create_task(guest_worker.run(), name="guests")
        playing = asyncio.create_task(worker.run(), name="bots")
        heartbeat = Heartbeat(cast(Any, store), member_name("worker", worker.consumer),
                              [delivering, timing, expiring, playing],
                              interval=args.heartbeat_seconds)
        beating = asyncio.create_task(heartbeat.run(), name="heartbeat")
        try:
            await playing
        finally:
            heartbeat.stop()
            webhook_worker.stop()
            clock_worker.stop()
            guest_worker.stop()
            await beating
            await delivering
            await timing
            await expiring
            await webhooks.aclose()
            await players.aclose()
            await store.close()

    asyncio.run(main())
    return 0


EVICTING_REFUSED = """\
{command}: refusing to start: Redis evicts keys when it is full (maxmemory-policy {policy} on
{nodes}). Under an allkeys-* policy any key may go, under volatile-* any key with a TTL --
every match has one -- so live matches would vanish silently. Set
`maxmemory-policy noeviction` (a full Redis then refuses writes: 503 store_full, nothing
lost; deploy/README.md, Redis notes), or pass --allow-evicting-redis
(SKYLINE_ALLOW_EVICTING_REDIS=1) to run anyway."""

EVICTING_ALLOWED = """\
{command}: WARNING: Redis EVICTS keys when it is full (maxmemory-policy {policy} on {nodes}):
LIVE MATCHES MAY VANISH WITHOUT A TRACE once it reaches maxmemory. Running anyway because of
--allow-evicting-redis; set `maxmemory-policy noeviction` to be safe."""


def check_redis_memory_policy(args: argparse.Namespace) -> int | None:
    """Before ``serve`` or ``worker`` starts on Redis: read every node's
    ``maxmemory-policy`` and refuse an evicting one (exit status 2, the reason on stderr)
    unless ``--allow-evicting-redis``, then warn loudly. Where it cannot be read (``CONFIG``
    disabled, renamed or denied; Redis not answering yet) say so and start. None: start."""
    if not (args.redis_url or args.redis_cluster):
        return None
    from service.store import RedisStore, StoreUnavailable, open_store
    from service.store.redis import evicting

    command = f"skyline {args.command}"

    async def policies() -> dict[str, str | None]:
        store = open_store(args.redis_url or None, args.redis_cluster or None,
                           args.redis_prefix, redis_max_connections=1)
        assert isinstance(store, RedisStore)
        try:
            return await store.eviction_policies()
        finally:
            await store.close()

    try:
        found = asyncio.run(policies())
    except StoreUnavailable as exc:
        print(f"{command}: WARNING: could not check Redis' maxmemory-policy, Redis does not "
              f"answer now ({exc}); make sure it is noeviction (deploy/README.md)",
              file=sys.stderr, flush=True)
        return None
    unknown = sorted(node for node, policy in found.items() if policy is None)
    if unknown:
        print(f"{command}: WARNING: could not check maxmemory-policy on {', '.join(unknown)} "
              "(CONFIG GET is disabled, renamed or not permitted); make sure it is "
              "noeviction, or live matches may vanish when Redis is full (deploy/README.md)",
              file=sys.stderr, flush=True)
    bad = {node: policy for node, policy in found.items() if policy and evicting(policy)}
    if not bad:
        return None
    text = dict(
        command=command, policy=", ".join(sorted(set(bad.values()))),
        nodes=", ".join(sorted(bad)),
    )
    if not args.allow_evicting_redis:
        print(EVICTING_REFUSED.format(**text), file=sys.stderr, flush=True)
        return 2
    print(EVICTING_ALLOWED.format(**text), file=sys.stderr, flush=True)
    return None


def _add_policy_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--allow-evicting-redis", action="store_true",
        default=_env("ALLOW_EVICTING_REDIS", False, _flag),
        help="start even when Redis' maxmemory-policy evicts keys (allkeys-*, volatile-*), "
        "which loses live matches silently once Redis is full; refused by default "
        "(SKYLINE_ALLOW_EVICTING_REDIS)",
    )


def _budget(value: str) -> Any:
    from service.bots import Budget

    if not value.isascii():
        raise argparse.ArgumentTypeError(f"not a budget in ASCII digits: {value!r}")
    try:
        return Budget.parse(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _data_file(data_dir: str) -> str:
    from service.store import DEFAULT_FILENAME

    if data_dir == ":memory:":
        return "in memory, kept until the process stops"
    return os.path.join(os.path.abspath(data_dir), DEFAULT_FILENAME)


def _add_store_flags(parser: argparse.ArgumentParser, *, embedded: bool = True) -> None:
    parser.add_argument(
        "--redis-url", default=_env("REDIS_URL", None),
        help="redis://host:port/db (SKYLINE_REDIS_URL); default: the embedded SQLite store"
        " in --data-dir",
    )
    if embedded:
        from service.store import DEFAULT_DATA_DIR

        parser.add_argument(
            "--data-dir", default=_env("DATA_DIR", DEFAULT_DATA_DIR),
            help="folder of the embedded store's file, created if missing, used without "
            "Redis (SKYLINE_DATA_DIR; default ./skyline-data; ':memory:' keeps nothing). "
            "One process at a time: scale out on Redis",
        )
    parser.add_argument(
        "--redis-cluster", default=_env("REDIS_CLUSTER", None),
        help="host:port,host:port seed nodes of a Redis Cluster (SKYLINE_REDIS_CLUSTER)",
    )
    parser.add_argument(
        "--redis-prefix", "--prefix", dest="redis_prefix",
        default=_env("REDIS_PREFIX", "skyline:"),
        help="key prefix in Redis (SKYLINE_REDIS_PREFIX)",
    )
    parser.add_argument(
        "--redis-max-connections", type=_positive_int,
        default=_env("REDIS_MAX_CONNECTIONS", 64, _positive_int),
        help="command connections to Redis, per node on a cluster; a command waits for a "
        "free one (503 after 2 s); watchers use one pub/sub connection per node besides "
        "(SKYLINE_REDIS_MAX_CONNECTIONS)",
    )


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def _guest_ttl(value: str) -> float:
    """``--guest-ttl``: seconds, or a number with a unit (``30d``, ``12h``, ``90m``,
    ``45s``); ``0``, ``none`` or ``never``: guests never expire."""
    raw = value.strip().lower()
    if raw in {"", "0", "none", "never"}:
        return 0.0
    unit = _UNITS.get(raw[-1:], 0)
    number = _ascii_int(raw[:-1] if unit else raw)
    if number < 0:
        raise argparse.ArgumentTypeError("a TTL cannot be negative")
    return float(number * (unit or 1))


def _add_ttl_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--guest-ttl", type=_guest_ttl, default=_env("GUEST_TTL", 30 * 86400.0, _guest_ttl),
        help="how long a guest may stay idle (no match created or joined) before it expires, "
        "unless it has an unfinished match or a finished one against another person: "
        "seconds or 30d/12h/90m; 0: never (SKYLINE_GUEST_TTL; default 30d)",
    )
    parser.add_argument(
        "--ttl-finished", type=_optional_seconds,
        default=_env("TTL_FINISHED", 7 * 24 * 3600, _optional_seconds),
        help="seconds a finished match is kept; 0: forever (SKYLINE_TTL_FINISHED)",
    )
    parser.add_argument(
        "--ttl-idle", type=_optional_seconds,
        default=_env("TTL_IDLE", 30 * 24 * 3600, _optional_seconds),
        help="seconds an unfinished match is kept after its last move; 0: forever "
        "(SKYLINE_TTL_IDLE)",
    )


def _add_bot_flags(parser: argparse.ArgumentParser, concurrency_flag: str) -> None:
    parser.add_argument(
        concurrency_flag, dest="worker_concurrency" if concurrency_flag != "--concurrency"
        else "concurrency", type=_positive_int,
        default=_env("WORKER_CONCURRENCY", 4, _positive_int),
        help="matches the bot worker plays at once (SKYLINE_WORKER_CONCURRENCY)",
    )
    parser.add_argument(
        "--bot-budget", type=_budget, default=_env("BOT_BUDGET", None, _budget),
        help="thinking per move of a search bot: iterations and/or seconds, e.g. 100,2s "
        "(SKYLINE_BOT_BUDGET; default per game: 100,2s, Ginkgopolis 300,2s)",
    )


def exported_files() -> dict[Path, str]:
    """Path (relative to the repo) -> exact content of every exported schema file."""
    from service.api.openapi import build_openapi

    files = {OPENAPI_PATH: json.dumps(build_openapi(), indent=2, sort_keys=True) + "\n"}
    try:
        graphql = importlib.import_module("service.api.graphql")
    except ImportError:  # the GraphQL layer is optional until it lands
        graphql = None
    build_schema = getattr(graphql, "build_schema", None)
    if build_schema is not None:
        files[GRAPHQL_PATH] = str(build_schema()).rstrip("\n") + "\n"
    return files


def _cmd_export_schema(args: argparse.Namespace) -> int:
    root = Path(args.root)
    drifted = []
    for relative, content in exported_files().items():
        path = root / relative
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if args.check:
            if current != content:
                drifted.append(str(relative))
            continue
        if current != content:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
            print(f"wrote {relative}")
    if drifted:
        print(
            "schema drift: " + ", ".join(drifted) + " differ from the code; run "
            "`skyline export-schema` and commit the result.",
            file=sys.stderr,
        )
        return 1
    return 0


# -- `skyline show MATCH [--svg FILE]` ---------------------------------------------------------
SHOW_HELP = "print a match as text, or write its board picture as SVG (--svg FILE)"


def add_show_parser(commands: Any) -> None:
    """Add ``skyline show`` to the subcommands."""
    show = commands.add_parser("show", help=SHOW_HELP, description=SHOW_HELP)
    show.add_argument("match", help="the match id")
    show.add_argument("--svg", metavar="FILE",
                      help="write the board as SVG to FILE ('-': standard output)")
    show.add_argument("--token", default=None,
                      help="a seat token: draw that seat's view (default: a spectator's)")
    show.add_argument("--highlight", type=_ascii_int, default=None, metavar="INDEX",
                      help="with --svg and --token: draw legal move number INDEX distinctly")
    _add_store_flags(show)
    show.set_defaults(handler=run_show)


def run_show(args: Any) -> int:
    """The ``skyline show`` handler: 0 on success, 1 with a message on stderr otherwise."""
    from service.errors import ApiError
    from service.store import StoreFileError, StoreInUse, open_store

    try:
        store = open_store(args.redis_url or None, args.redis_cluster or None,
                           args.redis_prefix, data_dir=args.data_dir)
    except StoreFileError as error:
        hint = ""
        if isinstance(error, StoreInUse):
            hint = (" (stop that server first, or read the match over HTTP: "
                    "GET /v1/matches/{id}/board.svg)")
        print(f"skyline show: {error}{hint}", file=sys.stderr)
        return 1
    try:
        output = asyncio.run(show(store, args.match, token=args.token, svg=args.svg is not None,
                                  highlight=args.highlight))
    except ApiError as error:
        hint = ""
        if error.code == "match_not_found" and not (args.redis_url or args.redis_cluster):
            hint = (f" (looked in the embedded store in {args.data_dir}; a server on Redis "
                    "needs --redis-url)")
        print(f"skyline show: {error.detail}{hint}", file=sys.stderr)
        return 1
    if args.svg is None or args.svg == "-":
        sys.stdout.write(output if output.endswith("\n") else output + "\n")
    else:
        Path(args.svg).write_text(output, encoding="utf-8")
        print(f"wrote {args.svg}")
    return 0


async def show(store: Any, match_id: str, *, token: str | None = None, svg: bool = False,
               highlight: int | None = None) -> str:
    """The text (default) or SVG picture of a match, as ``token``'s seat (None: spectator)
    sees it. Text comes from the engine's own text rendering of public information."""
    from service import games
    from service.errors import ApiError
    from service.matches import MatchService
    from service.matches.board import board_svg
    from service.matches.records import MatchRecord

    service = MatchService(store, ttl_finished=None, ttl_idle=None)
    try:
        if svg:
            return (await board_svg(service, match_id, token, highlight)).svg
        if highlight is not None:
            raise ApiError.of("malformed", "--highlight needs --svg.")
        state = await service.get_state(match_id, token)
        picture = getattr(state.view, "text", None)
        if state.view is None:
            picture = ("(no game yet: it waits for players; open seats: "
                       f"{', '.join(map(str, state.open_seats)) or 'none'})"
                       if state.status == "waiting" else "(cancelled before it started)")
        elif not isinstance(picture, str):
            _, data = await store.load(match_id)
            engine: Any = games.get(state.game)
            render = getattr(engine, "render", None)
            picture = render(engine.loads(MatchRecord.decode(data).state)) if render else ""
        who = "spectator" if state.seat is None else f"seat {state.seat}"
        lines = [f"{state.game} match {match_id} · version {state.version} · {state.status}"
                 f" · to act: {', '.join(map(str, state.active_seats)) or 'nobody'}"
                 f" · view of {who}", "", picture.rstrip("\n")]
        if state.result is not None:
            lines += ["", "final scores:"]
            for seat in sorted(state.result.seats, key=lambda s: (s.rank, s.seat)):
                parts = ", ".join(f"{line.rule} {line.points}" for line in seat.breakdown)
                lines.append(f"  seat {seat.seat}: {seat.score} (rank {seat.rank}) — {parts}")
        return "\n".join(lines) + "\n"
    finally:
        await store.close()


# -- `skyline verify MATCH [--commitment HEX]` ------------------------------------------------
VERIFY_HELP = ("check a match: its seed against the commitment it published, and its log "
               "replayed from the seed (exit 0: consistent, 1: a mismatch, 2: unreadable)")


def add_verify_parser(commands: Any) -> None:
    """Add ``skyline verify`` to the subcommands."""
    verify = commands.add_parser("verify", help=VERIFY_HELP, description=VERIFY_HELP)
    verify.add_argument("match", help="the match id")
    verify.add_argument(
        "--commitment", default=None, metavar="HEX",
        help="the seedCommitment a player noted when the match started: it must match too",
    )
    _add_store_flags(verify)
    verify.set_defaults(handler=run_verify)


def run_verify(args: Any) -> int:
    """The ``skyline verify`` handler: prints the findings and the verdict; 0 when the match
    is consistent, 1 on a mismatch, 2 when it cannot be read."""
    from service.errors import ApiError
    from service.matches import MatchService
    from service.matches.verify import verify
    from service.store import StoreFileError, open_store

    try:
        store = open_store(args.redis_url or None, args.redis_cluster or None,
                           args.redis_prefix, data_dir=args.data_dir)
    except StoreFileError as error:
        print(f"skyline verify: {error}", file=sys.stderr)
        return 2

    async def run() -> Any:
        storage = MatchService(store, ttl_finished=None, ttl_idle=None).storage
        try:
            return await verify(storage, args.match, published=args.commitment)
        finally:
            await store.close()

    try:
        verdict = asyncio.run(run())
    except ApiError as error:
        print(f"skyline verify: {error.detail}", file=sys.stderr)
        return 2
    print("\n".join(verdict.lines()))
    return 0 if verdict.ok else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="skyline", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    games_cmd = commands.add_parser("games", help="list the games this build hosts")
    games_cmd.set_defaults(handler=_cmd_games)

    serve = commands.add_parser("serve", help="run the HTTP server (uvicorn)")
    serve.add_argument("--host", default=_env("HOST", "127.0.0.1"), help="SKYLINE_HOST")
    serve.add_argument("--port", type=_ascii_int, default=_env("PORT", 8000, _ascii_int),
                       help="SKYLINE_PORT")
    _add_store_flags(serve)
    serve.add_argument(
        "--cors-origins", default=_env("CORS_ORIGINS", ""),
        help="comma-separated browser origins allowed by CORS (SKYLINE_CORS_ORIGINS)",
    )
    _add_ttl_flags(serve)
    serve.add_argument(
        "--max-body-bytes", type=_positive_int,
        default=_env("MAX_BODY_BYTES", 64 * 1024, _positive_int),
        help="largest accepted request body, and WebSocket message: past it 413, or the "
        "WebSocket closes with 1009 (SKYLINE_MAX_BODY_BYTES)",
    )
    serve.add_argument(
        "--max-header-bytes", type=_count,
        default=_env("MAX_HEADER_BYTES", DEFAULT_MAX_HEADER_BYTES, _count),
        help="most bytes a request's line and headers may take; past them 431 and the "
        "connection is closed (SKYLINE_MAX_HEADER_BYTES; 0: no limit)",
    )
    serve.add_argument(
        "--sse-max-seconds", type=_seconds, default=_env("SSE_MAX_SECONDS", 0.0, _seconds),
        help="end each event stream after this many seconds; clients reconnect with "
        "Last-Event-ID and lose nothing (SKYLINE_SSE_MAX_SECONDS; 0, the default: streams "
        "end only with the match)",
    )
    serve.add_argument(
        "--stream-ticket-seconds", type=_positive_int,
        default=_env("STREAM_TICKET_SECONDS", 60, _positive_int),
        help="how long a stream ticket (POST /v1/matches/{id}/stream-tickets) is accepted "
        "(SKYLINE_STREAM_TICKET_SECONDS)",
    )
    serve.add_argument(
        "--queue-ticket-seconds", type=_positive_int,
        default=_env("QUEUE_TICKET_SECONDS", 600, _positive_int),
        help="a quick-match ticket (POST /v1/queue) not polled for this long expires "
        "(SKYLINE_QUEUE_TICKET_SECONDS)",
    )
    serve.add_argument(
        "--waiting-ttl", type=_positive_int,
        default=_env("WAITING_TTL", 7 * 86400, _positive_int),
        help="seconds a match waiting for players may go untouched before it is cancelled "
        "(SKYLINE_WAITING_TTL; default 7 days)",
    )
    serve.add_argument(
        "--jwt-audience", default=_env("JWT_AUDIENCE", "skyline"),
        help="the `aud` every app-signed player JWT must carry (SKYLINE_JWT_AUDIENCE)",
    )
    serve.add_argument(
        "--trusted-proxies", type=_trusted_proxies,
        default=_env("TRUSTED_PROXIES", (), _trusted_proxies),
        help="comma-separated addresses or CIDR ranges of the reverse proxies in front of "
        "this server: only their X-Forwarded-For, X-Forwarded-Proto and X-Request-Id are "
        "believed (SKYLINE_TRUSTED_PROXIES; none by default)",
    )
    serve.add_argument(
        "--max-watchers", type=_positive_int,
        default=_env("MAX_WATCHERS", DEFAULT_MAX_WATCHERS, _positive_int),
        help="event streams and GraphQL subscriptions this server holds at once; past it "
        "503 replica_full (SKYLINE_MAX_WATCHERS; keep it under `ulimit -n`)",
    )
    serve.add_argument(
        "--max-watchers-per-client", type=_positive_int,
        default=_env("MAX_WATCHERS_PER_CLIENT", DEFAULT_MAX_WATCHERS_PER_CLIENT,
                     _positive_int),
        help="streams one client (a token, else an address) holds on this server; past it "
        "429 too_many_streams (SKYLINE_MAX_WATCHERS_PER_CLIENT)",
    )
    serve.add_argument(
        "--resume-window", type=_positive_int,
        default=_env("RESUME_WINDOW", DEFAULT_RESUME_WINDOW, _positive_int),
        help="a stream resumed at most this many versions behind gets each one; further "
        "behind, one snapshot of the current state (SKYLINE_RESUME_WINDOW)",
    )
    serve.add_argument(
        "--replay-budget", type=_count,
        default=_env("REPLAY_BUDGET", DEFAULT_REPLAY_RATE, _count),
        help="versions per second one client's resumed streams may have replayed on this "
        "server (twice that at once; then paced, and past a 10 s wait a snapshot instead); "
        "0: unlimited; off with --rate-limits off (SKYLINE_REPLAY_BUDGET)",
    )
    serve.add_argument(
        "--ws-compression", action="store_true", default=_env("WS_COMPRESSION", False, _flag),
        help="offer permessage-deflate to WebSocket (GraphQL) clients: smaller frames, about "
        "40 KB more memory per open connection (SKYLINE_WS_COMPRESSION; off by default)",
    )
    serve.add_argument(
        "--header-timeout", type=_seconds,
        default=_env("HEADER_TIMEOUT", DEFAULT_HEADER_TIMEOUT, _seconds),
        help="seconds a client has to send a request's line and headers; past them 408 and "
        "the connection is closed (SKYLINE_HEADER_TIMEOUT; 0: no limit)",
    )
    serve.add_argument(
        "--body-timeout", type=_seconds,
        default=_env("BODY_TIMEOUT", DEFAULT_BODY_TIMEOUT, _seconds),
        help="seconds a client has to send a request's body once its headers are in; past "
        "them 408 and the connection is closed (SKYLINE_BODY_TIMEOUT; 0: no limit)",
    )
    serve.add_argument(
        "--allow-chosen-seeds", action="store_true",
        default=_env("ALLOW_CHOSEN_SEEDS", False, _flag),
        help="take a creator's chosen seed even when other players sit in the match (the "
        "creator then knows every draw and hand; views say seedChosen). Off by default: 400 "
        "seed_not_allowed (SKYLINE_ALLOW_CHOSEN_SEEDS)",
    )
    serve.add_argument(
        "--min-seconds-per-move", type=_positive_int,
        default=_env("MIN_SECONDS_PER_MOVE", MIN_MOVE_SECONDS, _positive_int),
        help="the shortest correspondence deadline (timeControl.correspondence."
        "secondsPerMove) a new match may take; shorter: 422 bad_time_control (default 10; "
        "SKYLINE_MIN_SECONDS_PER_MOVE)",
    )
    _add_limit_flags(serve)
    serve.add_argument("--log-level", default=_env("LOG_LEVEL", "info"), help="SKYLINE_LOG_LEVEL")
    serve.add_argument(
        "--worker", action=argparse.BooleanOptionalAction, default=_env("WORKER", True, _flag),
        help="run the worker loops in this process: bot seats, deadlines of timed matches, "
        "webhooks (SKYLINE_WORKER; on by default, on any store). --no-worker (SKYLINE_WORKER="
        "0): leave them to `skyline worker` processes (scale, search bots); with none "
        "running they wait, and /readyz says degraded",
    )
    serve.add_argument(
        "--worker-stale-seconds", type=_seconds,
        default=_env("WORKER_STALE_SECONDS", DEFAULT_STALE_SECONDS, _seconds),
        help="/readyz reports degraded (HTTP 200, the reason in `checks`) when no worker, in "
        "this process or another, has written a heartbeat for this long "
        f"(SKYLINE_WORKER_STALE_SECONDS; default {DEFAULT_STALE_SECONDS:g}; 0: no check)",
    )
    _add_heartbeat_flag(serve)
    _add_bot_flags(serve, "--worker-concurrency")
    _add_webhook_flags(serve)
    _add_policy_flag(serve)
    serve.set_defaults(handler=_cmd_serve)

    worker = commands.add_parser(
        "worker", help="play bot seats signalled due on Redis (run one or more next to serve)"
    )
    _add_store_flags(worker, embedded=False)
    _add_ttl_flags(worker)
    _add_bot_flags(worker, "--concurrency")
    _add_webhook_flags(worker)
    worker.add_argument(
        "--consumer", default=_env("WORKER_CONSUMER", None),
        help="consumer name in the group (SKYLINE_WORKER_CONSUMER); default host:pid. A "
        "stable name lets a restarted worker take back the signals it held at once",
    )
    worker.add_argument(
        "--reclaim-idle-ms", type=_positive_int,
        default=_env("WORKER_RECLAIM_IDLE_MS", 30_000, _positive_int),
        help="take over signals another worker left pending this long "
        "(SKYLINE_WORKER_RECLAIM_IDLE_MS)",
    )
    worker.add_argument(
        "--processes", type=_count, default=_env("WORKER_PROCESSES", 0, _count),
        help="bots think in this many worker processes (SKYLINE_WORKER_PROCESSES); 0, the "
        "default: in threads of this process, which share one core's worth of Python. Use "
        "about one per core when search bots are busy",
    )
    worker.add_argument("--log-level", default=_env("LOG_LEVEL", "info"),
                        help="SKYLINE_LOG_LEVEL")
    _add_heartbeat_flag(worker)
    _add_policy_flag(worker)
    worker.set_defaults(handler=_cmd_worker)

    export = commands.add_parser(
        "export-schema", help="write openapi/openapi.json and schema.graphql from the code"
    )
    export.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if a file differs"
    )
    export.add_argument("--root", default=str(ROOT), help="repository root (default: this one)")
    export.set_defaults(handler=_cmd_export_schema)

    from service.bots.selfplay import add_parser as add_selfplay_parser

    add_selfplay_parser(commands)  # `skyline selfplay`: service/bots/selfplay.py

    add_show_parser(commands)  # `skyline show MATCH [--svg FILE]`
    add_verify_parser(commands)  # `skyline verify MATCH`: service/matches/verify.py

    from service.cli_apps import add_apps_parser

    add_apps_parser(commands, _add_store_flags)  # `skyline apps ...`: service/cli_apps.py
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    handler = args.handler
    result: int = handler(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
