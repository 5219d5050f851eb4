"""Invitations across replicas on the embedded store, Redis and a cluster: a single-use code
raced by ten players seats one; a code used after its time is refused; a spectator code's
uses are counted once each."""

from __future__ import annotations

import asyncio

import pytest

from service.errors import ApiError
from service.invitations import InvitationService
from service.invitations.models import InvitationRequest
from service.tables.models import JoinRequest

from .conftest import Clock, Replica
from .test_tables_races import _waiting


def _invitations(replica: Replica) -> InvitationService:
    return InvitationService(replica.tables)


async def test_a_single_use_code_seats_one_of_ten(replicas: list[Replica]) -> None:
    host = await replicas[0].guest("Host")
    match_id = await _waiting(replicas[0], host, 3)
    code = (await _invitations(replicas[0]).create(
        host, match_id, InvitationRequest())).code
    assert code is not None
    racers = [await replicas[i % 3].guest(f"P{i}") for i in range(10)]

    async def join(i: int) -> str:
        try:
            await replicas[i % 3].tables.join(racers[i], match_id, JoinRequest(invite=code))
            return "joined"
        except ApiError as error:
            return error.code

    answers = await asyncio.gather(*(join(i) for i in range(10)))
    assert answers.count("joined") == 1
    assert set(answers) == {"joined", "invite_used_up"}
    _, record = await replicas[1].matches.load_record(match_id)
    assert sum(p is not None for p in record.seat_players) == 2
    assert [i.used for i in record.invites] == [1]


async def test_a_code_expires(replicas: list[Replica], clock: Clock) -> None:
    host, guest = await replicas[0].guest("Host"), await replicas[1].guest("Guest")
    match_id = await _waiting(replicas[0], host, 1)
    code = (await _invitations(replicas[0]).create(
        host, match_id, InvitationRequest(expires_in_seconds=60))).code
    assert code is not None
    clock.now += 60
    with pytest.raises(ApiError) as refused:
        await replicas[2].tables.join(guest, match_id, JoinRequest(invite=code))
    assert refused.value.code == "invite_expired" and refused.value.status == 410
    _, record = await replicas[0].matches.load_record(match_id)
    assert record.free_seats() == [1]


async def test_spectator_code_uses_are_counted_once_each(replicas: list[Replica]) -> None:
    host = await replicas[0].guest("Host")
    match_id = await _waiting(replicas[0], host, 1, visibility="private")
    code = (await _invitations(replicas[0]).create(
        host, match_id, InvitationRequest(spectate=True, uses=3))).code
    assert code is not None

    async def redeem(i: int) -> str:
        try:
            return (await _invitations(replicas[i % 3]).redeem(code)).token
        except ApiError as error:
            return error.code

    answers = await asyncio.gather(*(redeem(i) for i in range(8)))
    tokens = [a for a in answers if a.startswith("sks_")]
    assert len(tokens) == 3 and answers.count("invite_used_up") == 5
    for token in tokens:
        state = await replicas[1].matches.get_state(match_id, token)
        assert state.seat is None and state.visibility == "private"
