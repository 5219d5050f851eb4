"""Invitations and rematch over GraphQL (issue 17): createInvitation (to a player, seat codes,
spectator codes), revokeInvitation, invitation, redeemInvitation, myInvitations,
acceptInvitation, declineInvitation, rematch, and the feed's InvitedEvent and
RematchOfferedEvent -- the same InvitationService and Rematch as REST, the same codes as
union members (``tests/lobby/test_invitations_rest.py``, ``tests/lobby/test_rematch_rest.py``)."""

from __future__ import annotations

import json
from typing import Any

import anyio
from starlette.testclient import WebSocketTestSession

from tests.graphql.client import PROTOCOL
from tests.lobby.test_rematch_rest import _play_out, _toy_match
from tests.lobby.test_tables_graphql import (
    JOIN,
    MATCH,
    PROBLEM,
    STATE,
    _guests,
    _problem,
    _waiting,
    gql,
)
from tests.players.conftest import Guest, Rig, bearer, rig, toy_module  # noqa: F401

# `Invitation.code` is nullable, `Problem.code` is not: one selection aliases one of them (as
# InvitedEvent's nullable `seat` beside `PlayerEvent.seat`).
INVITATION = ("__typename ... on Invitation { id kind matchId game seat player "
              "inviteCode url uses usesLeft expiresAt status } " + PROBLEM)
CREATE_INVITATION = """mutation($id: ID!, $player: ID, $seat: Int, $uses: Int,
                               $expires: Int, $spectate: Boolean! = false) {
  createInvitation(matchId: $id, player: $player, seat: $seat, uses: $uses,
                   expiresInSeconds: $expires, spectate: $spectate) { """ + INVITATION + " } }"
REVOKE = ("mutation($id: ID!, $code: String!) { revokeInvitation(matchId: $id, code: $code) "
          "{ " + INVITATION + " } }")
DECLINE = ("mutation($id: ID!) { declineInvitation(invitationId: $id) { " + INVITATION
           + " } }")
ACCEPT = "mutation($id: ID!) { acceptInvitation(invitationId: $id) { " + STATE + " } }"
REDEEM = ("mutation($code: String!) { redeemInvitation(code: $code) { "
          "__typename ... on SpectatorToken { token matchId } " + PROBLEM + " } }")
INFO = ("query($code: String!) { invitation(code: $code) { ... on InvitationInfo { kind "
        "matchId game players seats { seat name bot open } openSeats seat name visibility "
        "status usesLeft expiresAt } " + PROBLEM + " } }")
MINE = ("query($cursor: String, $limit: Int) { myInvitations(cursor: $cursor, limit: $limit) "
        "{ ... on PlayerInvitationsPage { items { id matchId game players seats { seat name } "
        "seat name by createdAt expiresAt } nextCursor } " + PROBLEM + " } }")
REMATCH = ("mutation($id: ID!) { rematch(matchId: $id) { __typename " + STATE
           + " ... on MatchState { game rematchOf rematch creatorSeat } } }")
WAIT = 10.0
"""Seconds to wait for the feed's next message."""
FEED = """subscription { playerEvents(after: 0) {
  __typename
  ... on InvitedEvent { seq matchId version game inviteSeat: invitedSeat invitationId by }
  ... on RematchOfferedEvent { seq matchId version game seat rematchOf }
} }"""


def _invite(rig: Rig, match_id: str, who: Guest, **variables: Any  # noqa: F811
            ) -> dict[str, Any]:
    made: dict[str, Any] = gql(rig, who, CREATE_INVITATION, id=match_id,
                               **variables)["createInvitation"]
    assert made["__typename"] == "Invitation", made
    return made


def _receive(ws: WebSocketTestSession) -> dict[str, Any]:
    """The next message, or a failure after ``WAIT`` seconds (the test client's own
    ``receive_json`` would wait for ever for an event that never comes)."""
    async def bounded() -> Any:
        with anyio.fail_after(WAIT):
            return await ws._send_rx.receive()

    message = ws.portal.call(bounded)
    assert message["type"] == "websocket.send", message
    received: dict[str, Any] = json.loads(message["text"])
    return received


def _feed_until(rig: Rig, who: Guest, kind: str) -> list[dict[str, Any]]:  # noqa: F811
    """The player's feed over GraphQL, up to its first event of ``kind``."""
    events: list[dict[str, Any]] = []
    with rig.client.websocket_connect("/graphql", subprotocols=[PROTOCOL]) as ws:
        ws.send_json({"type": "connection_init",
                      "payload": {"authorization": f"Bearer {who.token}"}})
        assert _receive(ws)["type"] == "connection_ack"
        ws.send_json({"id": "1", "type": "subscribe", "payload": {"query": FEED}})
        while not events or events[-1]["__typename"] != kind:
            message = _receive(ws)
            if message["type"] == "ping":
                ws.send_json({"type": "pong"})
                continue
            assert message["type"] == "next", message
            events.append(message["payload"]["data"]["playerEvents"])
            assert len(events) < 20, events
        ws.send_json({"id": "1", "type": "complete"})
    return events


def test_inviting_a_player_to_a_private_match(rig: Rig) -> None:  # noqa: F811
    host, bob, eve = _guests(rig, "Ann", "Bob", "Eve")
    match_id = _waiting(rig, host, open_seats=2, visibility="private")
    made = _invite(rig, match_id, host, player=bob.id)
    assert (made["kind"], made["inviteCode"], made["status"], made["player"]) == (
        "player", None, "valid", bob.id)
    assert made["matchId"] == match_id and made["uses"] == made["usesLeft"] == 1
    # REST sees the same invitation.
    rest = rig.client.get("/v1/me/invitations", headers=bob.auth).json()["items"]
    assert [i["id"] for i in rest] == [made["id"]]
    # Bob's feed (GraphQL's playerEvents) and list show it; Eve's list does not.
    invited = _feed_until(rig, bob, "InvitedEvent")[-1]
    assert (invited["matchId"], invited["invitationId"], invited["by"], invited["inviteSeat"],
            invited["game"]) == (match_id, made["id"], "Ann", None, "ny1901")
    listed = gql(rig, bob, MINE)["myInvitations"]
    assert listed["nextCursor"] is None
    assert [(i["id"], i["matchId"], i["by"], i["name"], i["players"]) for i in
            listed["items"]] == [(made["id"], match_id, "Ann", None, 3)]
    assert listed["items"][0]["createdAt"] == rest[0]["createdAt"]
    assert listed["items"][0]["expiresAt"] == rest[0]["expiresAt"]
    assert gql(rig, eve, MINE)["myInvitations"]["items"] == []
    _problem(gql(rig, None, MINE)["myInvitations"], "Unauthorized", "unauthorized")
    _problem(gql(rig, bob, MINE, limit=0)["myInvitations"], "BadRequest", "malformed")
    # Only Bob may accept it; the private match stays hidden from Eve.
    _problem(gql(rig, eve, ACCEPT, id=made["id"])["acceptInvitation"], "NotFound",
             "invite_not_found")
    _problem(gql(rig, eve, JOIN, id=match_id)["joinMatch"], "NotFound", "match_not_found")
    accepted = gql(rig, bob, ACCEPT, id=made["id"])["acceptInvitation"]
    assert (accepted["seat"], accepted["status"], accepted["visibility"]) == (
        1, "waiting", "private")
    assert gql(rig, bob, MINE)["myInvitations"]["items"] == []
    _problem(gql(rig, bob, ACCEPT, id=made["id"])["acceptInvitation"], "Conflict",
             "already_seated")
    assert gql(rig, bob, MATCH, id=match_id)["match"]["seat"] == 1
    _problem(gql(rig, eve, MATCH, id=match_id)["match"], "NotFound", "match_not_found")


def test_declining_and_refusals(rig: Rig) -> None:  # noqa: F811
    host, bob, cid = _guests(rig, "Ann", "Bob", "Cid")
    match_id = _waiting(rig, host)
    made = _invite(rig, match_id, host, player=bob.id)
    declined = gql(rig, bob, DECLINE, id=made["id"])["declineInvitation"]
    assert declined["status"] == "declined" and declined["id"] == made["id"]
    assert gql(rig, bob, MINE)["myInvitations"]["items"] == []
    _problem(gql(rig, bob, ACCEPT, id=made["id"])["acceptInvitation"], "NotFound",
             "invite_not_found")
    _problem(gql(rig, cid, DECLINE, id=made["id"])["declineInvitation"], "NotFound",
             "invite_not_found")

    def create(who: Guest | None = host, **variables: Any) -> dict[str, Any]:
        answer: dict[str, Any] = gql(rig, who, CREATE_INVITATION, id=match_id,
                                     **variables)["createInvitation"]
        return answer

    _problem(create(player="nobody"), "NotFound", "player_not_found")
    _problem(create(player=host.id), "Conflict", "already_seated")
    _problem(create(seat=0), "Conflict", "seat_taken")
    _problem(create(player=bob.id, uses=2), "BadRequest", "malformed")
    _problem(create(spectate=True, seat=1), "BadRequest", "malformed")
    _problem(create(expires=5), "BadRequest", "malformed")
    _problem(create(uses=0), "BadRequest", "malformed")
    _problem(create(cid), "Forbidden", "forbidden")  # not seated
    _problem(create(None), "Unauthorized", "unauthorized")
    _problem(gql(rig, host, CREATE_INVITATION, id="nope")["createInvitation"], "NotFound",
             "match_not_found")
    assert gql(rig, host, MATCH, id=match_id)["match"]["openSeats"] == [1]


def test_seat_codes_are_single_use_and_revocable(rig: Rig) -> None:  # noqa: F811
    host, bob, cid, dan = _guests(rig, "Ann", "Bob", "Cid", "Dan")
    match_id = _waiting(rig, host, open_seats=3, visibility="private")
    single = _invite(rig, match_id, host, seat=2)
    assert single["inviteCode"].startswith("ski_") and single["kind"] == "seat"
    assert (single["seat"], single["uses"], single["usesLeft"]) == (2, 1, 1)
    info = gql(rig, None, INFO, code=single["inviteCode"])["invitation"]
    assert (info["kind"], info["matchId"], info["seat"], info["status"], info["visibility"],
            info["usesLeft"], info["openSeats"]) == (
        "seat", match_id, 2, "waiting", "private", 1, [1, 2, 3])
    assert info["expiresAt"] == single["expiresAt"]
    rest_info = rig.client.get(f"/v1/invitations/{single['inviteCode']}").json()
    assert info["expiresAt"] == rest_info["expiresAt"]
    joined = gql(rig, bob, JOIN, id=match_id, invite=single["inviteCode"])["joinMatch"]
    assert joined["seat"] == 2
    # The second use of a single-use code: REST's 410 invite_used_up, as NotFound.
    _problem(gql(rig, cid, JOIN, id=match_id, invite=single["inviteCode"])["joinMatch"],
             "NotFound", "invite_used_up")
    _problem(gql(rig, None, INFO, code=single["inviteCode"])["invitation"], "NotFound",
             "invite_used_up")
    multi = _invite(rig, match_id, host, uses=5)
    _problem(gql(rig, bob, REVOKE, id=match_id, code=multi["inviteCode"])["revokeInvitation"],
             "Forbidden", "forbidden")  # neither its inviter nor the creator
    revoked = gql(rig, host, REVOKE, id=match_id, code=multi["inviteCode"])["revokeInvitation"]
    assert revoked["status"] == "revoked" and revoked["id"] == multi["id"]
    assert revoked["inviteCode"] is None  # shown once, when made
    _problem(gql(rig, cid, JOIN, id=match_id, invite=multi["inviteCode"])["joinMatch"], "NotFound",
             "invite_revoked")
    _problem(gql(rig, None, INFO, code=multi["inviteCode"])["invitation"], "NotFound",
             "invite_revoked")
    _problem(gql(rig, host, REVOKE, id=match_id, code="ski_nope.x")["revokeInvitation"],
             "NotFound", "invite_not_found")
    multi = _invite(rig, match_id, host, uses=5)
    for who in (cid, dan):
        assert gql(rig, who, JOIN, id=match_id, invite=multi["inviteCode"])["joinMatch"][
            "visibility"] == "private"
    state = gql(rig, host, MATCH, id=match_id)["match"]
    assert state["status"] == "active" and state["openSeats"] == []
    for code in ("ski_nope.xxxxxxxxxxxxxxxxxxxxxxxx", "nonsense"):
        _problem(gql(rig, None, INFO, code=code)["invitation"], "NotFound", "invite_not_found")


def test_spectator_codes_give_tokens_that_read_one_private_match(rig: Rig) -> None:  # noqa: F811
    host, bob = _guests(rig, "Ann", "Bob")
    seats = [{"player": "me"}, {"bot": "random"}]
    create = ("mutation($seats: [SeatInput!]) { createMatch(game: \"ny1901\", seats: $seats, "
              "visibility: private) { ... on MatchCreated { matchId } } }")
    match_id = gql(rig, host, create, seats=seats)["createMatch"]["matchId"]
    other = gql(rig, host, create, seats=seats)["createMatch"]["matchId"]
    made = _invite(rig, match_id, host, spectate=True, uses=2)
    code = made["inviteCode"]
    assert code.startswith("skv_") and made["kind"] == "spectate" and made["seat"] is None
    assert gql(rig, None, INFO, code=code)["invitation"]["kind"] == "spectate"
    redeemed = gql(rig, None, REDEEM, code=code)["redeemInvitation"]
    assert redeemed["token"].startswith("sks_") and redeemed["matchId"] == match_id
    spectator = bearer(redeemed["token"])
    state = gql(rig, spectator, MATCH, id=match_id)["match"]
    assert (state["matchId"], state["seat"], state["visibility"]) == (match_id, None,
                                                                      "private")
    assert state["view"] is not None and state["status"] == "active"
    # Not another private match, not a write.
    _problem(gql(rig, spectator, MATCH, id=other)["match"], "NotFound", "match_not_found")
    act = ('mutation($id: ID!) { act(matchId: $id, action: {ny1901: {endTurn: true}}) { '
           + PROBLEM + " } }")
    _problem(gql(rig, spectator, act, id=match_id)["act"], "Forbidden", "forbidden")
    assert gql(rig, bob, MATCH, id=match_id)["match"]["__typename"] == "NotFound"
    assert gql(rig, None, REDEEM, code=code)["redeemInvitation"]["__typename"] == \
        "SpectatorToken"
    _problem(gql(rig, None, REDEEM, code=code)["redeemInvitation"], "NotFound",
             "invite_used_up")
    seat_code = _invite(rig, _waiting(rig, host), host)["inviteCode"]
    _problem(gql(rig, None, REDEEM, code=seat_code)["redeemInvitation"], "BadRequest",
             "malformed")
    _problem(gql(rig, None, REDEEM, code="skv_nope")["redeemInvitation"], "NotFound",
             "invite_not_found")


def test_a_rematch_after_the_end_and_not_before(rig: Rig) -> None:  # noqa: F811
    host, bob, eve = _guests(rig, "Ann", "Bob", "Eve")
    old = _toy_match(rig, host, bob)
    _problem(gql(rig, host, REMATCH, id=old)["rematch"], "Conflict", "match_not_finished")
    _problem(gql(rig, host, REMATCH, id="nope")["rematch"], "NotFound", "match_not_found")
    _problem(gql(rig, None, REMATCH, id=old)["rematch"], "Unauthorized", "unauthorized")
    _play_out(rig, old, [host, bob])
    new = gql(rig, bob, REMATCH, id=old)["rematch"]
    assert new["__typename"] == "MatchState", new
    # Rotated: Bob (the former seat 1) moves first, the bot sits in seat 1, Ann's seat 2 is
    # kept for her.
    assert (new["status"], new["seat"], new["rematchOf"], new["game"]) == (
        "waiting", 0, old, "toy")
    assert new["players"] == [{"seat": 0, "name": "Bob", "bot": None, "open": False},
                              {"seat": 1, "name": None, "bot": "random", "open": False},
                              {"seat": 2, "name": None, "bot": None, "open": True}]
    assert new["name"] == "Duel"
    linked = "query($id: ID!) { match(id: $id) { ... on MatchState { rematch rematchOf } } }"
    assert gql(rig, host, linked, id=old)["match"] == {"rematch": new["matchId"],
                                                       "rematchOf": None}
    again = gql(rig, host, REMATCH, id=old)["rematch"]
    assert again["matchId"] == new["matchId"]
    # Ann's feed offers her the kept seat (GraphQL's playerEvents).
    offered = _feed_until(rig, host, "RematchOfferedEvent")[-1]
    assert (offered["matchId"], offered["seat"], offered["rematchOf"], offered["game"]) == (
        new["matchId"], 2, old, "toy")
    _problem(gql(rig, eve, JOIN, id=new["matchId"])["joinMatch"], "Conflict", "seat_taken")
    _problem(gql(rig, eve, REMATCH, id=old)["rematch"], "Forbidden", "forbidden")
    taken = gql(rig, host, JOIN, id=new["matchId"])["joinMatch"]
    assert taken["seat"] == 2 and taken["status"] == "active"
