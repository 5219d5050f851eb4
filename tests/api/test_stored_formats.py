"""Matches this build cannot read are refused with a clear answer, never misread (a 500) nor
damaged by a write: a record from before the one-key format (it names no log dictionary)
is gone; a record naming a dictionary this build lacks (a newer replica made it, during a
rolling upgrade) is "retry shortly"."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

import pytest

from service import games
from service.errors import ApiError
from service.matches import MatchService
from service.matches.records import MatchRecord
from service.store.sqlite import SqliteStore

MATCH = "stored-elsewhere"


def _record(**header_changes: Any) -> bytes:
    engine = games.get("ny1901")
    record = MatchRecord(game="ny1901", players=2, options=None, seed=1, tokens=("a", "b"),
                         state=engine.dumps(engine.setup(2, None, 1)), log_dict=3)
    raw_header, _, state = record.encode().partition(b"\n")
    header = json.loads(raw_header)
    for name, value in header_changes.items():
        if value is None:
            del header[name]
        else:
            header[name] = value
    return json.dumps(header).encode() + b"\n" + state


def _calls(service: MatchService) -> list[Callable[[], Awaitable[Any]]]:
    return [
        lambda: service.get_state(MATCH, None),
        lambda: service.legal_moves(MATCH, None),
        lambda: service.log(MATCH, None, 0),
        lambda: service.act(MATCH, "a", {"type": "end_turn"}, None, None),
    ]


@pytest.mark.parametrize(("header", "status", "code", "says"), [
    ({"d": None}, 404, "match_not_found", "older version of Skyline"),
    ({"d": 99}, 503, "store_unavailable", "retry shortly"),
])
async def test_an_unreadable_match_is_refused_and_left_alone(
    header: dict[str, Any], status: int, code: str, says: str
) -> None:
    store = SqliteStore(":memory:")
    service = MatchService(store, ttl_finished=None, ttl_idle=None)
    stored = _record(**header)
    await store.create(MATCH, stored)
    for call in _calls(service):
        with pytest.raises(ApiError) as refused:
            await call()
        assert (refused.value.status, refused.value.code) == (status, code)
        assert says in refused.value.detail
    assert await store.load(MATCH) == (0, stored)  # nothing written
    assert await store.log(MATCH) == []


async def test_a_match_stored_before_seed_commitments_still_loads_and_says_so() -> None:
    """A record without the seed's salt (``ss``) and choice (``sc``) header fields -- every
    match stored before issue 20 -- loads and plays on: no commitment, ``seedChosen`` (nothing
    shows its seed was drawn), and its seed revealed at the end like any other."""
    store = SqliteStore(":memory:")
    service = MatchService(store, ttl_finished=None, ttl_idle=None)
    stored = _record()  # the header as every Skyline before issue 20 wrote it
    assert b'"ss"' not in stored and b'"sc"' not in stored
    await store.create(MATCH, stored)
    _, record = await service.load_record(MATCH)
    assert record.seed_salt is None and record.seed_chosen is None
    state = await service.get_state(MATCH, None)
    assert state.seed_chosen is True
    assert (state.seed_commitment, state.seed, state.seed_salt) == (None, None, None)
    assert (await service.log(MATCH, None, 0)).latest_version == 0


def test_the_record_header_keeps_the_seeds_salt_and_choice() -> None:
    engine = games.get("ny1901")
    base = MatchRecord(game="ny1901", players=2, options=None, seed=1, tokens=("a", "b"),
                       state=engine.dumps(engine.setup(2, None, 1)), log_dict=3)
    drawn = replace(base, seed_salt=bytes(range(16)), seed_chosen=False)
    assert MatchRecord.decode(drawn.encode()) == drawn
    chosen = replace(base, seed_chosen=True)
    assert MatchRecord.decode(chosen.encode()) == chosen
    assert MatchRecord.decode(base.encode()) == base
