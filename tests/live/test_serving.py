"""Issue 15: ``skyline serve``'s server tells the live hub as soon as a SIGTERM arrives, and
tunes the garbage collector for a replica full of long-lived streams."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from websockets import Subprotocol
from websockets.sync.client import connect

from service.api import serving
from service.api.serving import StreamAwareServer, collect_periodically, tune_collector
from tests.api.conftest import free_port


@pytest.fixture
def default_collector() -> Iterator[None]:
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


def test_the_collector_is_tuned_for_long_lived_streams(default_collector: None) -> None:
    tune_collector()
    assert gc.get_threshold() == (serving.YOUNG_THRESHOLD, serving.MIDDLE_THRESHOLD,
                                  serving.OLD_THRESHOLD)
    assert gc.get_freeze_count() > 0  # what the process held is out of every collection


async def test_full_collections_come_on_the_servers_schedule() -> None:
    collections: list[int] = []

    def record(phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and info["generation"] == 2:
            collections.append(1)

    gc.callbacks.append(record)
    task = asyncio.create_task(collect_periodically(0.01))
    try:
        while len(collections) < 2:
            await asyncio.sleep(0.01)
    finally:
        task.cancel()
        gc.callbacks.remove(record)
    assert len(collections) >= 2


@pytest.mark.slow
def test_sigterm_tells_the_hub_before_the_server_stops() -> None:
    told: list[str] = []
    config = uvicorn.Config(Starlette(), host="127.0.0.1", port=free_port(),
                            log_level="warning", lifespan="off")
    server = StreamAwareServer(config, on_stopping=lambda: told.append("stopping"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline
        time.sleep(0.02)
    server.handle_exit(signal.SIGTERM, None)
    thread.join(timeout=20)
    assert not thread.is_alive() and told == ["stopping"]


@pytest.mark.parametrize(("flags", "deflate"), [([], False), (["--ws-compression"], True)])
@pytest.mark.slow
def test_websocket_compression_is_offered_only_when_asked_for(
    tmp_path: Path, flags: list[str], deflate: bool
) -> None:
    """``skyline serve`` leaves permessage-deflate off unless ``--ws-compression``: each
    open compressed connection holds about 40 KB of coder state (docs/decisions.md)."""
    port = free_port()
    log = (tmp_path / "serve.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "service.cli", "serve", "--port", str(port),
         "--data-dir", str(tmp_path), "--log-level", "warning", *flags],
        stdout=log, stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, (tmp_path / "serve.log").read_text()
            assert time.monotonic() < deadline, "skyline serve did not start"
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200:
                    break
            time.sleep(0.1)
        with connect(f"ws://127.0.0.1:{port}/graphql", compression="deflate",
                     subprotocols=[Subprotocol("graphql-transport-ws")]) as ws:
            extensions = ws.response.headers.get("Sec-WebSocket-Extensions", "")
            ws.send('{"type": "connection_init"}')
            assert "connection_ack" in str(ws.recv(timeout=10))
        assert ("permessage-deflate" in extensions) is deflate
    finally:
        process.terminate()
        process.wait(20)
        log.close()
