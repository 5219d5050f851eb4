"""Issue 20, item 12: a retry with an Idempotency-Key the match record no longer remembers
(it keeps the last 16) is answered with its first result, found in the log by the write tag
its key gave the move -- not refused by the rules (409 ``not_your_turn``) nor, worse, played
again. Through the HTTP API, on the embedded store, Redis and a Redis Cluster.

Only a key the log cannot vouch for -- in a match whose earlier keyed moves an older build
wrote (no ``w`` in the record header: their log entries carry random tags) -- is refused
with 409 ``idempotency_key_expired`` when the rules would refuse it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from starlette.testclient import TestClient

from service.matches.records import MAX_IDEMPOTENCY_KEYS, LogRecord, MatchRecord
from service.store import MatchStore
from service.store.redis import RedisStore
from service.store.sqlite import SqliteStore
from tests.api.conftest import Match, create, make_app, stored


@pytest.fixture(params=[
    "sqlite",
    pytest.param("redis", marks=pytest.mark.redis),
    pytest.param("cluster", marks=[pytest.mark.redis, pytest.mark.slow]),
])
def store(request: pytest.FixtureRequest) -> MatchStore:
    if request.param == "sqlite":
        return SqliteStore(":memory:")
    if request.param == "redis":
        url = request.getfixturevalue("redis_url")
        return RedisStore.from_url(url, prefix=request.getfixturevalue("redis_prefix"))
    cluster = request.getfixturevalue("redis_cluster")
    prefix = request.getfixturevalue("redis_cluster_prefix")
    return RedisStore.from_cluster_nodes(cluster.nodes_arg, prefix=prefix)


@pytest.fixture
def client(store: MatchStore) -> Iterator[TestClient]:
    with TestClient(make_app(store)) as test_client:
        yield test_client


def post(client: TestClient, match: Match, seat: int, action: dict[str, Any],
         key: str | None, **body: Any) -> Any:
    headers = dict(match.auth(seat))
    if key is not None:
        headers["Idempotency-Key"] = key
    return client.post(f"{match.url}/actions", json={"action": action, **body},
                       headers=headers)


def next_move(client: TestClient, match: Match) -> tuple[int, dict[str, Any]]:
    """An active seat and a legal move of the toy game: draw in the draw step, the lowest
    card in the simultaneous one."""
    state = client.get(match.url, headers=match.auth(0)).json()
    seat = min(state["activeSeats"])
    moves = client.get(f"{match.url}/legal-moves", headers=match.auth(seat)).json()["moves"]
    return seat, moves[0]


def play_keyed(client: TestClient, match: Match, count: int) -> list[tuple[int, dict[str, Any],
                                                                        str, Any]]:
    """``count`` moves, each with its own key; (seat, action, key, first answer) of each."""
    played = []
    for n in range(count):
        seat, action = next_move(client, match)
        key = f"move-{n + 1}"
        answer = post(client, match, seat, action, key)
        assert answer.status_code == 200, answer.text
        played.append((seat, action, key, answer.json()))
    return played


def test_a_late_retry_answers_its_first_result_not_the_rules(client: TestClient) -> None:
    match = create(client, players=2, options={"rounds": 5})
    played = play_keyed(client, match, MAX_IDEMPOTENCY_KEYS + 1)
    seat, action, key, first = played[0]
    version, record = stored(client, match.id)
    assert version == 17
    assert 1 not in [r.version for r in record.idempotency]  # the record forgot the key
    assert seat == 0 and client.get(match.url).json()["activeSeats"] == [1]

    retry = post(client, match, seat, action, key)
    assert retry.status_code == 200, retry.text  # was 409 not_your_turn
    assert retry.json()["version"] == first["version"] == 1
    assert retry.json()["events"] == first["events"]  # seat 0's private card included
    assert retry.json()["state"]["version"] == 17  # the current state, as for any retry
    assert stored(client, match.id) == (version, record)  # nothing written
    # A stale pin does not matter for a retry: the first result stands.
    pinned = post(client, match, seat, action, key, expectedVersion=0)
    assert pinned.status_code == 200 and pinned.json()["version"] == 1
    # The same key with another move is refused, as within the remembered 16.
    other = post(client, match, seat, {"type": "pass"}, key)
    assert other.status_code == 409 and other.json()["code"] == "idempotency_key_reused"
    # Every one of the first moves answers its own first result.
    for seat, action, key, first in played[:-MAX_IDEMPOTENCY_KEYS]:
        again = post(client, match, seat, action, key)
        assert (again.json()["version"], again.json()["events"]) == (
            first["version"], first["events"])
    assert stored(client, match.id) == (version, record)
    # The key is per seat: seat 1 plays its own move under seat 0's old key.
    seat_1 = post(client, match, 1, next_move(client, match)[1], key)
    assert seat_1.status_code == 200 and seat_1.json()["version"] == 18


def test_a_late_retry_of_a_move_legal_again_is_not_played_twice(client: TestClient) -> None:
    match = create(client, players=3, options={"rounds": 5})
    played = play_keyed(client, match, 18)  # three whole rounds: seat 0 draws next
    seat, action, key, first = played[0]
    assert (seat, action) == (0, {"type": "draw"})
    assert next_move(client, match) == (0, {"type": "draw"})  # the same move is legal again
    version, record = stored(client, match.id)

    retry = post(client, match, seat, action, key)
    assert retry.status_code == 200, retry.text
    assert retry.json()["version"] == 1  # was a second draw, at version 19
    assert retry.json()["events"] == first["events"]
    assert stored(client, match.id) == (version, record)


def as_older_build_left_it(client: TestClient, match: Match, **changes: Any) -> None:
    """A neutral version written by a build before item 12: its record header has no ``w``
    (keyed moves before it may carry random tags)."""
    store: MatchStore = client.app.state.store  # type: ignore[attr-defined]
    version, record = stored(client, match.id)
    old = replace(record, keys_from=None, **changes)
    assert b'"w"' not in old.encode()
    entry = LogRecord(seat=None, action={"type": "interloper"})
    assert client.portal is not None
    assert client.portal.call(
        store.compare_and_set, match.id, version, old.encode(),
        entry.encode(old.game, old.log_dict),
    )


def test_a_key_the_log_cannot_vouch_for_is_expired(client: TestClient) -> None:
    match = create(client, players=2, options={"rounds": 5})
    played = play_keyed(client, match, MAX_IDEMPOTENCY_KEYS + 1)
    as_older_build_left_it(client, match)
    seat, action, key, _ = played[0]
    version, record = stored(client, match.id)
    assert record.keys_from is None and record.untagged_keys_forgotten()

    refused = post(client, match, seat, action, key)
    assert refused.status_code == 409, refused.text
    assert refused.json()["code"] == "idempotency_key_expired"
    assert refused.json()["currentVersion"] == version
    assert stored(client, match.id) == (version, record)
    # Without a key, the rules answer as ever.
    unkeyed = post(client, match, seat, action, None)
    assert unkeyed.json()["code"] == "not_your_turn"
    # A new key for a legal move is played, and tags keyed moves from then on.
    seat_1, move = next_move(client, match)
    new = post(client, match, seat_1, move, "fresh")
    assert new.status_code == 200 and new.json()["version"] == version + 1
    _, after = stored(client, match.id)
    assert after.keys_from == version + 1
    # The old key stays beyond the log's word (it may be a forgotten untagged move).
    again = post(client, match, seat, action, key)
    assert again.json()["code"] == "idempotency_key_expired"


def test_an_older_builds_match_without_keys_is_tagged_from_the_start(
    client: TestClient
) -> None:
    match = create(client, players=2)
    as_older_build_left_it(client, match)
    seat, move = next_move(client, match)
    assert post(client, match, seat, move, None).status_code == 200
    assert stored(client, match.id)[1].keys_from == 1  # no key was ever used: none is lost


def test_a_record_without_w_reads_as_an_older_builds() -> None:
    record = MatchRecord(game="toy", players=2, options=None, seed=1, tokens=("a", "b"),
                         state=b"{}")
    header, _, _ = record.encode().partition(b"\n")
    assert b'"w":1' in header
    older = header.replace(b',"w":1', b"") + b"\n{}"
    assert MatchRecord.decode(older).keys_from is None
    assert MatchRecord.decode(record.encode()) == record
