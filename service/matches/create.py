"""The catalogue of games and the creation of a match."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any

from service import games
from service.catalogue import has_catalogue
from service.clocks import (
    MIN_MOVE_SECONDS,
    BadClockInput,
    parse_on_timeout,
    parse_time_control,
)
from service.clocks.controls import FORFEIT
from service.errors import ApiError
from service.games.base import Engine
from service.i18n import T
from service.identity import seats

from . import invites, logdict, seeds
from .bot_seats import bot_kinds, bot_seats
from .due import DueSignals
from .models import (
    BotSeat,
    CreateMatchRequest,
    CreateMatchResponse,
    GameInfo,
    OpenSeat,
    SeatToken,
)
from .records import MatchRecord, SeatPlayer
from .storage import StoredMatches
from .wire import parse_options


def catalogue() -> list[GameInfo]:
    return [
        GameInfo(
            id=engine.id,
            title=engine.title,
            min_players=engine.min_players,
            max_players=engine.max_players,
            options_schema=engine.Options.model_json_schema(),
            rules_versions=list(engine.rules_versions),
            current_rules_version=engine.rules_versions[-1],
            catalogue_url=f"/v1/games/{engine.id}" if has_catalogue(engine.id) else None,
        )
        for engine in games.all()
    ]


def engine_for_new(game_id: str) -> Engine[Any]:
    try:
        return games.get(game_id)
    except games.UnknownGame:
        known = ", ".join(games.ids()) or "none"
        raise ApiError.of(
            "unknown_game", T("No game {game}; known: {known}.", game=repr(game_id[:64]),
                              known=known),
        ) from None


def clock_settings(
    req: CreateMatchRequest, engine: Engine[Any], *, min_move_seconds: int = MIN_MOVE_SECONDS,
) -> dict[str, Any]:
    """The record fields of the request's time control and timeout policy (none for an
    untimed match), checked: 422 ``bad_time_control`` / ``bad_timeout_policy``."""
    if req.time_control is None:
        if req.on_timeout is not None:
            raise ApiError.of("bad_timeout_policy", "onTimeout needs a timeControl: an "
                              "untimed match has no deadline to miss.")
        return {}
    try:
        control = parse_time_control(req.time_control.model_dump(by_alias=True),
                                     min_move_seconds=min_move_seconds)
        policy = FORFEIT if req.on_timeout is None else parse_on_timeout(
            req.on_timeout.model_dump(by_alias=True), bot_kinds(engine))
    except BadClockInput as bad:
        raise ApiError.of(bad.code, T(bad.message, **bad.values)) from None
    return {"time_control": control, "on_timeout": policy}


class Creation:
    def __init__(
        self, storage: StoredMatches, due: DueSignals, *, allow_chosen_seeds: bool = False,
        min_move_seconds: int = MIN_MOVE_SECONDS,
    ) -> None:
        self.storage = storage
        self.due = due
        self.allow_chosen_seeds = allow_chosen_seeds
        """Whether a chosen seed is taken whoever sits in the match (``seeds.py``)."""
        self.min_move_seconds = min_move_seconds
        """The shortest correspondence deadline taken (``--min-seconds-per-move``)."""

    async def create_match(
        self, req: CreateMatchRequest, *, app: str | None = None,
        bound: Mapping[int, SeatPlayer] | None = None,
        before_write: Callable[[str, MatchRecord], Awaitable[None]] | None = None,
        creator: str | None = None, match_id: str | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> CreateMatchResponse:
        """A new match. ``req.seats`` needs its player and user seats resolved by the caller
        (``bound``: seat -> player, ``service.players``) and ``app``; those seats get a seat
        token nobody is shown (their player's credential acts for them; a player may recover
        one). ``before_write(match_id, record)`` runs once the id is chosen, before the match
        is stored (the players' "my matches" index is written first, so a crash between the
        two leaves an index entry to a match that does not exist -- skipped when listed --
        never a match missing from its players' lists). ``creator``: the creating player's
        id (None: anonymous or an app key), which may choose the seed of a match it plays
        alone with bots (``seeds.check_chosen_seed``). ``match_id``: the id to create it under
        (``StoredMatches.create``: the store's ``MatchExists`` when it is taken). ``extra``:
        record fields to set (a rematch's reserved seats and link)."""
        engine = engine_for_new(req.game)
        players, raw_bots = seats_of(req, bound or {})
        if not engine.min_players <= players <= engine.max_players:
            raise ApiError.of(
                "bad_player_count",
                T("{game} takes {min} to {max} players, not {players}.", game=engine.title,
                  min=engine.min_players, max=engine.max_players, players=players),
            )
        options = parse_options(engine, req.options)
        open_seats = tuple(s for s, wanted in enumerate(req.seats or ())
                           if isinstance(wanted, OpenSeat))
        bots = bot_seats(engine, players, raw_bots, all_bots=bool(bound) or bool(open_seats))
        clocks = clock_settings(req, engine, min_move_seconds=self.min_move_seconds)
        extra = {**clocks, **(extra or {})}
        if open_seats:
            return await self._waiting(
                req, engine, players, options, bots, open_seats, app=app, bound=bound or {},
                before_write=before_write, creator=creator, match_id=match_id, extra=extra,
            )
        salt: bytes | None = None
        if req.seed is not None:
            seeds.check_chosen_seed(bound or {}, creator, allowed=self.allow_chosen_seeds)
            seed = req.seed
        else:
            seed, salt = seeds.draw()
        state = engine.setup(players, options, seed)
        tokens: dict[int, str] = {
            seat: seats.new_token() for seat in range(players) if seat not in bots
        }
        shown = {seat: token for seat, token in tokens.items() if seat not in (bound or {})}
        now = self.storage.now()
        record = MatchRecord(
            game=engine.id,
            players=players,
            options=options.model_dump(mode="json") if options is not None else None,
            seed=seed,
            tokens=tuple(
                seats.digest(tokens[s]) if s in tokens else None for s in range(players)
            ),
            state=engine.dumps(state),
            finished=engine.result(state) is not None,
            bots=bots,
            created=now,
            updated=now,
            log_dict=logdict.current_number(engine.id) or 0,
            rules_version=engine.rules_version(state),
            app=app,
            seat_players=(
                tuple((bound or {}).get(s) for s in range(players)) if app is not None else ()
            ),
            seed_salt=salt,
            seed_chosen=salt is None,
            visibility=req.visibility,
            name=req.name,
            labels=dict(req.labels or {}),
            creator=creator,
            view_key=invites.new_view_key(),  # every match: its spectator tokens name it alone
        )
        record = replace(record, **(extra or {}))
        match_id = await self.storage.create(record, before_write=before_write,
                                             match_id=match_id)
        self.storage.metrics.match_created(engine.id, record.rules_version)
        await self.due.signal_if_due(match_id, engine, record, state)
        return CreateMatchResponse(
            match_id=match_id,
            game=engine.id,
            version=0,
            seats=[SeatToken(seat=s, token=t) for s, t in sorted(shown.items())],
        )


    async def _waiting(
        self, req: CreateMatchRequest, engine: Engine[Any], players: int, options: Any,
        bots: dict[int, str], open_seats: tuple[int, ...], *, app: str | None,
        bound: Mapping[int, SeatPlayer],
        before_write: Callable[[str, MatchRecord], Awaitable[None]] | None,
        creator: str | None, match_id: str | None, extra: Mapping[str, Any] | None,
    ) -> CreateMatchResponse:
        """A match with open seats: stored without a game (``phase: waiting``) until every
        seat is taken or its creator starts it (``waiting.py``); the seed is drawn then."""
        if app is None:
            raise ApiError.of("unauthorized", "Open seats need an app key or a player "
                              "credential.")
        if req.seed is not None:
            seeds.check_chosen_seed(bound, creator, allowed=self.allow_chosen_seeds,
                                    through_lobby=True)
        now = self.storage.now()
        record = MatchRecord(
            game=engine.id,
            players=players,
            options=options.model_dump(mode="json") if options is not None else None,
            seed=0,
            tokens=(None,) * players,
            state=b"",
            bots=bots,
            created=now,
            updated=now,
            log_dict=logdict.current_number(engine.id) or 0,
            rules_version=engine.rules_versions[-1],
            app=app,
            seat_players=tuple(bound.get(s) for s in range(players)),
            phase="waiting",
            visibility=req.visibility,
            name=req.name,
            labels=dict(req.labels or {}),
            creator=creator,
            open_seats=open_seats,
            chosen_seed=req.seed,
            view_key=invites.new_view_key(),  # every match: its spectator tokens name it alone
        )
        record = replace(record, **(extra or {}))
        match_id = await self.storage.create(record, before_write=before_write,
                                             match_id=match_id)
        self.storage.metrics.match_created(engine.id, record.rules_version)
        return CreateMatchResponse(match_id=match_id, game=engine.id, version=0, seats=[])


def seats_of(
    req: CreateMatchRequest, bound: Mapping[int, SeatPlayer]
) -> tuple[int, dict[str, str]]:
    """The number of seats and the bot seats a request asks for: ``players`` + ``bots``, or
    ``seats`` (each exactly one of player, user and bot; every player and user seat in
    ``bound``)."""
    if req.seats is None:
        if req.players is None:
            raise ApiError.of("malformed", "Give players (the number of seats) or seats.")
        if bound:
            raise ApiError.of("malformed", "Players are seated with seats.")
        return req.players, dict(req.bots or {})
    if req.bots is not None:
        raise ApiError.of("malformed", "Give bot seats in seats, not in bots, when seats is "
                          "given.")
    if req.players is not None and req.players != len(req.seats):
        raise ApiError.of(
            "malformed", T("players ({players}) must equal the number of seats ({seats}).",
                           players=req.players, seats=len(req.seats)),
        )
    raw_bots: dict[str, str] = {}
    for seat, wanted in enumerate(req.seats):
        if isinstance(wanted, BotSeat):
            raw_bots[str(seat)] = wanted.bot
        elif isinstance(wanted, OpenSeat):
            continue
        elif seat not in bound:
            raise ApiError.of("malformed", T("seats.{seat}: no such player.", seat=seat))
    return len(req.seats), raw_bots
