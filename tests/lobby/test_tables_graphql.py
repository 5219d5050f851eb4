"""Matches that wait for players, over GraphQL (issue 17): createMatch with open seats,
visibility, name and labels; joinMatch, leaveMatch, startMatch, cancelMatch; the lobby and
the live matches; the player feed's lobby events -- the same TableService as REST, the same
answers and problem codes (``tests/lobby/test_tables_rest.py``)."""

from __future__ import annotations

from typing import Any

from tests.graphql.client import PROTOCOL
from tests.players.conftest import Guest, Rig, bearer, rig, toy_module  # noqa: F401

NY = "ny1901"
PROBLEM = "... on Problem { __typename code }"
STATE = ("... on MatchState { matchId status version seat view { __typename } visibility "
         "name labels { key value } openSeats startVersion cancelReason activeSeats "
         "bots { seat kind } players { seat name bot open } seedCommitment } " + PROBLEM)
CREATE = """mutation($game: String!, $seats: [SeatInput!], $visibility: Visibility,
                     $name: String, $labels: [LabelInput!], $seed: Int) {
  createMatch(game: $game, seats: $seats, visibility: $visibility, name: $name,
              labels: $labels, seed: $seed) {
    ... on MatchCreated { matchId seats { seat } } """ + PROBLEM + " } }"
MATCH = "query($id: ID!) { match(id: $id) { " + STATE + " } }"
JOIN = ("mutation($id: ID!, $seat: Int, $invite: String) { "
        "joinMatch(matchId: $id, seat: $seat, invite: $invite) { " + STATE + " } }")
LEAVE = "mutation($id: ID!) { leaveMatch(matchId: $id) { " + STATE + " } }"
START = ("mutation($id: ID!, $bot: BotKind) { startMatch(matchId: $id, bot: $bot) { "
         + STATE + " } }")
CANCEL = "mutation($id: ID!) { cancelMatch(matchId: $id) { " + STATE + " } }"
ENTRY = ("matchId game version rulesVersion players seats { seat name bot open } "
         "options { __typename } name labels { key value } seedChosen createdAt")
LOBBY = ("query($game: String, $players: Int, $cursor: String, $limit: Int) { "
         "lobby(game: $game, players: $players, cursor: $cursor, limit: $limit) { "
         "... on LobbyPage { items { " + ENTRY + " openSeats ageSeconds } nextCursor } "
         + PROBLEM + " } }")
LIVE = ("query($game: String, $players: Int) { liveMatches(game: $game, players: $players) "
        "{ ... on LivePage { items { " + ENTRY + " activeSeats updatedAt } nextCursor } "
        + PROBLEM + " } }")
MY_MATCHES = ("query($status: MatchStatusFilter) { myMatches(status: $status) { "
              "... on MyMatchesPage { items { matchId status seat visibility name "
              "labels { key value } } } " + PROBLEM + " } }")


def gql(rig: Rig, who: Guest | dict[str, str] | None, query: str,  # noqa: F811
        **variables: Any) -> dict[str, Any]:
    headers = who.auth if isinstance(who, Guest) else (who or {})
    answer = rig.client.post("/graphql", json={"query": query, "variables": variables},
                             headers=headers)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    assert "errors" not in body, body
    data: dict[str, Any] = body["data"]
    return data


def _guests(rig: Rig, *names: str) -> list[Guest]:  # noqa: F811
    """Guests of an app of their own (the lobby is per app: tests do not see each other)."""
    app, _ = rig.app()
    return [rig.guest(name, appId=app) for name in names]


def _waiting(rig: Rig, host: Guest, open_seats: int = 1, **extra: Any) -> str:  # noqa: F811
    seats = [{"player": "me"}, *({"open": True} for _ in range(open_seats))]
    created = gql(rig, host, CREATE, game=NY, seats=seats, **extra)["createMatch"]
    assert created["seats"] == [], created  # nobody is shown a seat token
    match_id: str = created["matchId"]
    return match_id


def _problem(answer: dict[str, Any], member: str, code: str) -> None:
    assert answer == {"__typename": member, "code": code}, answer


def test_a_waiting_match_is_listed_joined_and_starts(rig: Rig) -> None:  # noqa: F811
    host, joiner = _guests(rig, "Ann", "Bob")
    match_id = _waiting(rig, host, visibility="public", name="Ann's table",
                        labels=[{"key": "tier", "value": "casual"},
                                {"key": "a", "value": ""}])
    state = gql(rig, host, MATCH, id=match_id)["match"]
    assert state["status"] == "waiting" and state["view"] is None
    assert (state["version"], state["openSeats"], state["startVersion"]) == (0, [1], 0)
    assert state["visibility"] == "public" and state["name"] == "Ann's table"
    assert state["labels"] == [{"key": "a", "value": ""}, {"key": "tier", "value": "casual"}]
    assert state["players"] == [{"seat": 0, "name": "Ann", "bot": None, "open": False},
                                {"seat": 1, "name": None, "bot": None, "open": True}]
    assert state["seedCommitment"] is None and state["cancelReason"] is None
    # REST reads the same match.
    rest = rig.client.get(f"/v1/matches/{match_id}", headers=host.auth).json()
    assert rest["labels"] == {"tier": "casual", "a": ""} and rest["visibility"] == "public"
    # The lobby lists it (GraphQL's createMatch lists a public match as REST's does).
    page = gql(rig, joiner, LOBBY, players=2)["lobby"]
    rest_lobby = rig.client.get("/v1/lobby", headers=joiner.auth).json()["items"][0]
    assert [item["matchId"] for item in page["items"]] == [match_id]
    item = page["items"][0]
    assert item["openSeats"] == [1] and item["name"] == "Ann's table"
    assert item["seats"][0]["name"] == "Ann" and item["seats"][1]["open"] is True
    assert item["seedChosen"] is False and item["ageSeconds"] >= 0
    assert item["options"] is None and item["createdAt"] == rest_lobby["createdAt"]
    assert item["labels"] == state["labels"]
    waiting = gql(rig, host, MY_MATCHES, status="WAITING")["myMatches"]["items"]
    assert waiting == [{"matchId": match_id, "status": "waiting", "seat": 0,
                        "visibility": "public", "name": "Ann's table",
                        "labels": state["labels"]}]
    # Acting before the start is a Conflict, as REST's 409.
    act = ('mutation($id: ID!) { act(matchId: $id, action: {ny1901: {endTurn: true}}) { '
           + PROBLEM + " } }")
    acted = gql(rig, host, act, id=match_id)["act"]
    assert acted["__typename"] == "Conflict" and acted["code"] == "match_not_started"
    joined = gql(rig, joiner, JOIN, id=match_id)["joinMatch"]
    assert joined["status"] == "active" and joined["seat"] == 1 and joined["version"] == 1
    assert joined["startVersion"] == 1 and joined["openSeats"] == []
    assert joined["view"] is not None and joined["seedCommitment"]
    assert gql(rig, joiner, LOBBY)["lobby"]["items"] == []
    live = gql(rig, host, LIVE, game=NY)["liveMatches"]
    assert [m["matchId"] for m in live["items"]] == [match_id]
    assert live["items"][0]["activeSeats"] and live["items"][0]["updatedAt"]
    assert gql(rig, host, LIVE, players=3)["liveMatches"]["items"] == []
    active = gql(rig, joiner, MY_MATCHES, status="ACTIVE")["myMatches"]["items"]
    assert [(m["matchId"], m["seat"]) for m in active] == [(match_id, 1)]


def test_refusals_are_the_rest_codes_as_members(rig: Rig) -> None:  # noqa: F811
    host, bob, cid = _guests(rig, "Ann", "Bob", "Cid")
    match_id = _waiting(rig, host, open_seats=2)
    assert gql(rig, bob, JOIN, id=match_id, seat=2)["joinMatch"]["players"][2]["name"] == "Bob"
    before = gql(rig, host, MATCH, id=match_id)["match"]
    _problem(gql(rig, bob, JOIN, id=match_id)["joinMatch"], "Conflict", "already_seated")
    _problem(gql(rig, cid, JOIN, id=match_id, seat=2)["joinMatch"], "Conflict", "seat_taken")
    _problem(gql(rig, cid, JOIN, id=match_id, seat=0)["joinMatch"], "Conflict", "seat_taken")
    _problem(gql(rig, cid, JOIN, id=match_id, seat=7)["joinMatch"], "BadRequest", "malformed")
    _problem(gql(rig, cid, JOIN, id=match_id, seat=-1)["joinMatch"], "BadRequest",
             "malformed")
    _problem(gql(rig, bob, START, id=match_id)["startMatch"], "Forbidden", "forbidden")
    _problem(gql(rig, bob, CANCEL, id=match_id)["cancelMatch"], "Forbidden", "forbidden")
    _problem(gql(rig, cid, LEAVE, id=match_id)["leaveMatch"], "Forbidden", "forbidden")
    _problem(gql(rig, None, JOIN, id=match_id)["joinMatch"], "Unauthorized", "unauthorized")
    _problem(gql(rig, cid, JOIN, id="nope")["joinMatch"], "NotFound", "match_not_found")
    _, key = rig.app("Keyed")
    _problem(gql(rig, bearer(key), JOIN, id=match_id)["joinMatch"], "Forbidden", "forbidden")
    assert gql(rig, host, MATCH, id=match_id)["match"] == before  # nothing half-written
    left = gql(rig, bob, LEAVE, id=match_id)["leaveMatch"]
    assert left["openSeats"] == [1, 2] and left["version"] == 2 and left["seat"] is None
    started = gql(rig, host, START, id=match_id, bot="random")["startMatch"]
    assert started["status"] == "active" and started["view"] is not None
    assert started["bots"] == [{"seat": 1, "kind": "random"}, {"seat": 2, "kind": "random"}]
    _problem(gql(rig, cid, JOIN, id=match_id)["joinMatch"], "Conflict", "match_started")
    for mutation, field in ((LEAVE, "leaveMatch"), (CANCEL, "cancelMatch"),
                            (START, "startMatch")):
        _problem(gql(rig, host, mutation, id=match_id)[field], "Conflict", "match_started")
    # Cancelling another waiting match; then it refuses everything.
    other = _waiting(rig, host)
    cancelled = gql(rig, host, CANCEL, id=other)["cancelMatch"]
    assert cancelled["status"] == "cancelled" and cancelled["cancelReason"] == "creator"
    assert cancelled["view"] is None
    _problem(gql(rig, cid, JOIN, id=other)["joinMatch"], "Conflict", "match_cancelled")
    _problem(gql(rig, host, START, id=other)["startMatch"], "Conflict", "match_cancelled")
    _problem(gql(rig, host, CANCEL, id=other)["cancelMatch"], "Conflict", "match_cancelled")
    assert [m["matchId"] for m in gql(rig, host, MY_MATCHES, status="CANCELLED")[
        "myMatches"]["items"]] == [other]


def test_private_matches_are_not_found_by_outsiders(rig: Rig) -> None:  # noqa: F811
    host, bob = _guests(rig, "Ann", "Bob")
    match_id = _waiting(rig, host, visibility="private")
    assert gql(rig, host, MATCH, id=match_id)["match"]["visibility"] == "private"
    _problem(gql(rig, bob, MATCH, id=match_id)["match"], "NotFound", "match_not_found")
    _problem(gql(rig, bob, JOIN, id=match_id)["joinMatch"], "NotFound", "match_not_found")
    _problem(gql(rig, bob, JOIN, id=match_id, invite="x")["joinMatch"], "NotFound",
             "invite_not_found")
    assert gql(rig, bob, LOBBY)["lobby"]["items"] == []


def test_create_refusals(rig: Rig) -> None:  # noqa: F811
    (host,) = _guests(rig, "Ann")
    seats = [{"player": "me"}, {"open": True}]

    def create(**extra: Any) -> dict[str, Any]:
        return gql(rig, host, CREATE, game=NY, **{"seats": seats, **extra})["createMatch"]

    _problem(create(name=""), "BadRequest", "malformed")
    _problem(create(name="x" * 65), "BadRequest", "malformed")
    _problem(create(labels=[{"key": "", "value": "v"}]), "BadRequest", "malformed")
    _problem(create(labels=[{"key": "k" * 33, "value": "v"}]), "BadRequest", "malformed")
    _problem(create(labels=[{"key": "k", "value": "v" * 129}]), "BadRequest", "malformed")
    _problem(create(labels=[{"key": f"k{i}", "value": ""} for i in range(17)]), "BadRequest",
             "malformed")
    _problem(create(labels=[{"key": "k", "value": "1"}, {"key": "k", "value": "2"}]),
             "BadRequest", "malformed")
    _problem(create(seats=[{"player": "me"}, {"open": False}]), "BadRequest", "malformed")
    _problem(create(seed=7), "BadRequest", "seed_not_allowed")


def test_lobby_pages_and_filters(rig: Rig) -> None:  # noqa: F811
    host, bob = _guests(rig, "Ann", "Bob")
    two = _waiting(rig, host, visibility="public")
    three = _waiting(rig, host, open_seats=2, visibility="public")
    _waiting(rig, host)  # unlisted: never listed
    assert {i["matchId"] for i in gql(rig, bob, LOBBY)["lobby"]["items"]} == {two, three}
    assert [i["matchId"] for i in gql(rig, bob, LOBBY, players=3)["lobby"]["items"]] == [three]
    assert gql(rig, bob, LOBBY, game="ginkgopolis")["lobby"]["items"] == []
    first = gql(rig, bob, LOBBY, limit=1)["lobby"]
    second = gql(rig, bob, LOBBY, limit=1, cursor=first["nextCursor"])["lobby"]
    assert {first["items"][0]["matchId"], second["items"][0]["matchId"]} == {two, three}
    for variables in ({"limit": 0}, {"cursor": "zz"}, {"players": 17}, {"game": ""}):
        _problem(gql(rig, bob, LOBBY, **variables)["lobby"], "BadRequest", "malformed")
    _problem(gql(rig, None, LOBBY)["lobby"], "Unauthorized", "unauthorized")
    _problem(gql(rig, None, LIVE)["liveMatches"], "Unauthorized", "unauthorized")


FEED = """subscription($after: Int) { playerEvents(after: $after) {
  __typename
  ... on PlayerEvent { seq matchId version seat }
  ... on PlayerJoinedEvent { playerSeat playerName }
  ... on PlayerLeftEvent { playerSeat }
  ... on MatchCancelledEvent { reason }
} }"""


def test_the_player_feed_tells_joins_leaves_and_the_cancel(rig: Rig) -> None:  # noqa: F811
    host, bob, cid = _guests(rig, "Ann", "Bob", "Cid")
    match_id = _waiting(rig, host, open_seats=3)
    gql(rig, bob, JOIN, id=match_id)
    gql(rig, cid, JOIN, id=match_id, seat=2)
    gql(rig, cid, LEAVE, id=match_id)
    gql(rig, host, LEAVE, id=match_id)  # the creator leaving cancels
    with rig.client.websocket_connect("/graphql", subprotocols=[PROTOCOL]) as ws:
        ws.send_json({"type": "connection_init",
                      "payload": {"authorization": f"Bearer {bob.token}"}})
        assert ws.receive_json()["type"] == "connection_ack"
        ws.send_json({"id": "1", "type": "subscribe",
                      "payload": {"query": FEED, "variables": {"after": 0}}})
        events = []
        while not events or events[-1]["__typename"] != "MatchCancelledEvent":
            message = ws.receive_json()
            if message["type"] == "ping":
                ws.send_json({"type": "pong"})
                continue
            assert message["type"] == "next", message
            event = message["payload"]["data"]["playerEvents"]
            if event.get("matchId") == match_id:
                events.append(event)
            assert len(events) < 10, events
        ws.send_json({"id": "1", "type": "complete"})
    assert [(e["__typename"], e["version"]) for e in events] == [
        ("PlayerJoinedEvent", 2), ("PlayerLeftEvent", 3), ("MatchCancelledEvent", 4)]
    assert (events[0]["playerSeat"], events[0]["playerName"]) == (2, "Cid")
    assert events[1]["playerSeat"] == 2 and events[2]["reason"] == "creator_left"
    assert all(e["seat"] == 1 for e in events)
