"""A small Server-Sent Events reader for the tests (httpx streaming)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx


@dataclass
class SseEvent:
    id: str | None
    event: str | None
    data: str

    def json(self) -> Any:
        return json.loads(self.data)


async def events(response: httpx.Response) -> AsyncIterator[SseEvent]:
    """Parse an event stream; comments (pings) are skipped."""
    event_id: str | None = None
    name: str | None = None
    data: list[str] = []
    async for line in response.aiter_lines():
        if line == "":
            if data:
                yield SseEvent(event_id, name, "\n".join(data))
            event_id, name, data = None, None, []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "id":
            event_id = value
        elif field == "event":
            name = value
        elif field == "data":
            data.append(value)


async def read_states(
    client: httpx.AsyncClient, url: str, headers: dict[str, str] | None = None,
    limit: int | None = None,
) -> list[SseEvent]:
    """Read ``url``'s stream until it ends (or ``limit`` events)."""
    seen: list[SseEvent] = []
    async with client.stream("GET", url, headers=headers or {}, timeout=60) as response:
        assert response.status_code == 200, await response.aread()
        assert response.headers["content-type"].startswith("text/event-stream")
        async for event in events(response):
            seen.append(event)
            if limit is not None and len(seen) >= limit:
                break
    return seen
