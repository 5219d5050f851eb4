"""A player's move: the optimistic write path.

Load the record at version v, apply the move, ``compare_and_set`` to v + 1. An unpinned
action that loses the race is re-validated on the fresh state and retried (bounded); a
pinned one (``expectedVersion`` / ``If-Match``) fails with 409 / 412 instead. An
``Idempotency-Key`` is remembered in the record by the same compare-and-set as its move, so
a retried request can never act twice.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

from service.errors import ApiError
from service.games import get as get_engine
from service.games.base import JSON, Engine, dump_action
from service.i18n import DEFAULT_LANGUAGE, Lang, T
from service.identity.callers import Credential

from .due import DueSignals
from .models import ActResponse, EventOut
from .play import check_pins, play
from .records import IdempotentResult, LogRecord, MatchRecord
from .replay import moves_between
from .storage import MatchStorage, busy
from .views import events_for, seat_of, state_of
from .wire import parse_action

MAX_ACT_ATTEMPTS = 16
MAX_IDEMPOTENCY_KEY = 255


def _digest(*parts: str) -> str:
    """64 bits of SHA-256 in 11 base64url characters: unique enough among the few keys one
    match remembers."""
    joined = "\x1f".join(parts).encode("utf-8", "surrogatepass")
    return base64.urlsafe_b64encode(hashlib.sha256(joined).digest()[:8]).decode()[:11]


class Acting:
    def __init__(self, storage: MatchStorage, due: DueSignals) -> None:
        self.storage = storage
        self.due = due

    async def act(
        self,
        match_id: str,
        token: Credential,
        action: dict[str, JSON],
        expected_version: int | None,
        idempotency_key: str | None,
        *,
        if_match: int | None = None,
        game: str | None = None,
        lang: Lang = DEFAULT_LANGUAGE,
        loaded: tuple[int, MatchRecord] | None = None,
    ) -> ActResponse:
        """Apply one move for the token's seat and store it as the next version.

        ``expected_version`` (body) and ``if_match`` (header) pin the version: a mismatch is
        409 ``version_conflict`` / 412 ``precondition_failed`` with ``currentVersion``.
        ``idempotency_key``: a retry with the same key by the same seat returns the first
        result (its version and events, the current state) instead of acting again.
        ``game``: the game the caller typed the move for (GraphQL's per-game inputs); a
        match of another game is 422 ``malformed`` -- checked on the record ``act`` loads
        anyway, so that costs no extra read. ``lang``: the language of the events' sentences.
        ``loaded``: the match's (version, record) as the caller just read it (``seated``,
        which checked the token before the body was parsed): the first attempt's read.
        """
        if token is None:
            raise ApiError.of("unauthorized", "Acting needs a seat token (Authorization: Bearer).")
        if idempotency_key is not None and not 0 < len(idempotency_key) <= MAX_IDEMPOTENCY_KEY:
            raise ApiError.of("malformed", "Idempotency-Key must be 1 to 255 characters.")
        storage = self.storage
        for _ in range(MAX_ACT_ATTEMPTS):
            version, record = loaded or await storage.load(match_id)
            loaded = None
            seat = seat_of(record, token, required=True)
            assert seat is not None
            if game is not None and record.game != game:
                raise ApiError.of(
                    "malformed",
                    T("This match plays {game}; send the move as `{game}`.", game=record.game),
                )
            engine = get_engine(record.game)
            key = _digest(str(seat), idempotency_key) if idempotency_key is not None else None
            action_digest = _digest(json.dumps(action, sort_keys=True, default=str))
            if key is not None and (first := record.recall(key)) is not None:
                return await self._replayed(match_id, engine, seat, first, action_digest, lang)
            # The move's shape depends only on the game: refuse a malformed one whatever the
            # version, then check the pin, then ask the rules.
            parsed = parse_action(engine, action)
            check_pins(version, expected_version, if_match)
            new_state, events, new_record = play(
                engine, version, record, seat, parsed, storage.now()
            )
            if key is not None:
                new_record = new_record.remember(IdempotentResult(key, version + 1, action_digest))
            entry = LogRecord(seat=seat, action=dump_action(engine, parsed))
            if await storage.write(match_id, version, new_record, entry, before=record):
                storage.metrics.action(engine.id, record.rules_version)
                await self.due.signal_if_due(match_id, engine, new_record, new_state)
                after = state_of(match_id, version + 1, engine, new_state, seat, new_record)
                return ActResponse(
                    match_id=match_id,
                    version=version + 1,
                    events=events_for(seat, events, engine.id, lang=lang, view=after.view),
                    state=after,
                )
            storage.metrics.cas_conflict()
            if expected_version is not None or if_match is not None:
                current, _ = await storage.load(match_id)
                check_pins(current, expected_version, if_match)
        raise busy()

    async def _replayed(
        self, match_id: str, engine: Engine[Any], seat: int, first: IdempotentResult,
        action_digest: str, lang: Lang,
    ) -> ActResponse:
        """The answer to a retried Idempotency-Key: the first result's version and events,
        and the current state."""
        if first.action != action_digest:
            raise ApiError.of(
                "idempotency_key_reused",
                "This Idempotency-Key was already used for a different action.",
            )
        version, record = await self.storage.load(match_id)
        _, moves = await moves_between(
            self.storage, match_id, engine, record, first.version - 1, first.version
        )
        events: list[EventOut] = []
        state = state_of(match_id, version, engine, engine.loads(record.state), seat, record)
        if moves and moves[-1][0] == first.version:
            events = events_for(seat, moves[-1][2], engine.id, lang=lang, view=state.view)
        return ActResponse(match_id=match_id, version=first.version, events=events, state=state)
