"""Issue 20, item 9: an event stream opened with a seat's credential (its token, or a stream
ticket) checks it again at every version it is about to send. When the seat is handed to a
bot mid-stream (the in-process worker then plays it), the stream ends with ``event:
revoked`` and ``data: {"code": "seat_handed_to_bot"}`` (issue 18), and nothing of the hand-over's
version or a later one arrives; a spectator's stream goes on. On a real uvicorn server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator

import httpx
import jsonschema_rs
import pytest

from service.games import get as get_engine
from service.games.base import dump_action
from service.matches.watch import Revoked
from service.store import MatchStore
from tests.live.conftest import make_service, new_match
from tests.live.test_streams_http import Server, Stream
from tests.support.slow import starts_processes

LATER = 6
"""Versions played after the hand-over (by the human seat and the bot worker)."""


@pytest.fixture
@starts_processes
def server() -> Iterator[Server]:
    with Server() as running:  # the embedded store: the bot worker runs in the server
        yield running


@pytest.fixture
async def http(server: Server) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
        yield client


async def _play_until(http: httpx.AsyncClient, match_id: str, token: str, version: int) -> None:
    """Seat 0 plays whenever it is its turn (the worker plays the bot's) until the match
    reaches ``version``."""
    auth = {"Authorization": f"Bearer {token}"}
    for _ in range(2000):
        state = (await http.get(f"/v1/matches/{match_id}")).json()
        if state["version"] >= version or state["status"] == "finished":
            return
        if 0 in state["activeSeats"]:
            moves = (await http.get(f"/v1/matches/{match_id}/legal-moves",
                                    headers=auth)).json()
            await http.post(f"/v1/matches/{match_id}/actions", headers=auth,
                            json={"action": moves["moves"][0],
                                  "expectedVersion": state["version"]})
        else:
            await asyncio.sleep(0.02)  # the bot's turn: the worker moves
    raise AssertionError("the match did not move on")


async def _ended(stream: Stream) -> bool:
    try:
        await stream.next()
    except StopAsyncIteration:
        return True
    return False


async def test_a_seat_handed_to_a_bot_ends_its_streams_with_revoked(
    server: Server, http: httpx.AsyncClient,
) -> None:
    components = server.app.state.openapi["components"]
    published = jsonschema_rs.validator_for(
        {"$ref": "#/components/schemas/MatchStreamEvent", "components": components})
    created = (await http.post("/v1/matches", json={"game": "ny1901", "players": 2,
                                                   "seed": 4})).json()
    match_id = created["matchId"]
    tokens = {s["seat"]: s["token"] for s in created["seats"]}
    seat1 = {"Authorization": f"Bearer {tokens[1]}"}
    ticket = (await http.post(f"/v1/matches/{match_id}/stream-tickets",
                              headers=seat1)).json()["ticket"]
    url = f"/v1/matches/{match_id}/events"
    streams = {
        "token": Stream(http, url, seat1),
        "ticket": Stream(http, f"{url}?ticket={ticket}", {}),
        "patch": Stream(http, f"{url}?mode=patch", seat1),
        "spectator": Stream(http, url, {}),
    }
    for stream in streams.values():
        assert (await stream.open()).status_code == 200
    # A move by whoever starts (both seats are human yet): every stream gets version 1.
    state = (await http.get(f"/v1/matches/{match_id}")).json()
    starter = {"Authorization": f"Bearer {tokens[min(state['activeSeats'])]}"}
    moves = (await http.get(f"/v1/matches/{match_id}/legal-moves", headers=starter)).json()
    played = await http.post(f"/v1/matches/{match_id}/actions", headers=starter,
                             json={"action": moves["moves"][0]})
    assert played.status_code == 200, played.text
    for name, stream in streams.items():
        for version in (0, 1):
            event = await stream.next()
            assert event.id == str(version)
            if name != "patch" or version == 0:
                seen = json.loads(event.data)["seat"]
                assert seen == (None if name == "spectator" else 1)

    handed = await http.post(f"/v1/matches/{match_id}/seats/1/bot", headers=seat1,
                             json={"kind": "random"})
    assert handed.status_code == 200, handed.text
    handover = handed.json()["version"]
    await _play_until(http, match_id, tokens[0], handover + LATER)

    for name in ("token", "ticket", "patch"):
        after = await streams[name].next()  # before the fix: the hand-over's version
        assert (after.event, after.id) == ("revoked", None), (name, after)
        assert json.loads(after.data) == {"code": "seat_handed_to_bot"}
        published.validate({"event": after.event, "data": after.data})
        assert await _ended(streams[name])
        await streams[name].close()
    spectator = streams["spectator"]
    for version in range(2, handover + LATER + 1):
        event = await spectator.next()
        assert (event.id, json.loads(event.data)["seat"]) == (str(version), None)
    await spectator.close()
    # The old token opens nothing any more.
    again = await http.get(url, headers=seat1)
    assert (again.status_code, again.json()["code"]) == (401, "seat_handed_to_bot")
    assert f"version {handover}" in again.json()["detail"]


@pytest.mark.parametrize("resume_window", [5, 100])
async def test_a_stream_that_fell_behind_a_hand_over_is_revoked_too(
    store: MatchStore, resume_window: int
) -> None:
    """A seat's stream that reads nothing while the hand-over and 20 more versions pass (a
    spectator moves the shared timeline on, so the versions it missed are no longer shared):
    within the resume window it replays them on its own, beyond it it would jump to the
    newest -- either way it is revoked at once, not sent a later version."""
    service = make_service(store, resume_window=resume_window)
    played = await new_match(service, "ny1901", players=2, seed=11)
    match_id, tokens = played.match_id, played.tokens
    seat_stream = service.follow(match_id, token=tokens[1])
    spectator = service.follow(match_id)
    assert (await anext(seat_stream)).version == 0
    assert (await anext(spectator)).version == 0
    await service.hand_seat_to_bot(match_id, tokens[1], "random")
    engine = get_engine("ny1901")
    for _ in range(20):
        version, record = await service.load_record(match_id)
        state = engine.loads(record.state)
        seat = min(engine.active_seats(state))
        action = engine.legal_actions(state, seat)[0]
        if seat == 1:
            await service.act_as_bot(match_id, 1, dump_action(engine, action), version)
        else:
            await service.act(match_id, tokens[0], dump_action(engine, action), None, None)
    newest, _ = await service.load_record(match_id)
    while (await asyncio.wait_for(anext(spectator), 30)).version < newest:
        pass  # the shared timeline now starts well after the hand-over
    await spectator.aclose()
    with pytest.raises(Revoked) as ended:
        await asyncio.wait_for(anext(seat_stream), 30)
    assert ended.value.error.code == "seat_handed_to_bot"
    await seat_stream.aclose()
