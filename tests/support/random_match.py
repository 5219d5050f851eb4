"""A complete match of random legal moves played through ``MatchService`` (no HTTP)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from service import games
from service.games.base import dump_action
from service.matches import MatchService
from service.matches.models import CreateMatchRequest


@dataclass
class PlayedMatch:
    match_id: str
    tokens: dict[int, str]
    answered: dict[int, tuple[int, list[dict[str, Any]]]] = field(default_factory=dict)
    """version -> (seat that moved, the events act answered it)."""


async def play_random_match(service: MatchService, game: str, players: int, seed: int, *,
                            idempotency_keys: bool = False) -> PlayedMatch:
    """Create a match and play it to the end: a seeded random active seat plays a random
    legal move, with an Idempotency-Key on every move when asked (as a careful client)."""
    created = await service.create_match(
        CreateMatchRequest(game=game, players=players, seed=seed)
    )
    played = PlayedMatch(created.match_id, {s.seat: s.token for s in created.seats})
    engine = games.get(game)
    chooser = random.Random(seed)
    while (state := await service.get_state(played.match_id, None)).status != "finished":
        seat = chooser.choice(state.active_seats)
        moves = (await service.legal_moves(played.match_id, played.tokens[seat])).moves
        move = dump_action(engine, chooser.choice(moves))
        key = f"move-{len(played.answered)}" if idempotency_keys else None
        done = await service.act(played.match_id, played.tokens[seat], move, None, key)
        played.answered[done.version] = (seat, [e.model_dump() for e in done.events])
    return played
