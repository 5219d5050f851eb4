"""Watching a match: every new version as the caller sees it, in order, without gaps."""

from __future__ import annotations

from collections.abc import AsyncIterator

from service.games import get as get_engine
from service.store import MatchNotFound

from .models import MatchState
from .records import LogRecord
from .replay import replay, replay_step, with_handover
from .storage import MatchStorage
from .views import seat_of, state_of


async def watch(
    storage: MatchStorage, match_id: str, token: str | None, after: int
) -> AsyncIterator[MatchState]:
    """Every version > ``after`` as the caller sees it, in order, without gaps.

    The store keeps only the latest state, so older versions are rebuilt by replaying the
    logged actions (engines are deterministic); a live stream advances one logged action at
    a time, and picks up seats handed to bots from the log as it goes.
    """
    version, record = await storage.load(match_id)
    seat = seat_of(record, token, required=False)
    engine = get_engine(record.game)
    after = max(after, 0)
    if after >= version:
        state, current = engine.loads(record.state), version
    else:
        (state, _), current = await replay(storage, match_id, engine, record, after), after
    for_store = storage.store.watch(match_id, after)
    try:
        async for written in storage.guard_iter(for_store):  # ends if the match expires
            if written <= current:
                continue
            try:
                entries = await storage.entries(match_id, current)
            except MatchNotFound:
                return  # expired while watched
            for entry in entries:
                logged = LogRecord.decode(record.game, record.log_dict, entry.data)
                state, _ = replay_step(engine, state, logged)
                record = with_handover(record, logged)
                current = entry.version
                if current > after:
                    yield state_of(match_id, current, engine, state, seat, record)
    finally:
        close = getattr(for_store, "aclose", None)
        if close is not None:
            await close()
