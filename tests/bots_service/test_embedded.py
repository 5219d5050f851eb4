"""Bot seats on the embedded store: `skyline serve` without Redis runs the bot worker inside
the server (an asyncio task of the app's lifespan). Humans play random legal moves over REST,
the SSE stream shows every version in order, and the bots' moves come from the worker."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from service import games
from service.app import EMBEDDED_WORKER, Settings, create_app
from service.bots import Budget
from service.matches import MatchService
from service.matches.models import CreateMatchRequest
from service.matches.records import MatchRecord
from service.store import open_store
from service.store.sqlite import SqliteStore
from tests.api.conftest import LiveServer, serve_in_thread
from tests.support.slow import starts_processes

from .helpers import Watched, assert_contiguous, auth, create, follow, play_to_the_end

SMALL = {"budget": Budget(iterations=3)}  # search bots think a little: bounded tests


@pytest.fixture
@starts_processes
def live() -> Iterator[LiveServer]:
    app = create_app(SqliteStore(":memory:"), settings=Settings(worker_options=SMALL))
    with serve_in_thread(app) as server:
        yield server


@pytest.fixture
async def http(live: LiveServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=live.url, timeout=60) as client:
        yield client


@pytest.mark.parametrize(
    ("game", "players", "bots"),
    [
        ("ny1901", 2, {"1": "search"}),
        ("ginkgopolis", 3, {"1": "greedy", "2": "search"}),  # simultaneous card choices
    ],
)
async def test_a_match_with_bot_seats_finishes_through_the_in_process_worker(
    live: LiveServer, http: httpx.AsyncClient, game: str, players: int, bots: dict[str, str]
) -> None:
    match_id, tokens = await create(http, game, players, bots, seed=11)
    assert set(tokens) == set(range(players)) - {int(s) for s in bots}
    watched = Watched()
    reader = asyncio.create_task(follow(http, match_id, watched))
    final = await play_to_the_end(http, match_id, tokens, seed=5, watched=watched)
    await reader
    assert final["status"] == "finished"
    assert final["bots"] == bots
    log = (await http.get(f"/v1/matches/{match_id}/log")).json()["entries"]
    assert_contiguous(watched, log, final["version"])
    assert {str(e["seat"]) for e in log} >= set(bots)  # every bot seat moved
    assert live.app.state.worker.moves == sum(1 for e in log if str(e["seat"]) in bots)


async def test_a_seat_handed_to_a_bot_is_played_to_the_end(
    live: LiveServer, http: httpx.AsyncClient
) -> None:
    match_id, tokens = await create(http, "ny1901", 2, {"1": "greedy"}, seed=3)
    watched = Watched()
    reader = asyncio.create_task(follow(http, match_id, watched))
    url = f"/v1/matches/{match_id}"
    # Seat 0 plays a few moves, then leaves: its seat goes to a random bot.
    moves_made = 0

    async def until_three_moves() -> bool:
        nonlocal moves_made
        state = (await http.get(url, headers=auth(tokens[0]))).json()
        moves_made = sum(1 for e in (await http.get(f"{url}/log")).json()["entries"]
                         if e["seat"] == 0)
        return moves_made < 3 and state["status"] == "active"

    await play_to_the_end(http, match_id, tokens, seed=1, watched=watched,
                          pause=until_three_moves)
    wrong = await http.post(f"{url}/seats/1/bot", headers=auth(tokens[0]),
                            json={"kind": "random"})
    assert (wrong.status_code, wrong.json()["code"]) == (401, "unauthorized")
    bad = await http.post(f"{url}/seats/0/bot", headers=auth(tokens[0]), json={"kind": "x"})
    assert (bad.status_code, bad.json()["code"]) == (422, "bad_bots")
    handed = await http.post(f"{url}/seats/0/bot", headers=auth(tokens[0]),
                             json={"kind": "random"})
    assert handed.status_code == 200, handed.text
    assert handed.json()["bots"] == {"0": "random", "1": "greedy"}
    assert handed.json()["seat"] is None
    # The token no longer acts (nor hands over again).
    moves = (await http.get(f"{url}/legal-moves")).json()
    refused = await http.post(f"{url}/actions", headers=auth(tokens[0]),
                              json={"action": {"type": "pass"}})
    assert (refused.status_code, refused.json()["code"]) == (401, "seat_handed_to_bot")
    assert moves["moves"] == []
    async with asyncio.timeout(300):
        await reader  # the stream ends with the final state: the bots finished it
    assert watched.latest is not None and watched.latest["status"] == "finished"
    log = (await http.get(f"{url}/log")).json()["entries"]
    assert_contiguous(watched, log, watched.latest["version"])
    handover = [e for e in log if e["seat"] is None]
    assert len(handover) == 1  # the hand-over is one version of its own
    assert any(e["seat"] == 0 and e["version"] > handover[0]["version"] for e in log)


@pytest.mark.parametrize("claimed", [False, True], ids=["queued", "claimed-not-played"])
@pytest.mark.slow
async def test_a_restarted_server_plays_the_bot_moves_it_had_not_played(
    tmp_path: Path, claimed: bool
) -> None:
    """The server stopped (crashed) after a bot became due -- with the signal still queued,
    or claimed by its worker but neither played nor acknowledged. A new server on the same
    data folder plays the bot's move by itself: no human reads the match (a read would
    signal it again), the store is read directly. At least once, and never twice: the bot
    moves exactly once per turn."""
    data = tmp_path / "data"
    store = open_store(None, None, data_dir=data)
    service = MatchService(store, ttl_finished=None, ttl_idle=None)
    created = await service.create_match(
        CreateMatchRequest(game="ny1901", players=2, bots={"0": "random"}, seed=3)
    )  # seat 0 (a bot) starts: the match is due at once
    if claimed:
        taken = await store.claim_due(EMBEDDED_WORKER, block_ms=0)
        assert [s.match_id for s in taken] == [created.match_id]
    await store.close()  # the crash: no worker played it

    app = create_app(settings=Settings(data_dir=str(data), worker_options=SMALL))
    with serve_in_thread(app):
        restarted = app.state.store  # its reads send no signal (the service's would)
        engine = games.get("ny1901")
        async with asyncio.timeout(30):
            while True:  # until the bot's turn is over: the human seat 1 is to act
                version, data = await restarted.load(created.match_id)
                if engine.active_seats(engine.loads(MatchRecord.decode(data).state)) == {1}:
                    break
                await asyncio.sleep(0.02)
        entries = await restarted.log(created.match_id)
    assert version >= 1 and [e.version for e in entries] == list(range(1, version + 1))
    assert app.state.worker.moves == version  # every move the bot's, each played once
