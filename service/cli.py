"""The `skyline` command line: ``serve``, ``export-schema``, ``games``.

Every ``serve`` flag also reads an environment variable (``SKYLINE_<FLAG>``); a flag given on
the command line wins over the environment.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

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
    seconds = int(value)
    if seconds < 0:
        raise argparse.ArgumentTypeError("a TTL cannot be negative")
    return seconds


def _positive_int(value: str) -> int:
    number = int(value)
    if number <= 0:
        raise argparse.ArgumentTypeError("must be a positive integer")
    return number


def _env(name: str, default: Any, convert: Callable[[str], Any] = str) -> Any:
    raw = os.environ.get(f"SKYLINE_{name}")
    return default if raw is None else convert(raw)


def _cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from service.app import Settings, create_app

    origins = tuple(o.strip() for o in (args.cors_origins or "").split(",") if o.strip())
    settings = Settings(
        redis_url=args.redis_url or None,
        redis_cluster=args.redis_cluster or None,
        redis_prefix=args.redis_prefix,
        cors_origins=origins,
        ttl_finished=args.ttl_finished,
        ttl_idle=args.ttl_idle,
        max_body_bytes=args.max_body_bytes,
    )
    store = "redis cluster" if settings.redis_cluster else (
        "redis" if settings.redis_url else "embedded memory store"
    )
    print(f"skyline: serving on http://{args.host}:{args.port} ({store})", flush=True)
    uvicorn.run(
        create_app(settings=settings),
        host=args.host,
        port=args.port,
        log_level=args.log_level,
        proxy_headers=True,
        timeout_graceful_shutdown=5,
    )
    return 0


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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="skyline", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    games_cmd = commands.add_parser("games", help="list the games this build hosts")
    games_cmd.set_defaults(handler=_cmd_games)

    serve = commands.add_parser("serve", help="run the HTTP server (uvicorn)")
    serve.add_argument("--host", default=_env("HOST", "127.0.0.1"), help="SKYLINE_HOST")
    serve.add_argument("--port", type=int, default=_env("PORT", 8000, int), help="SKYLINE_PORT")
    serve.add_argument(
        "--redis-url", default=_env("REDIS_URL", None),
        help="redis://host:port/db (SKYLINE_REDIS_URL); default: the embedded memory store",
    )
    serve.add_argument(
        "--redis-cluster", default=_env("REDIS_CLUSTER", None),
        help="host:port,host:port seed nodes of a Redis Cluster (SKYLINE_REDIS_CLUSTER)",
    )
    serve.add_argument(
        "--redis-prefix", default=_env("REDIS_PREFIX", "skyline:"),
        help="key prefix in Redis (SKYLINE_REDIS_PREFIX)",
    )
    serve.add_argument(
        "--cors-origins", default=_env("CORS_ORIGINS", ""),
        help="comma-separated browser origins allowed by CORS (SKYLINE_CORS_ORIGINS)",
    )
    serve.add_argument(
        "--ttl-finished", type=_optional_seconds,
        default=_env("TTL_FINISHED", 7 * 24 * 3600, _optional_seconds),
        help="seconds a finished match is kept; 0: forever (SKYLINE_TTL_FINISHED)",
    )
    serve.add_argument(
        "--ttl-idle", type=_optional_seconds,
        default=_env("TTL_IDLE", 30 * 24 * 3600, _optional_seconds),
        help="seconds an unfinished match is kept after its last move; 0: forever "
        "(SKYLINE_TTL_IDLE)",
    )
    serve.add_argument(
        "--max-body-bytes", type=_positive_int,
        default=_env("MAX_BODY_BYTES", 64 * 1024, _positive_int),
        help="largest accepted request body (SKYLINE_MAX_BODY_BYTES)",
    )
    serve.add_argument("--log-level", default=_env("LOG_LEVEL", "info"), help="SKYLINE_LOG_LEVEL")
    serve.set_defaults(handler=_cmd_serve)

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

    from service.api.pictures import add_show_parser

    add_show_parser(commands)  # `skyline show MATCH [--svg FILE]`: service/api/pictures.py
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    handler = args.handler
    result: int = handler(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
