"""Issue 15: ``skyline serve``'s server tells the live hub as soon as a SIGTERM arrives, and
tunes the garbage collector for a replica full of long-lived streams."""

from __future__ import annotations

import asyncio
import gc
import signal
import threading
import time
from collections.abc import Iterator

import pytest
import uvicorn
from starlette.applications import Starlette

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
