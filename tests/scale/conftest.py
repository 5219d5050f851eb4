"""Fixtures for the scale-out tests: ``skyline serve`` processes (real subprocesses, real
Redis) started on free ports and always stopped afterwards, even when a test fails.

    def test_x(replicas: ReplicaFactory, redis_url, redis_prefix):
        a, b = replicas.start(2, redis_url=redis_url, prefix=redis_prefix)
        a.url  # "http://127.0.0.1:<port>"
        a.kill()  # SIGKILL, mid-request if you like
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from tests.support.redis_servers import free_port
from tests.support.slow import starts_processes

STARTUP_TIMEOUT = 60.0  # seconds: the machine may be busy; importing the schema takes a while


def skyline_command() -> list[str]:
    """The ``skyline`` console script next to this interpreter (else ``-m service.cli``)."""
    script = Path(sys.executable).with_name("skyline")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "service.cli"]


@dataclass
class Replica:
    """One ``skyline serve`` process."""

    port: int
    process: subprocess.Popen[bytes]
    log_path: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def log_tail(self, lines: int = 30) -> str:
        if not self.log_path.exists():
            return "(no log)"
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def unhandled_errors(self) -> list[str]:
        """Lines of the process's output that report an unhandled error (a traceback)."""
        if not self.log_path.exists():
            return []
        lines = self.log_path.read_text(errors="replace").splitlines()
        return [line for line in lines if line.startswith("Traceback") or "unhandled" in line]

    def wait_ready(self, timeout: float = STARTUP_TIMEOUT) -> None:
        """Until ``/readyz`` answers 200 (the app is up and its store answers)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive:
                raise RuntimeError(f"skyline serve exited early:\n{self.log_tail()}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(self.url + "/readyz", timeout=2).status_code == 200:
                    return
            time.sleep(0.1)
        raise RuntimeError(f"skyline serve on {self.port} not ready in {timeout}s:\n"
                           f"{self.log_tail()}")

    def kill(self) -> None:
        """SIGKILL: no graceful shutdown, requests in flight are cut off."""
        if self.alive:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(10)

    def freeze(self) -> None:
        """SIGSTOP: the process holds its sockets but does nothing (``kill()`` still works)."""
        os.killpg(self.process.pid, signal.SIGSTOP)

    def stop(self) -> None:
        """SIGTERM (uvicorn's graceful shutdown), then SIGKILL if it lingers."""
        if not self.alive:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)


@dataclass
class ReplicaFactory:
    """Starts replicas; ``close()`` stops every one it started."""

    directory: Path
    started: list[Replica] = field(default_factory=list)

    def start(
        self,
        count: int = 1,
        *,
        prefix: str,
        redis_url: str | None = None,
        redis_cluster: str | None = None,
    ) -> list[Replica]:
        launched = [self._launch(prefix, redis_url, redis_cluster) for _ in range(count)]
        for replica in launched:
            replica.wait_ready()
        return launched

    def _launch(self, prefix: str, redis_url: str | None, redis_cluster: str | None) -> Replica:
        port = free_port()
        args = [
            *skyline_command(), "serve",
            "--host", "127.0.0.1", "--port", str(port),
            "--redis-prefix", prefix,
            "--log-level", "warning",
            "--ttl-finished", "3600", "--ttl-idle", "3600",
            # Consistency under load, from one address: budgets and quotas would interfere.
            "--rate-limits", "off",
            # No bots, clocks or webhooks here; the worker loops' blocking reads would count
            # among the blocked clients the fault tests wait for.
            "--no-worker",
        ]
        if redis_cluster:
            args += ["--redis-cluster", redis_cluster]
        elif redis_url:
            args += ["--redis-url", redis_url]
        else:
            raise ValueError("the scale tests run against real Redis")
        log_path = self.directory / f"skyline-{port}.log"
        env = {k: v for k, v in os.environ.items() if not k.startswith("SKYLINE_")}
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                args, stdout=log, stderr=subprocess.STDOUT, env=env,
                start_new_session=True,  # its own process group: killpg reaches uvicorn
            )
        replica = Replica(port, process, log_path)
        self.started.append(replica)
        return replica

    def close(self) -> None:
        for replica in self.started:
            tail = replica.log_tail(40).strip()
            if "\n" in tail:  # more than the banner; shown by pytest when the test failed
                print(f"--- skyline serve on {replica.port} ---\n{tail}")
            try:
                replica.stop()
            except Exception:
                with contextlib.suppress(Exception):
                    replica.kill()


@pytest.fixture
@starts_processes
def replicas() -> Iterator[ReplicaFactory]:
    with tempfile.TemporaryDirectory(prefix="skyline-replicas-") as directory:
        factory = ReplicaFactory(Path(directory))
        try:
            yield factory
        finally:
            factory.close()
