"""The `skyline` command line: ``serve``, ``worker``, ``export-schema``, ``games``, ``show``,
``verify``, ``selfplay``.

Every flag is a field of ``service.settings.Settings`` and also reads its environment
variable (``SKYLINE_<FLAG>``); a flag given on the command line wins over the environment,
the environment over the one default the field declares. ``serve``, ``worker``, ``show``
and ``verify`` build their services with ``service.composition.build_services``.
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
from typing import Any

from service.limits import BUDGETS
from service.settings import (
    Settings,
    default_of,
    parse_budget,
    parse_count,
    parse_guest_ttl,
    parse_int,
    parse_list,
    parse_networks_text,
    parse_on_off,
    parse_positive,
    parse_rate,
    parse_seconds,
    parse_trusted,
    parse_ttl,
)

ROOT = Path(__file__).resolve().parent.parent
OPENAPI_PATH = Path("openapi") / "openapi.json"
GRAPHQL_PATH = Path("schema.graphql")


def _cmd_games(_: argparse.Namespace) -> int:
    from service import games

    for engine in games.all():
        print(f"{engine.id:12} {engine.title} ({engine.min_players}-{engine.max_players} players)")
    return 0


def _arg(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """An argparse type from a ``service.settings`` parser: the environment and the command
    line read text alike; its ValueError is a usage error."""

    def convert(value: str) -> Any:
        try:
            return parse(value)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    convert.__name__ = parse.__name__.removeprefix("parse_")
    return convert


_ascii_int = _arg(parse_int)
_positive_int = _arg(parse_positive)
_count = _arg(parse_count)
_seconds = _arg(parse_seconds)
_on_off = _arg(parse_on_off)


def _window(value: str) -> Any:
    from service.webhooks.budget import parse_window

    return _arg(parse_window)(value)


def environment() -> Settings:
    """``Settings()`` from ``SKYLINE_*`` (the flags' defaults); a malformed variable ends the
    command (exit status 2) naming it."""
    from pydantic import ValidationError

    try:
        return Settings()
    except ValidationError as error:
        lines = [f"  SKYLINE_{'_'.join(map(str, e['loc'])).upper()}: {e['msg']}"
                 for e in error.errors()]
        print("skyline: malformed settings in the environment:\n" + "\n".join(lines),
              file=sys.stderr)
        raise SystemExit(2) from None


def settings_of(args: argparse.Namespace) -> Settings:
    """A command's settings: its flags (their defaults: the environment's, else the declared
    ones), and the environment for the settings it has no flag for."""
    return Settings(**{name: value for name, value in vars(args).items()
                       if name in Settings.model_fields})


def _limit_settings(args: argparse.Namespace) -> Any:
    return settings_of(args).limit_settings()


def _webhook_settings(args: argparse.Namespace) -> Any:
    return settings_of(args).webhook_settings()


def _add_rate_limits_flag(parser: argparse.ArgumentParser, base: Settings) -> None:
    parser.add_argument(
        "--rate-limits", type=_on_off, default=base.rate_limits, metavar="on|off",
        help="rate limits per client and quotas of unfinished matches per creator; off also "
        "switches off the replay and webhook guest budgets (SKYLINE_RATE_LIMITS; on by "
        "default; off for tests and benchmarks)",
    )


def _add_limit_flags(parser: argparse.ArgumentParser, base: Settings) -> None:
    _add_rate_limits_flag(parser, base)
    what = {"create": "creating matches and players", "act": "moves and other writes",
            "read": "reads", "stream": "opening event streams and WebSockets",
            "guests": "guest players created"}
    for budget in BUDGETS:
        parser.add_argument(
            f"--rate-{budget}", type=_arg(parse_rate(budget)), metavar="REQUESTS/SECONDS",
            default=getattr(base, f"rate_{budget}"),
            help=f"budget of {what[budget]} per "
            f"{'address' if budget == 'guests' else 'client'} (SKYLINE_RATE_{budget.upper()}; "
            f"default {default_of(f'rate_{budget}').spec()})",
        )
    for kind, who in (("player", "player"), ("app", "app key"),
                      ("address", "client address without a credential")):
        parser.add_argument(
            f"--quota-{kind}", type=_count, default=getattr(base, f"quota_{kind}"),
            help=f"unfinished matches one {who} may have created (SKYLINE_QUOTA_"
            f"{kind.upper()}; default {default_of(f'quota_{kind}')}; 0: no cap)",
        )
    parser.add_argument(
        "--max-waiting-tables", type=_count, default=base.max_waiting_tables,
        help="public tables waiting for players in the lobby one player may have created; "
        "past it 429 too_many_waiting_tables (SKYLINE_MAX_WAITING_TABLES; default "
        f"{default_of('max_waiting_tables')}; 0: no cap; app keys are not capped)",
    )
    parser.add_argument(
        "--max-waiting-tables-per-address", type=_count,
        default=base.max_waiting_tables_per_address,
        help="the same for all guest players of one client address together "
        "(SKYLINE_MAX_WAITING_TABLES_PER_ADDRESS; default "
        f"{default_of('max_waiting_tables_per_address')}; 0: no cap)",
    )


def _add_heartbeat_flag(parser: argparse.ArgumentParser, base: Settings) -> None:
    parser.add_argument(
        "--heartbeat-seconds", type=_seconds, default=base.heartbeat_seconds,
        help="seconds between two heartbeats the worker loops write to the store "
        f"(SKYLINE_HEARTBEAT_SECONDS; default {default_of('heartbeat_seconds'):g}); keep it "
        "well under the servers' --worker-stale-seconds",
    )


def _add_webhook_flags(parser: argparse.ArgumentParser, base: Settings) -> None:
    """How webhooks are delivered (docs/clocks-and-notifications.md): the URL policy, the
    timeouts, the retries and when an endpoint is disabled."""
    parser.add_argument(
        "--webhook-allow-http", type=_on_off, nargs="?", const=True,
        default=base.webhook_allow_http,
        help="accept http:// webhook URLs, not only https:// (SKYLINE_WEBHOOK_ALLOW_HTTP)")
    parser.add_argument(
        "--webhook-allow-networks", type=_arg(parse_networks_text),
        default=base.webhook_allow_networks, metavar="CIDR,...",
        help="internal networks webhooks may reach anyway, e.g. 10.1.0.0/16 "
        "(SKYLINE_WEBHOOK_ALLOW_NETWORKS); by default loopback, private, link-local, "
        "unique-local, multicast, reserved and cloud metadata addresses are refused")
    parser.add_argument(
        "--webhook-connect-timeout", type=_seconds, default=base.webhook_connect_timeout,
        help="seconds to connect to a receiver (SKYLINE_WEBHOOK_CONNECT_TIMEOUT)")
    parser.add_argument(
        "--webhook-read-timeout", type=_seconds, default=base.webhook_read_timeout,
        help="seconds a receiver has to answer (SKYLINE_WEBHOOK_READ_TIMEOUT)")
    parser.add_argument(
        "--webhook-retry-hours", type=_seconds, default=base.webhook_retry_hours,
        help="hours an event is retried before it is given up (SKYLINE_WEBHOOK_RETRY_HOURS)")
    parser.add_argument(
        "--webhook-disable-after", type=_positive_int, default=base.webhook_disable_after,
        help="failed attempts in a row that disable an endpoint, if they span "
        "--webhook-disable-hours (SKYLINE_WEBHOOK_DISABLE_AFTER)")
    parser.add_argument(
        "--webhook-disable-hours", type=_seconds, default=base.webhook_disable_hours,
        help="the least time a failure run spans before it disables an endpoint "
        "(SKYLINE_WEBHOOK_DISABLE_HOURS)")
    parser.add_argument(
        "--webhook-guest-budget", type=_window, default=base.webhook_guest_budget,
        metavar="DELIVERIES/SECONDS",
        help="deliveries about one guest player (to all of its app's endpoints) per window "
        f"(SKYLINE_WEBHOOK_GUEST_BUDGET; default {default_of('webhook_guest_budget').spec()};"
        " 0: none; off with --rate-limits off)")
    parser.add_argument(
        "--webhook-guest-app-budget", type=_window, default=base.webhook_guest_app_budget,
        metavar="DELIVERIES/SECONDS",
        help="deliveries about all of one app's guests per window "
        "(SKYLINE_WEBHOOK_GUEST_APP_BUDGET; default "
        f"{default_of('webhook_guest_app_budget').spec()}; 0: none)")


def _add_match_flags(parser: argparse.ArgumentParser, base: Settings) -> None:
    """The rules new and waiting matches follow: ``serve`` and ``worker`` alike (the bots'
    writes and the clocks' run under them too)."""
    parser.add_argument(
        "--waiting-ttl", type=_positive_int, default=base.waiting_ttl,
        help="seconds a match waiting for players may go untouched before it is cancelled "
        f"(SKYLINE_WAITING_TTL; default {default_of('waiting_ttl') // 86400} days)",
    )
    parser.add_argument(
        "--allow-chosen-seeds", action="store_true", default=base.allow_chosen_seeds,
        help="take a creator's chosen seed even when other players sit in the match (the "
        "creator then knows every draw and hand; views say seedChosen). Off by default: 400 "
        "seed_not_allowed (SKYLINE_ALLOW_CHOSEN_SEEDS)",
    )
    parser.add_argument(
        "--min-seconds-per-move", type=_positive_int, default=base.min_seconds_per_move,
        help="the shortest correspondence deadline (timeControl.correspondence."
        "secondsPerMove) a new match may take; shorter: 422 bad_time_control (default "
        f"{default_of('min_seconds_per_move')}; SKYLINE_MIN_SECONDS_PER_MOVE)",
    )


def _cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from service.api.logs import serve_log_config
    from service.api.serving import StreamAwareServer, timed_protocol, tune_collector
    from service.app import create_app

    settings = settings_of(args)
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
    print(f"skyline: serving on http://{settings.host}:{settings.port} ({where})", flush=True)
    _open_files_for(settings.max_watchers)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level,
        log_config=serve_log_config(),  # access lines name the request id (issue 20)
        # Slow clients are cut (issue 20; docs/decisions.md): httptools with deadlines.
        http=timed_protocol(settings.header_timeout, settings.body_timeout,
                            settings.max_header_bytes),  # oversized headers: 431 (issue 31)
        # Forwarded headers are read inside the app, from --trusted-proxies only
        # (service.api.proxies): uvicorn's own reading trusts 127.0.0.1 by default.
        proxy_headers=False,
        timeout_graceful_shutdown=5,
        # Sans-I/O websockets: no tasks of its own per connection, and a compression window
        # of 4 KiB instead of 32 KiB when compression is on (GraphQL subscriptions at scale,
        # issue 15; docs/decisions.md).
        ws="websockets-sansio",
        ws_per_message_deflate=settings.ws_compression,
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
    matches, deliver webhooks and expire idle guests, until SIGTERM / SIGINT: the same
    loops, built by the same ``build_services``, as ``skyline serve`` runs."""
    import logging
    import signal

    from service.composition import build_services, open_store

    settings = settings_of(args)
    if not (settings.redis_url or settings.redis_cluster):
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
    logging.basicConfig(level=settings.log_level.upper(),
                        format="%(levelname)s %(name)s %(message)s")

    async def main() -> None:
        store = open_store(settings)
        services = build_services(settings, store)
        loops = services.worker_loops("worker")
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, loops.stop)
        bots = loops.bots
        thinking = f"{bots.processes} processes" if bots.processes else "threads"
        print(f"skyline: bot worker {bots.consumer} (concurrency {bots.concurrency}, "
              f"thinking in {thinking})", flush=True)
        loops.start()
        try:
            await loops.tasks["bots"]
        finally:
            await loops.close()
            await services.aclose()
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



def _add_policy_flag(parser: argparse.ArgumentParser, base: Settings) -> None:
    parser.add_argument(
        "--allow-evicting-redis", action="store_true", default=base.allow_evicting_redis,
        help="start even when Redis' maxmemory-policy evicts keys (allkeys-*, volatile-*), "
        "which loses live matches silently once Redis is full; refused by default "
        "(SKYLINE_ALLOW_EVICTING_REDIS)",
    )


def _data_file(data_dir: str) -> str:
    from service.store import DEFAULT_FILENAME

    if data_dir == ":memory:":
        return "in memory, kept until the process stops"
    return os.path.join(os.path.abspath(data_dir), DEFAULT_FILENAME)


def _add_store_flags(parser: argparse.ArgumentParser, base: Settings, *,
                     embedded: bool = True) -> None:
    parser.add_argument(
        "--redis-url", default=base.redis_url,
        help="redis://host:port/db (SKYLINE_REDIS_URL); default: the embedded SQLite store"
        " in --data-dir",
    )
    if embedded:
        parser.add_argument(
            "--data-dir", default=base.data_dir,
            help="folder of the embedded store's file, created if missing, used without "
            f"Redis (SKYLINE_DATA_DIR; default ./{default_of('data_dir')}; ':memory:' keeps "
            "nothing). One process at a time: scale out on Redis",
        )
    parser.add_argument(
        "--redis-cluster", default=base.redis_cluster,
        help="host:port,host:port seed nodes of a Redis Cluster (SKYLINE_REDIS_CLUSTER)",
    )
    parser.add_argument(
        "--redis-prefix", "--prefix", dest="redis_prefix", default=base.redis_prefix,
        help="key prefix in Redis (SKYLINE_REDIS_PREFIX)",
    )
    parser.add_argument(
        "--redis-max-connections", type=_positive_int, default=base.redis_max_connections,
        help="command connections to Redis, per node on a cluster; a command waits for a "
        "free one (503 after 2 s); watchers use one pub/sub connection per node besides "
        "(SKYLINE_REDIS_MAX_CONNECTIONS)",
    )


def _add_ttl_flags(parser: argparse.ArgumentParser, base: Settings) -> None:
    parser.add_argument(
        "--guest-ttl", type=_arg(parse_guest_ttl), default=base.guest_ttl,
        help="how long a guest may stay idle (no match created or joined) before it expires, "
        "unless it has an unfinished match or a finished one against another person: "
        "seconds or 30d/12h/90m; 0: never (SKYLINE_GUEST_TTL; default "
        f"{default_of('guest_ttl') / 86400:g}d)",
    )
    parser.add_argument(
        "--ttl-finished", type=_arg(parse_ttl), default=base.ttl_finished,
        help="seconds a finished match is kept; 0: forever (SKYLINE_TTL_FINISHED)",
    )
    parser.add_argument(
        "--ttl-idle", type=_arg(parse_ttl), default=base.ttl_idle,
        help="seconds an unfinished match is kept after its last move; 0: forever "
        "(SKYLINE_TTL_IDLE)",
    )


def _add_bot_flags(parser: argparse.ArgumentParser, base: Settings,
                   concurrency_flag: str) -> None:
    parser.add_argument(
        concurrency_flag, dest="worker_concurrency", type=_positive_int,
        default=base.worker_concurrency,
        help="matches the bot worker plays at once (SKYLINE_WORKER_CONCURRENCY)",
    )
    parser.add_argument(
        "--bot-budget", type=_arg(parse_budget), default=base.bot_budget,
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


def add_show_parser(commands: Any, base: Settings) -> None:
    """Add ``skyline show`` to the subcommands."""
    show = commands.add_parser("show", help=SHOW_HELP, description=SHOW_HELP)
    show.add_argument("match", help="the match id")
    show.add_argument("--svg", metavar="FILE",
                      help="write the board as SVG to FILE ('-': standard output)")
    show.add_argument("--token", default=None,
                      help="a seat token: draw that seat's view (default: a spectator's)")
    show.add_argument("--highlight", type=_ascii_int, default=None, metavar="INDEX",
                      help="with --svg and --token: draw legal move number INDEX distinctly")
    _add_store_flags(show, base)
    show.set_defaults(handler=run_show)


def run_show(args: Any) -> int:
    """The ``skyline show`` handler: 0 on success, 1 with a message on stderr otherwise."""
    from service.composition import open_store
    from service.errors import ApiError
    from service.store import StoreFileError, StoreInUse

    settings = settings_of(args)
    try:
        store = open_store(settings)
    except StoreFileError as error:
        hint = ""
        if isinstance(error, StoreInUse):
            hint = (" (stop that server first, or read the match over HTTP: "
                    "GET /v1/matches/{id}/board.svg)")
        print(f"skyline show: {error}{hint}", file=sys.stderr)
        return 1
    try:
        output = asyncio.run(show(store, args.match, token=args.token, svg=args.svg is not None,
                                  highlight=args.highlight, settings=settings))
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
               highlight: int | None = None, settings: Settings | None = None) -> str:
    """The text (default) or SVG picture of a match, as ``token``'s seat (None: spectator)
    sees it. Text comes from the engine's own text rendering of public information."""
    from service import games
    from service.composition import build_services
    from service.errors import ApiError
    from service.matches.board import board_svg
    from service.matches.records import MatchRecord

    services = build_services(settings or environment(), store)
    service = services.matches
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
        await services.aclose()
        await store.close()


# -- `skyline verify MATCH [--commitment HEX]` ------------------------------------------------
VERIFY_HELP = ("check a match: its seed against the commitment it published, and its log "
               "replayed from the seed (exit 0: consistent, 1: a mismatch, 2: unreadable)")


def add_verify_parser(commands: Any, base: Settings) -> None:
    """Add ``skyline verify`` to the subcommands."""
    verify = commands.add_parser("verify", help=VERIFY_HELP, description=VERIFY_HELP)
    verify.add_argument("match", help="the match id")
    verify.add_argument(
        "--commitment", default=None, metavar="HEX",
        help="the seedCommitment a player noted when the match started: it must match too",
    )
    _add_store_flags(verify, base)
    verify.set_defaults(handler=run_verify)


def run_verify(args: Any) -> int:
    """The ``skyline verify`` handler: prints the findings and the verdict; 0 when the match
    is consistent, 1 on a mismatch, 2 when it cannot be read."""
    from service.composition import build_services, open_store
    from service.errors import ApiError
    from service.matches.verify import verify
    from service.store import StoreFileError

    settings = settings_of(args)
    try:
        store = open_store(settings)
    except StoreFileError as error:
        print(f"skyline verify: {error}", file=sys.stderr)
        return 2

    async def run() -> Any:
        services = build_services(settings, store)
        try:
            return await verify(services.matches.storage, args.match,
                                published=args.commitment)
        finally:
            await services.aclose()
            await store.close()

    try:
        verdict = asyncio.run(run())
    except ApiError as error:
        print(f"skyline verify: {error.detail}", file=sys.stderr)
        return 2
    print("\n".join(verdict.lines()))
    return 0 if verdict.ok else 1


def build_parser() -> argparse.ArgumentParser:
    """The command line; every flag's default is ``Settings()`` (the environment, else the
    field's one default)."""
    base = environment()
    parser = argparse.ArgumentParser(prog="skyline", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    games_cmd = commands.add_parser("games", help="list the games this build hosts")
    games_cmd.set_defaults(handler=_cmd_games)

    serve = commands.add_parser("serve", help="run the HTTP server (uvicorn)")
    serve.add_argument("--host", default=base.host, help="SKYLINE_HOST")
    serve.add_argument("--port", type=_ascii_int, default=base.port, help="SKYLINE_PORT")
    _add_store_flags(serve, base)
    serve.add_argument(
        "--cors-origins", type=_arg(parse_list), default=base.cors_origins,
        help="comma-separated browser origins allowed by CORS (SKYLINE_CORS_ORIGINS)",
    )
    _add_ttl_flags(serve, base)
    serve.add_argument(
        "--max-body-bytes", type=_positive_int, default=base.max_body_bytes,
        help="largest accepted request body, and WebSocket message: past it 413, or the "
        "WebSocket closes with 1009 (SKYLINE_MAX_BODY_BYTES)",
    )
    serve.add_argument(
        "--max-header-bytes", type=_count, default=base.max_header_bytes,
        help="most bytes a request's line and headers may take; past them 431 and the "
        "connection is closed (SKYLINE_MAX_HEADER_BYTES; 0: no limit)",
    )
    serve.add_argument(
        "--sse-max-seconds", type=_seconds, default=base.sse_max_seconds,
        help="end each event stream after this many seconds; clients reconnect with "
        "Last-Event-ID and lose nothing (SKYLINE_SSE_MAX_SECONDS; 0, the default: streams "
        "end only with the match)",
    )
    serve.add_argument(
        "--stream-ticket-seconds", type=_positive_int, default=base.stream_ticket_seconds,
        help="how long a stream ticket (POST /v1/matches/{id}/stream-tickets) is accepted "
        "(SKYLINE_STREAM_TICKET_SECONDS)",
    )
    serve.add_argument(
        "--queue-ticket-seconds", type=_positive_int, default=base.queue_ticket_seconds,
        help="a quick-match ticket (POST /v1/queue) not polled for this long expires "
        "(SKYLINE_QUEUE_TICKET_SECONDS)",
    )
    serve.add_argument(
        "--jwt-audience", default=base.jwt_audience,
        help="the `aud` every app-signed player JWT must carry (SKYLINE_JWT_AUDIENCE)",
    )
    serve.add_argument(
        "--trusted-proxies", type=_arg(parse_trusted), default=base.trusted_proxies,
        help="comma-separated addresses or CIDR ranges of the reverse proxies in front of "
        "this server: only their X-Forwarded-For, X-Forwarded-Proto and X-Request-Id are "
        "believed (SKYLINE_TRUSTED_PROXIES; none by default)",
    )
    serve.add_argument(
        "--max-watchers", type=_positive_int, default=base.max_watchers,
        help="event streams and GraphQL subscriptions this server holds at once; past it "
        "503 replica_full (SKYLINE_MAX_WATCHERS; keep it under `ulimit -n`)",
    )
    serve.add_argument(
        "--max-watchers-per-client", type=_positive_int, default=base.max_watchers_per_client,
        help="streams one client (a token, else an address) holds on this server; past it "
        "429 too_many_streams (SKYLINE_MAX_WATCHERS_PER_CLIENT)",
    )
    serve.add_argument(
        "--resume-window", type=_positive_int, default=base.resume_window,
        help="a stream resumed at most this many versions behind gets each one; further "
        "behind, one snapshot of the current state (SKYLINE_RESUME_WINDOW)",
    )
    serve.add_argument(
        "--replay-budget", type=_count, default=base.replay_budget,
        help="versions per second one client's resumed streams may have replayed on this "
        "server (twice that at once; then paced, and past a 10 s wait a snapshot instead); "
        "0: unlimited; off with --rate-limits off (SKYLINE_REPLAY_BUDGET)",
    )
    serve.add_argument(
        "--ws-compression", action="store_true", default=base.ws_compression,
        help="offer permessage-deflate to WebSocket (GraphQL) clients: smaller frames, about "
        "40 KB more memory per open connection (SKYLINE_WS_COMPRESSION; off by default)",
    )
    serve.add_argument(
        "--header-timeout", type=_seconds, default=base.header_timeout,
        help="seconds a client has to send a request's line and headers; past them 408 and "
        "the connection is closed (SKYLINE_HEADER_TIMEOUT; 0: no limit)",
    )
    serve.add_argument(
        "--body-timeout", type=_seconds, default=base.body_timeout,
        help="seconds a client has to send a request's body once its headers are in; past "
        "them 408 and the connection is closed (SKYLINE_BODY_TIMEOUT; 0: no limit)",
    )
    _add_match_flags(serve, base)
    _add_limit_flags(serve, base)
    serve.add_argument("--log-level", default=base.log_level, help="SKYLINE_LOG_LEVEL")
    serve.add_argument(
        "--worker", action=argparse.BooleanOptionalAction, default=base.worker,
        help="run the worker loops in this process: bot seats, deadlines of timed matches, "
        "webhooks (SKYLINE_WORKER; on by default, on any store). --no-worker (SKYLINE_WORKER="
        "0): leave them to `skyline worker` processes (scale, search bots); with none "
        "running they wait, and /readyz says degraded",
    )
    serve.add_argument(
        "--worker-stale-seconds", type=_seconds, default=base.worker_stale_seconds,
        help="/readyz reports degraded (HTTP 200, the reason in `checks`) when no worker, in "
        "this process or another, has written a heartbeat for this long "
        f"(SKYLINE_WORKER_STALE_SECONDS; default {default_of('worker_stale_seconds'):g}; "
        "0: no check)",
    )
    _add_heartbeat_flag(serve, base)
    _add_bot_flags(serve, base, "--worker-concurrency")
    _add_webhook_flags(serve, base)
    _add_policy_flag(serve, base)
    serve.set_defaults(handler=_cmd_serve)

    worker = commands.add_parser(
        "worker", help="play bot seats signalled due on Redis (run one or more next to serve)"
    )
    _add_store_flags(worker, base, embedded=False)
    _add_ttl_flags(worker, base)
    _add_match_flags(worker, base)
    _add_rate_limits_flag(worker, base)
    _add_bot_flags(worker, base, "--concurrency")
    _add_webhook_flags(worker, base)
    worker.add_argument(
        "--consumer", dest="worker_consumer", default=base.worker_consumer,
        help="consumer name in the group (SKYLINE_WORKER_CONSUMER); default host:pid. A "
        "stable name lets a restarted worker take back the signals it held at once",
    )
    worker.add_argument(
        "--reclaim-idle-ms", dest="worker_reclaim_idle_ms", type=_positive_int,
        default=base.worker_reclaim_idle_ms,
        help="take over signals another worker left pending this long "
        "(SKYLINE_WORKER_RECLAIM_IDLE_MS)",
    )
    worker.add_argument(
        "--processes", dest="worker_processes", type=_count, default=base.worker_processes,
        help="bots think in this many worker processes (SKYLINE_WORKER_PROCESSES); 0, the "
        "default: in threads of this process, which share one core's worth of Python. Use "
        "about one per core when search bots are busy",
    )
    worker.add_argument("--log-level", default=base.log_level, help="SKYLINE_LOG_LEVEL")
    _add_heartbeat_flag(worker, base)
    _add_policy_flag(worker, base)
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

    add_show_parser(commands, base)  # `skyline show MATCH [--svg FILE]`
    add_verify_parser(commands, base)  # `skyline verify MATCH`: service/matches/verify.py

    from service.cli_apps import add_apps_parser

    # `skyline apps ...`: service/cli_apps.py
    add_apps_parser(commands, lambda parser: _add_store_flags(parser, base))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    handler = args.handler
    result: int = handler(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
