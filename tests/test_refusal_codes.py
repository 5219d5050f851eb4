"""Every refusal code an engine can raise is published in its ``codes.py`` (docs/codes.md),
with rule ids of its rules digest -- and nothing else is.

The codes an engine raises are found statically (every ``IllegalAction(code, ...)`` in the
game's package, its first argument resolved through the package's and ``base.py``'s string
constants) and dynamically (the codes seeded random games meet when they try moves that are
not legal now, as ``tests/conformance.py`` does).
"""

from __future__ import annotations

import ast
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service import games
from service.api.graphql.results import ACT_FAILURES
from service.api.graphql.types.failures import IllegalMove, failure_for
from service.errors import CODES, ApiError
from service.games.base import Engine, IllegalAction
from service.games.ginkgopolis import codes as gk_codes
from service.games.ny1901 import codes as ny_codes
from service.games.refusals import Refusal, refusal_codes

ROOT = Path(__file__).resolve().parent.parent
GAMES_DIR = ROOT / "service" / "games"
RULES_DIR = ROOT.parent / "shared" / "rules"
"""The rules digests the rule ids come from (beside the repository, not in it: checked when
present)."""

PACKAGES = {"ny1901": ny_codes.REFUSALS, "ginkgopolis": gk_codes.REFUSALS}
PREFIX = {"ny1901": "NY", "ginkgopolis": "GK"}
RULE_ID = re.compile(r"^(NY|GK)-[A-Z][0-9]*$")

DYNAMIC = {("ny1901", "rules.py", "Rules._apply_build"): ("rules.py", "Rules.tile_refusal")}
"""Raise sites whose code is a variable: (game, module, function) -> the function whose
``return CONSTANT`` statements give its possible values."""

SHARED = {"not_your_turn"}
"""Codes an engine shares with the service (``service.errors.CODES``): the service answers
them itself (409) before the rules are asked, so they never reach GraphQL's ``IllegalMove``."""


# -- the static scan -----------------------------------------------------------------------


def _constants(tree: ast.Module) -> dict[str, str]:
    """Module-level ``NAME = "string"`` (or ``NAME: Final = "string"``) assignments."""
    found: dict[str, str] = {}
    for node in tree.body:
        value: ast.expr | None = None
        names: list[str] = []
        if isinstance(node, ast.Assign):
            value = node.value
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            value, names = node.value, [node.target.id]
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            found.update(dict.fromkeys(names, value.value))
    return found


def _module_path(package: Path, module: str | None, level: int) -> Path | None:
    base = package
    for _ in range(level - 1):
        base = base.parent
    candidate = base.joinpath(*(module or "").split(".")).with_suffix(".py")
    return candidate if candidate.is_file() else None


def _names(path: Path) -> dict[str, str]:
    """String constants visible in the module: its own and those it imports relatively."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = _constants(tree)
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level:
            source = _module_path(path.parent, node.module, node.level)
            if source is None:
                continue
            theirs = _constants(ast.parse(source.read_text(encoding="utf-8")))
            for alias in node.names:
                if alias.name in theirs:
                    names[alias.asname or alias.name] = theirs[alias.name]
    return names


def _functions(tree: ast.Module) -> Iterator[tuple[str, ast.AST]]:
    """(qualified name, node) of every function, methods included."""
    def walk(node: ast.AST, prefix: str) -> Iterator[tuple[str, ast.AST]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                yield from walk(child, f"{prefix}{child.name}.")
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield f"{prefix}{child.name}", child
                yield from walk(child, f"{prefix}{child.name}.")
    yield from walk(tree, "")


def _own_nodes(function: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``function``'s body, not those of functions nested in it."""
    for child in ast.iter_child_nodes(function):
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield child
            yield from _own_nodes(child)


def _returned(path: Path, function: str) -> set[str]:
    names = _names(path)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    node = dict(_functions(tree))[function]
    return {
        names[n.value.id] for n in _own_nodes(node)
        if isinstance(n, ast.Return) and isinstance(n.value, ast.Name) and n.value.id in names
    }


def raised_codes(game: str) -> dict[str, set[str]]:
    """code -> the raise sites (``module:function``) of ``IllegalAction(code, ...)``."""
    package = GAMES_DIR / game
    found: dict[str, set[str]] = {}
    for path in sorted(package.glob("*.py")):
        names = _names(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function, node in _functions(tree):
            for call in _own_nodes(node):
                if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
                        and call.func.id == "IllegalAction"):
                    continue
                site = f"{path.name}:{function}"
                first = call.args[0] if call.args else None
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    codes = {first.value}
                elif isinstance(first, ast.Name) and first.id in names:
                    codes = {names[first.id]}
                else:
                    source = DYNAMIC.get((game, path.name, function))
                    assert source is not None, (
                        f"{game}/{site}: IllegalAction with a code this test cannot resolve; "
                        "use a module constant (or list the site in DYNAMIC)"
                    )
                    codes = _returned(package / source[0], source[1])
                    assert codes, f"{game}/{site}: {source} returns no code constant"
                for code in codes:
                    found.setdefault(code, set()).add(site)
    return found


@pytest.mark.parametrize("game", sorted(PACKAGES))
def test_every_raised_code_is_published_and_every_published_code_is_raised(game: str) -> None:
    raised = raised_codes(game)
    published = PACKAGES[game]
    missing = {code: sorted(sites) for code, sites in raised.items() if code not in published}
    assert missing == {}, f"add these codes to service/games/{game}/codes.py: {missing}"
    assert sorted(set(published) - set(raised)) == [], "published codes nothing raises"


@pytest.mark.parametrize("game", sorted(PACKAGES))
def test_the_engine_publishes_its_codes(game: str) -> None:
    engine = games.get(game)
    assert refusal_codes(engine) is PACKAGES[game]
    assert engine.refusal_codes is PACKAGES[game]  # type: ignore[attr-defined]


@pytest.mark.parametrize("game", sorted(PACKAGES))
def test_codes_are_stable_words_with_rule_ids_and_one_line_meanings(game: str) -> None:
    for code, refusal in PACKAGES[game].items():
        assert isinstance(refusal, Refusal)
        assert re.fullmatch(r"[a-z][a-z0-9_]*", code), code
        assert refusal.rules, f"{code} cites no rule"
        for rule in refusal.rules:
            assert RULE_ID.match(rule) and rule.startswith(PREFIX[game] + "-"), (code, rule)
        text = refusal.description
        assert text and "\n" not in text and text.endswith("."), (code, text)
        assert len(text) <= 300, code


def _digest_rule_ids(text: str, prefix: str) -> set[str]:
    """Rule ids of a rules digest: its sections ``## ... (NY-A)`` and their items
    ``- A6 ...``."""
    ids: set[str] = set()
    section = None
    for line in text.splitlines():
        heading = re.match(rf"^##.*\(({prefix}-([A-Z]))\)", line)
        if heading:
            ids.add(heading.group(1))
            section = heading.group(2)
            continue
        if line.startswith("## "):
            section = None
        item = re.match(r"^- ([A-Z])([0-9]+) ", line)
        if item and section == item.group(1):
            ids.add(f"{prefix}-{item.group(1)}{item.group(2)}")
    return ids


@pytest.mark.parametrize("game", sorted(PACKAGES))
def test_rule_ids_exist_in_the_rules_digest(game: str) -> None:
    digest = RULES_DIR / f"{game}.md"
    if not digest.is_file():
        pytest.skip(f"{digest} is not beside the repository")
    known = _digest_rule_ids(digest.read_text(encoding="utf-8"), PREFIX[game])
    assert {"NY-A6", "NY-C"} <= known or {"GK-T2", "GK-T"} <= known  # the parser works
    cited = {rule for refusal in PACKAGES[game].values() for rule in refusal.rules}
    assert sorted(cited - known) == []


@pytest.mark.parametrize("game", sorted(PACKAGES))
def test_refusal_codes_are_illegal_moves_in_graphql_and_not_service_codes(game: str) -> None:
    for code in PACKAGES[game]:
        if code in SHARED:
            continue
        assert code not in CODES, f"{code} is a service code: GraphQL would misfile it"
        member = failure_for(ApiError(422, code, "Illegal move", "No."), ACT_FAILURES)
        assert isinstance(member, IllegalMove) and member.code == code


# -- the dynamic probe ---------------------------------------------------------------------


def probe_codes(engine: Engine[Any], players: int, seed: int, *, max_steps: int = 3000,
                probes: int = 4) -> set[str]:
    """The codes a seeded random game meets when, before each move, seats try moves that were
    legal earlier (or for another seat) and an inactive seat tries the active one's."""
    chooser = random.Random(seed)
    state = engine.setup(players, None, seed)
    seen: list[Any] = []
    codes: set[str] = set()

    def refused(seat: int, action: Any) -> None:
        try:
            engine.apply(state, seat, action)
        except IllegalAction as refusal:
            codes.add(refusal.code)

    for _ in range(max_steps):
        if engine.result(state) is not None:
            refused(0, seen[-1])  # the game is over
            return codes
        active = sorted(engine.active_seats(state))
        seat = chooser.choice(active)
        legal = engine.legal_actions(state, seat)
        idle = [s for s in range(players) if s not in active]
        if idle:
            refused(chooser.choice(idle), legal[0])
        for _ in range(probes if seen else 0):
            other = chooser.choice(seen)
            if other not in legal:
                refused(seat, other)
        action = chooser.choice(legal)
        seen.append(action)
        state, _ = engine.apply(state, seat, action)
    raise AssertionError("the game did not end")


@pytest.mark.parametrize(("game", "players", "seed"), [
    ("ny1901", 2, 1), ("ny1901", 4, 2), ("ginkgopolis", 1, 3), ("ginkgopolis", 3, 4),
])
def test_codes_met_in_random_games_are_published(game: str, players: int, seed: int) -> None:
    met = probe_codes(games.get(game), players, seed)
    assert len(met) >= 3, met  # the probe reaches several refusals
    assert sorted(met - set(PACKAGES[game])) == []
