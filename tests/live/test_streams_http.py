"""Issue 15 over HTTP: the event stream's patch mode, caps that fail cleanly (429/503 with
Retry-After, established streams kept, /readyz green), the jittered goodbye on shutdown and
the live figures in /metrics -- on a real uvicorn server."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import jsonpatch
import pytest
import uvicorn

from service.api.serving import StreamAwareServer
from service.app import Settings, create_app
from service.limits import LimitSettings
from service.store import SqliteStore
from tests.api.conftest import free_port
from tests.api.sse import SseEvent, events
from tests.support.slow import starts_processes
from tests.support.states import timeless


class Server:
    def __init__(self, **settings: Any) -> None:
        settings.setdefault("limits", LimitSettings(enabled=False))
        self.app = create_app(SqliteStore(":memory:"), settings=Settings(**settings))
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(self.app, host="127.0.0.1", port=self.port,
                                log_level="warning", lifespan="on",
                                timeout_graceful_shutdown=5)
        hub = self.app.state.match_service.hub
        self.server = StreamAwareServer(config, on_stopping=hub.shutdown)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> Server:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=20)


@pytest.fixture
@starts_processes
def server() -> Iterator[Server]:
    with Server(max_watchers=3, max_watchers_per_client=2) as running:
        yield running


@pytest.fixture
async def http(server: Server) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
        yield client


async def _match(http: httpx.AsyncClient, players: int = 2) -> tuple[str, dict[int, str]]:
    created = await http.post("/v1/matches", json={"game": "ny1901", "players": players,
                                                  "seed": 4})
    assert created.status_code == 201, created.text
    body = created.json()
    return body["matchId"], {s["seat"]: s["token"] for s in body["seats"]}


async def _move(http: httpx.AsyncClient, match_id: str, tokens: dict[int, str]) -> int:
    state = (await http.get(f"/v1/matches/{match_id}")).json()
    seat = min(state["activeSeats"])
    auth = {"Authorization": f"Bearer {tokens[seat]}"}
    moves = (await http.get(f"/v1/matches/{match_id}/legal-moves", headers=auth)).json()
    answer = await http.post(f"/v1/matches/{match_id}/actions", headers=auth,
                             json={"action": moves["moves"][0]})
    assert answer.status_code == 200, answer.text
    version: int = answer.json()["version"]
    return version


class Stream:
    """One open event stream, read event by event."""

    def __init__(self, http: httpx.AsyncClient, url: str, headers: dict[str, str]) -> None:
        self._context = http.stream("GET", url, headers=headers)
        self.response: httpx.Response | None = None
        self._events: AsyncIterator[SseEvent] | None = None

    async def open(self) -> httpx.Response:
        self.response = await self._context.__aenter__()
        if self.response.status_code == 200:
            self._events = events(self.response)
        return self.response

    async def next(self) -> SseEvent:
        assert self._events is not None
        return await asyncio.wait_for(anext(self._events), 30)

    async def close(self) -> None:
        await self._context.__aexit__(None, None, None)


async def test_patch_mode_over_sse_rebuilds_every_version(http: httpx.AsyncClient) -> None:
    match_id, tokens = await _match(http)
    stream = Stream(http, f"/v1/matches/{match_id}/events?mode=patch&snapshotEvery=3", {})
    assert (await stream.open()).status_code == 200
    first = await stream.next()
    assert first.event == "snapshot" and first.id == "0"
    document = first.json()
    kinds = []
    for _ in range(5):
        version = await _move(http, match_id, tokens)
        event = await stream.next()
        kinds.append(event.event)
        assert event.id == str(version)
        body = event.json()
        document = body if event.event == "snapshot" else jsonpatch.apply_patch(
            document, body["operations"])
        assert timeless(document) == timeless((await http.get(f"/v1/matches/{match_id}")).json())
    await stream.close()
    assert kinds == ["patch", "patch", "snapshot", "patch", "patch"]


@pytest.mark.parametrize("query", ["mode=delta", "mode=", "snapshotEvery=0",
                                   "snapshotEvery=%C2%B2", "snapshotEvery=10001"])
async def test_bad_stream_options_are_400(http: httpx.AsyncClient, query: str) -> None:
    match_id, _ = await _match(http)
    answer = await http.get(f"/v1/matches/{match_id}/events?{query}")
    assert answer.status_code == 400
    assert answer.json()["code"] == "malformed"


async def test_caps_answer_429_and_503_and_keep_established_streams(
    http: httpx.AsyncClient,
) -> None:
    match_id, tokens = await _match(http)
    url = f"/v1/matches/{match_id}/events"
    seat0 = {"Authorization": f"Bearer {tokens[0]}"}
    streams = [Stream(http, url, seat0), Stream(http, url, seat0)]
    for stream in streams:
        assert (await stream.open()).status_code == 200
        assert (await stream.next()).id == "0"
    third = Stream(http, url, seat0)  # the seat's third stream: its cap is 2
    refused = await third.open()
    assert refused.status_code == 429
    assert int(refused.headers["Retry-After"]) > 0
    assert json.loads(await refused.aread())["code"] == "too_many_streams"
    await third.close()
    spectator = Stream(http, url, {})  # another client: the replica's last slot
    assert (await spectator.open()).status_code == 200
    await spectator.next()
    full = Stream(http, url, {"Authorization": f"Bearer {tokens[1]}"})
    answer = await full.open()
    assert answer.status_code == 503
    assert int(answer.headers["Retry-After"]) > 0
    assert json.loads(await answer.aread())["code"] == "replica_full"
    await full.close()
    assert (await http.get("/readyz")).status_code == 200  # watchers never flap readiness
    metrics = (await http.get("/metrics")).text
    assert "skyline_live_watchers 3" in metrics
    assert 'skyline_live_refused_total{code="replica_full"} 1' in metrics
    assert 'skyline_live_refused_total{code="too_many_streams"} 1' in metrics
    version = await _move(http, match_id, tokens)
    for stream in [*streams, spectator]:  # the established streams go on
        assert (await stream.next()).id == str(version)
        await stream.close()
    await asyncio.sleep(0.2)
    metrics = (await http.get("/metrics")).text
    assert "skyline_live_watchers 0" in metrics
    assert "skyline_live_deliveries_total 6" in metrics


@pytest.mark.slow
async def test_a_stopping_replica_sends_a_jittered_retry() -> None:
    """On SIGTERM the server (``skyline serve``'s) tells the live hub before uvicorn waits
    for connections to close; every stream then ends with a ``retry:`` between 1 and 10 s,
    and new streams are refused. (A server in a thread installs no signal handlers: the
    test calls the handler's first step, ``notify_stopping``, from its own thread.)"""
    with Server() as running:
        async with httpx.AsyncClient(base_url=running.url, timeout=30) as http:
            match_id, _ = await _match(http)
            retries: list[int] = []
            async with http.stream("GET", f"/v1/matches/{match_id}/events") as response:
                lines = response.aiter_lines()
                while await anext(lines) != "":
                    pass  # the first event
                running.server.notify_stopping()
                async for line in lines:
                    if line.startswith("retry:"):
                        retries.append(int(line.partition(":")[2]))
            refused = await http.get(f"/v1/matches/{match_id}/events")
    assert len(retries) == 1 and 1000 <= retries[0] <= 10_000
    assert refused.status_code == 503 and refused.json()["code"] == "replica_full"
