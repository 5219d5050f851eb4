"""The schemathesis CLI (`st run`, all phases, every check) against a live `skyline serve`.

The CLI's coverage phase sends requests the pytest integration does not (tech-notes), so the
suite also runs it against the real server process on a free port, stopped afterwards
(``live_serve``, ``st_run``: ``tests/support/live_serve.py``).
"""

from __future__ import annotations

from pathlib import Path

from tests.support.live_serve import st_run

CONFIG = Path(__file__).with_name("schemathesis.toml")


def test_st_run_against_a_live_server(live_serve: str, tmp_path: Path) -> None:
    result = st_run(f"{live_serve}/openapi.json", CONFIG, cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
