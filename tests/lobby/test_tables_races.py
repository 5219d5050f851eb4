"""The lobby's writes across replicas, on the embedded store, Redis and a Redis Cluster:
joins racing for one seat, the crash between an index write and the match write, the
waiting time running out, and the lobby list staying right whoever wrote."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from service.errors import ApiError
from service.identity.callers import Caller
from service.matches.models import CreateMatchRequest
from service.matches.records import LogRecord
from service.tables.models import JoinRequest, StartRequest
from tests.players.conftest import toy_module  # noqa: F401 (a fixture)

from .conftest import Clock, Replica

NY = "ny1901"


async def _waiting(replica: Replica, host: Caller, open_seats: int, **extra: Any) -> str:
    seats: list[dict[str, Any]] = [{"player": "me"}, *[{"open": True}] * open_seats]
    created = await replica.tables.create_match(
        host, CreateMatchRequest.model_validate({"game": NY, "seats": seats, **extra}))
    return created.match_id


async def _log(replica: Replica, match_id: str) -> list[dict[str, Any]]:
    _, record = await replica.matches.load_record(match_id)
    entries = await replica.matches.storage.entries(match_id, 0)
    return [LogRecord.decode(record.game, record.log_dict, e.data).action  # type: ignore[misc]
            for e in entries]


async def test_fifty_players_race_for_one_seat(replicas: list[Replica]) -> None:
    host = await replicas[0].guest("Host")
    match_id = await _waiting(replicas[0], host, 1, visibility="public")
    racers = [await replicas[i % 3].guest(f"P{i}") for i in range(50)]

    async def join(i: int) -> str:
        try:
            await replicas[i % 3].tables.join(racers[i], match_id, JoinRequest(seat=1))
            return "won"
        except ApiError as error:
            return error.code

    answers = await asyncio.gather(*(join(i) for i in range(50)))
    assert answers.count("won") == 1
    assert sorted(set(answers)) == ["seat_taken", "won"]
    winner = racers[answers.index("won")]
    version, record = await replicas[1].matches.load_record(match_id)
    assert record.started and version == 1  # one join, which started the match
    assert record.player_seat(winner.app, winner.player or "") == 1
    actions = await _log(replicas[2], match_id)
    assert len(actions) == 1 and actions[0]["type"] == "player_joined"
    assert actions[0]["starts"] is True
    # The lobby no longer lists it; the live list does, on every replica.
    for replica in replicas:
        lobby = await replica.tables.lobby(host, game=None, players=None, cursor=None,
                                           limit=None)
        assert match_id not in [item.match_id for item in lobby.items]
        live = await replica.tables.live(host, game=None, players=None, cursor=None,
                                         limit=None)
        assert [item.match_id for item in live.items] == [match_id]


async def test_racing_joiners_fill_every_seat_once(replicas: list[Replica]) -> None:
    host = await replicas[0].guest("Host")
    match_id = await _waiting(replicas[0], host, 3)
    racers = [await replicas[i % 3].guest(f"P{i}") for i in range(12)]

    async def join(i: int) -> str:
        try:
            state = await replicas[i % 3].tables.join(racers[i], match_id, JoinRequest())
            return f"seat {state.seat}"
        except ApiError as error:
            return error.code

    answers = await asyncio.gather(*(join(i) for i in range(12)))
    assert sorted(a for a in answers if a.startswith("seat ")) == ["seat 1", "seat 2", "seat 3"]
    assert answers.count("seat_taken") == 9
    _, record = await replicas[0].matches.load_record(match_id)
    seated = [p.player for p in record.seat_players if p is not None]
    assert len(seated) == len(set(seated)) == 4 and record.started


async def test_start_and_join_race_never_both(replicas: list[Replica]) -> None:
    host = await replicas[0].guest("Host")
    for round_ in range(4):
        match_id = await _waiting(replicas[0], host, 2)
        joiner = await replicas[1].guest(f"J{round_}")

        async def start(match_id: str = match_id) -> str:
            try:
                await replicas[2].tables.start(host, match_id, StartRequest(bot="random"))
                return "started"
            except ApiError as error:
                return error.code

        async def join(match_id: str = match_id, joiner: Caller = joiner) -> str:
            try:
                await replicas[1].tables.join(joiner, match_id, JoinRequest(seat=1))
                return "joined"
            except ApiError as error:
                return error.code

        answers = set(await asyncio.gather(start(), join()))
        version, record = await replicas[0].matches.load_record(match_id)
        assert record.started
        starts = [a for a in await _log(replicas[0], match_id)
                  if a["type"] == "match_started" or a.get("starts")]
        assert len(starts) == 1  # set up exactly once
        if answers == {"started", "joined"}:
            assert version == 2 and record.bots == {2: "random"}
        else:
            assert answers == {"started", "match_started"} and version == 1
            assert set(record.bots) == {1, 2}


async def test_a_crash_between_the_list_write_and_the_match_write(
    replicas: list[Replica],
) -> None:
    """The lobby entry is written first: a replica that dies right after it leaves an entry
    to a match that does not exist -- never shown, and dropped by the next read."""
    host = await replicas[0].guest("Host")

    async def die(match_id: str, record: Any) -> None:
        raise ConnectionError("the replica died here")

    # The lobby entry lands (listed_first), then the quota hook dies before the match write.
    with pytest.raises(ConnectionError):
        await replicas[0].tables.create_match(
            host, CreateMatchRequest.model_validate({
                "game": NY, "seats": [{"player": "me"}, {"open": True}],
                "visibility": "public"}), before_write=_after_listing(die))
    lobby = await replicas[1].tables.lobby(host, game=None, players=None, cursor=None,
                                           limit=None)
    assert lobby.items == []
    store = replicas[1].players.store
    app = host.app
    assert await store.index_page(f"lobby:{app}", "w", after=None, limit=10) == []


def _after_listing(hook: Any) -> Any:
    """A ``before_write`` that runs after the lobby entry is written (the tables service runs
    the caller's hook first): it writes the entry itself, then fails."""
    async def run(match_id: str, record: Any) -> None:
        from service.tables.lists import WAITING, entry_of, index_names, lobby_key

        for name in index_names(WAITING, record.game, record.players):
            await _store.index_add(lobby_key(record.app), name, [entry_of(record, match_id)])
        await hook(match_id, record)
    return run


_store: Any = None


@pytest.fixture(autouse=True)
def _remember_store(replicas: list[Replica]) -> None:
    global _store
    _store = replicas[0].players.store


async def test_an_untouched_waiting_match_expires(replicas: list[Replica], clock: Clock
                                                  ) -> None:
    host = await replicas[0].guest("Host")
    guest = await replicas[0].guest("Guest")
    match_id = await _waiting(replicas[0], host, 1, visibility="public")
    for replica in replicas:
        replica.matches.storage.waiting_ttl = 3600
    clock.now += 3599
    _, record = await replicas[1].matches.load_record(match_id)
    assert record.waiting
    clock.now += 1
    # The first reader cancels it, once; every replica sees it cancelled.
    lobby = await replicas[2].tables.lobby(host, game=None, players=None, cursor=None,
                                           limit=None)
    assert lobby.items == []
    with pytest.raises(ApiError) as refused:
        await replicas[0].tables.join(guest, match_id, JoinRequest())
    assert refused.value.code == "match_cancelled"
    version, record = await replicas[1].matches.load_record(match_id)
    assert record.cancelled and record.cancel_reason == "expired" and version == 1
    assert await _log(replicas[0], match_id) == [{"type": "match_cancelled",
                                                  "reason": "expired"}]
    # A touch (a join) starts the waiting time again.
    other = await _waiting(replicas[0], host, 2)
    clock.now += 3000
    await replicas[1].tables.join(guest, other, JoinRequest())
    clock.now += 3000
    _, record = await replicas[2].matches.load_record(other)
    assert record.waiting


async def test_a_stream_opened_while_waiting_follows_joins_and_the_start(
    replicas: list[Replica],
) -> None:
    host = await replicas[0].guest("Host")
    bob, cid = await replicas[1].guest("Bob"), await replicas[2].guest("Cid")
    match_id = await _waiting(replicas[0], host, 2)
    seen: list[tuple[int, str, bool]] = []

    async def watch() -> None:
        async for event in replicas[0].matches.follow(match_id, token=host, after=0):
            state = event.state
            seen.append((state.version, state.status, state.view is None))
            if state.status == "active":
                return

    watching = asyncio.create_task(watch())
    await asyncio.sleep(0.2)
    await replicas[1].tables.join(bob, match_id, JoinRequest())
    await replicas[2].tables.leave(bob, match_id)
    await replicas[2].tables.join(cid, match_id, JoinRequest(seat=2))
    await replicas[1].tables.join(bob, match_id, JoinRequest())
    await asyncio.wait_for(watching, 30)
    assert seen == [(1, "waiting", True), (2, "waiting", True), (3, "waiting", True),
                    (4, "active", False)]


async def test_racing_rematches_make_one(
    replicas: list[Replica], toy_module: None,  # noqa: F811 (the fixture)
) -> None:
    from service.tables import Rematch

    host = await replicas[0].guest("Host")
    bob = await replicas[1].guest("Bob")
    created = await replicas[0].tables.create_match(host, CreateMatchRequest.model_validate({
        "game": "toy", "options": {"rounds": 1},
        "seats": [{"player": "me"}, {"open": True}]}))
    old = created.match_id
    await replicas[1].tables.join(bob, old, JoinRequest())
    for _ in range(100):
        state = await replicas[0].matches.get_state(old, host)
        if state.status == "finished":
            break
        for who in (host, bob):
            legal = await replicas[0].matches.legal_moves(old, who)
            if legal.moves:
                move = legal.moves[0]
                await replicas[0].matches.act(old, who, move.model_dump(mode="json")
                                              if hasattr(move, "model_dump") else move,
                                              None, None)
    asked = await asyncio.gather(*(Rematch(replicas[i % 3].tables).rematch(
        host if i % 2 else bob, old) for i in range(6)))
    assert len({state.match_id for state in asked}) == 1
    new_id = asked[0].match_id
    _, record = await replicas[2].matches.load_record(old)
    assert record.rematch == new_id
    links = [a for a in await _log(replicas[2], old) if a.get("type") == "rematch"]
    assert len(links) == 1
    _, rematch = await replicas[2].matches.load_record(new_id)
    assert rematch.rematch_of == old and rematch.waiting


async def test_a_crash_between_the_index_writes_and_a_join_or_an_invitation(
    replicas: list[Replica],
) -> None:
    """The joiner's "my matches" entry and the invited player's list entry are written
    before the match: a replica dying between the two leaves entries that are skipped (and
    the invitation list drops its own), never a seat or an invitation the player cannot
    find."""
    from service.invitations import InvitationService
    from service.invitations.service import INVITATIONS_INDEX
    from service.matches import invites
    from service.players.listing import member
    from service.players.records import player_key

    host = await replicas[0].guest("Host")
    bob = await replicas[1].guest("Bob")
    assert bob.player is not None
    match_id = await _waiting(replicas[0], host, 1)
    _, record = await replicas[0].matches.load_record(match_id)
    # The join's first write landed, then the replica died.
    await replicas[0].players.index_match(bob.player, record.created, match_id)
    page = await replicas[2].players.my_matches(bob)
    assert page.items == []
    # The invitation's list entry landed, then the replica died.
    store = replicas[0].players.store
    await store.index_add(player_key(bob.player), INVITATIONS_INDEX,
                          [member(record.created * 1000, invites.player_invite_id(match_id))])
    mine = await InvitationService(replicas[1].tables).mine(bob, None, None)
    assert mine.items == []
    assert await store.index_page(player_key(bob.player), INVITATIONS_INDEX, after=None,
                                  limit=10) == []
    # Done again, whole, both work.
    state = await replicas[2].tables.join(bob, match_id, JoinRequest())
    assert state.seat == 1
    page = await replicas[2].players.my_matches(bob)
    assert [item.match_id for item in page.items] == [match_id]
