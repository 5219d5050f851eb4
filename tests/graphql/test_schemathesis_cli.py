"""The schemathesis CLI (`st run`, all phases, every check) against ``/graphql`` of a live
`skyline serve` (its coverage phase sends documents the pytest integration does not).

The server is a separate process on a free port, with the games the build registers, stopped
at the end of the test (``live_serve``, ``st_run``: ``tests/support/live_serve.py``).
"""

from __future__ import annotations

from pathlib import Path

from tests.support.live_serve import ROOT, st_run

CONFIG = Path(__file__).with_name("schemathesis.toml")


def test_st_run_against_graphql_of_a_live_server(live_serve: str) -> None:
    result = st_run(f"{live_serve}/graphql", CONFIG, cwd=ROOT)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
