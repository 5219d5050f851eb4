"""What a caller sees of a match: its seat (from its token), its view and its events."""

from __future__ import annotations

from typing import Any

from service.errors import ApiError
from service.games.base import Engine, Event
from service.identity import seats

from .models import EventOut, MatchState
from .records import MatchRecord


def seat_of(record: MatchRecord, token: str | None, *, required: bool) -> int | None:
    """The seat ``token`` holds in the match (None: a spectator, unless ``required``)."""
    if token is None:
        if required:
            raise ApiError.of("unauthorized", "This needs a seat token.")
        return None
    seat = seats.seat_of(token, record.tokens)
    if seat is None:
        raise ApiError.of("unauthorized", "The token is not valid for this match.")
    return seat


def events_for(seat: int | None, events: tuple[Event, ...] | list[Event]) -> list[EventOut]:
    """Events as ``seat`` (None: a spectator) may see them."""
    out = []
    for event in events:
        seen = event.for_seat(seat)
        seen.pop("kind", None)
        out.append(EventOut(kind=event.kind, data=seen))
    return out


def state_of(
    match_id: str, version: int, engine: Engine[Any], state: Any, seat: int | None,
    record: MatchRecord | None = None,
) -> MatchState:
    """The match at ``version`` as ``seat`` (None: a spectator) sees it."""
    result = engine.result(state)
    return MatchState(
        match_id=match_id,
        game=engine.id,
        version=version,
        rules_version=engine.rules_version(state),
        status="finished" if result is not None else "active",
        seat=seat,
        active_seats=sorted(engine.active_seats(state)),
        bots={str(s): k for s, k in record.bots.items()} if record is not None else {},
        view=engine.view(state, seat),
        result=result,
    )
