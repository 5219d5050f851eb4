"""The schemathesis CLI (`st run`, all phases, every check) against a live `skyline serve`.

The CLI's coverage phase sends requests the pytest integration does not (tech-notes), so the
suite also runs it against the real server process on a free port, stopped afterwards
(``skyline_serve``, ``st_run``: ``tests/support/live_serve.py``), on the embedded store and
on Redis (issue 20's fuzzing gate: every phase, negative data, 50 examples an operation).
Seat tokens come from the hooks file ``st_seat_tokens.py`` (the token of the match a request
names), and event streams end after 0.2 s (``--sse-max-seconds``), so that schemathesis
reads whole streams and validates every event (ST108). Rate limits are off
(``--rate-limits off``): with them on, most generated creations would get 429 and leave
the logic behind them untested (schemathesis warns so); tests/api/test_rate_limits.py
covers the limits.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.live_serve import skyline_serve, st_run

pytestmark = pytest.mark.slow  # a live `skyline serve` per test

HERE = Path(__file__).parent
CONFIG = HERE / "schemathesis.toml"
HOOKS = HERE / "st_seat_tokens.py"


def run_against(store_args: list[str], cwd: Path) -> None:
    with skyline_serve(["--sse-max-seconds", "0.2", "--rate-limits", "off",
                        *store_args]) as url:
        result = st_run(f"{url}/openapi.json", CONFIG, cwd=cwd,
                        env={"SCHEMATHESIS_HOOKS": str(HOOKS)})
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]


def test_st_run_against_a_live_server(tmp_path: Path) -> None:
    run_against([], tmp_path)


def test_st_run_against_a_live_server_on_redis(
    tmp_path: Path, redis_url: str, redis_prefix: str
) -> None:
    run_against(["--redis-url", redis_url, "--redis-prefix", redis_prefix], tmp_path)
