"""Dependencies point one way (DESIGN.md): engines import nothing of ours outside
``service.games`` and nothing of the web, the store, the clock or global randomness."""

from __future__ import annotations

import ast
from pathlib import Path

GAMES = Path(__file__).resolve().parent.parent / "service" / "games"

FORBIDDEN_MODULES = {
    "starlette", "strawberry", "redis", "sse_starlette", "uvicorn", "httpx", "asyncio",
    "time", "datetime", "random", "secrets", "os", "socket", "logging", "threading",
    "service.api", "service.store", "service.bots", "service.app", "service.cli",
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def _violations(path: Path) -> list[str]:
    bad = []
    for name in _imports(path):
        for forbidden in FORBIDDEN_MODULES:
            if name == forbidden or name.startswith(forbidden + "."):
                bad.append(name)
    return bad


def test_engines_import_no_io_web_store_clock_or_global_rng() -> None:
    files = sorted(GAMES.rglob("*.py"))
    assert files, "no engine source found"
    problems = {str(p.relative_to(GAMES)): v for p in files if (v := _violations(p))}
    assert problems == {}


def test_the_checker_catches_a_forbidden_import(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("import random\nfrom redis.asyncio import Redis\nfrom . import base\n")
    assert sorted(_violations(sample)) == ["random", "redis.asyncio"]
