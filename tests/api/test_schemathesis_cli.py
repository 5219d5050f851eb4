"""The schemathesis CLI (`st run`, all phases, every check) against a live `skyline serve`.

The CLI's coverage phase sends requests the pytest integration does not (tech-notes), so the
suite also runs it against the real server process on a free port, stopped afterwards.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.api.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
CONFIG = Path(__file__).with_name("schemathesis.toml")


@pytest.fixture
def live_serve() -> Iterator[str]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKYLINE_")}
    process = subprocess.Popen(
        [str(BIN / "skyline"), "serve", "--host", "127.0.0.1", "--port", str(port),
         "--log-level", "warning"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                output = process.stdout.read().decode() if process.stdout else ""
                raise AssertionError(f"skyline serve did not start:\n{output}")
            time.sleep(0.1)
        yield url
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_st_run_against_a_live_server(live_serve: str, tmp_path: Path) -> None:
    result = subprocess.run(
        [str(BIN / "st"), "--no-color", "--config-file", str(CONFIG), "run",
         f"{live_serve}/openapi.json", "--max-examples", "15", "--seed", "1",
         "--workers", "1", "--request-timeout", "20"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
