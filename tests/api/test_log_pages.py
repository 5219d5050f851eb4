"""The log in pages, and the state checkpoints that bound the replay behind each page.

Every ``CHECKPOINT_EVERY``-th log entry carries the engine's state after it (written by the
same compare-and-set as the move), so a page -- at most ``LOG_PAGE_MAX`` versions, ``nextAfter``
naming where the next one starts -- replays from the newest checkpoint at or before ``after``:
at most ``CHECKPOINT_EVERY - 1 + limit`` moves (``replay.STATS`` counts them). Pages read
together are the whole log, entry by entry and per seat; a checkpoint is byte for byte the
state replaying from the seed rebuilds; logs written before checkpoints are replayed from the
seed."""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from typing import Any

import pytest
from starlette.testclient import TestClient

from service import games
from service.games.base import dump_action, parse_action
from service.matches import MatchService, logdict, records, replay
from service.matches.models import LOG_PAGE_MAX, CreateMatchRequest, LogEntryOut
from service.matches.records import CHECKPOINT_EVERY, LogRecord
from service.store import MatchStore
from service.store.redis import RedisStore
from service.store.sqlite import SqliteStore
from tests.api.conftest import bearer, make_app
from tests.support.random_match import play_random_match

NY = "ny1901"


@pytest.fixture(params=["sqlite", "redis"])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[MatchStore]:
    """The embedded store and a real Redis (a key prefix of the test's own)."""
    if request.param == "sqlite":
        chosen: MatchStore = SqliteStore(":memory:")
    else:
        chosen = RedisStore.from_url(request.getfixturevalue("redis_url"),
                                     prefix=request.getfixturevalue("redis_prefix"))
    try:
        yield chosen
    finally:
        await chosen.close()


def service_on(store: MatchStore) -> MatchService:
    return MatchService(store, ttl_finished=None, ttl_idle=None)


@dataclass
class Long:
    match_id: str
    tokens: dict[int, str]
    moves: list[tuple[int | None, Any]]
    """Per version from 1: the seat that moved (None: the hand-over) and its move."""


def last_legal_move(engine: Any, state: Any) -> tuple[int, Any]:
    """The first active seat's last legal move: a New York 1901 match played so never ends."""
    seat = min(engine.active_seats(state))
    return seat, engine.legal_actions(state, seat)[-1]


async def long_match(service: MatchService, versions: int, *, handover_at: int | None = None,
                     seed: int = 5) -> Long:
    """A 2-player New York 1901 match of ``versions`` versions through the service; seat 1
    hands itself to a bot at version ``handover_at`` and then plays as the bot worker does."""
    engine = games.get(NY)
    created = await service.create_match(CreateMatchRequest(game=NY, players=2, seed=seed))
    played = Long(created.match_id, {s.seat: s.token for s in created.seats}, [])
    state = engine.setup(2, None, seed)
    while len(played.moves) < versions:
        version = len(played.moves)
        if version + 1 == handover_at:
            await service.hand_seat_to_bot(played.match_id, played.tokens[1], "random")
            played.moves.append((None, None))
            continue
        seat, move = last_legal_move(engine, state)
        wire = dump_action(engine, move)
        if handover_at is not None and version >= handover_at and seat == 1:
            await service.act_as_bot(played.match_id, seat, wire, version)
        else:
            await service.act(played.match_id, played.tokens[seat], wire, None, None)
        state, _ = engine.apply(state, seat, move)
        played.moves.append((seat, move))
    assert engine.result(state) is None
    return played


async def walk(service: MatchService, match_id: str, token: str | None, limit: int
               ) -> tuple[list[LogEntryOut], int]:
    """The whole log read page by page (``after`` = the previous ``nextAfter``), and how many
    pages it took."""
    entries: list[LogEntryOut] = []
    after, pages = 0, 0
    while True:
        page = await service.log(match_id, token, after, limit=limit)
        pages += 1
        assert len(page.entries) <= limit
        assert [e.version for e in page.entries] == list(range(after + 1,
                                                               after + 1 + len(page.entries)))
        entries += page.entries
        if page.next_after is None:
            assert not page.entries or page.entries[-1].version == page.latest_version
            return entries, pages
        assert len(page.entries) == limit and page.next_after == page.entries[-1].version
        after = page.next_after


def replayed_since(before: replay.ReplayStats) -> replay.ReplayStats:
    now = replay.STATS
    return replay.ReplayStats(now.moves - before.moves, now.from_seed - before.from_seed,
                              now.from_checkpoint - before.from_checkpoint)


async def test_checkpoints_are_the_replayed_state_and_bound_every_read(store: MatchStore
                                                                       ) -> None:
    service = service_on(store)
    played = await long_match(service, 450, handover_at=3 * CHECKPOINT_EVERY)
    engine = games.get(NY)
    version, record = await service.storage.load(played.match_id)
    assert version == 450
    # Replayed here from the seed, independently of replay.py.
    state = engine.setup(2, None, record.seed, record.rules_version)
    dumps: dict[int, bytes] = {0: engine.dumps(state)}
    checkpoints = []
    for entry in await store.log(played.match_id, 0):
        logged = LogRecord.decode(NY, record.log_dict, entry.data)
        seat, move = played.moves[entry.version - 1]
        assert logged.seat == seat
        if logged.seat is not None:
            assert parse_action(engine, logged.action) == move
            state, _ = engine.apply(state, logged.seat, parse_action(engine, logged.action))
        dumps[entry.version] = engine.dumps(state)
        if logged.checkpoint is not None:
            assert logged.checkpoint == dumps[entry.version], entry.version
            checkpoints.append((entry.version, logged.seat))
    # Every 100th version, the hand-over at 300 (seat None: the state it did not change)
    # included; the record's state is the same state as the replay's last.
    assert [v for v, _ in checkpoints] == [100, 200, 300, 400]
    assert dict(checkpoints)[300] is None
    assert dumps[450] == record.state

    # A page replays from the newest checkpoint at or before `after` (below the first one,
    # from the seed): at most CHECKPOINT_EVERY - 1 moves before its own.
    for after, limit, expected in [(400, 200, 50), (399, 200, 99 + 51), (0, 200, 200),
                                   (120, 37, 20 + 37), (250, 1, 51), (450, 200, 0)]:
        before = replace(replay.STATS)
        page = await service.log(played.match_id, played.tokens[0], after, limit=limit)
        cost = replayed_since(before)
        assert cost.moves == expected, (after, limit)
        assert cost.moves <= CHECKPOINT_EVERY - 1 + limit
        assert cost.from_seed == (1 if after < CHECKPOINT_EVERY and after < 450 else 0)
        assert len(page.entries) == min(limit, 450 - after)
    # The state at any version: at most CHECKPOINT_EVERY - 1 moves from a checkpoint.
    for at in [0, 1, 99, 100, 299, 300, 301, 449, 450]:
        before = replace(replay.STATS)
        rebuilt = await replay.state_at(service.storage, played.match_id, engine, record, at)
        assert engine.dumps(rebuilt) == dumps[at], at
        assert replayed_since(before).moves == at % CHECKPOINT_EVERY
    for past in [451, 500, 10**6]:  # refused, not answered by replaying the whole log
        before = replace(replay.STATS)
        with pytest.raises(replay.PastTheLog):
            await replay.state_at(service.storage, played.match_id, engine, record, past)
        assert replayed_since(before).moves <= past % CHECKPOINT_EVERY
    before = replace(replay.STATS)
    at_after, moves = await replay.moves_between(service.storage, played.match_id, engine,
                                                 record, 395, 405)
    assert engine.dumps(at_after) == dumps[395]
    assert [v for v, _, _ in moves] == list(range(396, 406))
    assert replayed_since(before).moves == 95 + 10


async def test_pages_read_together_are_the_whole_log_for_every_viewer() -> None:
    service = service_on(SqliteStore(":memory:"))
    played = await long_match(service, 450, handover_at=250)
    for token in [played.tokens[0], None]:
        whole = await service.log(played.match_id, token, 0)  # one page: no limit in-process
        assert [e.version for e in whole.entries] == list(range(1, 451))
        assert whole.next_after is None
        for limit, pages in [(LOG_PAGE_MAX, 3), (37, 13)]:
            walked, taken = await walk(service, played.match_id, token, limit)
            assert taken == pages
            assert [e.model_dump() for e in walked] == [e.model_dump() for e in whole.entries]
        for entry in whole.entries:  # the action: the caller's own moves only
            assert (entry.action is not None) == (token is not None and entry.seat == 0)


@pytest.mark.parametrize(("game", "players", "seed"), [("ginkgopolis", 4, 1), ("ny1901", 3, 2)])
async def test_pages_of_a_random_match_cross_a_checkpoint_per_seat(game: str, players: int,
                                                                   seed: int) -> None:
    service = service_on(SqliteStore(":memory:"))
    played = await play_random_match(service, game, players, seed)
    assert max(played.answered) > CHECKPOINT_EVERY
    for seat, token in [*played.tokens.items(), (None, None)]:
        whole = await service.log(played.match_id, token, 0)
        walked, _ = await walk(service, played.match_id, token, 30)
        assert [e.model_dump() for e in walked] == [e.model_dump() for e in whole.entries]
        for entry in walked:
            mover, answered = played.answered[entry.version]
            assert entry.seat == mover
            assert entry.action is not None  # finished: every move is shown
            if mover == seat:  # what act answered this seat is what its pages say
                assert [e.model_dump() for e in entry.events] == answered


async def test_hidden_information_per_seat_on_pages_with_a_checkpoint_every_3(
    store: MatchStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The toy game (hidden hands; a plain-JSON log) with a checkpoint every 3 versions: pages
    of 2 equal the whole log for each seat and a spectator, and never show another seat's
    card."""
    monkeypatch.setattr(records, "CHECKPOINT_EVERY", 3)
    service = service_on(store)
    played = await play_random_match(service, "toy", 3, 11)
    latest = max(played.answered)
    _, record = await service.storage.load(played.match_id)
    assert record.log_dict == 0
    stored = [LogRecord.decode("toy", 0, e.data) for e in await store.log(played.match_id, 0)]
    assert [i + 1 for i, e in enumerate(stored) if e.checkpoint is not None] == list(
        range(3, latest + 1, 3))
    for seat, token in [*played.tokens.items(), (None, None)]:
        whole = await service.log(played.match_id, token, 0)
        before = replace(replay.STATS)
        walked, pages = await walk(service, played.match_id, token, 2)
        assert replayed_since(before).moves <= pages * (3 - 1 + 2)  # K - 1 + limit a page
        assert replayed_since(before).from_seed == 2  # the pages after 0 and after 2
        assert [e.model_dump() for e in walked] == [e.model_dump() for e in whole.entries]
        for entry in walked:
            mover, answered = played.answered[entry.version]
            if mover == seat:
                assert entry.action is not None
                assert [e.model_dump() for e in entry.events] == answered
            else:
                assert entry.action is not None  # finished: every move is shown
                for event in entry.events:  # a draw or a choice: who, never which card
                    if event.kind in ("drew", "chose"):
                        assert "card" not in event.data, (seat, entry.version, event)


async def test_a_log_from_before_checkpoints_is_replayed_from_the_seed() -> None:
    """Entries without checkpoints (a match stored before them) still decode and page; the
    reads replay from the seed until a new write lays a checkpoint."""
    engine = games.get(NY)
    store = SqliteStore(":memory:")
    service = service_on(store)
    played = await long_match(service, 250)  # today's format, to compare with
    old = await service.create_match(CreateMatchRequest(game=NY, players=2, seed=5))
    _, record = await service.storage.load(old.match_id)
    state = engine.setup(2, None, 5)
    for version in range(250):  # written as before checkpoints: seat and action only
        seat, move = last_legal_move(engine, state)
        state, _ = engine.apply(state, seat, move)
        record = replace(record, state=engine.dumps(state))
        entry = LogRecord(seat, dump_action(engine, move)).encode(NY, record.log_dict)
        assert await store.compare_and_set(old.match_id, version, record.encode(), entry)
    tokens = {s.seat: s.token for s in old.seats}
    token = tokens[0]
    before = replace(replay.STATS)
    walked, _ = await walk(service, old.match_id, token, LOG_PAGE_MAX)
    assert replayed_since(before).from_seed == 2 and replayed_since(before).from_checkpoint == 0
    assert replayed_since(before).moves == 200 + 250
    today = await service.log(played.match_id, played.tokens[0], 0)
    assert [e.model_dump() for e in walked] == [e.model_dump() for e in today.entries]
    # New writes lay checkpoints: from version 300 on, reads start there.
    for _ in range(250, 301):
        seat, move = last_legal_move(engine, state)
        await service.act(old.match_id, tokens[seat], dump_action(engine, move), None, None)
        state, _ = engine.apply(state, seat, move)
    before = replace(replay.STATS)
    page = await service.log(old.match_id, token, 300)
    assert [e.version for e in page.entries] == [301]
    assert replayed_since(before) == replay.ReplayStats(moves=1, from_seed=0, from_checkpoint=1)


OLD_ENTRY = b'{"a":{"lot":"yA","type":"acquire"},"s":1}'
"""Seat 1 acquiring lot yA, as the log stores it without a checkpoint (plain JSON)."""


@pytest.mark.parametrize(("number", "old", "new"), [
    # Deflated with New York 1901's dictionary 3, then the checkpoint's bytes as they are.
    (3, "237af41f00", "237af41f00" "02737461746500ff"),
    # A plain-JSON log (a game without a dictionary): the checkpoint in base64 under "c".
    (0, OLD_ENTRY.hex(),
     b'{"a":{"lot":"yA","type":"acquire"},"c":"AnN0YXRlAP8=","s":1}'.hex()),
])
def test_the_stored_format_of_a_checkpointed_entry(number: int, old: str, new: str) -> None:
    entry = LogRecord(seat=1, action={"type": "acquire", "lot": "yA"},
                      checkpoint=b"\x02state\x00\xff")
    data = bytes.fromhex(new)
    assert entry.encode(NY, number) == data
    assert LogRecord.decode(NY, number, data) == entry
    # An entry stored before checkpoints existed reads as one without.
    assert LogRecord.decode(NY, number, bytes.fromhex(old)) == replace(entry, checkpoint=None)
    if number:
        # A reader from before checkpoints inflates the stream and never sees what follows.
        unpacker = zlib.decompressobj(-15, logdict.dictionaries()[f"{NY}.{number}"])
        assert unpacker.decompress(data) + unpacker.flush() == OLD_ENTRY
        with pytest.raises(ValueError, match="cut short"):
            LogRecord.decode(NY, number, data[:3])


def _long_match_in(client: TestClient, versions: int) -> Long:
    service: MatchService = client.app.state.match_service  # type: ignore[attr-defined]
    assert client.portal is not None
    return client.portal.call(long_match, service, versions)


def test_rest_pages_the_log_with_next_after() -> None:
    with TestClient(make_app()) as client:
        played = _long_match_in(client, 250)
        url = f"/v1/matches/{played.match_id}/log"
        first = client.get(url, headers=bearer(played.tokens[0]))
        assert first.status_code == 200, first.text
        body = first.json()
        assert (len(body["entries"]), body["nextAfter"], body["latestVersion"]) == (200, 200, 250)
        second = client.get(url, params={"after": body["nextAfter"]}).json()
        assert [e["version"] for e in second["entries"]] == list(range(201, 251))
        assert second["nextAfter"] is None
        small = client.get(url, params={"after": 10, "limit": 3}).json()
        assert ([e["version"] for e in small["entries"]], small["nextAfter"]) == ([11, 12, 13],
                                                                                 13)
        assert client.get(url, params={"after": 250}).json()["entries"] == []
        for query in ["limit=201", "limit=0", "limit=-1", "limit=", "limit=%D9%A3", "limit=2x",
                      "limit=1&limit=2"]:
            refused = client.get(f"{url}?{query}")
            assert refused.status_code == 400, query
            assert refused.json()["code"] == "malformed"
            assert "limit" in refused.json()["detail"], query
        assert client.get("/v1/matches/nosuchmatch/log?limit=201").status_code == 400


def test_graphql_pages_the_log_with_next_after() -> None:
    query = """query($id: ID!, $after: Int!, $limit: Int!) {
      log(matchId: $id, after: $after, limit: $limit) {
        __typename
        ... on LogPage { latestVersion nextAfter entries { version } }
        ... on Problem { code message }
      }
    }"""
    with TestClient(make_app()) as client:
        played = _long_match_in(client, 210)

        def log(after: int, limit: int) -> dict[str, Any]:
            answer = client.post("/graphql", json={"query": query, "variables": {
                "id": played.match_id, "after": after, "limit": limit}})
            assert answer.status_code == 200, answer.text
            result: dict[str, Any] = answer.json()["data"]["log"]
            return result

        page = log(0, 200)
        assert (page["__typename"], page["nextAfter"], len(page["entries"])) == ("LogPage", 200,
                                                                                200)
        assert log(200, 200)["nextAfter"] is None
        assert [e["version"] for e in log(200, 200)["entries"]] == list(range(201, 211))
        for limit in (201, 0):
            refused = log(0, limit)
            assert (refused["__typename"], refused["code"]) == ("BadRequest", "malformed")
            assert "limit" in refused["message"]
        default = client.post("/graphql", json={
            "query": "query($id: ID!) { log(matchId: $id) { ... on LogPage { nextAfter } } }",
            "variables": {"id": played.match_id}}).json()
        assert default["data"]["log"]["nextAfter"] == 200
