"""Rate limits and quotas (issue 20, item 1): separate budgets per client, shared by every
replica through Redis, 429 ``rate_limited`` with ``Retry-After`` and the IETF httpapi
RateLimit headers; a quota of unfinished matches per creator (429 ``quota_exceeded``)
freed when a match finishes; an off switch.

Before the fix a client could create matches as fast as it could send requests: the first
test got 201 for every creation."""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from service.cli import _limit_settings, build_parser
from service.limits import DEFAULT_POLICIES, LimitSettings, Policy, Quotas
from service.store.redis import RedisStore
from tests.api.conftest import TOY, bearer, make_app

POLICY = re.compile(r'^"(\w+)";q=(\d+);w=(\d+)$')
REMAINING = re.compile(r'^"(\w+)";r=(\d+);t=(\d+)$')
NO_QUOTAS = Quotas(player=0, app=0, address=0)


def limits(quotas: Quotas = NO_QUOTAS, **budgets: str) -> LimitSettings:
    """The default budgets, some replaced (``create="3/60"``)."""
    policies = dict(DEFAULT_POLICIES)
    for name, spec in budgets.items():
        quota, window = spec.split("/")
        policies[name] = Policy(name, int(quota), int(window))
    return LimitSettings(enabled=True, policies=policies, quotas=quotas)


@pytest.fixture
def limited(toy_game: None) -> Iterator[TestClient]:
    with TestClient(make_app(limits=limits(create="3/60", read="5/60", act="4/60"))) as c:
        yield c


def create(client: TestClient, **headers: str) -> httpx.Response:
    return client.post("/v1/matches", json={"game": TOY, "players": 2, "seed": 7},
                       headers=headers)


def budget_headers(response: httpx.Response) -> tuple[tuple[str, int, int], tuple[str, int, int]]:
    policy = POLICY.match(response.headers["RateLimit-Policy"])
    left = REMAINING.match(response.headers["RateLimit"])
    assert policy and left, response.headers
    return ((policy[1], int(policy[2]), int(policy[3])), (left[1], int(left[2]), int(left[3])))


def test_creating_past_the_budget_is_429_rate_limited_with_the_headers(
    limited: TestClient,
) -> None:
    for remaining in (2, 1, 0):
        response = create(limited)
        assert response.status_code == 201, response.text
        policy, left = budget_headers(response)
        assert policy == ("create", 3, 60)
        assert left[:2] == ("create", remaining) and 0 <= left[2] <= 60
    refused = create(limited)
    assert refused.status_code == 429
    assert refused.headers["content-type"] == "application/problem+json"
    body = refused.json()
    assert body["code"] == "rate_limited" and body["status"] == 429
    retry = int(refused.headers["Retry-After"])
    assert 1 <= retry <= 60 and body["retryAfter"] == retry
    assert refused.headers["RateLimit-Policy"] == '"create";q=3;w=60'
    assert refused.headers["RateLimit"] == f'"create";r=0;t={retry}'


def test_the_budgets_are_separate(limited: TestClient) -> None:
    match = create(limited).json()
    token = match["seats"][0]["token"]
    while create(limited).status_code != 429:
        pass
    url = f"/v1/matches/{match['matchId']}"
    read = limited.get(url)  # reads: their own budget, untouched by creations
    assert read.status_code == 200
    assert budget_headers(read)[0] == ("read", 5, 60)
    acted = limited.post(f"{url}/actions", json={"action": {"type": "draw"}},
                         headers=bearer(token))  # acting: its own budget, per seat token
    assert acted.status_code == 200, acted.text
    assert budget_headers(acted)[0] == ("act", 4, 60)
    for _ in range(4):
        limited.get("/v1/games")
    assert limited.get("/v1/games").status_code == 429  # reads spent ...
    # ... and a seat token of a match the address created anonymously is the address's
    # (issue 31, item 2: minted for nothing, it buys no fresh budget) ...
    assert limited.get(url, headers=bearer(token)).status_code == 429
    # ... while the act budget is still the address's own, apart from the reads
    assert limited.post(f"{url}/stream-tickets", headers=bearer(token)).status_code == 200


def test_a_graphql_creation_spends_the_same_create_budget(limited: TestClient) -> None:
    while create(limited).status_code != 429:
        pass
    answer = limited.post("/graphql", json={"query": (
        'mutation { createMatch(game: "toy", players: 2) { __typename '
        "... on Problem { code } ... on Unavailable { retryAfter } } }")})
    result = answer.json()["data"]["createMatch"]
    assert result["__typename"] == "Unavailable" and result["code"] == "rate_limited"
    assert result["retryAfter"] >= 1


def test_the_graphql_endpoint_answers_429_past_the_read_budget(limited: TestClient) -> None:
    query = {"query": "{ games { id } }"}
    answers = [limited.post("/graphql", json=query) for _ in range(6)]
    assert [a.status_code for a in answers] == [200] * 5 + [429]
    assert answers[-1].json()["code"] == "rate_limited"
    assert "Retry-After" in answers[-1].headers


def test_made_up_credentials_buy_no_fresh_budget(limited: TestClient) -> None:
    match_id = create(limited).json()["matchId"]
    url = f"/v1/matches/{match_id}"
    statuses = [limited.get(url, headers=bearer(f"sky_made-up-{n}")).status_code
                for n in range(7)]
    assert statuses == [401] * 5 + [429] * 2


def test_a_forwarded_address_from_an_untrusted_peer_gets_no_fresh_budget(
    toy_game: None,
) -> None:
    with TestClient(make_app(limits=limits(create="2/60"))) as client:
        assert [create(client).status_code for _ in range(3)] == [201, 201, 429]
        forged = create(client, **{"X-Forwarded-For": "203.0.113.9"})
        assert forged.status_code == 429
    # Behind a trusted proxy, each forwarded client has its own budget.
    app = make_app(limits=limits(create="2/60"), trusted_proxies=("testclient",))
    with TestClient(app) as client:
        first = {"X-Forwarded-For": "203.0.113.9"}
        assert [create(client, **first).status_code for _ in range(3)] == [201, 201, 429]
        assert create(client, **{"X-Forwarded-For": "203.0.113.10"}).status_code == 201


def test_two_replicas_on_one_redis_share_the_budget(
    toy_game: None, redis_url: str, redis_prefix: str
) -> None:
    def replica() -> TestClient:
        store = RedisStore.from_url(redis_url, prefix=redis_prefix)
        return TestClient(make_app(store, redis_url=redis_url, redis_prefix=redis_prefix,
                                   limits=limits(create="3/60")))

    with replica() as one, replica() as two:
        assert create(one).status_code == 201
        assert create(two).status_code == 201
        assert budget_headers(create(one))[1][:2] == ("create", 0)
        refused = create(two)
        assert refused.status_code == 429, refused.text
        assert refused.json()["code"] == "rate_limited"


def play_to_the_end(client: TestClient, match_id: str, tokens: dict[int, str]) -> None:
    chooser = random.Random(5)
    url = f"/v1/matches/{match_id}"
    for _ in range(200):
        state = client.get(url).json()
        if state["status"] == "finished":
            return
        seat = chooser.choice(state["activeSeats"])
        moves = client.get(f"{url}/legal-moves", headers=bearer(tokens[seat])).json()
        response = client.post(f"{url}/actions", headers=bearer(tokens[seat]),
                               json={"action": chooser.choice(moves["moves"]),
                                     "expectedVersion": moves["version"]})
        assert response.status_code == 200, response.text
    raise AssertionError("the toy match did not end")


def test_past_the_quota_429_quota_exceeded_until_a_match_finishes(toy_game: None) -> None:
    app = make_app(limits=limits(Quotas(address=2)))
    with TestClient(app) as client:
        body = {"game": TOY, "players": 2, "seed": 3, "options": {"rounds": 1}}
        created = [client.post("/v1/matches", json=body) for _ in range(2)]
        assert [c.status_code for c in created] == [201, 201]
        refused = client.post("/v1/matches", json=body)
        assert refused.status_code == 429
        assert refused.json()["code"] == "quota_exceeded"
        first = created[0].json()
        play_to_the_end(client, first["matchId"],
                        {s["seat"]: s["token"] for s in first["seats"]})
        assert client.post("/v1/matches", json=body).status_code == 201
        assert client.post("/v1/matches", json=body).json()["code"] == "quota_exceeded"


def test_a_guest_s_quota_is_its_own_and_its_address_s(toy_game: None) -> None:
    """A guest's player quota is its own; its creations count against its address's as
    well (issue 31, item 6: anyone mints guests for nothing)."""
    with TestClient(make_app(limits=limits(Quotas(player=1, address=2)))) as client:
        player = client.post("/v1/players", json={"name": "Ada"}).json()
        seats = {"game": TOY, "seats": [{"player": player["id"]}, {"bot": "random"}]}
        mine = bearer(player["token"])
        assert client.post("/v1/matches", json=seats, headers=mine).status_code == 201
        again = client.post("/v1/matches", json=seats, headers=mine)
        assert again.json()["code"] == "quota_exceeded"  # the player's own quota
        assert create(client).status_code == 201  # the address's second slot
        assert create(client).json()["code"] == "quota_exceeded"  # the guest took the first


async def test_the_quota_holds_across_replicas_creating_at_once(
    toy_game: None, redis_url: str, redis_prefix: str
) -> None:
    apps = [make_app(RedisStore.from_url(redis_url, prefix=redis_prefix), redis_url=redis_url,
                     redis_prefix=redis_prefix, limits=limits(Quotas(address=3)))
            for _ in range(2)]
    clients = [httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://r")
               for app in apps]
    try:
        body: dict[str, Any] = {"game": TOY, "players": 2}
        answers = await asyncio.gather(*(clients[n % 2].post("/v1/matches", json=body)
                                         for n in range(12)))
    finally:
        for client in clients:
            await client.aclose()
        for app in apps:
            await app.state.store.close()
            await app.state.limits.aclose()
    statuses = sorted(a.status_code for a in answers)
    assert statuses.count(201) == 3, [a.text for a in answers]
    assert all(a.json()["code"] in ("quota_exceeded", "busy") for a in answers
               if a.status_code != 201)


def test_switched_off_nothing_is_counted(toy_game: None) -> None:
    with TestClient(make_app(limits=LimitSettings(enabled=False))) as client:
        answers = [create(client) for _ in range(80)]
        assert {a.status_code for a in answers} == {201}
        assert "RateLimit" not in answers[-1].headers


def test_the_serve_flags_and_their_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    default = _limit_settings(build_parser().parse_args(["serve"]))
    assert default.enabled and default.policies == DEFAULT_POLICIES
    assert default.policies["create"].header() == '"create";q=600;w=60'
    off = _limit_settings(build_parser().parse_args(["serve", "--rate-limits", "off"]))
    assert not off.enabled
    monkeypatch.setenv("SKYLINE_RATE_LIMITS", "off")
    monkeypatch.setenv("SKYLINE_RATE_CREATE", "10/30")
    monkeypatch.setenv("SKYLINE_QUOTA_ADDRESS", "7")
    env = _limit_settings(build_parser().parse_args(["serve"]))
    assert not env.enabled and env.policies["create"] == Policy("create", 10, 30)
    assert env.quotas.address == 7
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--rate-act", "fast"])


def test_opening_streams_spends_the_stream_budget(toy_game: None) -> None:
    from starlette.testclient import WebSocketDenialResponse

    with TestClient(make_app(limits=limits(stream="2/60"), sse_max_seconds=0.1)) as client:
        match_id = create(client).json()["matchId"]
        events = f"/v1/matches/{match_id}/events"
        with client.stream("GET", events) as opened:
            assert opened.status_code == 200
            assert budget_headers(opened)[0] == ("stream", 2, 60)
        with client.websocket_connect("/graphql", subprotocols=["graphql-transport-ws"]):
            pass
        with (pytest.raises(WebSocketDenialResponse) as denied,
              client.websocket_connect("/graphql", subprotocols=["graphql-transport-ws"])):
            pass
        assert denied.value.status_code == 429
        assert denied.value.json()["code"] == "rate_limited"
        assert "Retry-After" in denied.value.headers
        assert client.get(events).status_code == 429
        assert client.get(f"/v1/matches/{match_id}").status_code == 200  # reads: their own


# -- issue 31, items 1 and 2: budgets and stream slots only for verified credentials that
# cost something to mint ---------------------------------------------------------------


def spectator_token_for(match_id: str, n: int) -> str:
    """A made-up spectator token of the right shape (nonce 16, MAC 22 characters)."""
    return f"sks_{match_id}.{n:016d}.{'A' * 22}"


def test_made_up_tokens_share_their_address_s_budget_where_nothing_checks_them(
    limited: TestClient,
) -> None:
    """Before the fix every made-up token was a new client with a full budget: seven 200s."""
    made_up = [f"sky_made-up-{n}" for n in range(3)] + [
        f"skp_{'a' * 26}.{'b' * 43}", f"ska_app_{'c' * 20}.{'d' * 43}", "aa.bb.cc",
        spectator_token_for("m", 1)]
    statuses = [limited.get("/v1/games", headers=bearer(t)).status_code for t in made_up]
    assert statuses == [200] * 5 + [429] * 2
    assert limited.get("/v1/games").status_code == 429  # the address's reads, spent


def test_a_made_up_spectator_token_is_refused_on_a_public_match(limited: TestClient) -> None:
    match_id = create(limited).json()["matchId"]
    refused = limited.get(f"/v1/matches/{match_id}",
                          headers=bearer(spectator_token_for(match_id, 2)))
    assert refused.status_code == 401 and refused.json()["code"] == "unauthorized"


def test_an_app_s_verified_key_and_its_matches_seat_tokens_get_budgets_of_their_own(
    toy_game: None,
) -> None:
    """An app key (and the seat tokens of the matches it created) is a client of its own
    once verified: a crowd on one address stays workable; its first request is its
    address's."""
    with TestClient(make_app(limits=limits(read="4/60"))) as client:
        players = client.app.state.player_service  # type: ignore[attr-defined]
        _, key = client.portal.call(players.apps.add, "Acme")  # type: ignore[union-attr]
        made = client.post("/v1/matches", json={"game": TOY, "players": 2},
                           headers=bearer(key))
        assert made.status_code == 201, made.text
        match = made.json()
        seat_token = match["seats"][0]["token"]
        url = f"/v1/matches/{match['matchId']}"
        assert client.get(url, headers=bearer(seat_token)).status_code == 200  # verified
        while client.get("/v1/games").status_code != 429:
            pass  # the address's reads, spent
        for _ in range(3):
            assert client.get(url, headers=bearer(seat_token)).status_code == 200
            assert client.get(url, headers=bearer(key)).status_code == 200
        again = [client.get(url, headers=bearer(seat_token)).status_code for _ in range(2)]
        assert again == [200, 429]  # its own 4 (its first read was its address's)


def test_guests_and_the_seat_tokens_of_their_matches_share_their_address_s_budget(
    toy_game: None,
) -> None:
    with TestClient(make_app(limits=limits(read="6/60"))) as client:
        guests = [client.post("/v1/players", json={"name": f"G{n}"}).json()
                  for n in range(3)]
        statuses = [client.get("/v1/me", headers=bearer(g["token"])).status_code
                    for g in guests for _ in range(3)]
        assert statuses == [200] * 6 + [429] * 3


async def test_made_up_and_freely_minted_tokens_get_no_stream_slots_of_their_own(
    toy_game: None,
) -> None:
    """A cap of 2 streams per client: before the fix each seat token of an anonymous match
    (and each made-up spectator token) held 2 more streams from the same address."""
    app = make_app(limits=limits(), max_watchers_per_client=2, sse_max_seconds=5.0)
    async with app.router.lifespan_context(app), httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://r"
    ) as client:
        tokens = []
        for _ in range(3):
            match = (await client.post("/v1/matches", json={"game": TOY, "players": 2})).json()
            tokens += [(match["matchId"], s["token"]) for s in match["seats"]]
        answers = await asyncio.gather(*(
            client.get(f"/v1/matches/{m}/events", headers=bearer(t)) for m, t in tokens))
        statuses = sorted(a.status_code for a in answers)
        assert statuses == [200, 200] + [429] * 4, statuses
        assert {a.json()["code"] for a in answers if a.status_code == 429} == {
            "too_many_streams"}
        made_up = await asyncio.gather(*(
            client.get(f"/v1/matches/{tokens[0][0]}/events",
                       headers=bearer(spectator_token_for(tokens[0][0], n)))
            for n in range(3)))
        assert {a.status_code for a in made_up} == {401}


async def test_with_the_budgets_off_each_seat_token_holds_its_own_stream_slots(
    toy_game: None,
) -> None:
    """``--rate-limits off`` (benchmarks) switches the per-address sharing off too."""
    app = make_app(max_watchers_per_client=1, sse_max_seconds=0.5)
    async with app.router.lifespan_context(app), httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://r"
    ) as client:
        match = (await client.post("/v1/matches", json={"game": TOY, "players": 2})).json()
        answers = await asyncio.gather(*(
            client.get(f"/v1/matches/{match['matchId']}/events", headers=bearer(s["token"]))
            for s in match["seats"]))
        assert [a.status_code for a in answers] == [200, 200]


# -- issue 31, item 10: one app's own burst of creations is served ----------------------


async def burst_of_creations(apps: list[Any], count: int) -> list[httpx.Response]:
    """``count`` creations at once with one app's key, spread over ``apps`` (replicas)."""
    clients = [httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://r")
               for app in apps]
    try:
        players = apps[0].state.player_service
        _, key = await players.apps.add("Burst")
        body: dict[str, Any] = {"game": TOY, "players": 2}
        return list(await asyncio.gather(*(
            clients[n % len(clients)].post("/v1/matches", json=body, headers=bearer(key))
            for n in range(count))))
    finally:
        for client in clients:
            await client.aclose()


async def test_32_concurrent_creations_by_one_app_all_succeed_embedded(
    toy_game: None,
) -> None:
    """Before the fix the app's one quota document took every creation's compare-and-set:
    some of 32 at once got ``503 busy``."""
    app = make_app(limits=limits(Quotas()))
    async with app.router.lifespan_context(app):
        answers = await burst_of_creations([app], 32)
    assert [a.status_code for a in answers] == [201] * 32, [
        a.text for a in answers if a.status_code != 201]


async def test_32_concurrent_creations_by_one_app_all_succeed_on_redis_replicas(
    toy_game: None, redis_url: str, redis_prefix: str
) -> None:
    apps = [make_app(RedisStore.from_url(redis_url, prefix=redis_prefix), redis_url=redis_url,
                     redis_prefix=redis_prefix, limits=limits(Quotas()))
            for _ in range(2)]
    try:
        answers = await burst_of_creations(apps, 32)
    finally:
        for app in apps:
            await app.state.store.close()
            await app.state.limits.aclose()
    assert [a.status_code for a in answers] == [201] * 32, [
        a.text for a in answers if a.status_code != 201]


async def test_a_sharded_quota_still_holds_exactly_under_a_burst(
    toy_game: None, redis_url: str, redis_prefix: str
) -> None:
    """The shards' caps add up to the quota: 40 creations at once against an app quota of
    20 through two replicas: exactly 20 succeed."""
    apps = [make_app(RedisStore.from_url(redis_url, prefix=redis_prefix), redis_url=redis_url,
                     redis_prefix=redis_prefix, limits=limits(Quotas(app=20)))
            for _ in range(2)]
    try:
        answers = await burst_of_creations(apps, 40)
    finally:
        for app in apps:
            await app.state.store.close()
            await app.state.limits.aclose()
    statuses = [a.status_code for a in answers]
    assert statuses.count(201) == 20, [a.text for a in answers if a.status_code != 201]
    assert {a.json()["code"] for a in answers if a.status_code != 201} == {"quota_exceeded"}
