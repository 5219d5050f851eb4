"""Three ``skyline serve`` replicas on one Redis, behind nothing but the clients.

Random players act on the same matches through replicas A and B (each request goes to the
next replica in turn, so consecutive moves of one match are written by different
processes); SSE streams and GraphQL subscriptions on replica C follow every match. Every
registered game is played to its end. What must hold:

- every accepted move is in the log exactly once, at the version its answer named, and the
  log is contiguous (``check_log``);
- every watcher on C saw every version from 0 to the final one, in order, with no gap or
  repeat, and its stream ended with the finished state.
"""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from service import games
from tests.scale.conftest import ReplicaFactory
from tests.scale.play import (
    Ledger,
    Match,
    Replicas,
    Watch,
    cancel,
    check_log,
    create_match,
    play_seat,
    watch_graphql,
    watch_sse,
)

pytestmark = pytest.mark.redis

TEST_BOUND = 300.0  # seconds; the whole test, a hang guard


def _player_counts(game: str) -> list[int]:
    engine = games.get(game)
    counts = {max(engine.min_players, 2), min(3, engine.max_players)}
    return sorted(c for c in counts if engine.min_players <= c <= engine.max_players)


async def test_three_replicas_bots_and_watchers_see_every_version(
    replicas: ReplicaFactory, redis_url: str, redis_prefix: str
) -> None:
    a, b, c = await asyncio.to_thread(replicas.start, 3, redis_url=redis_url,
                                      prefix=redis_prefix)
    writers = Replicas([a.url, b.url])
    ledger = Ledger()
    deadline = time.monotonic() + TEST_BOUND
    limits = httpx.Limits(max_connections=200, max_keepalive_connections=50)
    async with httpx.AsyncClient(limits=limits) as client, asyncio.timeout(TEST_BOUND):
        matches: list[Match] = []
        for seed, (game, players) in enumerate(
            (g, n) for g in games.ids() for n in _player_counts(g)
        ):
            matches.append(await create_match(client, writers, ledger, game, players,
                                              seed=100 + seed, deadline=deadline))
        watches: list[tuple[Match, Watch]] = []
        watchers: list[asyncio.Task[None]] = []
        for match in matches:
            for name, start in (
                ("sse spectator", lambda m, w: watch_sse(client, c.url, m, w)),
                ("sse seat 0", lambda m, w: watch_sse(client, c.url, m, w, seat=0)),
                ("graphql spectator", lambda m, w: watch_graphql(c.url, m, w)),
                ("graphql seat 1", lambda m, w: watch_graphql(c.url, m, w, seat=1)),
            ):
                watch = Watch(f"{name} on {match.game}/{match.players}p")
                watches.append((match, watch))
                watchers.append(asyncio.create_task(start(match, watch)))
        try:
            # Every watcher holds the initial state (version 0) before anyone moves.
            await asyncio.gather(*(w.ready.wait() for _, w in watches))
            seats = [
                play_seat(client, writers, match, seat, ledger, seed=1000 * i + seat,
                          deadline=deadline)
                for i, match in enumerate(matches)
                for seat in range(match.players)
            ]
            await asyncio.gather(*seats)
            await asyncio.gather(*watchers)
        finally:
            await cancel(watchers)

        for match in matches:
            latest = await check_log(client, c.url, match, ledger)
            assert latest > 0
            state = (await client.get(f"{a.url}/v1/matches/{match.id}")).json()
            assert state["status"] == "finished" and state["version"] == latest
            for watched, watch in watches:
                if watched is match:
                    assert watch.versions == list(range(latest + 1)), watch.name
                    assert watch.statuses[-1] == "finished", watch.name
                    assert set(watch.statuses[:-1]) <= {"active"}, watch.name

        # Both writing replicas stored moves; the watching one stored none.
        counts = [await actions_stored(client, r.url) for r in (a, b, c)]
        assert counts[0] > 0 and counts[1] > 0 and counts[2] == 0, counts
        assert sum(counts) == len({x.key for x in ledger.accepted})
        for replica in (a, b, c):  # faults are handled, not crashed through
            assert not replica.unhandled_errors(), replica.log_tail()

    assert {m.game for m in matches} == set(games.ids())
    assert not ledger.unavailable, ledger.unavailable
    print(f"\n{__name__}: {ledger.summary()}")


async def actions_stored(client: httpx.AsyncClient, url: str) -> int:
    """``skyline_actions_total`` of one replica (all games)."""
    text = (await client.get(url + "/metrics")).text
    return sum(
        int(float(line.rsplit(" ", 1)[1]))
        for line in text.splitlines()
        if line.startswith("skyline_actions_total{")
    )
