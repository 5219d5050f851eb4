"""Dependencies point one way (docs/architecture.md): engines import nothing of ours outside
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


# -- the layers (docs/architecture.md) --------------------------------------------------------
# Each unit of ``service`` may import only the units named here (and itself). Dependencies
# point one way: api -> {queue, tables, invitations (-> tables), webhooks} -> players ->
# matches -> {clocks, identity, store, games, bots, live}; workers -> the services; nothing
# but the composition root (app, cli) imports api. Units that do not exist yet are listed so
# that their rules hold as they land.
SERVICE = GAMES.parent
# i18n (languages: negotiation, message catalogues) imports nothing of ours; everyone may.
BASE = {"errors", "metrics", "i18n"}
BELOW_MATCHES = {"identity", "store", "games", "bots", "live", *BASE}
SERVICES = {"matches", "players", "queue", "tables", "invitations", "clocks", "webhooks", "limits",
            "catalogue", "pictures", "texts", *BELOW_MATCHES}
ALLOWED: dict[str, set[str]] = {
    "games": set(),
    "store": set(),
    "i18n": set(),
    "errors": {"i18n"},
    "metrics": set(),
    # identity checks credentials (auth.py) against apps and players through protocols it
    # declares (lookups.py) and players implements: identity never imports players, which
    # imports it (docs/decisions.md, "Packages named for what they hold").
    "identity": {"errors", "i18n"},
    "bots": {"games"},
    "live": {"store", *BASE},
    "catalogue": {"games", *BASE},
    "texts": {"games", "catalogue", *BASE},
    "limits": {"store", *BASE},
    "pictures": {"games"},
    "matches": BELOW_MATCHES | {"catalogue", "pictures", "texts", "clocks"},
    "players": {"matches", "catalogue", *BELOW_MATCHES},
    "queue": {"players", "matches", "catalogue", *BELOW_MATCHES},
    "tables": {"players", "matches", "catalogue", *BELOW_MATCHES},
    "invitations": {"tables", "players", "matches", "catalogue", *BELOW_MATCHES},
    # Time controls and seat clocks: pure (the time is an argument), below matches, whose
    # record keeps them; the deadlines are fired by matches and a loop in workers.
    "clocks": set(BASE),
    "webhooks": {"players", "matches", *BELOW_MATCHES},
    "workers": SERVICES,
    "web": set(),
    # Every setting, declared once (pydantic-settings), from the defaults the services own.
    "settings": SERVICES | {"workers"},
    # The composition root: builds every service once, for every command.
    "composition": SERVICES | {"workers", "settings"},
    "api": SERVICES | {"web", "settings"},
    "app": SERVICES | {"api", "web", "workers", "settings", "composition"},
    "cli": SERVICES | {"api", "web", "workers", "app", "cli_apps", "settings", "composition"},
    "cli_apps": SERVICES,  # `skyline apps`: the operator's app commands
}
TRANSPORTS = {"api", "web", "app", "cli"}
"""Only these may import a web framework."""
WEB_FRAMEWORKS = ("starlette", "strawberry", "sse_starlette", "uvicorn", "graphql")


def _unit(path: Path, root: Path) -> str:
    """The unit of ``service`` a file belongs to: its package, or its module's name."""
    return path.relative_to(root).parts[0].removesuffix(".py")


def _absolute_imports(path: Path, root: Path) -> set[str]:
    """Every module ``path`` imports, relative imports resolved (``service.x.y``)."""
    package = [root.name, *path.relative_to(root).parent.parts]
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                base = node.module or ""
            else:
                up = package[: len(package) - node.level + 1]
                base = ".".join([*up, *([node.module] if node.module else [])])
            if node.module is None or base == root.name:
                found.update(f"{base}.{alias.name}" for alias in node.names)
            else:
                found.add(base)
    return found


def _layer_violations(root: Path) -> dict[str, list[str]]:
    problems: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        if path == root / "__init__.py":
            continue
        unit = _unit(path, root)
        assert unit in ALLOWED, f"{unit}: a new unit of service needs its rule in ALLOWED"
        bad = []
        for name in sorted(_absolute_imports(path, root)):
            parts = name.split(".")
            if parts[0] == root.name and len(parts) > 1:
                target = parts[1]
                if target != unit and target not in ALLOWED[unit]:
                    bad.append(name)
            elif unit not in TRANSPORTS and parts[0] in WEB_FRAMEWORKS:
                bad.append(name)
        if bad:
            problems[str(path.relative_to(root))] = bad
    return problems


def test_every_unit_imports_only_the_layers_below_it() -> None:
    assert _layer_violations(SERVICE) == {}


def test_no_service_package_imports_a_web_framework_or_the_api() -> None:
    for unit, allowed in ALLOWED.items():
        if unit not in TRANSPORTS:
            assert "api" not in allowed and "app" not in allowed, unit


def test_the_layer_checker_catches_upward_and_framework_imports(tmp_path: Path) -> None:
    root = tmp_path / "service"
    (root / "matches").mkdir(parents=True)
    (root / "store").mkdir()
    (root / "matches" / "act.py").write_text(
        "from service.api.rest import act\nfrom ..players import feed\n"
        "from starlette.requests import Request\nfrom . import storage\n"
        "from service import games\n"
    )
    (root / "store" / "sqlite.py").write_text("from ..errors import ApiError\n")
    assert _layer_violations(root) == {
        "matches/act.py": ["service.api.rest", "service.players", "starlette.requests"],
        "store/sqlite.py": ["service.errors"],
    }
