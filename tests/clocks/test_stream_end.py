"""A match the service ends (a resignation leaves fewer than two seats in) ends its streams
too, on the ended state with its result, and live states carry the stored clock (issue 18)."""

from __future__ import annotations

import asyncio

from service.matches import MatchService
from service.matches.models import CreateMatchRequest, MatchState
from service.store import SqliteStore

TOY = "toy"


async def test_a_resignation_that_ends_the_match_ends_its_stream() -> None:
    service = MatchService(SqliteStore(":memory:"), ttl_finished=None, ttl_idle=None)
    created = await service.create_match(CreateMatchRequest.model_validate({
        "game": TOY, "players": 2,
        "timeControl": {"correspondence": {"secondsPerMove": 600}}}))
    tokens = {s.seat: s.token for s in created.seats}
    seen: list[MatchState] = []

    async def follow() -> None:
        async for state in service.watch(created.match_id, tokens[0], 0):
            seen.append(state)

    task = asyncio.create_task(follow())
    await asyncio.sleep(0.2)  # the stream waits for a version after 0
    await service.resign(created.match_id, tokens[1], 1)
    await asyncio.wait_for(task, 10)  # the stream ends by itself
    last = seen[-1]
    assert last.status == "finished" and last.active_seats == []
    assert last.result is not None and last.result.termination.reason == "resign"
    assert [s.forfeited for s in last.result.seats] == [False, True]
    # The live state at the resignation's version is the stored one, clocks stopped.
    assert last.clock is not None and not any(s.running for s in last.clock.seats)
    assert last.updated_at is not None
