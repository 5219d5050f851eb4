"""The schemathesis CLI (`st run`, all phases, every check) against a live `skyline serve`.

The CLI's coverage phase sends requests the pytest integration does not (tech-notes), so the
suite also runs it against the real server process on a free port, stopped afterwards
(``skyline_serve``, ``st_run``: ``tests/support/live_serve.py``). Seat tokens come from the
hooks file ``st_seat_tokens.py`` (the token of the match a request names), and event streams
end after a second (``--sse-max-seconds``), so that schemathesis reads whole streams and
validates every event (ST108).
"""

from __future__ import annotations

from pathlib import Path

from tests.support.live_serve import skyline_serve, st_run

HERE = Path(__file__).parent
CONFIG = HERE / "schemathesis.toml"
HOOKS = HERE / "st_seat_tokens.py"


def test_st_run_against_a_live_server(tmp_path: Path) -> None:
    with skyline_serve(["--sse-max-seconds", "1"]) as url:
        result = st_run(f"{url}/openapi.json", CONFIG, cwd=tmp_path,
                        env={"SCHEMATHESIS_HOOKS": str(HOOKS)})
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
