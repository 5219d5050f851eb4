"""The schemathesis CLI (`st run`, all phases, every check) against ``/graphql`` of a live
`skyline serve` (its coverage phase sends documents the pytest integration does not), on the
embedded store and on Redis (issue 20's fuzzing gate: negative data, 50 examples an
operation).

The server is a separate process on a free port, with the games the build registers, stopped
at the end of the test (``skyline_serve``, ``st_run``: ``tests/support/live_serve.py``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.live_serve import ROOT, skyline_serve, st_run

pytestmark = pytest.mark.slow  # a live `skyline serve` per test

CONFIG = Path(__file__).with_name("schemathesis.toml")


def run_against(store_args: list[str]) -> None:
    with skyline_serve(["--rate-limits", "off", *store_args]) as url:
        result = st_run(f"{url}/graphql", CONFIG, cwd=ROOT)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]


def test_st_run_against_graphql_of_a_live_server() -> None:
    run_against([])


def test_st_run_against_graphql_of_a_live_server_on_redis(
    redis_url: str, redis_prefix: str
) -> None:
    run_against(["--redis-url", redis_url, "--redis-prefix", redis_prefix])
