"""Issue 31, item 12: revoking a spectator code ends the tokens redeemed with it.

A spectator token names the code it was redeemed with (the start of its nonce, under the
token's MAC); revoking the code writes its tag into the match's record, in a version of its
own (log entry ``spectate_revoked``). From that version on, every token redeemed with the code
is refused (401 ``credential_revoked``) on every read, its open streams end with ``event:
revoked``, and the code redeems no more; tokens of the match's other codes read on."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import httpx
import pytest

from service.matches import invites
from service.matches.records import LogRecord, MatchRecord
from tests.live.test_streams_http import Server, Stream
from tests.lobby.test_invitations_rest import _invite
from tests.lobby.test_tables_rest import _guests, _problem, _waiting
from tests.players.conftest import Rig, rig, toy_module  # noqa: F401 (fixtures)

READS = ("", "/legal-moves", "/log", "/board.svg")


def _redeem(rig: Rig, code: str) -> dict[str, str]:  # noqa: F811
    answer = rig.client.post(f"/v1/invitations/{code}/redeem")
    assert answer.status_code == 201, answer.text
    return {"Authorization": f"Bearer {answer.json()['token']}"}


def _graphql_match(rig: Rig, match_id: str, auth: dict[str, str]) -> Any:  # noqa: F811
    answer = rig.client.post("/graphql", headers=auth, json={
        "query": "query($id: ID!) { match(id: $id) { __typename } }",
        "variables": {"id": match_id}})
    return answer.json()["data"]["match"]["__typename"]


@pytest.mark.parametrize("visibility", ["private", "public"])
def test_revoking_a_code_ends_its_tokens_and_only_its_own(rig: Rig, visibility: str) -> None:  # noqa: F811
    host, = _guests(rig, "Ann")
    match_id = _waiting(rig, host, [{"player": "me"}, {"bot": "random"}],
                        visibility=visibility)
    first = _invite(rig, match_id, host, spectate=True, uses=3)["code"]
    second = _invite(rig, match_id, host, spectate=True)["code"]
    early, late = _redeem(rig, first), _redeem(rig, first)
    other = _redeem(rig, second)
    before = rig.client.get(f"/v1/matches/{match_id}", headers=other).json()["version"]

    revoked = rig.client.delete(f"/v1/matches/{match_id}/invitations/{first}",
                                headers=host.auth)
    assert revoked.status_code == 200, revoked.text
    assert revoked.json()["status"] == "revoked"

    for auth in (early, late):
        for path in READS:
            _problem(rig.client.get(f"/v1/matches/{match_id}{path}", headers=auth), 401,
                     "credential_revoked")
        assert _graphql_match(rig, match_id, auth) != "MatchState"
    # The other code's token reads on, and sees the revocation's own version.
    state = rig.client.get(f"/v1/matches/{match_id}", headers=other)
    assert state.status_code == 200 and state.json()["version"] == before + 1
    assert _graphql_match(rig, match_id, other) == "MatchState"
    # The revoked code redeems no more; revoking it again changes nothing.
    _problem(rig.client.post(f"/v1/invitations/{first}/redeem"), 410, "invite_revoked")
    again = rig.client.delete(f"/v1/matches/{match_id}/invitations/{first}",
                              headers=host.auth)
    assert again.status_code == 200 and again.json()["status"] == "revoked"
    assert rig.client.get(f"/v1/matches/{match_id}",
                          headers=other).json()["version"] == before + 1


def test_a_revocation_in_the_record_alone_already_ends_the_code(rig: Rig) -> None:  # noqa: F811
    """The crash between the two writes of a revocation (the record's, then the code's own
    document): the record alone refuses the code's tokens and its redemption, and the code
    reads as revoked."""
    host, = _guests(rig, "Ann")
    match_id = _waiting(rig, host, [{"player": "me"}, {"bot": "random"}],
                        visibility="private")
    code = _invite(rig, match_id, host, spectate=True, uses=2)["code"]
    auth = _redeem(rig, code)
    storage = rig.client.app.state.match_service.storage  # type: ignore[attr-defined]

    async def record_only() -> None:
        version, record = await storage.load(match_id)
        after = invites.revoke_view(record, invites.view_tag(code))
        entry = LogRecord(seat=None, action={"type": "spectate_revoked"})
        assert await storage.write(match_id, version, after, entry, before=record)

    rig.call(record_only)
    _problem(rig.client.get(f"/v1/matches/{match_id}", headers=auth), 401,
             "credential_revoked")
    _problem(rig.client.post(f"/v1/invitations/{code}/redeem"), 410, "invite_revoked")
    _problem(rig.client.get(f"/v1/invitations/{code}"), 410, "invite_revoked")


def test_past_the_kept_revocations_a_new_view_key_ends_every_token() -> None:
    record = MatchRecord(game="ny1901", players=2, options={}, seed=1, tokens=(),
                         state=b"", finished=False, view_key=invites.new_view_key())
    kept = invites.view_tag("skv_m.keep-this-code-valid-abcdef")
    token = invites.spectator_token("m", record.view_key or b"", kept)
    for n in range(invites.MAX_REVOKED_VIEWS):
        record = invites.revoke_view(record, f"{n:08x}")
    assert invites.reads(token, record)  # another code's tags: this token reads on
    assert invites.revoke_view(record, "00000000") is record  # already revoked: unchanged
    rotated = invites.revoke_view(record, "ffffffff")
    assert rotated.revoked_views == ("ffffffff",) and rotated.view_key != record.view_key
    assert not invites.reads(token, rotated)
    fresh = invites.spectator_token("m", rotated.view_key or b"", kept)
    assert invites.reads(fresh, rotated)
    assert MatchRecord.decode(replace(rotated).encode()).revoked_views == ("ffffffff",)


@pytest.mark.slow
async def test_an_open_stream_of_a_revoked_code_ends_with_revoked() -> None:
    with Server() as server:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
            host = (await http.post("/v1/players", json={"name": "Ann"})).json()
            host_auth = {"Authorization": f"Bearer {host['token']}"}
            created = await http.post("/v1/matches", headers=host_auth, json={
                "game": "ny1901", "seats": [{"player": "me"}, {"open": True}],
                "visibility": "private"})
            assert created.status_code == 201, created.text
            match_id = created.json()["matchId"]
            codes = []
            for _ in range(2):
                made = await http.post(f"/v1/matches/{match_id}/invitations",
                                       headers=host_auth, json={"spectate": True})
                codes.append(made.json()["code"])
            tokens = [(await http.post(f"/v1/invitations/{code}/redeem")).json()["token"]
                      for code in codes]
            url = f"/v1/matches/{match_id}/events"
            streams = [Stream(http, url, {"Authorization": f"Bearer {t}"}) for t in tokens]
            for stream in streams:
                assert (await stream.open()).status_code == 200
            first = [await stream.next() for stream in streams]
            assert first[0].id == first[1].id
            gone = await http.delete(f"/v1/matches/{match_id}/invitations/{codes[0]}",
                                     headers=host_auth)
            assert gone.status_code == 200, gone.text
            ended = await streams[0].next()
            assert (ended.event, ended.id) == ("revoked", None)
            assert json.loads(ended.data) == {"code": "credential_revoked"}
            goes_on = await streams[1].next()
            assert goes_on.id == str(int(first[1].id or 0) + 1)
            for stream in streams:
                await stream.close()
