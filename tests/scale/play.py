"""Clients for the scale tests: random players acting through several replicas, SSE and
GraphQL-subscription watchers, and the final check of every match's log against what the
players were told.

A player is one task per seat. It reads its state and legal moves, picks a random legal move
and posts it with a fresh ``Idempotency-Key``, sending each request to the next replica in
turn. Clients ride out faults the way the API documents: a 503 (``Retry-After``) is retried
after a short pause, a transport error (replica gone, connection cut mid-request) is retried
on the next replica -- both with the same ``Idempotency-Key``, so a move whose first answer
was lost is never applied twice. Every 2xx act answer goes into the ``Ledger``; ``check_log``
then proves the log holds exactly those moves, each once, at contiguous versions.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
import websockets
from websockets.asyncio.client import connect

MAX_STEPS = 3000  # per seat: requests a player may make before giving up (a hang guard)
REQUEST_TIMEOUT = 30.0
PAUSE_CAP = 0.25  # longest pause after a 503 (the server says Retry-After: 1)


@dataclass
class Match:
    id: str
    game: str
    players: int
    tokens: dict[int, str]

    def auth(self, seat: int) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[seat]}"}


@dataclass(frozen=True)
class Accepted:
    match_id: str
    seat: int
    version: int
    action: Any
    key: str


@dataclass
class Ledger:
    """What the clients were told, and what they went through."""

    accepted: list[Accepted] = field(default_factory=list)
    unavailable: Counter[str] = field(default_factory=Counter)  # 503 answers by problem code
    retry_after: set[str] = field(default_factory=set)  # Retry-After values seen on 503s
    transport_errors: int = 0
    refused: Counter[str] = field(default_factory=Counter)  # 4xx act answers by code
    progress: asyncio.Event = field(default_factory=asyncio.Event)

    def summary(self) -> str:
        """One line for the test output (``pytest -s``)."""
        return (f"accepted {len(self.accepted)}, 503s {dict(self.unavailable)}, transport "
                f"errors {self.transport_errors}, refused {dict(self.refused)}")

    def accept(self, item: Accepted) -> None:
        self.accepted.append(item)
        self.progress.set()

    async def wait_for(self, more: int) -> None:
        """Until ``more`` further act answers were 2xx."""
        target = len(self.accepted) + more
        while len(self.accepted) < target:
            self.progress.clear()
            await self.progress.wait()


class Replicas:
    """The replica URLs clients may use; ``pick(i)`` rotates over them."""

    def __init__(self, urls: Sequence[str]) -> None:
        self.urls = list(urls)

    def pick(self, i: int) -> str:
        return self.urls[i % len(self.urls)]


async def send(
    client: httpx.AsyncClient,
    replicas: Replicas,
    turn: int,
    method: str,
    path: str,
    ledger: Ledger,
    *,
    headers: dict[str, str] | None = None,
    body: Any = None,
    deadline: float,
) -> httpx.Response:
    """The first answer that is not a 503; 503s and transport errors are retried (the latter
    on the next replica) with the very same request, until ``deadline``."""
    while True:
        if time.monotonic() > deadline:
            raise AssertionError(f"{method} {path}: no answer before the deadline")
        url = replicas.pick(turn) + path
        try:
            response = await client.request(
                method, url, headers=headers, json=body, timeout=REQUEST_TIMEOUT
            )
        except httpx.TransportError:
            ledger.transport_errors += 1
            turn += 1
            await asyncio.sleep(0.05)
            continue
        if response.status_code == 503:
            problem = response.json()
            ledger.unavailable[problem.get("code", "?")] += 1
            retry_after = response.headers.get("retry-after")
            assert retry_after is not None, "a 503 without Retry-After"
            ledger.retry_after.add(retry_after)
            await asyncio.sleep(min(float(retry_after), PAUSE_CAP))
            continue
        return response


async def create_match(
    client: httpx.AsyncClient, replicas: Replicas, ledger: Ledger, game: str, players: int,
    seed: int, *, deadline: float,
) -> Match:
    response = await send(
        client, replicas, seed, "POST", "/v1/matches", ledger,
        body={"game": game, "players": players, "seed": seed}, deadline=deadline,
    )
    assert response.status_code == 201, response.text
    created = response.json()
    tokens = {s["seat"]: s["token"] for s in created["seats"]}
    return Match(created["matchId"], game, players, tokens)


async def play_seat(
    client: httpx.AsyncClient,
    replicas: Replicas,
    match: Match,
    seat: int,
    ledger: Ledger,
    *,
    seed: int,
    deadline: float,
    stop: asyncio.Event | None = None,
    on_request: Callable[[], None] | None = None,
) -> None:
    """Play random legal moves for ``seat`` until the match is finished (or ``stop``)."""
    rng = random.Random(seed)
    headers = match.auth(seat)
    base = f"/v1/matches/{match.id}"
    turn = rng.randrange(len(replicas.urls))
    known: dict[str, Any] | None = None  # the state from our last act answer, if any
    for _ in range(MAX_STEPS):
        if stop is not None and stop.is_set():
            return
        turn += 1
        if known is None:
            response = await send(client, replicas, turn, "GET", base, ledger,
                                  headers=headers, deadline=deadline)
            assert response.status_code == 200, response.text
            known = response.json()
        state, known = known, None
        if state["status"] == "finished":
            return
        if seat not in state["activeSeats"]:
            await asyncio.sleep(0.02 + rng.random() * 0.02)
            continue
        turn += 1
        response = await send(client, replicas, turn, "GET", base + "/legal-moves", ledger,
                              headers=headers, deadline=deadline)
        assert response.status_code == 200, response.text
        moves = response.json()["moves"]
        if not moves:
            continue
        move = rng.choice(moves)
        key = f"{seat}-{uuid.uuid4().hex}"
        if on_request is not None:
            on_request()
        turn += 1
        response = await send(
            client, replicas, turn, "POST", base + "/actions", ledger,
            headers={**headers, "Idempotency-Key": key}, body={"action": move},
            deadline=deadline,
        )
        if response.status_code == 200:
            answer = response.json()
            ledger.accept(Accepted(match.id, seat, answer["version"], move, key))
            known = answer["state"]
            continue
        # The move was overtaken (another seat moved first): refused, nothing written.
        assert response.status_code in (409, 422), response.text
        ledger.refused[response.json()["code"]] += 1
    raise AssertionError(f"seat {seat} of {match.id} did not finish in {MAX_STEPS} steps")


async def final_log(
    client: httpx.AsyncClient, url: str, match: Match
) -> tuple[int, dict[int, list[dict[str, Any]]]]:
    """``(latest version, {seat: that seat's log page entries})``; pages through ``after``."""
    pages: dict[int, list[dict[str, Any]]] = {}
    latest = -1
    for seat in match.tokens:
        entries: list[dict[str, Any]] = []
        after = 0
        while True:
            response = await client.get(
                f"{url}/v1/matches/{match.id}/log", params={"after": after},
                headers=match.auth(seat), timeout=REQUEST_TIMEOUT,
            )
            assert response.status_code == 200, response.text
            page = response.json()
            entries += page["entries"]
            latest = page["latestVersion"]
            if not page["entries"] or entries[-1]["version"] >= latest:
                break
            after = entries[-1]["version"]
        pages[seat] = entries
    return latest, pages


async def check_log(
    client: httpx.AsyncClient, url: str, match: Match, ledger: Ledger
) -> int:
    """Every accepted move of ``match`` is in the log exactly once, at the version its
    answer named, with that seat and that move; the log is contiguous from 1 and holds
    nothing no client was told about. Returns the latest version."""
    latest, pages = await final_log(client, url, match)
    mine = [a for a in ledger.accepted if a.match_id == match.id]
    by_key: dict[str, Accepted] = {}
    for item in mine:
        first = by_key.setdefault(item.key, item)
        # A retried request (same key) is answered with the first result.
        assert first.version == item.version, f"key {item.key} answered two versions"
    by_version: dict[int, Accepted] = {}
    for item in by_key.values():
        assert item.version not in by_version, (
            f"{match.id}: two accepted moves claim version {item.version}"
        )
        by_version[item.version] = item
    for seat, entries in pages.items():
        versions = [e["version"] for e in entries]
        assert versions == list(range(1, latest + 1)), (
            f"{match.id}: the log skips or repeats a version: {versions}"
        )
        for entry in entries:
            accepted = by_version.get(entry["version"])
            assert accepted is not None, (
                f"{match.id}: version {entry['version']} in the log, but no client was told"
            )
            assert entry["seat"] == accepted.seat
            if accepted.seat == seat:  # a seat's own moves are shown to it
                assert entry["action"] == accepted.action, (entry, accepted)
    assert sorted(by_version) == list(range(1, latest + 1)), (
        f"{match.id}: accepted versions not all in the log"
    )
    return latest


# -- watchers --------------------------------------------------------------------------------


@dataclass
class Watch:
    """Versions one watcher received, in arrival order; ``ready`` once the first arrived."""

    name: str
    versions: list[int] = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    reconnects: int = 0

    def seen(self, version: int, status: str) -> None:
        self.versions.append(version)
        self.statuses.append(status)
        self.ready.set()


async def sse_states(response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    """The ``state`` events of an open SSE response, as JSON (pings skipped); each event's
    ``id`` is checked against the version it carries."""
    event_id: str | None = None
    data: list[str] = []
    async for line in response.aiter_lines():
        if line == "":
            if data:
                state: dict[str, Any] = json.loads("\n".join(data))
                assert event_id == str(state["version"]), (event_id, state["version"])
                yield state
            event_id, data = None, []
        elif line.startswith(":"):
            continue
        elif line.startswith("id:"):
            event_id = line[3:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))


async def watch_sse(
    client: httpx.AsyncClient, url: str, match: Match, watch: Watch, seat: int | None = None
) -> None:
    """Follow ``/events`` on one replica until the stream ends (after the final state)."""
    headers = match.auth(seat) if seat is not None else {}
    async with client.stream(
        "GET", f"{url}/v1/matches/{match.id}/events", headers=headers,
        timeout=httpx.Timeout(REQUEST_TIMEOUT, read=60.0),
    ) as response:
        assert response.status_code == 200, await response.aread()
        async for state in sse_states(response):
            watch.seen(state["version"], state["status"])


async def watch_sse_resuming(
    client: httpx.AsyncClient, replicas: Replicas, match: Match, watch: Watch, *,
    deadline: float,
) -> None:
    """Follow ``/events`` as a browser's EventSource would through faults: when the stream
    breaks (store down, replica gone), reconnect -- to the next replica -- with
    ``Last-Event-ID``; a 503 is retried after a pause; 204 or the final state ends it."""
    last: int | None = None
    turn = 0
    while time.monotonic() < deadline:
        headers = {"Last-Event-ID": str(last)} if last is not None else {}
        url = f"{replicas.pick(turn)}/v1/matches/{match.id}/events"
        try:
            async with client.stream(
                "GET", url, headers=headers, timeout=httpx.Timeout(REQUEST_TIMEOUT, read=60.0)
            ) as response:
                if response.status_code == 204:
                    return
                if response.status_code == 200:
                    async for state in sse_states(response):
                        watch.seen(state["version"], state["status"])
                        last = state["version"]
                        if state["status"] == "finished":
                            return
                else:
                    assert response.status_code == 503, await response.aread()
        except httpx.TransportError:
            turn += 1
        watch.reconnects += 1
        await asyncio.sleep(0.1)
    raise AssertionError(f"{watch.name}: not finished before the deadline")


SUBSCRIPTION = """
subscription($id: ID!) {
  matchUpdated(matchId: $id) {
    __typename
    ... on MatchState { version status }
    ... on Problem { code message }
  }
}
"""


async def watch_graphql(url: str, match: Match, watch: Watch, seat: int | None = None) -> None:
    """Follow the ``matchUpdated`` subscription (graphql-transport-ws) until ``complete``."""
    ws_url = url.replace("http://", "ws://", 1) + "/graphql"
    async with connect(ws_url, subprotocols=[websockets.Subprotocol("graphql-transport-ws")],
                       open_timeout=REQUEST_TIMEOUT) as ws:
        init: dict[str, Any] = {"type": "connection_init"}
        if seat is not None:
            init["payload"] = {"authorization": f"Bearer {match.tokens[seat]}"}
        await ws.send(json.dumps(init))
        ack = json.loads(await ws.recv())
        assert ack["type"] == "connection_ack", ack
        await ws.send(json.dumps({
            "id": "1", "type": "subscribe",
            "payload": {"query": SUBSCRIPTION, "variables": {"id": match.id}},
        }))
        while True:
            message = json.loads(await ws.recv())
            if message["type"] == "ping":
                await ws.send(json.dumps({"type": "pong"}))
                continue
            if message["type"] == "complete":
                return
            assert message["type"] == "next", message
            payload = message["payload"]
            assert "errors" not in payload, payload
            update = payload["data"]["matchUpdated"]
            assert update["__typename"] == "MatchState", update
            watch.seen(update["version"], update["status"])


# -- players and watchers together ----------------------------------------------------------


def start_players(
    client: httpx.AsyncClient, replicas: Replicas, matches: Sequence[Match], ledger: Ledger, *,
    seed_step: int, deadline: float,
) -> list[asyncio.Task[None]]:
    """One ``play_seat`` task per seat of every match, acting through ``replicas``; seat ``s``
    of the ``i``-th match plays with seed ``seed_step * i + s``."""
    return [
        asyncio.create_task(
            play_seat(client, replicas, match, seat, ledger, seed=seed_step * i + seat,
                      deadline=deadline)
        )
        for i, match in enumerate(matches)
        for seat in range(match.players)
    ]


@dataclass
class Play:
    """The tasks ``play_and_watch`` started."""

    players: list[asyncio.Task[None]]
    watchers: list[asyncio.Task[None]]

    async def finish(self) -> None:
        """Until every player finished its match, then every watcher saw its match end."""
        await asyncio.gather(*self.players)
        await asyncio.gather(*self.watchers)


@contextlib.asynccontextmanager
async def play_and_watch(
    client: httpx.AsyncClient,
    writers: Replicas,
    matches: Sequence[Match],
    ledger: Ledger,
    *,
    watched: Sequence[tuple[Match, Watch]],
    watch_via: Replicas,
    seed_step: int,
    deadline: float,
) -> AsyncIterator[Play]:
    """SSE watchers (``watch_sse_resuming`` through ``watch_via``) on the ``watched``
    matches; once every watcher holds version 0, the players (``start_players`` through
    ``writers``). On the way out every task still running is cancelled (nothing is after
    ``Play.finish``)."""
    watchers = [
        asyncio.create_task(
            watch_sse_resuming(client, watch_via, match, watch, deadline=deadline)
        )
        for match, watch in watched
    ]
    players: list[asyncio.Task[None]] = []
    try:
        await asyncio.gather(*(watch.ready.wait() for _, watch in watched))
        players += start_players(client, writers, matches, ledger, seed_step=seed_step,
                                 deadline=deadline)
        yield Play(players, watchers)
    finally:
        await cancel(players + watchers)


async def cancel(tasks: Sequence[asyncio.Task[Any]]) -> None:
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
