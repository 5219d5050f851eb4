"""The log keeps seat and action per version; events are re-derived by replaying from the
seed. These tests hold the re-derived events to the ones each move produced when it was
played, per seat, and the stored entries to their size."""

from __future__ import annotations

import statistics
from typing import Any

import pytest

from service.matches import MatchService, logdict
from service.matches.models import MatchState
from service.matches.records import CHECKPOINT_EVERY, LogRecord
from service.store.sqlite import SqliteStore
from tests.support.random_match import play_random_match
from tests.support.states import timeless

CASES = [("ny1901", 4, 7), ("ny1901", 2, 8), ("ginkgopolis", 3, 9), ("ginkgopolis", 1, 10)]


Answers = dict[int, tuple[int, list[dict[str, Any]]]]
"""version -> (seat that moved, the events act answered it)."""


async def _play(game: str, players: int, seed: int
                ) -> tuple[MatchService, str, dict[int, str], Answers]:
    """A complete random match through the service; what every act answered."""
    service = MatchService(SqliteStore(":memory:"), ttl_finished=None, ttl_idle=None)
    played = await play_random_match(service, game, players, seed)
    return service, played.match_id, played.tokens, played.answered


@pytest.mark.parametrize(("game", "players", "seed"), CASES)
async def test_replayed_events_are_those_the_move_produced(game: str, players: int,
                                                           seed: int) -> None:
    service, match_id, tokens, answered = await _play(game, players, seed)
    for seat, token in tokens.items():
        page = await service.log(match_id, token, 0)
        assert [e.version for e in page.entries] == sorted(answered)
        for entry in page.entries:
            mover, events = answered[entry.version]
            assert entry.seat == mover
            if mover == seat:  # what act answered this seat is what its log now says
                assert [e.model_dump() for e in entry.events] == events
            # The match is finished: every seat's move is shown (while it is played, only
            # the caller's own: tests/api/test_seeds.py).
            assert entry.action is not None
    # Paging: the log after version v is the tail of the whole log.
    whole = await service.log(match_id, tokens[0], 0)
    middle = len(answered) // 2
    tail = await service.log(match_id, tokens[0], middle)
    assert tail.entries == whole.entries[middle:]


@pytest.mark.parametrize(("game", "players", "seed"), CASES)
async def test_watching_from_zero_replays_to_the_stored_state(game: str, players: int,
                                                              seed: int) -> None:
    service, match_id, tokens, answered = await _play(game, players, seed)
    final = await service.get_state(match_id, tokens[0])
    service.watching.resume_window = final.version  # replay it all (default: a snapshot)
    seen: list[MatchState] = []
    async for state in service.watch(match_id, tokens[0], 0):
        seen.append(state)
        if state.version == final.version:
            break
    assert [s.version for s in seen] == sorted(answered)
    assert timeless(seen[-1].model_dump()) == timeless(final.model_dump())


@pytest.mark.parametrize(("game", "players", "seed"), CASES)
async def test_a_stored_move_is_seat_and_action_in_a_few_bytes(game: str, players: int,
                                                               seed: int) -> None:
    service, match_id, _, answered = await _play(game, players, seed)
    entries = await service.store.log(match_id, 0)
    _, record = await service.storage.load(match_id)
    assert record.log_dict == logdict.current_number(game)
    decoded = [LogRecord.decode(game, record.log_dict, e.data) for e in entries]
    assert [d.seat for d in decoded] == [answered[e.version][0] for e in entries]
    # The move itself: a checkpoint's state (every CHECKPOINT_EVERY-th entry) is not a move.
    sizes = [len(e.data) - len(d.checkpoint or b"") for e, d in zip(entries, decoded, strict=True)]
    # With its version's header (``headers.py``): whole in the first entry and at
    # checkpoints (about 40-60 bytes), else the time since the entry before (a byte or
    # three) and rarely more (docs/performance.md, "Versioned log headers").
    whole = [size for size, d in zip(sizes, decoded, strict=True)
             if d.header is not None and d.header.get("=") == 1]
    moves = [size for size, d in zip(sizes, decoded, strict=True)
             if d.header is not None and d.header.get("=") != 1]
    assert len(whole) == 1 + len(entries) // CHECKPOINT_EVERY
    assert len(moves) + len(whole) == len(entries)
    assert statistics.mean(sizes) <= 12 and max(whole) <= 80, (statistics.mean(sizes),
                                                               max(whole))
    assert statistics.mean(moves) <= 10 and max(moves) <= 40, (statistics.mean(moves),
                                                               max(moves))
