"""``matchUpdated`` over graphql-transport-ws: authentication in ``connection_init``, every
version in order while another client plays, per-seat views, completion."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.websockets import WebSocketDisconnect

from service.errors import ApiError
from tests.graphql.client import PROTOCOL, GraphQLClient
from tests.graphql.conftest import create_match
from tests.graphql.queries import MATCH_UPDATED
from tests.graphql.test_operations import DRAW, PASS, act, play, state


def test_seat_receives_every_version_in_order_while_others_play(gql: GraphQLClient) -> None:
    match_id, tokens = create_match(gql, options={"rounds": 1})
    with gql.subscribe(MATCH_UPDATED, {"id": match_id, "after": 0}, tokens[1]) as sub:
        act(gql, match_id, tokens[0], DRAW)
        first = sub.next()["matchUpdated"]
        assert (first["__typename"], first["version"], first["seat"]) == ("MatchState", 1, 1)
        act(gql, match_id, tokens[1], PASS)
        for seat in (0, 1):
            card = state(gql, match_id, tokens[seat])["view"]["hand"][0]
            act(gql, match_id, tokens[seat], play(card))
        versions = [first["version"]]
        while True:
            update = sub.next()["matchUpdated"]
            versions.append(update["version"])
            assert update["view"]["hand"] is not None  # seat 1's own hand
            if update["status"] == "finished":
                break
        assert versions == [1, 2, 3, 4]
        assert update["result"]["winners"]
        sub.expect_complete()


def test_without_after_the_current_state_comes_first(gql: GraphQLClient) -> None:
    match_id, tokens = create_match(gql)
    act(gql, match_id, tokens[0], DRAW)
    with gql.subscribe(MATCH_UPDATED, {"id": match_id}, tokens[0]) as sub:
        assert sub.next()["matchUpdated"]["version"] == 1
        act(gql, match_id, tokens[1], PASS)
        assert sub.next()["matchUpdated"]["version"] == 2


def test_late_subscriber_replays_missed_versions(gql: GraphQLClient) -> None:
    match_id, tokens = create_match(gql)
    act(gql, match_id, tokens[0], DRAW)
    act(gql, match_id, tokens[1], DRAW)
    with gql.subscribe(MATCH_UPDATED, {"id": match_id, "after": 0}) as sub:
        assert [sub.next()["matchUpdated"]["version"] for _ in range(2)] == [1, 2]


def test_spectator_stream_shows_public_information_only(gql: GraphQLClient) -> None:
    match_id, tokens = create_match(gql)
    with gql.subscribe(MATCH_UPDATED, {"id": match_id, "after": 0}) as sub:
        act(gql, match_id, tokens[0], DRAW)
        update = sub.next()["matchUpdated"]
        assert update["seat"] is None
        assert update["view"]["hand"] is None and update["view"]["myChoice"] is None
        assert update["view"]["handSizes"] == [4, 3]


@pytest.mark.parametrize(
    ("payload", "code", "reason"),
    [
        ({"authorization": "Basic dXNlcjpwYXNz"}, 4401, "unauthorized"),
        ({"authorization": "Bearer"}, 4401, "unauthorized"),
        # Neither a seat token nor a player's: what the app's authenticator says of it.
        ({"authorization": "Bearer not-a-seat-token"}, 4401, "malformed_token"),
        ({"Authorization": 42}, 4400, "malformed"),
        ({"matchId": 7}, 4400, "malformed"),
        (["authorization", "Bearer x"], 4400, "malformed"),
        ("Bearer x", 4400, "malformed"),
    ],
)
def test_bad_connection_init_closes_with_a_code_of_its_own(
    gql: GraphQLClient, payload: Any, code: int, reason: str
) -> None:
    assert_refused(gql, payload, code, reason)


def test_wrong_token_for_the_named_match_is_refused_at_connection_init(
    gql: GraphQLClient,
) -> None:
    match_id, tokens = create_match(gql)
    _, other = create_match(gql)
    assert_refused(gql, {"authorization": f"Bearer {other[0]}", "matchId": match_id},
                   4401, "unauthorized")
    assert_refused(gql, {"authorization": f"Bearer {tokens[0]}", "matchId": "no-such-match"},
                   4404, "match_not_found")
    assert_refused(gql, {"matchId": "no-such-match"}, 4404, "match_not_found")
    with gql.subscribe(
        MATCH_UPDATED, {"id": match_id},
        payload={"authorization": f"Bearer {tokens[0]}", "matchId": match_id},
    ) as sub:
        assert sub.next()["matchUpdated"]["seat"] == 0


def test_wrong_token_for_the_subscribed_match_ends_with_unauthorized(
    gql: GraphQLClient,
) -> None:
    match_id, _ = create_match(gql)
    _, other = create_match(gql)
    with gql.subscribe(MATCH_UPDATED, {"id": match_id, "after": 0}, other[0]) as sub:
        refused = sub.next()["matchUpdated"]
        assert (refused["__typename"], refused["code"]) == ("Unauthorized", "unauthorized")
        sub.expect_complete()


def test_unknown_match_ends_with_not_found(gql: GraphQLClient) -> None:
    with gql.subscribe(MATCH_UPDATED, {"id": "nope"}) as sub:
        assert sub.next()["matchUpdated"]["__typename"] == "NotFound"
        sub.expect_complete()


def test_finished_match_completes_at_once(gql: GraphQLClient) -> None:
    match_id, tokens = create_match(gql, options={"rounds": 1})
    act(gql, match_id, tokens[0], PASS)
    act(gql, match_id, tokens[1], PASS)
    for seat in (0, 1):
        card = state(gql, match_id, tokens[seat])["view"]["hand"][0]
        act(gql, match_id, tokens[seat], play(card))
    with gql.subscribe(MATCH_UPDATED, {"id": match_id, "after": 4}, tokens[0]) as sub:
        sub.expect_complete()


def test_foreign_origin_is_refused_and_listed_origin_accepted(gql: GraphQLClient) -> None:
    with pytest.raises(WebSocketDisconnect), gql.http.websocket_connect(
        "/graphql", subprotocols=[PROTOCOL], headers={"Origin": "https://evil.example"}
    ) as ws:
        ws.send_json({"type": "connection_init"})
        ws.receive_json()
    with gql.http.websocket_connect(
        "/graphql", subprotocols=[PROTOCOL], headers={"Origin": "https://play.example"}
    ) as ws:
        ws.send_json({"type": "connection_init"})
        assert ws.receive_json()["type"] == "connection_ack"


def test_a_valid_credential_that_may_not_read_the_match_closes_with_4403(
    gql: GraphQLClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    match_id, tokens = create_match(gql)
    service = gql.http.app.state.match_service  # type: ignore[attr-defined]

    async def forbidden(*_: Any) -> Any:
        raise ApiError(403, "forbidden", "Forbidden", "Not a player of this match.")

    monkeypatch.setattr(service, "get_state", forbidden)
    assert_refused(gql, {"authorization": f"Bearer {tokens[0]}", "matchId": match_id},
                   4403, "forbidden")


@pytest.mark.parametrize("init", [{"type": "connection_init"},
                                  {"type": "connection_init", "payload": None},
                                  {"type": "connection_init", "payload": {}}])
def test_connection_init_without_credentials_is_a_spectator(
    gql: GraphQLClient, init: dict[str, Any]
) -> None:
    with gql.http.websocket_connect("/graphql", subprotocols=[PROTOCOL]) as ws:
        ws.send_json(init)
        assert ws.receive_json()["type"] == "connection_ack"


def assert_refused(gql: GraphQLClient, payload: Any, code: int, reason: str) -> None:
    with gql.http.websocket_connect("/graphql", subprotocols=[PROTOCOL]) as ws:
        ws.send_json({"type": "connection_init", "payload": payload})
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_json()
        assert (closed.value.code, closed.value.reason) == (code, reason)


def test_unexpected_failures_in_the_stream_are_masked(
    gql: GraphQLClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = gql.http.app.state.match_service  # type: ignore[attr-defined]

    async def broken(*_: Any) -> Any:
        raise RuntimeError("secret internals: hand=[1, 2, 3]")

    monkeypatch.setattr(service, "head", broken)
    with gql.http.websocket_connect("/graphql", subprotocols=[PROTOCOL]) as ws:
        ws.send_json({"type": "connection_init"})
        assert ws.receive_json()["type"] == "connection_ack"
        ws.send_json({"id": "1", "type": "subscribe",
                      "payload": {"query": MATCH_UPDATED, "variables": {"id": "x"}}})
        message = ws.receive_json()
        assert message["payload"]["errors"] == [{"message": "Unexpected error."}]
        assert "secret" not in str(message)
        assert ws.receive_json() == {"id": "1", "type": "complete"}


HAND_OVER = """
mutation($id: ID!) {
  handSeatToBot(matchId: $id, kind: random) { __typename ... on MatchState { version } }
}
"""


def test_a_seat_handed_to_a_bot_ends_its_subscription_before_the_next_version(
    gql: GraphQLClient,
) -> None:
    """Issue 20, item 9: the subscription opened with seat 1's token checks it again at
    every version; from the hand-over on it sends nothing of seat 1's view (nor of the
    spectator's): ``Unauthorized`` with code ``seat_handed_to_bot``, then completion."""
    match_id, tokens = create_match(gql, players=3)
    with gql.subscribe(MATCH_UPDATED, {"id": match_id}, tokens[1]) as sub:
        assert sub.next()["matchUpdated"]["version"] == 0
        act(gql, match_id, tokens[0], DRAW)
        act(gql, match_id, tokens[1], DRAW)
        mine = [sub.next()["matchUpdated"] for _ in range(2)]
        assert [(u["version"], u["seat"]) for u in mine] == [(1, 1), (2, 1)]
        assert len(mine[1]["view"]["hand"]) == 4  # seat 1's own hand, just drawn into
        handed = gql(HAND_OVER, {"id": match_id}, tokens[1])["handSeatToBot"]
        assert handed == {"__typename": "MatchState", "version": 3}
        # Later versions: seat 2 draws, then seats 0 and 2 choose (the bot has no worker
        # here); none of them may reach the old token's stream.
        act(gql, match_id, tokens[2], DRAW)
        for seat in (0, 2):
            card = state(gql, match_id, tokens[seat])["view"]["hand"][0]
            act(gql, match_id, tokens[seat], play(card))
        assert state(gql, match_id)["version"] == 6
        ended = sub.next()["matchUpdated"]
        assert (ended["__typename"], ended["code"]) == ("Unauthorized", "seat_handed_to_bot")
        assert "bot" in ended["message"]
        sub.expect_complete()


def test_a_subscription_resuming_across_a_hand_over_stops_at_it(gql: GraphQLClient) -> None:
    """Versions replayed for a late subscriber are checked too: the token is refused at the
    start (it is no seat of the match any more: ``seat_handed_to_bot``, issue 18) rather than
    replayed the seat's view."""
    match_id, tokens = create_match(gql, players=3)
    act(gql, match_id, tokens[0], DRAW)
    gql(HAND_OVER, {"id": match_id}, tokens[1])
    with gql.subscribe(MATCH_UPDATED, {"id": match_id, "after": 0}, tokens[1]) as sub:
        refused = sub.next()["matchUpdated"]
        assert (refused["__typename"], refused["code"]) == ("Unauthorized",
                                                            "seat_handed_to_bot")
        sub.expect_complete()
