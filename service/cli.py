"""The `skyline` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def _cmd_games(_: argparse.Namespace) -> int:
    from service import games

    for engine in games.all():
        print(f"{engine.id:12} {engine.title} ({engine.min_players}-{engine.max_players} players)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="skyline", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    games_cmd = commands.add_parser("games", help="list the games this build hosts")
    games_cmd.set_defaults(handler=_cmd_games)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    handler = args.handler
    result: int = handler(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
