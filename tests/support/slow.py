"""The ``slow`` marker: which tests leave the inner loop (``pytest -m "not slow"``,
docs/testing.md, "The inner loop").

A test is slow when it starts processes -- a server (``skyline serve``, uvicorn, even in a
thread), a browser, Node, a Redis server or a Redis Cluster, a worker -- or when it is a long
property run. Two ways to say so:

- a fixture that starts them is declared once with ``@starts_processes`` (under
  ``@pytest.fixture``); ``tests/conftest.py`` marks every test that uses it, directly or
  through another fixture, ``slow`` at collection;
- a test that starts them in its own body, or a long property run, carries
  ``@pytest.mark.slow`` (or its module ``pytestmark``); a parameter that does (the
  ``"cluster"`` store) carries ``marks=pytest.mark.slow``.

``tests/test_slow_marks.py`` keeps it true: it collects the suite with this module as a
plugin (``-p tests.support.slow``, ``SKYLINE_SLOW_REPORT=<file>``), which writes what
``report`` finds for every test, and fails when a test outside ``slow`` reaches a process
starter (``STARTERS``) from its body or any of its fixtures.
"""

from __future__ import annotations

import ast
import functools
import inspect
import json
import os
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

F = TypeVar("F", bound=Callable[..., Any])

STARTS_PROCESSES = "skyline_starts_processes"

# Names whose call (or mention as a callable) starts a process or a server: the helpers of
# tests/support and the libraries' own entry points. ``subprocess.run`` is not one: a
# command that runs and exits (``skyline show``, ``mypy``) is not a server.
STARTERS = frozenset({
    "serve_in_thread",  # tests/api/conftest.py: uvicorn in a thread
    "skyline_serve",  # tests/support/live_serve.py: a ``skyline serve`` process
    "RedisServer",  # tests/support/redis_servers.py: a redis-server process
    "RedisClusterProcesses",  # ... and a cluster of six
    "ReplicaFactory",  # tests/scale/conftest.py: ``skyline serve`` replicas
    "uvicorn",  # uvicorn.Config / uvicorn.Server
    "StreamAwareServer",  # service.api.serving: skyline serve's uvicorn server
    "Popen",  # subprocess.Popen: a process that runs beside the test
    "sync_playwright",  # Chromium
    "install_node_tools",  # npm ci, node
})

# Fixtures that may start a process but normally do not: ``redis_url`` uses the Redis that
# answers on 127.0.0.1:6379 and starts a redis-server only when none does (``redis`` marker).
EXEMPT_FIXTURES = frozenset({"redis_url"})


def starts_processes(fixture_function: F) -> F:
    """Declare a fixture function as one that starts processes (put it under
    ``@pytest.fixture``): every test that uses it is marked ``slow``."""
    setattr(fixture_function, STARTS_PROCESSES, True)
    return fixture_function


def declared_starter(function: object) -> bool:
    return bool(getattr(function, STARTS_PROCESSES, False))


def mark_slow(items: list[pytest.Item]) -> None:
    """``slow`` on every test one of whose fixtures is declared ``@starts_processes``."""
    for item in items:
        if item.get_closest_marker("slow") is None and any(
            declared_starter(definition.func) for definition in fixtures_of(item)
        ):
            item.add_marker(pytest.mark.slow)


class RefuseUnmarked:
    """A plugin (registered by ``tests/conftest.py``; a plugin rather than a conftest hook so
    that it sees session-scoped fixtures too): a fixture declared ``@starts_processes`` fails
    the test that asks for it without being ``slow`` -- through ``request.getfixturevalue``
    or an indirect parameter, which collection cannot see."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_fixture_setup(self, fixturedef: pytest.FixtureDef[object],
                             request: pytest.FixtureRequest) -> None:
        item = getattr(request, "_pyfuncitem", None)
        if (declared_starter(fixturedef.func) and item is not None
                and item.get_closest_marker("slow") is None):
            pytest.fail(f"{item.nodeid} starts processes through `{fixturedef.argname}` but "
                        "is not marked slow: add @pytest.mark.slow (or marks=pytest.mark.slow "
                        "on its parameter); docs/testing.md, \"The inner loop\"",
                        pytrace=False)


def fixtures_of(item: pytest.Item) -> Iterator[Any]:
    """The fixture definitions a test uses (its closure: the fixtures of its fixtures too)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return
    for name in info.names_closure:
        definitions = info.name2fixturedefs.get(name)
        if definitions:
            yield definitions[-1]  # the one that wins for this test


def _names(node: ast.AST) -> Iterator[str]:
    """The names a piece of code mentions, annotations left out."""
    if isinstance(node, ast.Name):
        yield node.id
    elif isinstance(node, ast.Attribute):
        yield node.attr
    for field, value in ast.iter_fields(node):
        if field in ("annotation", "returns"):
            continue
        for child in value if isinstance(value, list) else [value]:
            if isinstance(child, ast.AST):
                yield from _names(child)


@functools.cache
def _module_definitions(path: str) -> dict[str, ast.AST]:
    """The functions and classes of a source file, by name (methods included)."""
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    return {node.name: node for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}


def starters_of(function: Callable[..., Any]) -> frozenset[str]:
    """The ``STARTERS`` a function reaches: in its body, or in the functions and classes of
    its own module that it mentions (and theirs)."""
    return _starters_of(inspect.unwrap(function))


@functools.cache
def _starters_of(function: Callable[..., Any]) -> frozenset[str]:
    try:
        path = inspect.getsourcefile(function)
        source = textwrap.dedent(inspect.getsource(function))
    except (OSError, TypeError):
        return frozenset()
    if path is None:
        return frozenset()
    definitions = _module_definitions(path)
    found: set[str] = set()
    seen: set[str] = set()
    todo: list[ast.AST] = [ast.parse(source)]
    while todo:
        names = set(_names(todo.pop()))
        found |= names & STARTERS
        for name in names - seen - EXEMPT_FIXTURES:
            if name in definitions:
                seen.add(name)
                todo.append(definitions[name])
    return frozenset(found)


def report(item: pytest.Item) -> dict[str, Any]:
    """What the guard test needs to know of one collected test."""
    fixtures = [
        {"name": d.argname, "declared": declared_starter(d.func),
         "starters": sorted(starters_of(d.func))}
        for d in fixtures_of(item) if d.argname not in EXEMPT_FIXTURES
    ]
    function = getattr(item, "function", None)
    return {
        "nodeid": item.nodeid,
        "slow": item.get_closest_marker("slow") is not None,
        "starters": sorted(starters_of(function)) if function is not None else [],
        "fixtures": fixtures,
    }


def pytest_collection_finish(session: pytest.Session) -> None:
    """As a plugin (``-p tests.support.slow``): write ``report`` of every collected test to
    ``$SKYLINE_SLOW_REPORT``."""
    target = os.environ.get("SKYLINE_SLOW_REPORT")
    if target:
        Path(target).write_text(json.dumps([report(item) for item in session.items]),
                                encoding="utf-8")
