"""Bot seats in the service layer: validation of `bots` (a clear 4xx, nothing written),
bots acting only through the compare-and-set, signals only for matches with bots, and the
GraphQL side (createMatch bots, MatchState.bots, handSeatToBot)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from starlette.testclient import TestClient

from service import games
from service.app import Settings, create_app
from service.errors import ApiError
from service.games.base import dump_action
from service.matches import MatchService
from service.matches.records import MatchRecord
from service.store.sqlite import SqliteStore

TOY = "toy"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"game": TOY, "players": 2, "bots": {"2": "random"}}, 422, "bad_bots"),
        ({"game": TOY, "players": 2, "bots": {"-1": "random"}}, 422, "bad_bots"),
        ({"game": TOY, "players": 2, "bots": {"0": "random", "1": "random"}}, 422, "bad_bots"),
        ({"game": TOY, "players": 2, "bots": {"1": "clever"}}, 422, "bad_bots"),
        ({"game": TOY, "players": 2, "bots": {"1": "greedy"}}, 422, "bad_bots"),  # no model
        ({"game": TOY, "players": 2, "bots": {"one": "random"}}, 422, "bad_bots"),
        ({"game": "ny1901", "players": 2, "bots": {"0": "search", "1": "greedy"}}, 422,
         "bad_bots"),
        ({"game": TOY, "players": 2, "bots": [1]}, 400, "malformed"),  # the old shape
        ({"game": TOY, "players": 2, "bots": {"1": "random"}, "botKind": "random"}, 400,
         "malformed"),
        ({"game": TOY, "players": 2, "bots": {"1": None}}, 400, "malformed"),
    ],
)
def test_bad_bot_seats_are_refused_and_nothing_is_written(
    body: dict[str, Any], status: int, code: str
) -> None:
    store = SqliteStore(":memory:")
    with TestClient(create_app(store)) as client:
        response = client.post("/v1/matches", json=body)
        assert response.status_code == status, response.text
        assert response.json()["code"] == code
        assert response.json()["detail"]
        assert store.counts() == {"matches": 0, "log": 0, "due": 0}  # nothing written
        # or signalled


def test_matches_without_bots_pay_no_signal() -> None:
    store = SqliteStore(":memory:")
    with TestClient(create_app(store)) as client:
        created = client.post("/v1/matches", json={"game": TOY, "players": 2, "seed": 1})
        token = created.json()["seats"][0]["token"]
        url = f"/v1/matches/{created.json()['matchId']}"
        before = store.round_trips
        response = client.post(f"{url}/actions", headers=bearer(token),
                               json={"action": {"type": "pass"}})
        assert response.status_code == 200
        assert store.round_trips - before == 2  # load + compare-and-set, no signal
        before = store.round_trips
        assert client.get(url).json()["bots"] == {}
        assert store.round_trips - before == 1  # a read: one load


async def test_a_human_pinned_write_racing_a_bot_gets_409_and_history_never_forks() -> None:
    """Ginkgopolis' card choice is simultaneous: the human and the bot are both active at
    version v. The bot's move lands first (through act_as_bot, the worker's path); the
    human's move pinned to v is refused with 409, and the log stays one entry per version.
    The other way round, a bot pinned to a stale version is refused too."""
    store = SqliteStore(":memory:")
    service = MatchService(store, ttl_finished=None, ttl_idle=None)
    from service.matches.models import CreateMatchRequest

    created = await service.create_match(CreateMatchRequest(
        game="ginkgopolis", players=2, seed=4, bots={"1": "random"}))
    match_id, token = created.match_id, created.seats[0].token
    engine = games.get("ginkgopolis")
    version, data = await store.load(match_id)
    state = engine.loads(MatchRecord.decode(data).state)
    assert engine.active_seats(state) == {0, 1}
    bot_move = dump_action(engine, engine.legal_actions(state, 1)[0])
    human_move = dump_action(engine, engine.legal_actions(state, 0)[0])
    assert await service.act_as_bot(match_id, 1, bot_move, expected_version=version) == 1
    with pytest.raises(ApiError) as refused:
        await service.act(match_id, token, human_move, version, None)
    assert (refused.value.status, refused.value.code) == (409, "version_conflict")
    # The human, now at v + 1, wins; the bot's stale pin is refused, nothing forks.
    await service.act(match_id, token, human_move, version + 1, None)
    with pytest.raises(ApiError) as stale:
        await service.act_as_bot(match_id, 1, bot_move, expected_version=version + 1)
    assert stale.value.code == "version_conflict"
    assert [e.version for e in await store.log(match_id)] == [1, 2]
    # A human seat is not the worker's to play.
    with pytest.raises(ApiError) as human:
        await service.act_as_bot(match_id, 0, human_move, expected_version=2)
    assert human.value.code == "unauthorized"


def test_graphql_bot_seats_and_hand_over() -> None:
    store = SqliteStore(":memory:")
    with TestClient(create_app(store, settings=Settings())) as client:
        def gql(query: str, variables: dict[str, Any], token: str | None = None) -> Any:
            headers = bearer(token) if token else {}
            response = client.post("/graphql", json={"query": query, "variables": variables},
                                   headers=headers)
            assert response.status_code == 200, response.text
            body = response.json()
            assert "errors" not in body, body
            return body["data"]

        created = gql(
            """mutation($bots: [BotSeatInput!]) {
                 createMatch(game: "toy", players: 3, seed: 2, bots: $bots) {
                   __typename ... on MatchCreated { matchId seats { seat token } }
                   ... on Problem { code }
                 } }""",
            {"bots": [{"seat": 2, "kind": "random"}]},
        )["createMatch"]
        assert created["__typename"] == "MatchCreated"
        match_id = created["matchId"]
        tokens = {s["seat"]: s["token"] for s in created["seats"]}
        assert set(tokens) == {0, 1}
        state = gql(
            "query($id: ID!) { match(id: $id) { ... on MatchState { bots { seat kind } } } }",
            {"id": match_id},
        )["match"]
        assert state["bots"] == [{"seat": 2, "kind": "random"}]
        hand = """mutation($id: ID!) { handSeatToBot(matchId: $id, kind: random) {
                    __typename ... on MatchState { seat bots { seat kind } }
                    ... on Problem { code } } }"""
        assert gql(hand, {"id": match_id})["handSeatToBot"] == {
            "__typename": "Unauthorized", "code": "unauthorized"}
        for seat in (0, 1):
            handed = gql(hand, {"id": match_id}, tokens[seat])["handSeatToBot"]
            assert handed["__typename"] == "MatchState" and handed["seat"] is None
        assert handed["bots"] == [{"seat": s, "kind": "random"} for s in (0, 1, 2)]
        again = gql(hand, {"id": match_id}, tokens[0])["handSeatToBot"]
        assert again["__typename"] == "Unauthorized"  # the token stopped working

        async def finished() -> None:
            async with asyncio.timeout(120):  # a safety net, not a measurement
                async for _ in store.watch(match_id, 0):
                    _, data = await store.load(match_id)
                    if MatchRecord.decode(data).finished:
                        return

        assert client.portal is not None
        client.portal.call(finished)  # every seat is a bot now: the worker ends the match
        log = client.portal.call(store.log, match_id)
        assert [e.version for e in log] == list(range(1, len(log) + 1))


async def test_reads_signal_a_waiting_bot_again_only_after_a_while() -> None:
    """The safety net for a lost signal: a read of a match whose bot is to move signals it
    again -- once the bot's turn has waited ``resignal_after`` without a write, so polling
    clients do not flood the workers."""
    from service.matches.models import CreateMatchRequest

    now = [1000.0]
    store = SqliteStore(":memory:")
    service = MatchService(store, ttl_finished=None, ttl_idle=None, clock=lambda: now[0])
    created = await service.create_match(CreateMatchRequest(
        game=TOY, players=2, seed=3, bots={"1": "random"}))
    match_id, token = created.match_id, created.seats[0].token
    await service.act(match_id, token, {"type": "pass"}, None, None)
    signalled = await store.claim_due("test", count=10, block_ms=0)
    assert [s.match_id for s in signalled] == [match_id]  # the write signalled
    await store.ack_due([s.token for s in signalled])
    await service.get_state(match_id, None)
    assert await store.claim_due("test", count=10, block_ms=0) == []  # too soon
    now[0] += service.resignal_after
    await service.get_state(match_id, None)
    await service.legal_moves(match_id, token)
    again = await store.claim_due("test", count=10, block_ms=0)
    assert {s.match_id for s in again} == {match_id}
