"""The match service: every operation REST and GraphQL offer, in one place.

The web layers only translate: they parse a request, call one of these methods and render
the result or the ``ApiError``. This layer authenticates seats, loads and stores match
records, and asks the engine everything about the rules -- it never decides one itself.

Writes are optimistic: load the record at version v, apply the move, ``compare_and_set`` to
v + 1. An unpinned action that loses the race is re-validated on the fresh state and retried
(bounded); a pinned one (``expectedVersion`` / ``If-Match``) fails with 409 / 412 instead.

Bot seats are not played here: after every write that leaves a bot seat active, the service
signals the match as due (``store.signal_due``) and a worker (``service/worker.py``) plays the
bot through ``act_as_bot`` -- the same checks and compare-and-set as a human's move. A read of
a match whose active seats include a bot signals it again (a signal lost between a write and
its signal, e.g. when a replica died there, is recovered by the next read).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import logging
import re
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from service import games
from service.bots import KINDS as BOT_KINDS
from service.bots.games import model_for as bot_model_for
from service.games.base import (
    JSON,
    Engine,
    Event,
    IllegalAction,
    action_adapter,
    dump_action,
    parse_action,
)
from service.store import MatchExists, MatchNotFound, MatchStore, StoreUnavailable

from . import auth, logdict
from .errors import ApiError
from .metrics import Metrics
from .models import (
    ActResponse,
    CreateMatchRequest,
    CreateMatchResponse,
    EventOut,
    GameInfo,
    LegalMoves,
    LogEntryOut,
    LogPage,
    MatchState,
    SeatToken,
)
from .records import IdempotentResult, LogRecord, MatchRecord, OutdatedRecord

T = TypeVar("T")
log = logging.getLogger("skyline.service")

MATCH_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""Ids we hand out are 16 url-safe characters; anything else cannot exist (and never reaches
the store, where braces would break the Redis Cluster hash tag)."""

MAX_ACT_ATTEMPTS = 16
RESIGNAL_AFTER_SECONDS = 2.0
"""A read signals a match whose bot is to move again only after this long without a write."""
MAX_IDEMPOTENCY_KEY = 255
RETRY_AFTER_SECONDS = 1


def _digest(*parts: str) -> str:
    """64 bits of SHA-256 in 11 base64url characters: unique enough among the few keys one
    match remembers."""
    joined = "\x1f".join(parts).encode("utf-8", "surrogatepass")
    return base64.urlsafe_b64encode(hashlib.sha256(joined).digest()[:8]).decode()[:11]


def _first_error(errors: list[dict[str, Any]]) -> str:
    first = errors[0] if errors else {"loc": [], "msg": "invalid"}
    where = ".".join(first["loc"]) or "value"
    return f"{where}: {first['msg']}"


def _wire_errors(error: ValidationError) -> list[dict[str, Any]]:
    return [
        {"loc": [str(p) for p in e["loc"]], "msg": e["msg"], "type": e["type"]}
        for e in error.errors(include_url=False, include_input=False, include_context=False)
    ]


def validate_wire(
    lax: Callable[[Any], T], strict_json: Callable[[str], object], data: JSON
) -> tuple[T | None, list[dict[str, Any]]]:
    """Validate JSON ``data`` as JSON Schema reads the published schema: pydantic's lax mode
    (which accepts ``3.0`` for an integer, as JSON Schema does), minus the coercions JSON
    Schema refuses (``0`` for a boolean, ``"5"`` for an integer), found by a strict pass.

    Returns ``(value, [])`` or ``(None, errors)``.
    """
    try:
        value = lax(data)
    except ValidationError as error:
        return None, _wire_errors(error)
    try:
        strict_json(json.dumps(data))
    except ValidationError as error:
        coerced = [
            e for e in error.errors(include_url=False, include_context=False)
            if not (e["type"] == "int_type" and isinstance(e.get("input"), float)
                    and e["input"].is_integer())
        ]
        if coerced:
            return None, [
                {"loc": [str(p) for p in e["loc"]], "msg": e["msg"], "type": e["type"]}
                for e in coerced
            ]
    return value, []


def _with_handover(record: MatchRecord, logged: LogRecord) -> MatchRecord:
    """``record`` with the bot seat a hand-over log entry added (others: unchanged)."""
    action = logged.action
    if logged.seat is None and isinstance(action, dict) and action.get("type") == "seat_to_bot":
        seat, kind = action.get("seat"), action.get("kind")
        if isinstance(seat, int) and isinstance(kind, str):
            return replace(record, bots=dict(sorted({**record.bots, seat: kind}.items())))
    return record


def events_for(seat: int | None, events: tuple[Event, ...] | list[Event]) -> list[EventOut]:
    """Events as ``seat`` (None: a spectator) may see them."""
    out = []
    for event in events:
        seen = event.for_seat(seat)
        seen.pop("kind", None)
        out.append(EventOut(kind=event.kind, data=seen))
    return out


class MatchService:
    """Hosts matches of every registered engine on a ``MatchStore``.

    ``ttl_finished`` / ``ttl_idle``: seconds a finished / an active match is kept after its
    last write (None: forever).
    """

    def __init__(
        self,
        store: MatchStore,
        *,
        ttl_finished: int | None,
        ttl_idle: int | None,
        metrics: Metrics | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.ttl_finished = ttl_finished
        self.ttl_idle = ttl_idle
        self.metrics = metrics or Metrics()
        self._clock = clock
        self.resignal_after = RESIGNAL_AFTER_SECONDS

    # -- catalogue and creation -------------------------------------------------------------

    async def catalogue(self) -> list[GameInfo]:
        return [
            GameInfo(
                id=engine.id,
                title=engine.title,
                min_players=engine.min_players,
                max_players=engine.max_players,
                options_schema=engine.Options.model_json_schema(),
            )
            for engine in games.all()
        ]

    async def create_match(self, req: CreateMatchRequest) -> CreateMatchResponse:
        engine = self._engine_for_new(req.game)
        if not engine.min_players <= req.players <= engine.max_players:
            raise ApiError.of(
                "bad_player_count",
                f"{engine.title} takes {engine.min_players} to {engine.max_players} players, "
                f"not {req.players}.",
            )
        options = self._options(engine, req.options)
        bots = self._bot_seats(engine, req.players, req.bots or {})
        seed = req.seed if req.seed is not None else secrets.randbelow(2**53)
        state = engine.setup(req.players, options, seed)
        tokens: dict[int, str] = {
            seat: auth.new_token() for seat in range(req.players) if seat not in bots
        }
        now = int(self._clock())
        record = MatchRecord(
            game=engine.id,
            players=req.players,
            options=options.model_dump(mode="json") if options is not None else None,
            seed=seed,
            tokens=tuple(
                auth.digest(tokens[s]) if s in tokens else None for s in range(req.players)
            ),
            state=engine.dumps(state),
            finished=engine.result(state) is not None,
            bots=bots,
            created=now,
            updated=now,
            log_dict=logdict.current_number(engine.id) or 0,
        )
        match_id = await self._store_new(record)
        self.metrics.match_created(engine.id)
        await self._signal_if_bot_due(match_id, engine, record, state)
        return CreateMatchResponse(
            match_id=match_id,
            game=engine.id,
            version=0,
            seats=[SeatToken(seat=s, token=t) for s, t in sorted(tokens.items())],
        )

    # -- reads ------------------------------------------------------------------------------

    async def get_state(self, match_id: str, token: str | None) -> MatchState:
        version, record = await self._load(match_id)
        seat = self._seat(record, token, required=False)
        engine = games.get(record.game)
        state = engine.loads(record.state)
        await self._signal_if_bot_due(match_id, engine, record, state, read=True)
        return self._state(match_id, version, engine, state, seat, record)

    async def legal_moves(self, match_id: str, token: str | None) -> LegalMoves:
        """The caller's legal moves; a spectator (no token) has none."""
        version, record = await self._load(match_id)
        seat = self._seat(record, token, required=False)
        engine = games.get(record.game)
        state = engine.loads(record.state)
        await self._signal_if_bot_due(match_id, engine, record, state, read=True)
        moves: list[Any] = []
        if seat is not None:
            moves = engine.legal_actions(state, seat)
        return LegalMoves(match_id=match_id, version=version, seat=seat, moves=moves)

    async def log(self, match_id: str, token: str | None, after: int) -> LogPage:
        """The moves after version ``after`` as the caller sees them. The store keeps seat
        and action per version; the events are re-derived by replaying from the seed."""
        version, record = await self._load(match_id)
        seat = self._seat(record, token, required=False)
        engine = games.get(record.game)
        _, moves = await self._replay(match_id, engine, record, version)
        out = [
            LogEntryOut(
                version=moved,
                seat=logged.seat,
                action=(parse_action(engine, logged.action)
                        if seat is not None and logged.seat == seat else None),
                events=events_for(seat, events),
            )
            for moved, logged, events in moves
            if moved > after
        ]
        return LogPage(match_id=match_id, entries=out, latest_version=version)

    async def watch(
        self, match_id: str, token: str | None, after: int
    ) -> AsyncIterator[MatchState]:
        """Every version > ``after`` as the caller sees it, in order, without gaps.

        The store keeps only the latest state, so older versions are rebuilt by replaying
        the logged actions (engines are deterministic); a live stream advances one logged
        action at a time.
        """
        version, record = await self._load(match_id)
        seat = self._seat(record, token, required=False)
        engine = games.get(record.game)
        after = max(after, 0)
        if after >= version:
            state, current = engine.loads(record.state), version
        else:
            (state, _), current = await self._replay(match_id, engine, record, after), after
        for_store = self.store.watch(match_id, after)
        try:
            async for written in self._guard_iter(for_store):  # ends if the match expires
                if written <= current:
                    continue
                try:
                    entries = await self._guard(self.store.log(match_id, current))
                except MatchNotFound:
                    return  # expired while watched
                for entry in entries:
                    logged = LogRecord.decode(record.game, record.log_dict, entry.data)
                    state, _ = self._replay_step(engine, state, logged)
                    record = _with_handover(record, logged)
                    current = entry.version
                    if current > after:
                        yield self._state(match_id, current, engine, state, seat, record)
        finally:
            close = getattr(for_store, "aclose", None)
            if close is not None:
                await close()

    # -- the write path ---------------------------------------------------------------------

    async def act(
        self,
        match_id: str,
        token: str | None,
        action: dict[str, JSON],
        expected_version: int | None,
        idempotency_key: str | None,
        *,
        if_match: int | None = None,
        game: str | None = None,
    ) -> ActResponse:
        """Apply one move for the token's seat and store it as the next version.

        ``expected_version`` (body) and ``if_match`` (header) pin the version: a mismatch is
        409 ``version_conflict`` / 412 ``precondition_failed`` with ``currentVersion``.
        ``idempotency_key``: a retry with the same key by the same seat returns the first
        result (its version and events, the current state) instead of acting again.
        ``game``: the game the caller typed the move for (GraphQL's per-game inputs); a match
        of another game is 422 ``malformed`` -- checked on the record ``act`` loads anyway,
        so that costs no extra read.
        """
        if token is None:
            raise ApiError.of("unauthorized", "Acting needs a seat token (Authorization: Bearer).")
        if idempotency_key is not None and not 0 < len(idempotency_key) <= MAX_IDEMPOTENCY_KEY:
            raise ApiError.of("malformed", "Idempotency-Key must be 1 to 255 characters.")
        for _ in range(MAX_ACT_ATTEMPTS):
            version, record = await self._load(match_id)
            seat = self._seat(record, token, required=True)
            assert seat is not None
            if game is not None and record.game != game:
                raise ApiError.of(
                    "malformed",
                    f"This match plays {record.game}; send the move as `{record.game}`.",
                )
            engine = games.get(record.game)
            key = _digest(str(seat), idempotency_key) if idempotency_key is not None else None
            action_digest = _digest(json.dumps(action, sort_keys=True, default=str))
            if key is not None and (first := record.recall(key)) is not None:
                return await self._replayed(match_id, engine, seat, first, action_digest)
            # The move's shape depends only on the game: refuse a malformed one whatever the
            # version, then check the pin, then ask the rules.
            parsed = self._parse_action(engine, action)
            self._check_pins(version, expected_version, if_match)
            new_state, events, new_record = self._play(engine, version, record, seat, parsed)
            if key is not None:
                new_record = new_record.remember(IdempotentResult(key, version + 1, action_digest))
            entry = LogRecord(seat=seat, action=dump_action(engine, parsed))
            if await self._write(match_id, version, new_record, entry):
                self.metrics.action(engine.id)
                await self._signal_if_bot_due(match_id, engine, new_record, new_state)
                return ActResponse(
                    match_id=match_id,
                    version=version + 1,
                    events=events_for(seat, events),
                    state=self._state(
                        match_id, version + 1, engine, new_state, seat, new_record
                    ),
                )
            self.metrics.cas_conflict()
            if expected_version is not None or if_match is not None:
                current, _ = await self._load(match_id)
                self._check_pins(current, expected_version, if_match)
        raise ApiError.of(
            "busy", "Too many concurrent writes to this match; retry.",
            retryAfter=RETRY_AFTER_SECONDS,
        )

    def _play(
        self, engine: Engine[Any], version: int, record: MatchRecord, seat: int, action: Any
    ) -> tuple[Any, list[Event], MatchRecord]:
        """The rules' part of a write, shared by human and bot moves: refuse a finished match
        or a seat that may not act, apply the move (the engine's refusal becomes 422 with its
        code), and return the new state, its events and the record to store."""
        state = engine.loads(record.state)
        if record.finished or engine.result(state) is not None:
            raise ApiError.of("match_finished", "The match is over.", currentVersion=version)
        if seat not in engine.active_seats(state):
            raise ApiError.of(
                "not_your_turn", f"Seat {seat} may not act now.", currentVersion=version
            )
        try:
            new_state, events = engine.apply(state, seat, action)
        except IllegalAction as refusal:
            raise ApiError(422, refusal.code, "Illegal move", refusal.message) from None
        new_record = replace(
            record,
            state=engine.dumps(new_state),
            finished=engine.result(new_state) is not None,
            updated=int(self._clock()),
        )
        return new_state, events, new_record

    # -- bot seats --------------------------------------------------------------------------

    async def act_as_bot(
        self, match_id: str, seat: int, action: JSON, expected_version: int
    ) -> int:
        """Store ``action`` for bot ``seat`` as version ``expected_version + 1`` -- the worker's
        write path: the same checks (the seat is a bot and active, the move is legal) and the
        same compare-and-set as ``act``, always pinned. Returns the new version; a lost race
        is 409 ``version_conflict`` (the worker reloads and thinks again)."""
        version, record = await self._load(match_id)
        engine = games.get(record.game)
        if seat not in record.bots:
            raise ApiError.of("unauthorized", f"Seat {seat} is not a bot seat.")
        parsed = self._parse_action(engine, action)
        self._check_pins(version, expected_version, None)
        new_state, _, new_record = self._play(engine, version, record, seat, parsed)
        entry = LogRecord(seat=seat, action=dump_action(engine, parsed))
        if not await self._write(match_id, version, new_record, entry):
            self.metrics.cas_conflict()
            current, _ = await self._load(match_id)
            raise ApiError.of(
                "version_conflict",
                f"The match moved on from version {version}.",
                currentVersion=current,
            )
        self.metrics.action(engine.id)
        await self._signal_if_bot_due(match_id, engine, new_record, new_state)
        return version + 1

    async def hand_seat_to_bot(
        self, match_id: str, token: str | None, kind: str, seat: int | None = None
    ) -> MatchState:
        """The token's seat leaves and a ``kind`` bot takes it over (a worker plays it from
        now on); the token stops working. ``seat``, when given (REST path), must be the
        token's seat. Returns the match as a spectator sees it."""
        if token is None:
            raise ApiError.of("unauthorized", "Handing a seat over needs its token.")
        for _ in range(MAX_ACT_ATTEMPTS):
            version, record = await self._load(match_id)
            own = self._seat(record, token, required=True)
            assert own is not None
            if seat is not None and seat != own:
                raise ApiError.of("unauthorized", f"The token is not seat {seat}'s.")
            engine = games.get(record.game)
            state = engine.loads(record.state)
            if record.finished or engine.result(state) is not None:
                raise ApiError.of("match_finished", "The match is over.", currentVersion=version)
            wanted = {str(s): k for s, k in {**record.bots, own: kind}.items()}
            bots = self._bot_seats(engine, record.players, wanted, all_bots=True)
            tokens = tuple(None if s == own else t for s, t in enumerate(record.tokens))
            new_record = replace(record, bots=bots, tokens=tokens, updated=int(self._clock()))
            entry = LogRecord(seat=None, action={"type": "seat_to_bot", "seat": own,
                                                 "kind": kind})
            if await self._write(match_id, version, new_record, entry):
                await self._signal_if_bot_due(match_id, engine, new_record, state)
                return self._state(match_id, version + 1, engine, state, None, new_record)
            self.metrics.cas_conflict()
        raise ApiError.of(
            "busy", "Too many concurrent writes to this match; retry.",
            retryAfter=RETRY_AFTER_SECONDS,
        )

    @staticmethod
    def _bot_seats(
        engine: Engine[Any], players: int, raw: dict[str, str], *, all_bots: bool = False
    ) -> dict[int, str]:
        """``{"seat": kind}`` checked: seats in range, kinds known and available for the
        game, at least one human seat (unless ``all_bots``: every player may leave)."""
        bots: dict[int, str] = {}
        for key, kind in raw.items():
            if not (key.isascii() and key.isdigit() and len(key) <= 2
                    and int(key) < players and str(int(key)) == key):
                raise ApiError.of(
                    "bad_bots", f"Bot seat {key[:8]!r} is not a seat number below {players}."
                )
            if kind not in BOT_KINDS:
                raise ApiError.of(
                    "bad_bots", f"No bot kind {str(kind)[:32]!r}; known: {', '.join(BOT_KINDS)}."
                )
            if kind != "random":
                try:
                    bot_model_for(engine)
                except ValueError:
                    raise ApiError.of(
                        "bad_bots", f"No {kind} bot plays {engine.title}; use random."
                    ) from None
            bots[int(key)] = kind
        if len(bots) >= players and not all_bots:
            raise ApiError.of("bad_bots", "At least one seat must be human.")
        return dict(sorted(bots.items()))

    async def _signal_if_bot_due(
        self, match_id: str, engine: Engine[Any], record: MatchRecord, state: Any,
        *, read: bool = False,
    ) -> None:
        """Signal the match as due when a bot seat is active (only then: a match without
        bots costs nothing). Best effort: the write is stored; a lost signal is sent again
        by a later read of the match (``read``): once the bot's turn has waited
        ``resignal_after`` seconds since the last write, so that clients polling while a
        bot thinks do not flood the workers with duplicates."""
        if not record.bots or record.finished:
            return
        if read and self._clock() - record.updated < self.resignal_after:
            return
        if not set(record.bots) & engine.active_seats(state):
            return
        try:
            await self.store.signal_due(match_id)
        except StoreUnavailable:
            log.warning("could not signal match %s as due; the next read will", match_id)

    # -- helpers ----------------------------------------------------------------------------

    @staticmethod
    def _check_pins(version: int, expected_version: int | None, if_match: int | None) -> None:
        if expected_version is not None and expected_version != version:
            raise ApiError.of(
                "version_conflict",
                f"The match is at version {version}, not {expected_version}.",
                currentVersion=version,
            )
        if if_match is not None and if_match != version:
            raise ApiError.of(
                "precondition_failed",
                f"The match is at version {version}, not {if_match}.",
                currentVersion=version,
            )

    async def _replayed(
        self, match_id: str, engine: Engine[Any], seat: int, first: IdempotentResult,
        action_digest: str,
    ) -> ActResponse:
        if first.action != action_digest:
            raise ApiError.of(
                "idempotency_key_reused",
                "This Idempotency-Key was already used for a different action.",
            )
        version, record = await self._load(match_id)
        _, moves = await self._replay(match_id, engine, record, first.version)
        events: list[EventOut] = []
        if moves and moves[-1][0] == first.version:
            events = events_for(seat, moves[-1][2])
        state = self._state(
            match_id, version, engine, engine.loads(record.state), seat, record
        )
        return ActResponse(match_id=match_id, version=first.version, events=events, state=state)

    def _state(
        self, match_id: str, version: int, engine: Engine[Any], state: Any, seat: int | None,
        record: MatchRecord | None = None,
    ) -> MatchState:
        result = engine.result(state)
        return MatchState(
            match_id=match_id,
            game=engine.id,
            version=version,
            status="finished" if result is not None else "active",
            seat=seat,
            active_seats=sorted(engine.active_seats(state)),
            bots={str(s): k for s, k in record.bots.items()} if record is not None else {},
            view=engine.view(state, seat),
            result=result,
        )

    @staticmethod
    def _engine_for_new(game_id: str) -> Engine[Any]:
        try:
            return games.get(game_id)
        except games.UnknownGame:
            known = ", ".join(games.ids()) or "none"
            raise ApiError.of(
                "unknown_game", f"No game {game_id[:64]!r}; known: {known}."
            ) from None

    @staticmethod
    def _options(engine: Engine[Any], options: dict[str, JSON] | None) -> BaseModel | None:
        if options is None:
            return None
        model = engine.Options
        value, errors = validate_wire(
            model.model_validate, lambda raw: model.model_validate_json(raw, strict=True),
            options,
        )
        if errors:
            raise ApiError.of("bad_options", _first_error(errors), errors=errors)
        return value

    @staticmethod
    def _parse_action(engine: Engine[Any], action: JSON) -> Any:
        adapter = action_adapter(engine)
        value, errors = validate_wire(
            adapter.validate_python, lambda raw: adapter.validate_json(raw, strict=True), action
        )
        if errors:
            raise ApiError.of(
                "invalid_action", f"Not a {engine.title} move: {_first_error(errors)}",
                errors=errors,
            )
        return value

    @staticmethod
    def _seat(record: MatchRecord, token: str | None, *, required: bool) -> int | None:
        if token is None:
            if required:
                raise ApiError.of("unauthorized", "This needs a seat token.")
            return None
        seat = auth.seat_of(token, record.tokens)
        if seat is None:
            raise ApiError.of("unauthorized", "The token is not valid for this match.")
        return seat

    def _ttl(self, record: MatchRecord) -> int | None:
        return self.ttl_finished if record.finished else self.ttl_idle

    async def _store_new(self, record: MatchRecord) -> str:
        for _ in range(8):
            match_id = secrets.token_urlsafe(12)
            try:
                await self._guard(self.store.create(match_id, record.encode(), self._ttl(record)))
            except MatchExists:
                continue
            return match_id
        raise ApiError.of("busy", "Could not allocate a match id; retry.",
                          retryAfter=RETRY_AFTER_SECONDS)

    async def _load(self, match_id: str) -> tuple[int, MatchRecord]:
        if not MATCH_ID.match(match_id):
            raise ApiError.of("match_not_found", "No such match.")
        try:
            version, data = await self._guard(self.store.load(match_id))
        except MatchNotFound:
            raise ApiError.of("match_not_found", "No such match (or it expired).") from None
        try:
            record = MatchRecord.decode(data)
        except OutdatedRecord:
            raise ApiError.of(
                "match_not_found",
                "This match was stored by an older version of Skyline, in a format this one "
                "does not read.",
            ) from None
        if not logdict.known(record.game, record.log_dict):
            # A newer replica created it (a rolling upgrade added a dictionary): another
            # replica can serve it, and this one can once it is upgraded.
            raise ApiError.of(
                "store_unavailable", "This server cannot read this match's log format yet; "
                "retry shortly.", retryAfter=RETRY_AFTER_SECONDS,
            )
        return version, record

    async def _write(
        self, match_id: str, version: int, record: MatchRecord, entry: LogRecord
    ) -> bool:
        try:
            return await self._guard(
                self.store.compare_and_set(
                    match_id, version, record.encode(),
                    entry.encode(record.game, record.log_dict), self._ttl(record),
                )
            )
        except MatchNotFound:
            raise ApiError.of("match_not_found", "No such match (or it expired).") from None

    async def _replay(
        self, match_id: str, engine: Engine[Any], record: MatchRecord, upto: int
    ) -> tuple[Any, list[tuple[int, LogRecord, tuple[Event, ...]]]]:
        """The state at version ``upto``, rebuilt from the seed and the logged actions, and
        every logged move up to it with the events it produced (the store keeps no events:
        the engines are deterministic, so replaying yields exactly the first ones)."""
        options = engine.Options.model_validate(record.options) if record.options else None
        state = engine.setup(record.players, options, record.seed)
        moves: list[tuple[int, LogRecord, tuple[Event, ...]]] = []
        if upto == 0:
            return state, moves
        for entry in await self._guard(self.store.log(match_id, 0)):
            if entry.version > upto:
                break
            logged = LogRecord.decode(record.game, record.log_dict, entry.data)
            state, events = self._replay_step(engine, state, logged)
            moves.append((entry.version, logged, events))
        return state, moves

    @staticmethod
    def _replay_step(
        engine: Engine[Any], state: Any, logged: LogRecord
    ) -> tuple[Any, tuple[Event, ...]]:
        if logged.seat is None:
            return state, ()  # a seat handed to a bot: the game state does not change
        new_state, events = engine.apply(state, logged.seat, parse_action(engine, logged.action))
        return new_state, tuple(events)

    async def _guard(self, call: Awaitable[T]) -> T:
        try:
            return await call
        except StoreUnavailable:
            raise ApiError.of(
                "store_unavailable", "The match store is unavailable; retry shortly.",
                retryAfter=RETRY_AFTER_SECONDS,
            ) from None

    async def _guard_iter(self, iterator: AsyncIterator[int]) -> AsyncIterator[int]:
        try:
            async for value in iterator:
                yield value
        except MatchNotFound:
            return
        except StoreUnavailable:
            raise ApiError.of(
                "store_unavailable", "The match store is unavailable; retry shortly.",
                retryAfter=RETRY_AFTER_SECONDS,
            ) from None

    async def ready(self) -> bool:
        try:
            return bool(await asyncio.wait_for(self.store.ping(), timeout=2))
        except (TimeoutError, StoreUnavailable, OSError):
            return False
