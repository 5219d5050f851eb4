"""Lost races, made to happen: ``RacingStore`` lands another write just before the service's
compare-and-set, on the embedded store and on Redis. What each kind of request must answer:

- unpinned: re-validated on the fresh state and retried -- 200 at the version after the
  interloper's, or the rules' refusal if the race made the move illegal (nothing written);
- pinned (``expectedVersion`` / ``If-Match``): 409 ``version_conflict`` / 412
  ``precondition_failed`` with ``currentVersion``, nothing written;
- a duplicate with the same ``Idempotency-Key`` that landed first: the first result (its
  version), one log entry;
- a race lost on every attempt: ``503 busy`` with ``Retry-After``, nothing written.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from service.matches import MatchService
from service.store import MatchStore
from service.store.redis import RedisStore
from service.store.sqlite import SqliteStore
from tests.api.conftest import Match, create, make_app, stored
from tests.support.racing_store import RacingStore


@pytest.fixture(params=["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def inner(request: pytest.FixtureRequest) -> MatchStore:
    if request.param == "sqlite":
        return SqliteStore(":memory:")
    url = request.getfixturevalue("redis_url")
    return RedisStore.from_url(url, prefix=request.getfixturevalue("redis_prefix"))


@pytest.fixture
def racing(inner: MatchStore) -> RacingStore:
    return RacingStore(inner)


@pytest.fixture
def client(racing: RacingStore) -> Iterator[TestClient]:
    with TestClient(make_app(racing)) as test_client:  # type: ignore[arg-type]
        yield test_client


def other(racing: RacingStore) -> MatchService:
    """Another replica's service: its writes go straight to the store (no race planted)."""
    return MatchService(racing.inner, ttl_finished=None, ttl_idle=None)


def plays(racing: RacingStore, match: Match, seat: int, card: int) -> Any:
    """An interloper: ``seat`` plays ``card`` through another replica, landing first."""
    async def interloper(match_id: str, version: int) -> None:
        await other(racing).act(match_id, match.tokens[seat], {"type": "play", "card": card},
                                None, None)

    return interloper


def to_choose(client: TestClient, match: Match) -> None:
    """Play the toy game to its simultaneous step (every seat passes its draw)."""
    for seat in range(match.players):
        answer = client.post(f"{match.url}/actions", json={"action": {"type": "pass"}},
                             headers=match.auth(seat))
        assert answer.status_code == 200, answer.text


def hand(client: TestClient, match: Match, seat: int) -> list[int]:
    view = client.get(match.url, headers=match.auth(seat)).json()["view"]
    return list(view["hand"])


def log(client: TestClient, match: Match, seat: int) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = client.get(
        f"{match.url}/log", headers=match.auth(seat)).json()["entries"]
    return entries


def test_an_unpinned_move_that_loses_the_race_is_retried_on_the_fresh_state(
    client: TestClient, racing: RacingStore
) -> None:
    match = create(client, players=3)
    to_choose(client, match)
    mine, theirs = hand(client, match, 0)[0], hand(client, match, 1)[0]

    racing.before_next_write(plays(racing, match, 1, theirs))
    answer = client.post(f"{match.url}/actions", json={"action": {"type": "play", "card": mine}},
                         headers=match.auth(0))
    assert racing.lost == 1
    assert answer.status_code == 200, answer.text
    assert answer.json()["version"] == 5  # 3 passes, seat 1's choice, then ours
    entries = {e["version"]: e["seat"] for e in log(client, match, 0)}
    assert entries == {1: 0, 2: 1, 3: 2, 4: 1, 5: 0}
    assert log(client, match, 0)[-1]["action"] == {"type": "play", "card": mine}


def test_an_unpinned_move_the_race_made_illegal_gets_the_rules_answer_and_no_write(
    client: TestClient, racing: RacingStore
) -> None:
    match = create(client, players=2)

    async def the_same_seat_moves_first(match_id: str, version: int) -> None:
        await other(racing).act(match_id, match.tokens[0], {"type": "pass"}, None, None)

    racing.before_next_write(the_same_seat_moves_first)
    answer = client.post(f"{match.url}/actions", json={"action": {"type": "draw"}},
                         headers=match.auth(0))
    assert answer.status_code == 409 and answer.json()["code"] == "not_your_turn"
    assert stored(client, match.id)[0] == 1  # only the interloper's pass
    assert [e["seat"] for e in log(client, match, 0)] == [0]


@pytest.mark.parametrize("pin", ["expectedVersion", "If-Match"])
def test_a_pinned_move_that_loses_the_race_is_a_conflict_and_writes_nothing(
    client: TestClient, racing: RacingStore, pin: str
) -> None:
    match = create(client, players=3)
    to_choose(client, match)
    mine, theirs = hand(client, match, 0)[0], hand(client, match, 1)[0]

    racing.before_next_write(plays(racing, match, 1, theirs))
    body: dict[str, Any] = {"action": {"type": "play", "card": mine}}
    headers = match.auth(0)
    if pin == "expectedVersion":
        body["expectedVersion"] = 3
    else:
        headers = {**headers, "If-Match": '"3"'}
    answer = client.post(f"{match.url}/actions", json=body, headers=headers)
    status, code = (409, "version_conflict") if pin == "expectedVersion" else (
        412, "precondition_failed")
    assert (answer.status_code, answer.json()["code"]) == (status, code), answer.text
    assert answer.json()["currentVersion"] == 4
    assert stored(client, match.id)[0] == 4
    assert mine in hand(client, match, 0)  # our card was not played


def test_a_duplicate_that_landed_first_is_answered_with_the_first_result(
    client: TestClient, racing: RacingStore
) -> None:
    match = create(client, players=2)
    key = {"Idempotency-Key": "turn-1"}

    async def the_duplicate_lands_first(match_id: str, version: int) -> None:
        await other(racing).act(match_id, match.tokens[0], {"type": "pass"}, None, "turn-1")

    racing.before_next_write(the_duplicate_lands_first)
    answer = client.post(f"{match.url}/actions", json={"action": {"type": "pass"}},
                         headers={**match.auth(0), **key})
    assert answer.status_code == 200, answer.text
    assert answer.json()["version"] == 1
    assert answer.json()["events"] == [{"kind": "passed", "data": {"seat": 0},
                                        "text": "Event: passed"}]
    assert stored(client, match.id)[0] == 1  # written once
    # Later, after the other seat moved too, the same retry still answers version 1.
    client.post(f"{match.url}/actions", json={"action": {"type": "pass"}},
                headers=match.auth(1))
    again = client.post(f"{match.url}/actions", json={"action": {"type": "pass"}},
                        headers={**match.auth(0), **key})
    assert again.status_code == 200 and again.json()["version"] == 1
    assert again.json()["state"]["version"] == 2  # the answer's state is the current one
    assert len(log(client, match, 0)) == 2


def test_a_race_lost_on_every_attempt_is_busy_and_writes_nothing_of_the_move(
    client: TestClient, racing: RacingStore
) -> None:
    match = create(client, players=2)
    racing.lose_every_write()
    answer = client.post(f"{match.url}/actions", json={"action": {"type": "draw"}},
                         headers=match.auth(0))
    racing.always = None
    assert answer.status_code == 503 and answer.json()["code"] == "busy"
    assert answer.headers["Retry-After"] == "1"
    assert racing.lost == 16  # every attempt (MAX_ACT_ATTEMPTS) lost its race
    assert all(e["seat"] is None for e in log(client, match, 0))  # interlopers only
    assert client.get(match.url, headers=match.auth(0)).json()["activeSeats"] == [0]
