"""End to end over real HTTP (uvicorn on a free port), on the memory store and on Redis:
complete matches of every game with random legal moves while SSE streams are read, resuming
a stream with Last-Event-ID, and many clients posting to one match at once."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import httpx
import pytest

from tests.api.conftest import GAMES, TOY, bearer
from tests.api.sse import read_states
from tests.support.states import timeless

MAX_STEPS = 3000


async def create(http: httpx.AsyncClient, game: str, seed: int, players: int | None = None
                 ) -> tuple[str, dict[int, str]]:
    games = {g["id"]: g for g in (await http.get("/v1/games")).json()}
    info = games[game]
    count = players or min(max(info["minPlayers"], 2), info["maxPlayers"])
    response = await http.post("/v1/matches", json={"game": game, "players": count,
                                                    "seed": seed})
    assert response.status_code == 201, response.text
    body = response.json()
    assert response.headers["location"] == f"/v1/matches/{body['matchId']}"
    return body["matchId"], {s["seat"]: s["token"] for s in body["seats"]}


async def play_randomly(http: httpx.AsyncClient, match_id: str, tokens: dict[int, str],
                        seed: int, *, stop_at_version: int | None = None) -> dict[str, Any]:
    """Random legal moves (pinned to the version they were chosen at) until the end."""
    chooser = random.Random(seed)
    url = f"/v1/matches/{match_id}"
    for _ in range(MAX_STEPS):
        state = (await http.get(url)).json()
        if state["status"] == "finished":
            return state
        if stop_at_version is not None and state["version"] >= stop_at_version:
            return state
        assert state["activeSeats"], "an active match with nobody to move"
        seat = chooser.choice(state["activeSeats"])
        moves = (await http.get(f"{url}/legal-moves", headers=bearer(tokens[seat]))).json()
        assert moves["seat"] == seat
        assert moves["moves"], f"active seat {seat} has no legal move"
        move = chooser.choice(moves["moves"])
        response = await http.post(
            f"{url}/actions", headers=bearer(tokens[seat]),
            json={"action": move, "expectedVersion": moves["version"]},
        )
        assert response.status_code == 200, response.text
        assert response.json()["version"] == moves["version"] + 1
    raise AssertionError(f"no result after {MAX_STEPS} moves")


@pytest.mark.parametrize("game", GAMES)
async def test_complete_match_while_streaming(http: httpx.AsyncClient, game: str) -> None:
    match_id, tokens = await create(http, game, seed=11)
    url = f"/v1/matches/{match_id}"
    # ?after=0: every version after creation, however late the stream connects.
    spectator = asyncio.create_task(read_states(http, f"{url}/events?after=0"))
    seat0 = asyncio.create_task(read_states(http, f"{url}/events?after=0", bearer(tokens[0])))
    final = await play_randomly(http, match_id, tokens, seed=11)
    assert final["status"] == "finished"
    assert final["result"] is not None and final["result"]["winners"]
    streams = await asyncio.wait_for(asyncio.gather(spectator, seat0), timeout=120)
    for stream, seat in zip(streams, (None, 0), strict=True):
        versions = [int(e.id or -1) for e in stream]
        assert versions == list(range(1, final["version"] + 1)), "every version, in order"
        assert all(e.event == "state" for e in stream)
        states = [e.json() for e in stream]
        assert all(s["seat"] == seat for s in states)
        assert states[-1]["status"] == "finished"
        assert all(s["status"] == "active" for s in states[:-1])
    # The last streamed state is what GET says, per seat.
    assert timeless(streams[0][-1].json()) == timeless((await http.get(url)).json())
    assert timeless(streams[1][-1].json()) == timeless(
        (await http.get(url, headers=bearer(tokens[0]))).json())
    # The log has one entry per version, each with the seat that moved.
    log = (await http.get(f"{url}/log", headers=bearer(tokens[0]))).json()
    assert [e["version"] for e in log["entries"]] == list(range(1, final["version"] + 1))
    assert log["latestVersion"] == final["version"]
    # A finished match's stream, caught up: 204 (an EventSource stops reconnecting).
    done = await http.get(f"{url}/events", headers={"Last-Event-ID": str(final["version"])})
    assert done.status_code == 204


async def test_stream_resumes_with_last_event_id(http: httpx.AsyncClient) -> None:
    match_id, tokens = await create(http, TOY, seed=5)
    url = f"/v1/matches/{match_id}"
    await play_randomly(http, match_id, tokens, seed=5, stop_at_version=6)
    first = await read_states(http, f"{url}/events", bearer(tokens[1]), limit=1)
    assert [e.id for e in first] == ["6"]  # a fresh stream starts with the current state
    resumed = asyncio.create_task(
        read_states(http, f"{url}/events", {**bearer(tokens[1]), "Last-Event-ID": "2"})
    )
    query = asyncio.create_task(read_states(http, f"{url}/events?after=4", limit=3))
    final = await play_randomly(http, match_id, tokens, seed=6)
    events = await asyncio.wait_for(resumed, timeout=60)
    assert [int(e.id or 0) for e in events] == list(range(3, final["version"] + 1))
    replayed = events[:4]  # versions 3..6 were rebuilt from the log
    for event in replayed:
        state = event.json()
        assert state["seat"] == 1 and state["version"] == int(event.id or 0)
    assert [e.id for e in await query] == ["5", "6", "7"]


async def test_simultaneous_choices_lose_nothing(http: httpx.AsyncClient) -> None:
    """Four seats choose a card at the same moment, each from its own client, twice over
    (a retry with the same Idempotency-Key): every choice lands exactly once and the version
    history stays one line."""
    match_id, tokens = await create(http, TOY, seed=3, players=4)
    url = f"/v1/matches/{match_id}"
    for seat in range(4):  # draw step: everyone passes, in turn
        response = await http.post(f"{url}/actions", headers=bearer(tokens[seat]),
                                   json={"action": {"type": "pass"}})
        assert response.status_code == 200
    state = (await http.get(url)).json()
    assert state["activeSeats"] == [0, 1, 2, 3]
    hands = {}
    for seat in range(4):
        view = (await http.get(url, headers=bearer(tokens[seat]))).json()["view"]
        hands[seat] = view["hand"]

    async def choose(seat: int, attempt: int) -> httpx.Response:
        async with httpx.AsyncClient(base_url=str(http.base_url), timeout=30) as own:
            return await own.post(
                f"{url}/actions",
                headers={**bearer(tokens[seat]), "Idempotency-Key": f"choice-{seat}"},
                json={"action": {"type": "play", "card": hands[seat][0]}},
            )

    responses = await asyncio.gather(*(choose(s, a) for s in range(4) for a in range(2)))
    assert all(r.status_code == 200 for r in responses), [r.text for r in responses]
    versions = sorted({r.json()["version"] for r in responses})
    assert versions == [5, 6, 7, 8]
    log = (await http.get(f"{url}/log?after=4")).json()
    assert [e["version"] for e in log["entries"]] == [5, 6, 7, 8]
    assert sorted(e["seat"] for e in log["entries"]) == [0, 1, 2, 3]
    final = (await http.get(url)).json()
    assert final["version"] == 8
    assert sorted(final["view"]["last_reveal"]) == sorted(h[0] for h in hands.values())


@pytest.mark.parametrize("game", GAMES)
async def test_racing_clients_never_fork_history(http: httpx.AsyncClient, game: str) -> None:
    """Many clients post moves for the active seats at once, unpinned: each accepted move is
    exactly one new version, and the log is one contiguous line."""
    match_id, tokens = await create(http, game, seed=21)
    url = f"/v1/matches/{match_id}"
    accepted = 0
    for _round in range(5):
        state = (await http.get(url)).json()
        if state["status"] == "finished":
            break
        posts = []
        for seat in state["activeSeats"]:
            moves = (await http.get(f"{url}/legal-moves", headers=bearer(tokens[seat]))).json()
            for move in moves["moves"][:4]:
                posts.append((seat, move))

        async def post(seat: int, move: Any) -> httpx.Response:
            return await http.post(f"{url}/actions", headers=bearer(tokens[seat]),
                                   json={"action": move})

        responses = await asyncio.gather(*(post(s, m) for s, m in posts))
        for response in responses:
            assert response.status_code in (200, 409, 422), response.text
        accepted += sum(r.status_code == 200 for r in responses)
        ok_versions = [r.json()["version"] for r in responses if r.status_code == 200]
        assert len(ok_versions) == len(set(ok_versions)), "two moves claimed one version"
    log = (await http.get(f"{url}/log")).json()
    assert [e["version"] for e in log["entries"]] == list(range(1, accepted + 1))
    assert (await http.get(url)).json()["version"] == accepted


SIMULTANEOUS = [g for g in GAMES if g in {"toy", "ginkgopolis"}]


@pytest.mark.parametrize("game", SIMULTANEOUS)
async def test_every_seat_choosing_at_once_lands_once(http: httpx.AsyncClient, game: str
                                                      ) -> None:
    """At a simultaneous step (Ginkgopolis' card choice), every active seat posts its
    choice at the same moment from its own client -- twice, with one Idempotency-Key -- and
    each choice becomes exactly one version."""
    players = 4
    match_id, tokens = await create(http, game, seed=8, players=players)
    url = f"/v1/matches/{match_id}"
    state = await play_randomly(http, match_id, tokens, seed=8, stop_at_version=0)
    chooser = random.Random(8)
    for _ in range(200):  # advance to a step where several seats choose at once
        if len(state["activeSeats"]) >= 2:
            break
        await play_one(http, url, tokens, state, chooser)
        state = (await http.get(url)).json()
    active = state["activeSeats"]
    assert len(active) >= 2, "no simultaneous step reached"
    start = state["version"]
    choices = {}
    for seat in active:
        moves = (await http.get(f"{url}/legal-moves", headers=bearer(tokens[seat]))).json()
        choices[seat] = chooser.choice(moves["moves"])

    async def choose(seat: int) -> httpx.Response:
        async with httpx.AsyncClient(base_url=str(http.base_url), timeout=30) as own:
            return await own.post(
                f"{url}/actions",
                headers={**bearer(tokens[seat]), "Idempotency-Key": f"{match_id}-{seat}"},
                json={"action": choices[seat]},
            )

    responses = await asyncio.gather(*(choose(s) for s in active for _ in range(2)))
    assert all(r.status_code == 200 for r in responses), [r.text for r in responses]
    by_seat: dict[int, set[int]] = {}
    for seat, response in zip([s for s in active for _ in range(2)], responses, strict=True):
        by_seat.setdefault(seat, set()).add(response.json()["version"])
    assert all(len(v) == 1 for v in by_seat.values()), "a retry acted twice"
    versions = sorted(v for vs in by_seat.values() for v in vs)
    assert versions == list(range(start + 1, start + 1 + len(active)))
    log = (await http.get(f"{url}/log?after={start}")).json()["entries"]
    assert [e["version"] for e in log][: len(active)] == versions
    assert sorted(e["seat"] for e in log[: len(active)]) == sorted(active)


async def play_one(http: httpx.AsyncClient, url: str, tokens: dict[int, str],
                   state: dict[str, Any], chooser: random.Random) -> None:
    seat = chooser.choice(state["activeSeats"])
    moves = (await http.get(f"{url}/legal-moves", headers=bearer(tokens[seat]))).json()
    response = await http.post(f"{url}/actions", headers=bearer(tokens[seat]),
                               json={"action": chooser.choice(moves["moves"]),
                                     "expectedVersion": moves["version"]})
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.slow
async def test_complete_match_on_a_redis_cluster(request: pytest.FixtureRequest, game: str
                                                 ) -> None:
    """The same service on a local 6-node Redis Cluster: a whole match, streamed."""
    from service.app import create_app
    from service.store.redis import RedisStore
    from tests.api.conftest import serve_in_thread

    cluster = request.getfixturevalue("redis_cluster")
    prefix = request.getfixturevalue("redis_cluster_prefix")
    store = RedisStore.from_cluster_nodes(cluster.nodes_arg, prefix=prefix)
    with serve_in_thread(create_app(store)) as server:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
            match_id, tokens = await create(http, game, seed=13)
            url = f"/v1/matches/{match_id}"
            stream = asyncio.create_task(read_states(http, f"{url}/events?after=0"))
            final = await play_randomly(http, match_id, tokens, seed=13)
            events = await asyncio.wait_for(stream, timeout=120)
            assert [int(e.id or 0) for e in events] == list(range(1, final["version"] + 1))
            assert events[-1].json()["status"] == "finished"


async def test_a_last_event_id_from_the_future_restarts_the_stream(http: httpx.AsyncClient
                                                                    ) -> None:
    match_id, _tokens = await create(http, TOY, seed=2)
    events = await read_states(http, f"/v1/matches/{match_id}/events",
                               {"Last-Event-ID": "99"}, limit=1)
    assert [e.id for e in events] == ["0"]


async def test_last_event_id_wins_over_after(http: httpx.AsyncClient) -> None:
    """Documented precedence (docs/api.md): a reconnecting EventSource keeps the URL it was
    opened with (``?after=`` included) and adds ``Last-Event-ID``, the newer position --
    so the header wins, whichever of the two is further on."""
    match_id, tokens = await create(http, TOY, seed=5)
    url = f"/v1/matches/{match_id}"
    await play_randomly(http, match_id, tokens, seed=5, stop_at_version=6)
    behind = await read_states(http, f"{url}/events?after=1", {"Last-Event-ID": "3"}, limit=1)
    ahead = await read_states(http, f"{url}/events?after=4", {"Last-Event-ID": "2"}, limit=1)
    assert [e.id for e in behind] == ["4"] and [e.id for e in ahead] == ["3"]
