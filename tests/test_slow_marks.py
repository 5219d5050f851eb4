"""The inner loop stays fast (docs/testing.md, "The inner loop"): ``pytest -m "not slow"``
starts no server, browser, Node, Redis or cluster process, and leaves out at least a fifth of
the tests.

The suite is collected in a subprocess with ``tests/support/slow.py`` as a plugin, which
reports for every test whether it is marked ``slow``, the process starters its body reaches
and those of each of its fixtures.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.slow import declared_starter, starters_of, starts_processes

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def collected(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    target = tmp_path_factory.mktemp("slow") / "report.json"
    env = {**os.environ, "SKYLINE_SLOW_REPORT": str(target)}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist",
         "-p", "no:cacheprovider", "-p", "tests.support.slow", "tests"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    report: list[dict[str, Any]] = json.loads(target.read_text(encoding="utf-8"))
    return report


def test_every_test_of_a_process_fixture_is_slow(collected: list[dict[str, Any]]) -> None:
    unmarked = [(t["nodeid"], f["name"]) for t in collected for f in t["fixtures"]
                if f["declared"] and not t["slow"]]
    assert unmarked == []
    # The declared fixtures are found at all: the browser, Node, the cluster and servers.
    declared = {f["name"] for t in collected for f in t["fixtures"] if f["declared"]}
    assert {"browser", "node_tools", "redis_cluster", "live_serve", "live"} <= declared


def test_no_fast_test_reaches_a_process_starter(collected: list[dict[str, Any]]) -> None:
    """Neither in its body (nor the helpers of its module it calls) nor in a fixture."""
    reaching = {
        t["nodeid"]: sorted({*t["starters"], *(s for f in t["fixtures"] for s in f["starters"])})
        for t in collected if not t["slow"]
    }
    assert {k: v for k, v in reaching.items() if v} == {}


def test_no_fast_test_is_a_cluster_case(collected: list[dict[str, Any]]) -> None:
    """A ``"cluster"`` parameter (direct or indirect) reaches the cluster through
    ``request.getfixturevalue``, which neither the markers nor the scan can see."""
    cases = [t["nodeid"] for t in collected
             if not t["slow"] and "cluster" in t["nodeid"].partition("[")[2]]
    assert cases == []


def test_the_inner_loop_leaves_out_more_than_a_fifth(collected: list[dict[str, Any]]) -> None:
    fast = [t for t in collected if not t["slow"]]
    assert len(collected) > 2000  # the whole suite was collected
    assert len(fast) < 0.8 * len(collected), f"{len(fast)} of {len(collected)} are not slow"


PROBE = """
import subprocess


def _serves() -> None:
    subprocess.Popen(["true"]).wait()


def _helper() -> None:
    _serves()


def through_a_helper() -> None:
    _helper()


def annotated(cluster: RedisClusterProcesses) -> None:
    del cluster
"""


def test_the_scan_follows_helpers_and_reads_no_annotations(tmp_path: Path) -> None:
    """What the guard relies on: a starter reached through a helper of the module counts; a
    starter named only in a type annotation does not; a declared fixture is known."""
    path = tmp_path / "probe.py"
    path.write_text("from __future__ import annotations\n" + PROBE, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("skyline_slow_probe", path)
    assert spec is not None and spec.loader is not None
    probe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(probe)

    assert starters_of(probe.through_a_helper) == {"Popen"}
    assert starters_of(probe.annotated) == frozenset()

    @starts_processes
    def fixture_function() -> None:
        pass

    assert declared_starter(fixture_function)
