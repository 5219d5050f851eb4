"""Every refusal of the REST API: its status, its problem ``code``, and that nothing was
written (the stored version and record are unchanged)."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.api.conftest import TOY, Match, bearer, create, engine_state, make_app, stored
from tests.toy_game import engine as toy

PROBLEM = "application/problem+json"


def assert_problem(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    body: dict[str, Any] = response.json()
    assert body["status"] == status
    assert body["code"] == code
    assert body["title"] and body["detail"]
    return body


class Unchanged:
    """Snapshot of a match's stored bytes; ``check()`` asserts nothing was written."""

    def __init__(self, client: TestClient, match: Match) -> None:
        self.client, self.match = client, match
        self.version, self.record = stored(client, match.id)

    def check(self) -> None:
        version, record = stored(self.client, self.match.id)
        assert version == self.version
        assert record == self.record


def act(client: TestClient, match: Match, seat: int | None, body: Any, **headers: str) -> Any:
    all_headers = dict(headers)
    if seat is not None:
        all_headers.update(match.auth(seat))
    if isinstance(body, bytes | str):
        return client.post(f"{match.url}/actions", content=body, headers=all_headers)
    return client.post(f"{match.url}/actions", json=body, headers=all_headers)


# -- creating matches ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"game": "chess", "players": 2}, 422, "unknown_game"),
        ({"game": TOY, "players": 9}, 422, "bad_player_count"),
        ({"game": TOY, "players": 1}, 422, "bad_player_count"),
        ({"game": TOY, "players": 0}, 400, "malformed"),
        ({"game": TOY, "players": 2, "options": {"rounds": 9}}, 422, "bad_options"),
        ({"game": TOY, "players": 2, "options": {"colour": "red"}}, 422, "bad_options"),
        ({"game": TOY, "players": 2, "bots": {"2": "random"}}, 422, "bad_bots"),
        ({"game": TOY, "players": 2, "bots": {"0": "random", "1": "random"}}, 422, "bad_bots"),
        ({"game": TOY, "players": 2, "bots": {"1": "clever"}}, 422, "bad_bots"),
        ({"game": TOY, "players": 2, "bots": {"x": "random"}}, 422, "bad_bots"),
        ({"game": TOY, "players": 2, "bots": {"01": "random"}}, 422, "bad_bots"),
        ({"game": TOY, "players": 2, "bots": {"1": "greedy"}}, 422, "bad_bots"),
        ({"game": TOY, "players": 2, "bots": [1]}, 400, "malformed"),
        ({"game": TOY, "players": 2, "bots": {"1": 3}}, 400, "malformed"),
        ({"game": TOY, "players": 2, "bots": {"1": "random"}, "botKind": "random"}, 400,
         "malformed"),
        ({"game": TOY, "players": True}, 400, "malformed"),
        ({"game": TOY, "players": 2.5}, 400, "malformed"),
        ({"game": TOY, "players": 2, "seed": -1}, 400, "malformed"),
        ({"game": TOY, "players": 2, "seed": 2**60}, 400, "malformed"),
        ({"game": TOY, "players": 2, "colour": "red"}, 400, "malformed"),
        ({"game": TOY}, 400, "malformed"),
        ({"game": 5, "players": 2}, 400, "malformed"),
        ([1, 2], 400, "malformed"),
    ],
)
def test_create_refusals(client: TestClient, body: Any, status: int, code: str) -> None:
    assert_problem(client.post("/v1/matches", json=body), status, code)


def test_create_refuses_malformed_json_and_other_media(client: TestClient) -> None:
    json_type = {"content-type": "application/json"}
    for body in [b'{"game": ', b"NaN", b"\xff\xfe"]:
        assert_problem(client.post("/v1/matches", content=body, headers=json_type), 400,
                       "malformed")
    # Without a content type a body is not JSON (issue 20, item 10).
    assert_problem(client.post("/v1/matches", content=b'{"game": "toy", "players": 2}'), 415,
                   "unsupported_media_type")
    response = client.post(
        "/v1/matches", content=b"game=toy", headers={"content-type": "text/plain"}
    )
    assert_problem(response, 415, "unsupported_media_type")


def test_oversized_bodies_are_refused_before_reading() -> None:
    with TestClient(make_app(max_body_bytes=1024)) as client:
        match = create(client)
        unchanged = Unchanged(client, match)
        big = b'{"action": {"type": "pass"}, "pad": "' + b"x" * 2000 + b'"}'
        body = assert_problem(act(client, match, 0, big), 413, "body_too_large")
        assert "1024" in body["detail"]
        unchanged.check()
        # Without Content-Length (chunked): refused while streaming.
        chunks = iter([b'{"action": ', b" " * 1500, b"{}}"])
        response = client.post(f"{match.url}/actions", content=chunks, headers=match.auth(0))
        assert_problem(response, 413, "body_too_large")
        unchanged.check()


# -- reading ------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["", "/legal-moves", "/log", "/events"])
def test_unknown_match_is_404(client: TestClient, path: str) -> None:
    assert_problem(client.get(f"/v1/matches/nosuchmatch{path}"), 404, "match_not_found")
    assert_problem(client.get(f"/v1/matches/{{bad}}{path}"), 404, "match_not_found")


def test_act_on_unknown_match_is_404(client: TestClient) -> None:
    match = create(client)
    response = client.post(
        "/v1/matches/nosuchmatch/actions", json={"action": {"type": "pass"}},
        headers=match.auth(0),
    )
    assert_problem(response, 404, "match_not_found")


@pytest.mark.parametrize("path", ["", "/legal-moves", "/log", "/events"])
def test_wrong_tokens_are_401_on_reads(client: TestClient, path: str) -> None:
    match = create(client)
    other = create(client, seed=8)
    for headers in (
        bearer("sky_not-a-token"),
        bearer(other.tokens[0]),  # a token of another match
        {"Authorization": f"Basic {match.tokens[0]}"},
        {"Authorization": "Bearer"},
    ):
        assert_problem(client.get(match.url + path, headers=headers), 401, "unauthorized")


def test_unknown_route_and_method(client: TestClient) -> None:
    assert_problem(client.get("/v2/nothing"), 404, "not_found")
    response = client.delete("/v1/games")
    assert_problem(response, 405, "method_not_allowed")
    assert "GET" in response.headers["allow"]


def test_log_after_must_be_a_count(client: TestClient) -> None:
    match = create(client)
    assert_problem(client.get(f"{match.url}/log?after=-1"), 400, "malformed")
    assert_problem(client.get(f"{match.url}/log?after=x"), 400, "malformed")


# -- acting -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seat", "body", "headers", "status", "code"),
    [
        (None, {"action": {"type": "pass"}}, {}, 401, "unauthorized"),
        (0, b"{not json", {"content-type": "application/json"}, 400, "malformed"),
        (0, b"[]", {"content-type": "application/json"}, 400, "malformed"),
        (0, {}, {}, 400, "malformed"),
        (0, {"action": {"type": "pass"}, "extra": 1}, {}, 400, "malformed"),
        (0, {"action": "pass"}, {}, 400, "malformed"),
        (0, {"action": {"type": "pass"}, "expectedVersion": "zero"}, {}, 400, "malformed"),
        (0, {"action": {"type": "pass"}, "expectedVersion": True}, {}, 400, "malformed"),
        (0, {"action": {"type": "pass"}, "expectedVersion": -1}, {}, 400, "malformed"),
        (0, {"action": {"type": "fly"}}, {}, 422, "invalid_action"),
        (0, {"action": {"type": "play", "card": "ace"}}, {}, 422, "invalid_action"),
        (0, {"action": {"type": "pass", "loudly": True}}, {}, 422, "invalid_action"),
        (0, {"action": {}}, {}, 422, "invalid_action"),
        (1, {"action": {"type": "pass"}}, {}, 409, "not_your_turn"),
        (0, {"action": {"type": "play", "card": 1}}, {}, 422, "wrong_phase"),
        (0, {"action": {"type": "pass"}, "expectedVersion": 3}, {}, 409, "version_conflict"),
        (0, {"action": {"type": "pass"}}, {"If-Match": '"3"'}, 412, "precondition_failed"),
        (0, {"action": {"type": "pass"}}, {"If-Match": "garbage"}, 400, "malformed"),
        (0, {"action": {"type": "pass"}}, {"If-Match": "0"}, 400, "malformed"),
        (0, {"action": {"type": "pass"}}, {"If-Match": 'W/"0"'}, 412, "precondition_failed"),
        (0, {"action": {"type": "pass"}}, {"If-Match": '"0-x"'}, 412, "precondition_failed"),
        (0, {"action": {"type": "pass"}}, {"Idempotency-Key": "k" * 256}, 400, "malformed"),
    ],
)
def test_act_refusals_write_nothing(
    client: TestClient, seat: int | None, body: Any, headers: dict[str, str], status: int,
    code: str,
) -> None:
    match = create(client)
    unchanged = Unchanged(client, match)
    problem = assert_problem(act(client, match, seat, body, **headers), status, code)
    if code in {"version_conflict", "precondition_failed", "not_your_turn"}:
        assert problem["currentVersion"] == 0
    unchanged.check()


def test_wrong_token_cannot_act(client: TestClient) -> None:
    match = create(client)
    other = create(client, seed=99)
    unchanged = Unchanged(client, match)
    for token in ("sky_forged", other.tokens[0]):
        response = client.post(
            f"{match.url}/actions", json={"action": {"type": "pass"}}, headers=bearer(token)
        )
        assert_problem(response, 401, "unauthorized")
    unchanged.check()


def test_illegal_move_carries_the_engine_code(client: TestClient) -> None:
    match = create(client)
    client.post(f"{match.url}/actions", json={"action": {"type": "pass"}}, headers=match.auth(0))
    client.post(f"{match.url}/actions", json={"action": {"type": "pass"}}, headers=match.auth(1))
    # Choose step: a card seat 0 does not hold.
    _, record = stored(client, match.id)
    hand = engine_state(record).hands[0]
    missing = next(c for c in range(1, 31) if c not in hand)
    unchanged = Unchanged(client, match)
    response = act(client, match, 0, {"action": {"type": "play", "card": missing}})
    problem = assert_problem(response, 422, "not_in_hand")
    # The refusal says why without naming a card: nothing of any hand is in the detail.
    assert problem["detail"] == "That card is not in your hand."
    unchanged.check()


def test_finished_match_refuses_moves(client: TestClient) -> None:
    match = create(client, options={"rounds": 1})
    for seat in (0, 1):
        act(client, match, seat, {"action": {"type": "pass"}})
    for seat in (0, 1):
        hand = engine_state(stored(client, match.id)[1]).hands[seat]
        assert act(client, match, seat, {"action": {"type": "play", "card": hand[0]}}).is_success
    assert client.get(match.url).json()["status"] == "finished"
    unchanged = Unchanged(client, match)
    problem = assert_problem(act(client, match, 0, {"action": {"type": "pass"}}), 409,
                             "match_finished")
    assert problem["currentVersion"] == 4
    unchanged.check()


# -- versions, ETags, idempotency ---------------------------------------------------------


IDENTITY = {"Accept-Encoding": "identity"}
"""Exact ETags are asserted on uncompressed answers (a compressed one's tag names its coding,
docs/decisions.md)."""


def test_etag_and_if_none_match(client: TestClient) -> None:
    match = create(client)
    first = client.get(match.url, headers={**match.auth(0), **IDENTITY})
    assert first.headers["etag"] == '"0"'
    assert "Authorization" in first.headers["vary"]
    again = client.get(match.url, headers={**match.auth(0), **IDENTITY, "If-None-Match": '"0"'})
    assert again.status_code == 304
    assert again.content == b""
    assert again.headers["etag"] == '"0"'
    weak = {"If-None-Match": 'W/"0", "9"', **IDENTITY}
    assert client.get(match.url, headers=weak).status_code == 304
    act(client, match, 0, {"action": {"type": "pass"}})
    moved = client.get(match.url, headers={**match.auth(0), **IDENTITY, "If-None-Match": '"0"'})
    assert moved.status_code == 200
    assert moved.headers["etag"] == '"1"'


def test_pinned_versions_accept_the_current_one(client: TestClient) -> None:
    match = create(client)
    ok = act(client, match, 0, {"action": {"type": "pass"}, "expectedVersion": 0})
    assert ok.status_code == 200
    assert ok.json()["version"] == 1
    ok = act(client, match, 1, {"action": {"type": "pass"}},
             **{"If-Match": '"1"', "Accept-Encoding": "identity"})
    assert ok.status_code == 200
    assert ok.headers["etag"] == '"2"'
    stale = act(client, match, 0, {"action": {"type": "play", "card": 1}, "expectedVersion": 1})
    assert assert_problem(stale, 409, "version_conflict")["currentVersion"] == 2


def test_idempotent_retry_returns_the_first_result(client: TestClient) -> None:
    match = create(client)
    key = {"Idempotency-Key": "move-0001"}
    first = act(client, match, 0, {"action": {"type": "draw"}}, **key)
    assert first.status_code == 200
    version, record = stored(client, match.id)
    retry = act(client, match, 0, {"action": {"type": "draw"}}, **key)
    assert retry.status_code == 200
    assert retry.json()["version"] == first.json()["version"] == 1
    assert retry.json()["events"] == first.json()["events"]
    assert stored(client, match.id) == (version, record)  # acted once
    # Even a stale pin does not matter for a retry: the first result stands.
    late = act(client, match, 0, {"action": {"type": "draw"}, "expectedVersion": 0}, **key)
    assert late.status_code == 200
    assert late.json()["version"] == 1
    # Same key, another action: refused, nothing written.
    other = act(client, match, 0, {"action": {"type": "pass"}}, **key)
    assert_problem(other, 409, "idempotency_key_reused")
    assert stored(client, match.id) == (version, record)
    # The key is per seat: seat 1 may use the same string for its own move.
    assert act(client, match, 1, {"action": {"type": "pass"}}, **key).json()["version"] == 2


def test_toy_engine_passes_conformance() -> None:
    from tests.conformance import check_random_games

    check_random_games(toy, 3, range(10))


def test_query_counts_are_given_once(client: TestClient) -> None:
    match = create(client)
    for query in ("after=1&after=2", "after=", "after=%C2%A1&after="):
        assert_problem(client.get(f"{match.url}/log?{query}"), 400, "malformed")
        assert_problem(client.get(f"{match.url}/events?{query}"), 400, "malformed")


def test_if_match_star_and_head_requests(client: TestClient) -> None:
    match = create(client)
    ok = act(client, match, 0, {"action": {"type": "pass"}}, **{"If-Match": "*"})
    assert ok.status_code == 200  # "*": any current version
    head = client.head(match.url, headers={**match.auth(0), **IDENTITY})
    assert head.status_code == 200
    assert head.headers["etag"] == '"1"'
    assert head.content == b""
