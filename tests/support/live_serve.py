"""A live ``skyline serve`` process for tests that drive the real server from outside, and
the schemathesis CLI (``st run``) they drive it with.

The fixture ``live_serve`` (registered by the conftests that import it) starts the server on
a free port with the games the build registers (``SKYLINE_*`` settings of the calling
environment left out), waits until ``/healthz`` answers and yields its base URL; it stops the
process (SIGINT, then SIGKILL) at the end of the test.

    def test_x(live_serve: str, tmp_path: Path) -> None:
        result = st_run(f"{live_serve}/openapi.json", CONFIG, cwd=tmp_path)
        assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO

import httpx
import pytest

from tests.support.redis_servers import free_port
from tests.support.slow import starts_processes

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
STARTUP_TIMEOUT = 60.0  # seconds until /healthz must answer
STOP_TIMEOUT = 20.0  # seconds after SIGINT before the process is killed


@contextlib.contextmanager
def skyline_serve(extra_args: Sequence[str] = (), port: int | None = None,
                  output: IO[bytes] | None = None, log_level: str = "warning") -> Iterator[str]:
    """``skyline serve`` on a free port of 127.0.0.1 (or ``port``) while the block runs;
    yields its URL. ``extra_args``: more ``serve`` flags; ``output``: a file that gets what
    the server prints (its log)."""
    port = port or free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKYLINE_")}
    # What the server prints goes to a file, never to a pipe nobody reads while it runs: a
    # full pipe (64 KiB of log) would block the server's event loop on its next log line.
    log = output or tempfile.TemporaryFile()  # noqa: SIM115 (closed after the process)
    process = subprocess.Popen(
        [str(BIN / "skyline"), "serve", "--host", "127.0.0.1", "--port", str(port),
         "--log-level", log_level, "--data-dir", ":memory:", *extra_args],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while True:
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                printed = ""
                if output is None:
                    log.seek(0)
                    printed = log.read().decode(errors="replace")
                raise AssertionError(f"skyline serve did not start:\n{printed}")
            time.sleep(0.1)
        yield url
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if output is None:
            log.close()


@pytest.fixture
@starts_processes
def live_serve() -> Iterator[str]:
    """The base URL of a ``skyline serve`` process started for this test."""
    with skyline_serve() as url:
        yield url


ST_EXAMPLES = 50  # generated cases per operation (issue 20's fuzzing gate: at least 50)


def st_run(target: str, config: Path, *, cwd: Path, env: Mapping[str, str] | None = None
           ) -> subprocess.CompletedProcess[str]:
    """The schemathesis CLI, all phases and every check (as ``config`` sets them), positive
    and negative data, against ``target`` (an OpenAPI document's URL or a GraphQL endpoint):
    ``ST_EXAMPLES`` examples per operation, seed 1, one worker, 20 s per request, 10 minutes
    in all. ``env``: added to the environment (e.g. ``SCHEMATHESIS_HOOKS``)."""
    return subprocess.run(
        [str(BIN / "st"), "--no-color", "--config-file", str(config), "run",
         target, "--max-examples", str(ST_EXAMPLES), "--seed", "1",
         "--mode", "all", "--phases", "examples,coverage,fuzzing,stateful",
         "--workers", "1", "--request-timeout", "20"],
        cwd=cwd, capture_output=True, text=True, timeout=600,
        env={**os.environ, **env} if env else None,
    )
