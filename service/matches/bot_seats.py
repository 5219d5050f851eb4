"""Bot seats: which seats bots play, the workers' write path, and a seat handed to a bot."""

from __future__ import annotations

from typing import Any

from service.bots import KINDS as BOT_KINDS
from service.bots.games import model_for as bot_model_for
from service.errors import ApiError
from service.games import get as get_engine
from service.games.base import JSON, Engine, dump_action
from service.i18n import T
from service.identity.callers import Credential

from . import absence
from .due import DueSignals
from .models import MatchState
from .play import check_pins, check_started, play
from .records import LogRecord
from .storage import StoredMatches, busy
from .views import seat_of, state_of
from .wire import parse_action

MAX_HANDOVER_ATTEMPTS = 16


def bot_kinds(engine: Engine[Any]) -> tuple[str, ...]:
    """The bot kinds that play ``engine``'s game: ``random`` always, the others where a
    trained bot model exists."""
    try:
        bot_model_for(engine)
    except ValueError:
        return ("random",)
    return BOT_KINDS


def bot_seats(
    engine: Engine[Any], players: int, raw: dict[str, str], *, all_bots: bool = False
) -> dict[int, str]:
    """``{"seat": kind}`` checked: seats in range, kinds known and available for the game, at
    least one human seat (unless ``all_bots``: every player may leave)."""
    bots: dict[int, str] = {}
    for key, kind in raw.items():
        if not (key.isascii() and key.isdigit() and len(key) <= 2
                and int(key) < players and str(int(key)) == key):
            raise ApiError.of(
                "bad_bots", T("Bot seat {seat} is not a seat number below {players}.",
                              seat=repr(key[:8]), players=players),
            )
        if kind not in BOT_KINDS:
            raise ApiError.of(
                "bad_bots", T("No bot kind {kind}; known: {known}.",
                              kind=repr(str(kind)[:32]), known=", ".join(BOT_KINDS)),
            )
        if kind != "random":
            try:
                bot_model_for(engine)
            except ValueError:
                raise ApiError.of(
                    "bad_bots", T("No {kind} bot plays {game}; use random.", kind=kind,
                                  game=engine.title),
                ) from None
        bots[int(key)] = kind
    if len(bots) >= players and not all_bots:
        raise ApiError.of("bad_bots", "At least one seat must be human.")
    return dict(sorted(bots.items()))


class BotSeats:
    def __init__(self, storage: StoredMatches, due: DueSignals) -> None:
        self.storage = storage
        self.due = due

    async def act_as_bot(
        self, match_id: str, seat: int, action: JSON, expected_version: int
    ) -> int:
        """Store ``action`` for bot ``seat`` as version ``expected_version + 1`` -- the
        worker's write path: the same checks (the seat is a bot and active, the move is
        legal) and the same compare-and-set as a human's move, always pinned. Returns the
        new version; a lost race is 409 ``version_conflict`` (the worker reloads and thinks
        again)."""
        storage = self.storage
        version, record = await storage.load(match_id)
        engine = get_engine(record.game)
        if seat not in record.bots:
            raise ApiError.of("unauthorized", T("Seat {seat} is not a bot seat.", seat=seat))
        parsed = parse_action(engine, action)
        check_pins(version, expected_version, None)
        new_state, _, new_record = play(engine, version, record, seat, parsed, storage.now())
        entry = LogRecord(seat=seat, action=dump_action(engine, parsed))
        if not await storage.write(match_id, version, new_record, entry, before=record):
            storage.metrics.cas_conflict()
            current, _ = await storage.load(match_id)
            raise ApiError.of(
                "version_conflict",
                T("The match moved on from version {version}.", version=version),
                currentVersion=current,
            )
        storage.metrics.action(engine.id, record.rules_version)
        await self.due.signal_if_due(match_id, engine, new_record, new_state)
        return version + 1

    async def hand_seat_to_bot(
        self, match_id: str, token: Credential, kind: str, seat: int | None = None
    ) -> MatchState:
        """The token's seat leaves and a ``kind`` bot takes it over (a worker plays it from
        now on); the token stops working. ``seat``, when given (REST path), must be the
        token's seat. Returns the match as a spectator sees it."""
        if token is None:
            raise ApiError.of("unauthorized", "Handing a seat over needs its token.")
        storage = self.storage
        for _ in range(MAX_HANDOVER_ATTEMPTS):
            version, record = await storage.load(match_id)
            own = seat_of(record, token, required=True)
            assert own is not None
            if seat is not None and seat != own:
                raise ApiError.of(
                    "unauthorized", T("The token is not seat {seat}'s.", seat=seat)
                )
            engine = get_engine(record.game)
            check_started(record, version)
            state = engine.loads(record.state)
            if record.finished or engine.result(state) is not None:
                raise ApiError.of("match_finished", "The match is over.", currentVersion=version)
            wanted = {str(s): k for s, k in {**record.bots, own: kind}.items()}
            bot_seats(engine, record.players, wanted, all_bots=True)  # the kind is checked
            new_record = absence.to_bot(record, own, kind, "hand_over", version + 1,
                                        await storage.store_clock.now_ms(), storage.now())
            entry = LogRecord(seat=None, action={"type": "seat_to_bot", "seat": own,
                                                 "kind": kind})
            if stored := await storage.write(match_id, version, new_record, entry,
                                             before=record):
                await self.due.signal_if_due(match_id, engine, stored, state)
                return state_of(match_id, version + 1, engine, state, None, stored,
                                storage.store_clock.peek_ms())
            storage.metrics.cas_conflict()
        raise busy()
