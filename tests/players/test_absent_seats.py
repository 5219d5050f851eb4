"""Issue 18, absent players: a seat resigns (``POST .../seats/{seat}/resign``,
``resignSeat``), a seat a bot took over is taken back (``POST .../seats/{seat}/reclaim``,
``reclaimSeat``) by its old token, its player or the match's app key, and the old credential
of a seat a bot took over is told so (401 ``seat_handed_to_bot``). REST and GraphQL alike,
on the embedded store (the player layer's rig)."""

from __future__ import annotations

import base64
import time
from typing import Any

import jwt
import pytest

from service.matches.records import LogRecord, MatchRecord
from tests.api.conftest import stored

from .conftest import Rig, bearer

ANONYMOUS = {"game": "toy"}


@pytest.fixture(scope="module")
def acme(rig: Rig) -> tuple[str, str, bytes]:
    """An app with an HS256 secret: (appId, api key, secret)."""
    app_id, key = rig.app("Absent Acme")
    secret = rig.call(rig.players.apps.add_hs256_secret, app_id, "k1")
    return app_id, key, base64.urlsafe_b64decode(secret + "=" * (-len(secret) % 4))


def user_jwt(app_id: str, secret: bytes, sub: str) -> str:
    now = int(time.time())
    body = {"iss": app_id, "sub": sub, "aud": "skyline", "iat": now, "exp": now + 600,
            "name": sub.title()}
    return jwt.encode(body, secret, algorithm="HS256", headers={"kid": "k1"})


def anonymous(rig: Rig, players: int = 2) -> tuple[str, dict[int, str]]:
    answer = rig.client.post("/v1/matches", json={**ANONYMOUS, "players": players})
    assert answer.status_code == 201, answer.text
    body = answer.json()
    return body["matchId"], {s["seat"]: s["token"] for s in body["seats"]}


def record(rig: Rig, match_id: str) -> tuple[int, MatchRecord]:
    return stored(rig.client, match_id)


def service_entries(rig: Rig, match_id: str) -> list[dict[str, Any]]:
    store = rig.client.app.state.store  # type: ignore[attr-defined]
    _, current = record(rig, match_id)
    entries = rig.call(store.log, match_id, 0)
    logged = [LogRecord.decode(current.game, current.log_dict, e.data) for e in entries]
    return [e.action for e in logged if e.seat is None and isinstance(e.action, dict)]


def post(rig: Rig, match_id: str, seat: int, what: str, token: str | None,
         **kwargs: Any) -> Any:
    headers = bearer(token) if token is not None else {}
    return rig.client.post(f"/v1/matches/{match_id}/seats/{seat}/{what}", headers=headers,
                           **kwargs)


def problem(answer: Any) -> tuple[int, str]:
    return answer.status_code, answer.json()["code"]


# -- resigning -------------------------------------------------------------------------------


def test_resigning_a_two_seat_match_ends_it_and_twice_is_seat_forfeited(rig: Rig) -> None:
    match_id, tokens = anonymous(rig)
    version, _ = record(rig, match_id)
    assert problem(post(rig, match_id, 0, "resign", None)) == (401, "unauthorized")
    assert problem(post(rig, match_id, 1, "resign", tokens[0])) == (403, "not_your_seat")
    resigned = post(rig, match_id, 0, "resign", tokens[0], json={})
    assert resigned.status_code == 200, resigned.text
    state = resigned.json()
    assert (state["version"], state["seat"]) == (version + 1, None)  # a spectator's view
    assert state["bots"] == {"0": "random"}
    # Over, though not by the rules: nobody may act any more.
    assert (state["status"], state["activeSeats"]) == ("finished", [])
    assert resigned.headers["ETag"].startswith(f'"{version + 1}')
    _, after = record(rig, match_id)
    assert after.finished and after.termination == "resign" and after.forfeited == (0,)
    assert after.away[0].reason == "resign" and after.away[0].version == version + 1
    assert service_entries(rig, match_id)[-1] == {"type": "resign", "seat": 0}
    # The token is away now: a second resignation is told the seat forfeited (not 401).
    assert problem(post(rig, match_id, 0, "resign", tokens[0])) == (409, "seat_forfeited")
    assert problem(post(rig, match_id, 1, "resign", tokens[1])) == (409, "match_finished")
    # It cannot be taken back, and the old token reads nothing.
    assert problem(post(rig, match_id, 0, "reclaim", tokens[0])) == (409, "seat_forfeited")
    old = rig.client.get(f"/v1/matches/{match_id}", headers=bearer(tokens[0]))
    assert problem(old) == (401, "seat_handed_to_bot")
    assert "forfeited" in old.json()["detail"]


def test_with_three_seats_a_random_bot_plays_the_resigned_seat_on(rig: Rig) -> None:
    match_id, tokens = anonymous(rig, players=3)
    resigned = post(rig, match_id, 1, "resign", tokens[1])
    assert resigned.status_code == 200, resigned.text
    assert resigned.json()["bots"] == {"1": "random"}
    _, after = record(rig, match_id)
    assert not after.finished and after.termination is None and after.forfeited == (1,)
    assert 1 in after.bots and after.tokens[1] is None
    # The others play on; a second seat resigning ends the match.
    assert post(rig, match_id, 2, "resign", tokens[2]).status_code == 200
    _, ended = record(rig, match_id)
    assert ended.finished and ended.forfeited == (1, 2) and ended.termination == "resign"


def test_a_waiting_match_has_nobody_to_resign(rig: Rig) -> None:
    alice = rig.guest("Alice")
    match_id = rig.seated(alice.auth, [{"player": "me"}, {"open": True}])
    assert problem(post(rig, match_id, 0, "resign", alice.token)) == (409, "match_not_started")


# -- a seat handed to a bot, and taken back ---------------------------------------------------


def test_an_old_token_is_told_its_seat_went_to_a_bot_and_takes_it_back(rig: Rig) -> None:
    match_id, tokens = anonymous(rig, players=3)
    handed = post(rig, match_id, 1, "bot", tokens[1], json={"kind": "random"})
    assert handed.status_code == 200, handed.text
    at = handed.json()["version"]
    old = rig.client.get(f"/v1/matches/{match_id}", headers=bearer(tokens[1]))
    assert problem(old) == (401, "seat_handed_to_bot")
    assert f"version {at}" in old.json()["detail"] and "reclaim" in old.json()["detail"]
    assert problem(post(rig, match_id, 0, "reclaim", tokens[0])) == (409, "seat_not_away")
    assert problem(post(rig, match_id, 1, "reclaim", tokens[0])) == (403, "not_your_seat")
    assert problem(post(rig, match_id, 1, "reclaim", None)) == (401, "unauthorized")
    outsider = rig.guest("Mallory")
    assert problem(post(rig, match_id, 1, "reclaim", outsider.token)) == (403, "not_your_seat")

    back = post(rig, match_id, 1, "reclaim", tokens[1])
    assert back.status_code == 200, back.text
    body = back.json()
    assert body["seat"] == 1 and body["token"] and body["token"] != tokens[1]
    assert body["state"]["seat"] == 1 and "1" not in body["state"]["bots"]
    _, after = record(rig, match_id)
    assert 1 not in after.bots and 1 not in after.away
    assert service_entries(rig, match_id)[-1] == {"type": "seat_reclaimed", "seat": 1}
    mine = rig.client.get(f"/v1/matches/{match_id}", headers=bearer(body["token"]))
    assert mine.json()["seat"] == 1
    # The old token is no seat's and no away seat's any more: a plain 401.
    gone = rig.client.get(f"/v1/matches/{match_id}", headers=bearer(tokens[1]))
    assert problem(gone) == (401, "unauthorized")
    assert problem(post(rig, match_id, 1, "reclaim", body["token"])) == (409, "seat_not_away")


def test_a_player_takes_its_seat_back_and_the_app_key_reissues_a_token(
    rig: Rig, acme: tuple[str, str, bytes]
) -> None:
    app_id, key, secret = acme
    match_id = rig.seated(bearer(key), [{"user": "u-ab-1"}, {"user": "u-ab-2"}])
    uma = user_jwt(app_id, secret, "u-ab-1")
    assert rig.client.get(f"/v1/matches/{match_id}", headers=bearer(uma)).json()["seat"] == 0
    handed = post(rig, match_id, 0, "bot", uma, json={"kind": "random"})
    assert handed.status_code == 200, handed.text
    # The player reads the match as a spectator; its writes are told why.
    read = rig.client.get(f"/v1/matches/{match_id}", headers=bearer(uma))
    assert read.status_code == 200 and read.json()["seat"] is None
    assert problem(post(rig, match_id, 0, "resign", uma)) == (401, "seat_handed_to_bot")
    other = user_jwt(app_id, secret, "u-ab-2")
    assert problem(post(rig, match_id, 0, "reclaim", other)) == (403, "not_your_seat")

    back = post(rig, match_id, 0, "reclaim", uma)
    assert back.status_code == 200, back.text
    assert back.json()["token"] is None and back.json()["state"]["seat"] == 0
    _, after = record(rig, match_id)
    assert 0 not in after.bots and after.seat_players[0] is not None
    assert after.tokens[0] is not None  # a digest nobody is shown
    assert rig.client.get(f"/v1/matches/{match_id}", headers=bearer(uma)).json()["seat"] == 0

    # Handed over again; the app's key takes it back with a new token, shown once.
    assert post(rig, match_id, 0, "bot", uma, json={"kind": "random"}).status_code == 200
    _, stranger_key = rig.app("Absent Stranger")
    assert problem(post(rig, match_id, 0, "reclaim", stranger_key)) == (403, "not_your_seat")
    by_app = post(rig, match_id, 0, "reclaim", key)
    assert by_app.status_code == 200, by_app.text
    token = by_app.json()["token"]
    assert token and by_app.json()["state"]["seat"] == 0
    assert rig.client.get(f"/v1/matches/{match_id}", headers=bearer(token)).json()["seat"] == 0
    assert rig.client.get(f"/v1/matches/{match_id}", headers=bearer(uma)).json()["seat"] == 0


def test_a_private_match_hides_itself_from_outsiders_not_from_its_old_token(rig: Rig) -> None:
    answer = rig.client.post("/v1/matches", json={**ANONYMOUS, "players": 3,
                                                  "visibility": "private"})
    assert answer.status_code == 201, answer.text
    match_id = answer.json()["matchId"]
    tokens = {s["seat"]: s["token"] for s in answer.json()["seats"]}
    assert post(rig, match_id, 2, "bot", tokens[2], json={"kind": "random"}).status_code == 200
    old = rig.client.get(f"/v1/matches/{match_id}", headers=bearer(tokens[2]))
    assert problem(old) == (401, "seat_handed_to_bot")
    outsider = rig.guest("Eve")
    assert problem(post(rig, match_id, 2, "reclaim", outsider.token)) == (404,
                                                                           "match_not_found")
    assert post(rig, match_id, 2, "reclaim", tokens[2]).status_code == 200


# -- GraphQL ----------------------------------------------------------------------------------

RESIGN = """
mutation($id: ID!, $seat: Int!) {
  resignSeat(matchId: $id, seat: $seat) {
    __typename ... on MatchState { version seat }
    ... on Problem { code }
  }
}
"""
RECLAIM = """
mutation($id: ID!, $seat: Int!) {
  reclaimSeat(matchId: $id, seat: $seat) {
    __typename
    ... on SeatReclaimed { seat token state { seat version } }
    ... on Problem { code }
  }
}
"""
HAND = """
mutation($id: ID!) {
  handSeatToBot(matchId: $id, kind: random) { __typename ... on MatchState { version } }
}
"""
READ = """
query($id: ID!) { match(id: $id) { __typename ... on MatchState { seat } ... on Problem { code } } }
"""


def gql(rig: Rig, query: str, token: str | None, **variables: Any) -> dict[str, Any]:
    headers = bearer(token) if token is not None else {}
    answer = rig.client.post("/graphql", json={"query": query, "variables": variables},
                             headers=headers)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert "errors" not in body, body
    data: dict[str, Any] = body["data"]
    return data


def test_graphql_resigns_and_takes_seats_back(rig: Rig) -> None:
    match_id, tokens = anonymous(rig, players=3)
    resigned = gql(rig, RESIGN, tokens[0], id=match_id, seat=0)["resignSeat"]
    assert resigned["__typename"] == "MatchState" and resigned["seat"] is None
    again = gql(rig, RESIGN, tokens[0], id=match_id, seat=0)["resignSeat"]
    assert (again["__typename"], again["code"]) == ("Conflict", "seat_forfeited")
    forfeited = gql(rig, RECLAIM, tokens[0], id=match_id, seat=0)["reclaimSeat"]
    assert (forfeited["__typename"], forfeited["code"]) == ("Conflict", "seat_forfeited")

    handed = gql(rig, HAND, tokens[1], id=match_id)["handSeatToBot"]
    assert handed["__typename"] == "MatchState"
    old = gql(rig, READ, tokens[1], id=match_id)["match"]
    assert (old["__typename"], old["code"]) == ("Unauthorized", "seat_handed_to_bot")
    not_away = gql(rig, RECLAIM, tokens[2], id=match_id, seat=2)["reclaimSeat"]
    assert (not_away["__typename"], not_away["code"]) == ("Conflict", "seat_not_away")
    not_yours = gql(rig, RECLAIM, tokens[2], id=match_id, seat=1)["reclaimSeat"]
    assert (not_yours["__typename"], not_yours["code"]) == ("Forbidden", "not_your_seat")
    back = gql(rig, RECLAIM, tokens[1], id=match_id, seat=1)["reclaimSeat"]
    assert back["__typename"] == "SeatReclaimed" and back["seat"] == 1
    assert back["token"] and back["state"]["seat"] == 1
    mine = gql(rig, READ, back["token"], id=match_id)["match"]
    assert mine == {"__typename": "MatchState", "seat": 1}


# -- the player feed ----------------------------------------------------------------------


def test_the_feed_tells_a_player_its_seat_timed_out_resigned_and_came_back(
    rig: Rig, acme: tuple[str, str, bytes]
) -> None:
    """``seat_changed`` (``timed_out``, ``resigned``, ``reclaimed``) for the seat's player,
    and a ``timed_out`` item when its time ran out (derived from the stored entries)."""
    import json

    from service.matches import absence
    from service.players.feed_events import derive

    _, key, _ = acme
    match_id = rig.seated(bearer(key), [{"user": "u-feed-1"}, {"user": "u-feed-2"}])
    version, before = record(rig, match_id)
    assert before.seat_players[0] is not None
    player = before.seat_players[0].player

    def items(after: MatchRecord, action: dict[str, Any], at: int,
              was: MatchRecord) -> list[dict[str, Any]]:
        derived = derive(match_id, at, was, after, LogRecord(seat=None, action=action))
        return [json.loads(item) for item in derived.get(player, [])]

    timeout = {"type": "timeout", "seat": 0, "policy": "bot", "kind": "random",
               "deadline": 1}
    away = absence.to_bot(before, 0, "random", absence.TIMEOUT, version + 1, 0, 0)
    told = items(away, timeout, version + 1, before)
    assert [(i["kind"], i.get("change"), i.get("policy")) for i in told] == [
        ("seat_changed", "timed_out", None), ("timed_out", None, "bot")]
    assert told[1]["seat"] == 0 and told[1]["matchId"] == match_id

    back = absence.reclaim(away, 0, "digest", True, version + 2, 0, 0)
    told = items(back, {"type": "seat_reclaimed", "seat": 0}, version + 2, away)
    # Seat 0 is active (the toy's first draw): the player taken back is told it may act.
    assert [(i["kind"], i.get("change")) for i in told] == [("seat_changed", "reclaimed"),
                                                           ("your_turn", None)]

    out = absence.forfeit(before, 0, absence.RESIGN, version + 1, 0, 0)
    told = items(out, {"type": "resign", "seat": 0}, version + 1, before)
    assert ("seat_changed", "resigned") in [(i["kind"], i.get("change")) for i in told]
    forfeit = {**timeout, "policy": "forfeit"}
    out = absence.forfeit(before, 0, absence.TIMEOUT, version + 1, 0, 0)
    told = items(out, forfeit, version + 1, before)
    assert ("timed_out", "forfeit") in [(i["kind"], i.get("policy")) for i in told]


def test_a_stream_of_a_seat_that_resigned_ends_with_seat_handed_to_bot(rig: Rig) -> None:
    """The seat token's stream ends before the resignation's version (``revoked``, code
    ``seat_handed_to_bot``); the seat taken back answers a new token whose stream reads."""
    import asyncio

    from service.matches import MatchService
    from service.matches.watch import Revoked

    match_id, tokens = anonymous(rig, players=3)
    matches: MatchService = rig.client.app.state.match_service  # type: ignore[attr-defined]

    async def until_revoked(stream: Any) -> None:
        while True:  # versions before the change (the other seat's, a bot's) come first
            await asyncio.wait_for(anext(stream), 30)

    async def scenario() -> tuple[int, str, str, int]:
        resigning = matches.follow(match_id, token=tokens[0])
        handed = matches.follow(match_id, token=tokens[1])
        first = (await asyncio.wait_for(anext(resigning), 30)).version
        await asyncio.wait_for(anext(handed), 30)
        await matches.resign(match_id, tokens[0], 0)
        with pytest.raises(Revoked) as resigned:
            await until_revoked(resigning)
        await resigning.aclose()
        await matches.hand_seat_to_bot(match_id, tokens[1], "random")
        with pytest.raises(Revoked) as gone:
            await until_revoked(handed)
        await handed.aclose()
        back = await matches.reclaim_seat(match_id, tokens[1], 1)
        assert back.token is not None
        again = matches.follow(match_id, token=back.token)
        seat = (await asyncio.wait_for(anext(again), 30)).seat
        await again.aclose()
        assert seat is not None
        return first, resigned.value.error.code, gone.value.error.code, seat

    first, resigned, gone, seat = rig.call(scenario)
    assert first >= 0
    assert (resigned, gone, seat) == ("seat_handed_to_bot", "seat_handed_to_bot", 1)
