"""The match service: every operation REST and GraphQL offer, in one place.

The web layers only translate: they parse a request, call one of these methods and render
the result or the ``ApiError``. This layer authenticates seats, loads and stores match
records, and asks the engine everything about the rules -- it never decides one itself.

Writes are optimistic: load the record at version v, apply the move, ``compare_and_set`` to
v + 1. An unpinned action that loses the race is re-validated on the fresh state and retried
(bounded); a pinned one (``expectedVersion`` / ``If-Match``) fails with 409 / 412 instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from service import games
from service.bots import Budget, get_bot
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

from . import auth
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
from .records import IdempotentResult, LogRecord, MatchRecord

T = TypeVar("T")

MATCH_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""Ids we hand out are 16 url-safe characters; anything else cannot exist (and never reaches
the store, where braces would break the Redis Cluster hash tag)."""

MAX_ACT_ATTEMPTS = 16
MAX_BOT_MOVES = 2000
BOT_BUDGET = Budget(iterations=100, seconds=2.0)
"""Per move of a ``search`` bot seat: at most 100 simulations or 2 s, whichever is first."""
MAX_IDEMPOTENCY_KEY = 255
RETRY_AFTER_SECONDS = 1


def _digest(*parts: str) -> str:
    """64 bits of SHA-256: unique enough among the few keys one match remembers."""
    joined = "\x1f".join(parts).encode("utf-8", "surrogatepass")
    return hashlib.sha256(joined).hexdigest()[:16]


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
        bots = tuple(sorted(set(req.bots or ())))
        if len(bots) != len(req.bots or ()):
            raise ApiError.of("bad_bots", "Name each bot seat once.")
        if any(seat >= req.players for seat in bots):
            raise ApiError.of("bad_bots", f"Bot seats must be below {req.players}.")
        if len(bots) == req.players:
            raise ApiError.of("bad_bots", "At least one seat must be human.")
        if bots and req.bot_kind != "random":
            try:
                bot_model_for(engine)
            except ValueError:
                raise ApiError.of(
                    "bad_bots", f"No {req.bot_kind} bot plays {engine.title}; use random."
                ) from None
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
            bot_kind=req.bot_kind,
            created=now,
            updated=now,
        )
        match_id = await self._store_new(record)
        self.metrics.match_created(engine.id)
        version = 0
        if bots:
            # The match exists and its tokens must reach the caller: if the bots' first move
            # fails, they resume on the next read.
            with contextlib.suppress(ApiError):
                version = await self._play_bots(match_id)
        return CreateMatchResponse(
            match_id=match_id,
            game=engine.id,
            version=version,
            seats=[SeatToken(seat=s, token=t) for s, t in sorted(tokens.items())],
        )

    # -- reads ------------------------------------------------------------------------------

    async def get_state(self, match_id: str, token: str | None) -> MatchState:
        version, record = await self._load_nudging_bots(match_id)
        seat = self._seat(record, token, required=False)
        engine = games.get(record.game)
        return self._state(match_id, version, engine, engine.loads(record.state), seat)

    async def legal_moves(self, match_id: str, token: str | None) -> LegalMoves:
        """The caller's legal moves; a spectator (no token) has none."""
        version, record = await self._load_nudging_bots(match_id)
        seat = self._seat(record, token, required=False)
        engine = games.get(record.game)
        moves: list[Any] = []
        if seat is not None:
            moves = engine.legal_actions(engine.loads(record.state), seat)
        return LegalMoves(match_id=match_id, version=version, seat=seat, moves=moves)

    async def log(self, match_id: str, token: str | None, after: int) -> LogPage:
        version, record = await self._load(match_id)
        seat = self._seat(record, token, required=False)
        engine = games.get(record.game)
        entries = await self._guard(self.store.log(match_id, max(after, 0)))
        out = []
        for entry in entries:
            if entry.version > version:
                break  # written after our load: the next page will have it
            logged = LogRecord.decode(entry.data)
            action = None
            if seat is not None and logged.seat == seat:
                action = parse_action(engine, logged.action)
            out.append(
                LogEntryOut(
                    version=entry.version,
                    seat=logged.seat,
                    action=action,
                    events=events_for(seat, logged.events),
                )
            )
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
            state, current = await self._replay(match_id, engine, record, after), after
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
                    if entry.version > written:
                        break
                    logged = LogRecord.decode(entry.data)
                    state = self._replay_step(engine, state, logged)
                    current = entry.version
                    if current > after:
                        yield self._state(match_id, current, engine, state, seat)
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
    ) -> ActResponse:
        """Apply one move for the token's seat and store it as the next version.

        ``expected_version`` (body) and ``if_match`` (header) pin the version: a mismatch is
        409 ``version_conflict`` / 412 ``precondition_failed`` with ``currentVersion``.
        ``idempotency_key``: a retry with the same key by the same seat returns the first
        result (its version and events, the current state) instead of acting again.
        """
        if token is None:
            raise ApiError.of("unauthorized", "Acting needs a seat token (Authorization: Bearer).")
        if idempotency_key is not None and not 0 < len(idempotency_key) <= MAX_IDEMPOTENCY_KEY:
            raise ApiError.of("malformed", "Idempotency-Key must be 1 to 255 characters.")
        for _ in range(MAX_ACT_ATTEMPTS):
            version, record = await self._load(match_id)
            seat = self._seat(record, token, required=True)
            assert seat is not None
            engine = games.get(record.game)
            key = _digest(str(seat), idempotency_key) if idempotency_key is not None else None
            action_digest = _digest(json.dumps(action, sort_keys=True, default=str))
            if key is not None and (first := record.recall(key)) is not None:
                return await self._replayed(match_id, engine, seat, first, action_digest)
            # The move's shape depends only on the game: refuse a malformed one whatever the
            # version, then check the pin, then ask the rules.
            parsed = self._parse_action(engine, action)
            self._check_pins(version, expected_version, if_match)
            state = engine.loads(record.state)
            if record.finished or engine.result(state) is not None:
                raise ApiError.of("match_finished", "The match is over.", currentVersion=version)
            if seat not in engine.active_seats(state):
                raise ApiError.of(
                    "not_your_turn", f"Seat {seat} may not act now.", currentVersion=version
                )
            try:
                new_state, events = engine.apply(state, seat, parsed)
            except IllegalAction as refusal:
                raise ApiError(422, refusal.code, "Illegal move", refusal.message) from None
            new_record = replace(
                record,
                state=engine.dumps(new_state),
                finished=engine.result(new_state) is not None,
                updated=int(self._clock()),
            )
            if key is not None:
                new_record = new_record.remember(IdempotentResult(key, version + 1, action_digest))
            entry = LogRecord(seat=seat, action=dump_action(engine, parsed), events=tuple(events))
            if await self._write(match_id, version, new_record, entry):
                self.metrics.action(engine.id)
                latest_version, latest_state = version + 1, new_state
                if record.bots and not new_record.finished:
                    try:
                        await self._play_bots(match_id)
                        latest_version, fresh = await self._load(match_id)
                        latest_state = engine.loads(fresh.state)
                    except ApiError:
                        pass  # the move is stored; bots resume on the next read or move
                return ActResponse(
                    match_id=match_id,
                    version=version + 1,
                    events=events_for(seat, events),
                    state=self._state(match_id, latest_version, engine, latest_state, seat),
                )
            self.metrics.cas_conflict()
            if expected_version is not None or if_match is not None:
                current, _ = await self._load(match_id)
                self._check_pins(current, expected_version, if_match)
        raise ApiError.of(
            "busy", "Too many concurrent writes to this match; retry.",
            retryAfter=RETRY_AFTER_SECONDS,
        )

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
        entries = await self._guard(self.store.log(match_id, first.version - 1))
        events: list[EventOut] = []
        if entries and entries[0].version == first.version:
            events = events_for(seat, LogRecord.decode(entries[0].data).events)
        version, record = await self._load(match_id)
        state = self._state(match_id, version, engine, engine.loads(record.state), seat)
        return ActResponse(match_id=match_id, version=first.version, events=events, state=state)

    def _state(
        self, match_id: str, version: int, engine: Engine[Any], state: Any, seat: int | None
    ) -> MatchState:
        result = engine.result(state)
        return MatchState(
            match_id=match_id,
            game=engine.id,
            version=version,
            status="finished" if result is not None else "active",
            seat=seat,
            active_seats=sorted(engine.active_seats(state)),
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
        return version, MatchRecord.decode(data)

    async def _write(
        self, match_id: str, version: int, record: MatchRecord, entry: LogRecord
    ) -> bool:
        try:
            return await self._guard(
                self.store.compare_and_set(
                    match_id, version, record.encode(), entry.encode(record.game), self._ttl(record)
                )
            )
        except MatchNotFound:
            raise ApiError.of("match_not_found", "No such match (or it expired).") from None

    async def _replay(
        self, match_id: str, engine: Engine[Any], record: MatchRecord, upto: int
    ) -> Any:
        """The state at version ``upto``, rebuilt from the seed and the logged actions."""
        options = engine.Options.model_validate(record.options) if record.options else None
        state = engine.setup(record.players, options, record.seed)
        if upto == 0:
            return state
        for entry in await self._guard(self.store.log(match_id, 0)):
            if entry.version > upto:
                break
            state = self._replay_step(engine, state, LogRecord.decode(entry.data))
        return state

    @staticmethod
    def _replay_step(engine: Engine[Any], state: Any, logged: LogRecord) -> Any:
        assert logged.seat is not None
        new_state, _ = engine.apply(state, logged.seat, parse_action(engine, logged.action))
        return new_state

    async def _load_nudging_bots(self, match_id: str) -> tuple[int, MatchRecord]:
        """Load; if a bot seat is due (its move was interrupted, e.g. by a store outage),
        let the bots move first so that a match never stalls waiting for them."""
        version, record = await self._load(match_id)
        if record.bots and not record.finished:
            engine = games.get(record.game)
            if set(record.bots) & engine.active_seats(engine.loads(record.state)):
                await self._play_bots(match_id)
                version, record = await self._load(match_id)
        return version, record

    async def _play_bots(self, match_id: str) -> int:
        """Let bot seats move while one of them is active; return the latest version."""
        version, record = await self._load(match_id)
        for _ in range(MAX_BOT_MOVES):
            if record.finished or not record.bots:
                break
            engine = games.get(record.game)
            state = engine.loads(record.state)
            waiting = sorted(set(record.bots) & engine.active_seats(state))
            if not waiting:
                break
            seat = waiting[0]
            moves = engine.legal_actions(state, seat)
            if not moves:
                break
            move = await self._bot_move(record, engine, state, seat, moves)
            new_state, events = engine.apply(state, seat, move)
            new_record = replace(
                record,
                state=engine.dumps(new_state),
                finished=engine.result(new_state) is not None,
                updated=int(self._clock()),
            )
            entry = LogRecord(seat=seat, action=dump_action(engine, move), events=tuple(events))
            if await self._write(match_id, version, new_record, entry):
                self.metrics.action(engine.id)
                version, record = version + 1, new_record
            else:
                self.metrics.cas_conflict()
                version, record = await self._load(match_id)
        return version

    @staticmethod
    async def _bot_move(
        record: MatchRecord, engine: Engine[Any], state: Any, seat: int, moves: list[Any]
    ) -> Any:
        """The bot's choice among ``moves``; it sees only its seat's view. Searching is CPU
        work, so it runs in a thread and leaves the event loop free."""
        bot = get_bot(record.bot_kind, seed=record.seed, budget=BOT_BUDGET)
        view = engine.view(state, seat)
        move = await asyncio.to_thread(bot.choose, engine, view, moves, seat)
        return move if move in moves else moves[0]

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
