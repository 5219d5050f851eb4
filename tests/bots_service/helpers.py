"""Shared by the bot-seat service tests: humans playing random legal moves over REST while
an SSE reader records every version it is shown."""

from __future__ import annotations

import asyncio
import json
import random
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.api.sse import events

# A safety net against a hung test, never a measurement.
HANG = 300.0


@dataclass
class Watched:
    """What the SSE stream showed: versions in arrival order, and the latest state."""

    versions: list[int] = field(default_factory=list)
    latest: dict[str, Any] | None = None
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    ended: bool = False


async def follow(http: httpx.AsyncClient, match_id: str, watched: Watched) -> None:
    """Read the spectator SSE stream of the match from its start until it ends."""
    url = f"/v1/matches/{match_id}/events?after=0"
    try:
        async with http.stream("GET", url, timeout=HANG) as response:
            assert response.status_code == 200, await response.aread()
            async for event in events(response):
                state = json.loads(event.data)
                assert event.id == str(state["version"])
                watched.versions.append(state["version"])
                watched.latest = state
                watched.changed.set()
    finally:
        watched.ended = True
        watched.changed.set()


async def create(http: httpx.AsyncClient, game: str, players: int, bots: dict[str, str],
                 seed: int) -> tuple[str, dict[int, str]]:
    response = await http.post(
        "/v1/matches", json={"game": game, "players": players, "seed": seed, "bots": bots}
    )
    assert response.status_code == 201, response.text
    body = response.json()
    return body["matchId"], {s["seat"]: s["token"] for s in body["seats"]}


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def human_turn(http: httpx.AsyncClient, match_id: str, tokens: dict[int, str],
                     rng: random.Random) -> tuple[bool, int]:
    """Let every active human seat play one random legal move (pinned to the version it
    saw; a 409 means a bot moved first: look again). Returns (finished, version seen)."""
    url = f"/v1/matches/{match_id}"
    moved = False
    version = -1
    for seat, token in sorted(tokens.items()):
        state = (await http.get(url, headers=auth(token))).json()
        version = state["version"]
        if state["status"] == "finished":
            return True, version
        if seat not in state["activeSeats"]:
            continue
        moves = (await http.get(f"{url}/legal-moves", headers=auth(token))).json()
        if moves["version"] != state["version"] or not moves["moves"]:
            continue
        response = await http.post(
            f"{url}/actions", headers=auth(token),
            json={"action": rng.choice(moves["moves"]), "expectedVersion": moves["version"]},
        )
        assert response.status_code in (200, 409), response.text
        if response.status_code == 409:
            assert response.json()["code"] == "version_conflict"
        moved = True
    return False, version if not moved else -1


async def play_to_the_end(http: httpx.AsyncClient, match_id: str, tokens: dict[int, str],
                          seed: int, watched: Watched,
                          pause: Any = None) -> dict[str, Any]:
    """Humans play until the match is over; when no human can move, wait for the next
    version on the SSE stream (the worker plays the bots). ``pause(version)`` (optional)
    runs before each human turn and may return False to stop early."""
    rng = random.Random(seed)
    async with asyncio.timeout(HANG):
        while True:
            if pause is not None and not await pause():
                return watched.latest or {}
            watched.changed.clear()
            finished, seen = await human_turn(http, match_id, tokens, rng)
            if finished:
                while not watched.ended:
                    watched.changed.clear()
                    await watched.changed.wait()
                assert watched.latest is not None
                return watched.latest
            if seen >= 0:  # nobody human could move: the bots owe a move
                while (watched.latest or {}).get("version", -1) <= seen and not watched.ended:
                    watched.changed.clear()
                    await watched.changed.wait()


def assert_contiguous(watched: Watched, log: list[dict[str, Any]], final_version: int) -> None:
    """The stream (``after=0``) showed every version 1..final once, in order; the log has one
    entry per version (no action lost or doubled, no fork)."""
    assert watched.versions == list(range(1, final_version + 1))
    assert [e["version"] for e in log] == list(range(1, final_version + 1))
