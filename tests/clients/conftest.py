"""Fixtures of the generated-client tests: the pinned Node tools, a build folder, a live server.

- ``node_tools`` (session; ``install_node_tools()`` outside this folder):
  ``tests/clients/node_modules`` as ``package-lock.json`` pins it.
  ``npm ci`` runs only when the folder is missing or the lockfile (or Node) changed since the
  last install (a stamp file inside node_modules), under a file lock so that parallel pytest
  workers install once. Without ``node`` (20.19 or newer) and ``npm`` the tests FAIL and say
  what to install -- they never pass by skipping.
- ``run`` (helper): a command with its output in the assertion message when it fails.
- ``live_serve`` (function): a real ``skyline serve`` (tests/support/live_serve.py).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.live_serve import live_serve  # noqa: F401 (the fixture, for these tests)
from tests.support.slow import starts_processes

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
OPENAPI = ROOT / "openapi" / "openapi.json"
SCHEMA_GRAPHQL = ROOT / "schema.graphql"
NODE_MODULES = HERE / "node_modules"
STAMP = NODE_MODULES / ".skyline-npm-ci"
LOCK = HERE / ".npm-ci.lock"
CACHE = HERE / ".cache"  # generated code and tool caches kept between runs (ignored by git)
MIN_NODE = (20, 19)  # @redocly/cli 2 needs 20.19+ (or 22.12+)

HOW_TO_INSTALL_NODE = (
    "The generated-client tests (tests/clients) need Node.js {min} or newer with npm. Install "
    "them (Debian/Ubuntu: `apt-get install -y nodejs npm`; macOS: `brew install node`), or put "
    "`node` and `npm` on PATH. {problem}"
)


def _node_problem() -> str | None:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        missing = " and ".join(n for n, p in (("node", node), ("npm", npm)) if p is None)
        return f"Not found on PATH: {missing}."
    version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30)
    found = re.match(r"v(\d+)\.(\d+)", version.stdout.strip())
    if found is None or (int(found[1]), int(found[2])) < MIN_NODE:
        return f"`node --version` says {version.stdout.strip() or version.stderr.strip()!r}."
    return None


def _stamp() -> str:
    digest = hashlib.sha256()
    for name in ("package.json", "package-lock.json"):
        digest.update((HERE / name).read_bytes())
    node = subprocess.run(["node", "--version"], capture_output=True, text=True, timeout=30)
    digest.update(node.stdout.encode())
    return digest.hexdigest()


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@dataclass(frozen=True)
class NodeTools:
    """The pinned tools' entry points in tests/clients/node_modules/.bin."""

    bin: Path

    def __getitem__(self, name: str) -> str:
        return str(self.bin / name)


@pytest.fixture(scope="session")
@starts_processes
def node_tools() -> NodeTools:
    return install_node_tools()


def install_node_tools() -> NodeTools:
    """What ``node_tools`` gives, for a test outside tests/clients (the docs' TypeScript
    example): ``npm ci`` when the stamp is stale; the test fails without Node."""
    problem = _node_problem()
    if problem is not None:
        pytest.fail(HOW_TO_INSTALL_NODE.format(min=".".join(map(str, MIN_NODE)),
                                               problem=problem), pytrace=False)
    with file_lock(LOCK):
        wanted = _stamp()
        if not (STAMP.exists() and STAMP.read_text() == wanted):
            env = {**os.environ, "npm_config_update_notifier": "false"}
            done = subprocess.run(
                ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                cwd=HERE, env=env, capture_output=True, text=True, timeout=900,
            )
            if done.returncode != 0:
                pytest.fail(f"`npm ci` in {HERE} failed ({done.returncode}):\n"
                            f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}", pytrace=False)
            STAMP.write_text(wanted)
    return NodeTools(NODE_MODULES / ".bin")


def tool_env() -> dict[str, str]:
    """The environment for the Node tools: no telemetry, no update checks, no colours."""
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("SKYLINE_")},
        "REDOCLY_TELEMETRY": "off",
        "REDOCLY_SUPPRESS_UPDATE_NOTICE": "true",
        "NO_UPDATE_NOTIFIER": "1",
        "NO_COLOR": "1",
        "FORCE_COLOR": "0",
    }


def run(command: Sequence[str | Path], *, cwd: Path = ROOT, timeout: float = 300,
        env: dict[str, str] | None = None, what: str = "") -> subprocess.CompletedProcess[str]:
    """Runs ``command``; fails the test with its output unless it exits 0."""
    done = subprocess.run([str(c) for c in command], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env if env is not None else tool_env())
    if done.returncode != 0:
        pytest.fail(f"{what or command[0]} failed (exit {done.returncode}):\n"
                    f"{done.stdout[-8000:]}\n{done.stderr[-4000:]}", pytrace=False)
    return done


def ts_build(folder: Path, sources: Sequence[Path], generated: Sequence[str]) -> Path:
    """A TypeScript build folder: ``sources`` copied in, this folder's ``node_modules`` linked,
    a tsconfig that extends tests/clients/tsconfig.json over the sources and the ``generated``
    files (written there by the caller); ``tsc`` writes ES modules to ``folder/out``."""
    folder.mkdir(parents=True, exist_ok=True)
    for source in sources:
        shutil.copy(source, folder / source.name)
    (folder / "node_modules").symlink_to(NODE_MODULES, target_is_directory=True)
    (folder / "package.json").write_text('{"type": "module", "private": true}\n')
    files = ", ".join(f'"{name}"' for name in [*(s.name for s in sources), *generated])
    (folder / "tsconfig.json").write_text(
        f'{{"extends": "{HERE / "tsconfig.json"}",\n'
        f' "compilerOptions": {{"rootDir": ".", "outDir": "out"}},\n'
        f' "files": [{files}]}}\n'
    )
    return folder
