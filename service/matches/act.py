"""A player's move: the optimistic write path.

Load the record at version v, apply the move, ``compare_and_set`` to v + 1. An unpinned
action that loses the race is re-validated on the fresh state and retried (bounded); a
pinned one (``expectedVersion`` / ``If-Match``) fails with 409 / 412 instead. An
``Idempotency-Key`` is remembered in the record by the same compare-and-set as its move, so
a retried request can never act twice.

Only the last ``MAX_IDEMPOTENCY_KEYS`` keys fit in the record. A keyed move is therefore also
written with a write id derived from (match, seat, key) (``key_write_id``), whose tag the
store keeps with the log entry: a retry of a key the record forgot finds its move in the
log by that tag (same seat, same move) and gets the first result as well. Only in a match
whose early keyed moves were written by an older build (random write ids,
``MatchRecord.keys_from``) can a forgotten key be beyond the log's word: a retry the rules
would refuse is then 409 ``idempotency_key_expired`` (docs/api.md, "Idempotency").
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import replace
from typing import Any

from service.errors import ApiError
from service.games import get as get_engine
from service.games.base import JSON, Engine, dump_action
from service.i18n import DEFAULT_LANGUAGE, Lang, T
from service.identity.callers import Credential
from service.store import MatchNotFound, write_tag

from .due import DueSignals
from .models import ActResponse, EventOut
from .play import check_pins, check_started, play
from .records import IdempotentResult, LogRecord, MatchRecord
from .replay import moves_between
from .storage import StoredMatches, busy
from .views import events_for, seat_of, state_of
from .wire import parse_action

MAX_ACT_ATTEMPTS = 16
MAX_IDEMPOTENCY_KEY = 255


def _digest(*parts: str) -> str:
    """64 bits of SHA-256 in 11 base64url characters: unique enough among the few keys one
    match remembers."""
    joined = "\x1f".join(parts).encode("utf-8", "surrogatepass")
    return base64.urlsafe_b64encode(hashlib.sha256(joined).digest()[:8]).decode()[:11]


def key_write_id(match_id: str, seat: int, idempotency_key: str) -> str:
    """The compare-and-set write id of a move posted with ``idempotency_key`` by ``seat``:
    the same for every retry of it, so the tag the store keeps with its log entry
    (``store.write_tag``) finds it again once the record has forgotten the key. A hash,
    so that no key (any string, lone surrogates included) reaches the store as it is."""
    joined = "\x1f".join(("idempotency-key", match_id, str(seat), idempotency_key))
    return "k" + hashlib.sha256(joined.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _same_move(engine: Engine[Any], logged: JSON, action: dict[str, JSON]) -> bool:
    """Whether ``action`` (a retry's body) is the move the log holds: compared as the rules
    read it (the log keeps the parsed move, not the first request's bytes)."""
    try:
        parsed = parse_action(engine, action)
    except ApiError:
        return False
    canonical = json.dumps(dump_action(engine, parsed), sort_keys=True, default=str)
    return canonical == json.dumps(logged, sort_keys=True, default=str)


def _key_expired(version: int) -> ApiError:
    return ApiError.of(
        "idempotency_key_expired",
        "This match can no longer tell whether the move sent with this Idempotency-Key was "
        "played: reload the match before acting again.",
        currentVersion=version,
    )


class Acting:
    def __init__(self, storage: StoredMatches, due: DueSignals) -> None:
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
        searched = 0  # the log up to this version was searched for the key's tag: not there
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
            check_started(record, version)
            engine = get_engine(record.game)
            key = _digest(str(seat), idempotency_key) if idempotency_key is not None else None
            write_id = (key_write_id(match_id, seat, idempotency_key)
                        if idempotency_key is not None else None)
            action_digest = _digest(json.dumps(action, sort_keys=True, default=str))
            if key is not None and (first := record.recall(key)) is not None:
                if first.action != action_digest:
                    raise _key_reused()
                return await self._replayed(match_id, engine, seat, first.version, lang)
            if write_id is not None:
                logged, searched = await self._logged(
                    match_id, record, seat, write_id, searched
                )
                if logged is not None:
                    logged_version, logged_move = logged
                    if not _same_move(engine, logged_move.action, action):
                        raise _key_reused()
                    return await self._replayed(match_id, engine, seat, logged_version, lang)
            # The move's shape depends only on the game: refuse a malformed one whatever the
            # version, then check the pin, then ask the rules.
            parsed = parse_action(engine, action)
            try:
                check_pins(version, expected_version, if_match)
                new_state, events, new_record = play(
                    engine, version, record, seat, parsed, storage.now()
                )
            except ApiError:
                if write_id is not None and record.untagged_keys_forgotten():
                    # Maybe a retry of a move played before keys were tagged, whose key the
                    # record forgot: the rules' refusal would say the wrong thing.
                    raise _key_expired(version) from None
                raise
            if new_record.keys_from is None:
                # A record of an older build: keyed moves are tagged from this one on (from
                # the start if it never saw a key: none can be forgotten).
                new_record = replace(
                    new_record, keys_from=version + 1 if record.idempotency else 1
                )
            if key is not None:
                new_record = new_record.remember(IdempotentResult(key, version + 1, action_digest))
            entry = LogRecord(seat=seat, action=dump_action(engine, parsed))
            if stored := await storage.write(
                match_id, version, new_record, entry, before=record, write_id=write_id
            ):
                storage.metrics.action(engine.id, record.rules_version)
                await self.due.signal_if_due(match_id, engine, stored, new_state)
                after = state_of(match_id, version + 1, engine, new_state, seat, stored,
                                 self.storage.store_clock.peek_ms())
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

    async def _logged(
        self, match_id: str, record: MatchRecord, seat: int, write_id: str, searched: int
    ) -> tuple[tuple[int, LogRecord] | None, int]:
        """The log entry a move with ``write_id`` wrote, if the record forgot its key: only
        versions whose keys the record no longer remembers (below the oldest it does) and
        whose keyed moves carry their key's tag (from ``keys_from``) are searched, beyond
        ``searched`` (what an earlier attempt searched). Returns the entry (its version and
        move, when ``seat`` wrote it) and how far the log is now searched. No read at all
        while the record has forgotten no key."""
        below = record.forgotten_before()
        if record.keys_from is None or below <= record.keys_from:
            return None, searched
        start = max(searched, record.keys_from - 1)
        if start >= below - 1:
            return None, searched
        tag = write_tag(write_id)
        try:
            entries = await self.storage.entries(match_id, start)
        except MatchNotFound:
            raise ApiError.of("match_not_found", "No such match (or it expired).") from None
        for entry in entries:
            if entry.version >= below:
                break
            if entry.write_tag != tag:
                continue
            logged = LogRecord.decode(record.game, record.log_dict, entry.data)
            if logged.seat == seat:
                return (entry.version, logged), below - 1
        return None, below - 1

    async def _replayed(
        self, match_id: str, engine: Engine[Any], seat: int, first_version: int, lang: Lang,
    ) -> ActResponse:
        """The answer to a retried Idempotency-Key: the first result's version and events
        (re-derived from the log, as the seat may see them), and the current state."""
        version, record = await self.storage.load(match_id)
        _, moves = await moves_between(
            self.storage, match_id, engine, record, first_version - 1, first_version
        )
        events: list[EventOut] = []
        state = state_of(match_id, version, engine, engine.loads(record.state), seat, record,
                         self.storage.store_clock.peek_ms())
        if moves and moves[-1][0] == first_version:
            events = events_for(seat, moves[-1][2], engine.id, lang=lang, view=state.view)
        return ActResponse(match_id=match_id, version=first_version, events=events, state=state)


def _key_reused() -> ApiError:
    return ApiError.of(
        "idempotency_key_reused",
        "This Idempotency-Key was already used for a different action.",
    )
