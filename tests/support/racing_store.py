"""``RacingStore``: a store wrapper that makes chosen compare-and-sets lose a race.

Before the next ``compare_and_set`` it runs the queued *interloper* -- another write that
lands first, made on the wrapped store directly (or through a service on it), so it is not
intercepted itself. The service's own compare-and-set then finds the version moved on and
loses, deterministically, on any store (embedded or Redis): no timing, no luck.

    racing = RacingStore(SqliteStore(":memory:"))
    racing.before_next_write(lambda match_id, version: other_service.act(...))
    racing.lose_every_write()  # every compare-and-set loses (neutral version bumps)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from service.matches.records import LogRecord, MatchRecord
from service.store import MatchStore

Interloper = Callable[[str, int], Awaitable[Any]]
"""``(match_id, the version the service read)``: make another write land first."""


class RacingStore:
    def __init__(self, inner: MatchStore) -> None:
        self.inner = inner
        self.interlopers: list[Interloper] = []
        self.always: Interloper | None = None
        self.lost = 0
        """Compare-and-sets that ran after an interloper (each one lost its race)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)  # everything but compare_and_set as it is

    def before_next_write(self, interloper: Interloper) -> None:
        self.interlopers.append(interloper)

    def lose_every_write(self) -> None:
        self.always = self.bump

    async def bump(self, match_id: str, version: int) -> None:
        """A neutral write: the same record at the next version, with a log entry that
        changes nothing when replayed (like a seat handed over, minus the hand-over)."""
        _, data = await self.inner.load(match_id)
        record = MatchRecord.decode(data)
        entry = LogRecord(seat=None, action={"type": "interloper"})
        assert await self.inner.compare_and_set(
            match_id, version, data, entry.encode(record.game, record.log_dict)
        )

    async def compare_and_set(self, match_id: str, expected_version: int, *args: Any,
                              **kwargs: Any) -> bool:
        interloper = self.interlopers.pop(0) if self.interlopers else self.always
        if interloper is not None:
            await interloper(match_id, expected_version)
            self.lost += 1
        return await self.inner.compare_and_set(match_id, expected_version, *args, **kwargs)
