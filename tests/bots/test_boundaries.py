"""``bots -> games`` only: the bots never import the web, the store or the API."""

from __future__ import annotations

import ast
from pathlib import Path

BOTS = Path(__file__).resolve().parents[2] / "service" / "bots"
FORBIDDEN = ("service.api", "service.store", "service.app", "starlette", "strawberry",
             "redis", "httpx", "uvicorn")


def test_bots_import_only_games() -> None:
    bad = []
    for path in sorted(BOTS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            bad += [f"{path.name}: {n}" for n in names
                    if any(n == f or n.startswith(f + ".") for f in FORBIDDEN)]
    assert not bad
