"""The catalogue of games and the creation of a match."""

from __future__ import annotations

import secrets
from typing import Any

from service import games
from service.catalogue import has_catalogue
from service.errors import ApiError
from service.games.base import Engine
from service.i18n import T
from service.identity import seats

from . import logdict
from .bot_seats import bot_seats
from .due import DueSignals
from .models import CreateMatchRequest, CreateMatchResponse, GameInfo, SeatToken
from .records import MatchRecord
from .storage import MatchStorage
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


class Creation:
    def __init__(self, storage: MatchStorage, due: DueSignals) -> None:
        self.storage = storage
        self.due = due

    async def create_match(self, req: CreateMatchRequest) -> CreateMatchResponse:
        engine = engine_for_new(req.game)
        if not engine.min_players <= req.players <= engine.max_players:
            raise ApiError.of(
                "bad_player_count",
                T("{game} takes {min} to {max} players, not {players}.", game=engine.title,
                  min=engine.min_players, max=engine.max_players, players=req.players),
            )
        options = parse_options(engine, req.options)
        bots = bot_seats(engine, req.players, req.bots or {})
        seed = req.seed if req.seed is not None else secrets.randbelow(2**53)
        state = engine.setup(req.players, options, seed)
        tokens: dict[int, str] = {
            seat: seats.new_token() for seat in range(req.players) if seat not in bots
        }
        now = self.storage.now()
        record = MatchRecord(
            game=engine.id,
            players=req.players,
            options=options.model_dump(mode="json") if options is not None else None,
            seed=seed,
            tokens=tuple(
                seats.digest(tokens[s]) if s in tokens else None for s in range(req.players)
            ),
            state=engine.dumps(state),
            finished=engine.result(state) is not None,
            bots=bots,
            created=now,
            updated=now,
            log_dict=logdict.current_number(engine.id) or 0,
            rules_version=engine.rules_version(state),
        )
        match_id = await self.storage.create(record)
        self.storage.metrics.match_created(engine.id, record.rules_version)
        await self.due.signal_if_due(match_id, engine, record, state)
        return CreateMatchResponse(
            match_id=match_id,
            game=engine.id,
            version=0,
            seats=[SeatToken(seat=s, token=t) for s, t in sorted(tokens.items())],
        )
