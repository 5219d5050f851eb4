"""Many clients posting to one match at once over GraphQL (the simultaneous choice of the
toy game): no action is lost, the version history never forks, and pinned versions let
exactly one writer win."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from service.store import MatchStore, RedisStore, SqliteStore
from tests.graphql.conftest import CREATE, graphql_app
from tests.graphql.queries import ACT, LOG, MATCH

PLAYERS = 4


async def post(
    client: httpx.AsyncClient, query: str, variables: dict[str, Any], token: str | None = None
) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    response = await client.post("/graphql", json={"query": query, "variables": variables},
                                 headers=headers)
    body = response.json()
    assert "errors" not in body, body
    data: dict[str, Any] = body["data"]
    return data


async def choose_phase(client: httpx.AsyncClient) -> tuple[str, dict[int, str]]:
    created = (await post(client, CREATE, {"game": "toy", "players": PLAYERS, "seed": 3}))
    match_id = created["createMatch"]["matchId"]
    tokens = {s["seat"]: s["token"] for s in created["createMatch"]["seats"]}
    for seat in range(PLAYERS):
        passed = await post(client, ACT, {"id": match_id, "action": {"toy": {"pass": True}}},
                            tokens[seat])
        assert passed["act"]["__typename"] == "ActionAccepted"
    return match_id, tokens


async def simultaneous_choices(store: MatchStore) -> None:
    app, _ = graphql_app(store)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        match_id, tokens = await choose_phase(client)
        hands = {
            seat: (await post(client, MATCH, {"id": match_id}, token))["match"]["view"]["hand"]
            for seat, token in tokens.items()
        }

        def choose(seat: int) -> Any:
            action = {"toy": {"play": {"card": hands[seat][0]}}}
            variables = {"id": match_id, "action": action, "key": f"choice-{seat}"}
            return post(client, ACT, variables, tokens[seat])

        # Every seat posts its choice twice at once (a client retry): one action each.
        answers = await asyncio.gather(*(choose(seat) for seat in range(PLAYERS) for _ in "ab"))
        accepted = [a["act"] for a in answers]
        assert all(a["__typename"] == "ActionAccepted" for a in accepted), accepted
        versions = sorted({a["version"] for a in accepted})
        assert versions == [PLAYERS + 1 + i for i in range(PLAYERS)]
        log = (await post(client, LOG, {"id": match_id}, tokens[0]))["log"]
        assert [e["version"] for e in log["entries"]] == list(range(1, 2 * PLAYERS + 1))
        assert sorted(e["seat"] for e in log["entries"][PLAYERS:]) == list(range(PLAYERS))
        assert [e["kind"] for e in log["entries"][-1]["events"]] == ["chose", "revealed"]

        # Pinned to the same version: exactly one writer wins, the others see the conflict.
        version = log["latestVersion"]
        pinned = await asyncio.gather(*(
            post(client, ACT, {"id": match_id, "action": {"toy": {"pass": True}},
                               "version": version}, tokens[0])
            for _ in range(5)
        ))
        kinds = sorted(p["act"]["__typename"] for p in pinned)
        assert kinds == ["ActionAccepted"] + ["VersionConflict"] * 4, kinds


async def test_simultaneous_choices_on_the_memory_store() -> None:
    await simultaneous_choices(SqliteStore(":memory:"))


@pytest.mark.redis
async def test_simultaneous_choices_on_redis(redis_url: str, redis_prefix: str) -> None:
    store = RedisStore.from_url(redis_url, prefix=redis_prefix)
    try:
        await simultaneous_choices(store)
    finally:
        await store.close()
