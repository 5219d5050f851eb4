"""``skyline apps``: the operator's commands for integrator apps, against the store the
servers use (Redis, or the embedded store while no server holds it).

``add NAME`` prints the new app's id and its API key (shown once); ``list`` the apps;
``rotate-key APP`` a new key (the old one stops working at once); ``revoke APP`` ends the
key; ``set APP`` changes guests, the match URL template, the JWKS URL, or adds, rotates or
removes an HS256 secret (a new secret is printed once: ``hs256Secret`` with ``--json``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable
from typing import Any

APPS_HELP = "manage integrator apps: add, list, rotate-key, revoke, set"


def add_apps_parser(
    commands: Any, add_store_flags: Callable[[argparse.ArgumentParser], None]
) -> None:
    apps = commands.add_parser("apps", help=APPS_HELP, description=APPS_HELP)
    sub = apps.add_subparsers(dest="apps_command", required=True)
    add = sub.add_parser("add", help="a new app; prints its id and API key (once)")
    add.add_argument("name")
    _settings_flags(add)
    sub.add_parser("list", help="every app (id, name, guests, key state)")
    rotate = sub.add_parser("rotate-key", help="a new API key; the old one stops working")
    rotate.add_argument("app")
    revoke = sub.add_parser("revoke", help="the app's key stops working (rotate-key "
                            "issues a new one)")
    revoke.add_argument("app")
    change = sub.add_parser("set", help="change an app's settings")
    change.add_argument("app")
    _settings_flags(change)
    kids = change.add_mutually_exclusive_group()
    kids.add_argument("--add-hs256-kid", metavar="KID",
                      help="add an HS256 secret under this new key id (printed once, also "
                      "as hs256Secret with --json); a kid the app has already is refused")
    kids.add_argument("--rotate-hs256-kid", metavar="KID",
                      help="replace the HS256 secret of this existing key id (printed once; "
                      "JWTs signed with the old one stop verifying)")
    kids.add_argument("--remove-hs256-kid", metavar="KID",
                      help="drop this key id: JWTs signed under it stop verifying")
    for parser in (add, sub.choices["list"], rotate, revoke, change):
        add_store_flags(parser)
        parser.add_argument("--json", action="store_true", help="print JSON")
    apps.set_defaults(handler=run_apps)


def _settings_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--guests", choices=("on", "off"),
                        help="whether POST /v1/players creates guests of this app")
    parser.add_argument("--match-url", metavar="TEMPLATE",
                        help="link to a match in the app's client, with {matchId}")
    parser.add_argument("--jwks-url", metavar="URL",
                        help="the app's JWKS document (RS256, ES256, EdDSA JWTs)")


def run_apps(args: Any) -> int:
    from service.errors import ApiError
    from service.store import StoreFileError, StoreInUse, open_store

    try:
        store = open_store(args.redis_url or None, args.redis_cluster or None,
                           args.redis_prefix, data_dir=args.data_dir)
    except StoreFileError as error:
        hint = " (stop that server first: the embedded store is one process's)" if isinstance(
            error, StoreInUse) else ""
        print(f"skyline apps: {error}{hint}", file=sys.stderr)
        return 1
    try:
        lines = asyncio.run(_run(store, args))
    except (ApiError, ValueError) as error:
        print(f"skyline apps: {getattr(error, 'detail', error)}", file=sys.stderr)
        return 1
    for line in lines:
        print(line)
    return 0


async def _run(store: Any, args: Any) -> list[str]:
    from service.players.apps import Apps
    from service.players.docs import Docs

    apps = Apps(Docs(store))
    try:
        return await _command(apps, args)
    finally:
        await store.close()


def _changes(args: Any) -> dict[str, object]:
    changes: dict[str, object] = {}
    if getattr(args, "guests", None) is not None:
        changes["guests"] = args.guests == "on"
    if getattr(args, "match_url", None) is not None:
        changes["match_url"] = args.match_url or None
    if getattr(args, "jwks_url", None) is not None:
        changes["jwks_url"] = args.jwks_url or None
    return changes


async def _command(apps: Any, args: Any) -> list[str]:
    import time

    command = args.apps_command
    out: dict[str, object]
    if command == "add":
        changes = _changes(args)
        app, key = await apps.add(args.name, now=int(time.time()), **changes)
        out = {"appId": app.id, "name": app.name, "apiKey": key}
        if args.json:
            return [json.dumps(out)]
        return [f"app {app.id} ({app.name})", f"api key (shown once): {key}"]
    if command == "list":
        rows = [_row(app) for app in await apps.list()]
        if args.json:
            return [json.dumps(rows)]
        return [f"{r['appId']}\t{r['name']}\tguests {'on' if r['guests'] else 'off'}"
                f"\tkey {r['key']}" for r in rows] or ["no apps yet (the default app is "
                                                       "created on first use)"]
    if command == "rotate-key":
        key = await apps.rotate_key(args.app)
        return [json.dumps({"appId": args.app, "apiKey": key})] if args.json else [
            f"api key (shown once): {key}"]
    if command == "revoke":
        app = await apps.revoke(args.app)
        return [json.dumps(_row(app))] if args.json else [f"app {app.id}: key revoked"]
    lines: list[str] = []
    changes = _changes(args)
    app = await apps.change(args.app, **changes) if changes else await apps.require_existing(
        args.app)
    kid = args.add_hs256_kid or args.rotate_hs256_kid
    secret: str | None = None
    if kid:
        secret = await apps.add_hs256_secret(args.app, kid,
                                             rotate=args.rotate_hs256_kid is not None)
        lines.append(f"hs256 secret for kid {kid} (shown once, base64url): {secret}")
        app = await apps.require_existing(args.app)
    if args.remove_hs256_kid:
        app = await apps.remove_hs256_kid(args.app, args.remove_hs256_kid)
        lines.append(f"hs256 kid {args.remove_hs256_kid} removed")
    if args.json:
        row = _row(app)
        if secret is not None:  # shown once: the only place a script can read it
            row |= {"hs256Kid": kid, "hs256Secret": secret}
        return [json.dumps(row)]
    return [f"app {app.id} ({app.name}) updated", *lines]


def _row(app: Any) -> dict[str, object]:
    state = "revoked" if app.revoked else ("set" if app.key else "none")
    return {"appId": app.id, "name": app.name, "guests": app.guests, "key": state,
            "matchUrlTemplate": app.match_url, "jwksUrl": app.jwks_url,
            "hs256Kids": sorted(app.hs256)}
