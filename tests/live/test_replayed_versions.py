"""A resumed stream replays each version from the record of that version (issue 30, item 1):
every replayed state is, field by field, what ``GET /v1/matches/{id}`` answered at that
version -- its status, active seats, result, seed, ``updatedAt`` and clocks -- in full and in
patch mode; only the clock's reading time (``serverTime``, a running seat's ``remainingMs``)
may differ (docs/api.md, section 5)."""

from __future__ import annotations

import random

import pytest

from service.clocks import TimeControl
from service.matches import MatchService
from service.matches.models import CreateMatchRequest, wire_action
from service.store import SqliteStore
from tests.support.replayed import Answers, differences, record_gets, resumed

HOUR = TimeControl("correspondence", seconds_per_move=3600)


async def _new(service: MatchService, seed: int, *, timed: bool = False
               ) -> tuple[str, dict[int, str]]:
    created = await service.create_match(
        CreateMatchRequest(game="ny1901", players=2, seed=seed),
        extra={"time_control": HOUR} if timed else None)
    return created.match_id, {s.seat: s.token for s in created.seats}


async def _play(service: MatchService, match_id: str, tokens: dict[int, str], seed: int,
                answers: Answers, moves: int | None = None) -> int:
    """Random legal moves (to the end, or ``moves`` of them), GET recorded after each."""
    rng = random.Random(seed)
    version = await record_gets(service, match_id, tokens, answers)
    while moves is None or moves > 0:
        state = await service.get_state(match_id, None)
        if state.status == "finished":
            break
        seat = rng.choice(state.active_seats)
        legal = await service.legal_moves(match_id, tokens[seat])
        await service.act(match_id, tokens[seat], wire_action(rng.choice(legal.moves)),
                          None, None)
        version = await record_gets(service, match_id, tokens, answers)
        moves = None if moves is None else moves - 1
    return version


@pytest.fixture
async def service() -> MatchService:
    return MatchService(SqliteStore(":memory:"), ttl_finished=None, ttl_idle=None)


@pytest.mark.parametrize("mode", ["full", "patch"])
@pytest.mark.parametrize("seat", [None, 1])
async def test_a_finished_match_resumed_near_its_end_replays_what_get_answered(
    service: MatchService, mode: str, seat: int | None
) -> None:
    answers: Answers = {}
    match_id, tokens = await _new(service, 5)
    final = await _play(service, match_id, tokens, 5, answers)
    token = None if seat is None else tokens[seat]
    sent = await resumed(service, match_id, token, final - 3, mode)
    assert sorted(sent) == [final - 2, final - 1, final]
    assert differences(answers, sent, seat) == []
    before_end = sent[final - 1]
    assert before_end["status"] == "active" and before_end["activeSeats"]
    assert before_end.get("seed") is None and before_end["result"] is None
    assert sent[final]["status"] == "finished" and sent[final]["seed"] == 5


async def test_resume_points_of_a_finished_timed_match(service: MatchService) -> None:
    answers: Answers = {}
    match_id, tokens = await _new(service, 6, timed=True)
    final = await _play(service, match_id, tokens, 6, answers)
    service.watching.resume_window = final  # replay it all (default: a snapshot)
    for after in (0, 1, 2, final // 2, final - 2, final - 1):
        for mode in ("full", "patch"):
            sent = await resumed(service, match_id, None, after, mode)
            assert sorted(sent) == list(range(after + 1, final + 1))
            assert differences(answers, sent, None) == [], (after, mode)


async def test_catch_up_frames_of_a_live_timed_match_carry_their_own_times(
    service: MatchService,
) -> None:
    answers: Answers = {}
    match_id, tokens = await _new(service, 7, timed=True)
    latest = await _play(service, match_id, tokens, 7, answers, moves=12)
    sent = await resumed(service, match_id, tokens[0], latest - 8, upto=latest)
    assert sorted(sent) == list(range(latest - 7, latest + 1))
    assert differences(answers, sent, 0) == []
    for state in sent.values():
        assert state["updatedAt"] is not None and state["clock"] is not None
        assert any(s["deadline"] for s in state["clock"]["seats"])


async def test_a_live_stream_whose_timeline_replays_several_versions_at_once(
    service: MatchService,
) -> None:
    """Moves land while the stream waits: the shared timeline replays them from the log
    (its frames between the versions it loaded), each from its own record."""
    answers: Answers = {}
    match_id, tokens = await _new(service, 8, timed=True)
    start = await _play(service, match_id, tokens, 8, answers, moves=2)
    stream = service.follow(match_id, token=None, after=start)
    try:
        import asyncio
        import json

        pending = asyncio.ensure_future(anext(stream))
        await asyncio.sleep(0.05)
        latest = await _play(service, match_id, tokens, 8, answers, moves=5)
        sent = {}
        event = await asyncio.wait_for(pending, 10)
        sent[event.version] = json.loads(event.data)
        while event.version < latest:
            event = await asyncio.wait_for(anext(stream), 10)
            sent[event.version] = json.loads(event.data)
    finally:
        await stream.aclose()
    assert sorted(sent) == list(range(start + 1, latest + 1))
    assert differences(answers, sent, None) == []


async def test_a_log_without_headers_replays_best_effort(
    service: MatchService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Entries written before versioned headers (here: written without one) replay as
    before: the status and seats from the game, no ``updatedAt`` and no ``clock``
    (docs/decisions.md)."""
    from service.matches import storage

    monkeypatch.setattr(storage.headers, "entry_header", lambda *args, **kwargs: None)
    answers: Answers = {}
    match_id, tokens = await _new(service, 9, timed=True)
    final = await _play(service, match_id, tokens, 9, answers)
    sent = await resumed(service, match_id, None, final - 3)
    assert sorted(sent) == [final - 2, final - 1, final]
    for version in (final - 2, final - 1):
        assert sent[version]["status"] == "active" and sent[version]["activeSeats"]
        assert sent[version]["updatedAt"] is None and sent[version]["clock"] is None
        assert sent[version]["activeSeats"] == answers[version][None]["activeSeats"]
    assert sent[final]["status"] == "finished"
