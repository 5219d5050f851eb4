"""A seat's own changes: handed to a bot (``handSeatToBot``), resigned (``resignSeat``),
taken back from its bot (``reclaimSeat``, issue 18), its token renewed
(``renewSeatToken``)."""

from __future__ import annotations

from typing import Any

from service.errors import ApiError
from service.matches.models import HandSeatRequest, MatchState, ReclaimSeatResponse, SeatToken

from . import codes
from .base import (
    APP_SECURITY,
    ETAG_HEADER,
    MATCH_ID,
    NO_STORE,
    PLAYER_SECURITY,
    UNCHARGED,
    WRITE_SECURITY,
    Context,
    Operation,
    Reply,
    mutation,
    seat_param,
)
from .matches import version_of


def seat_of(context: Context) -> int:
    """The ``{seat}`` path parameter (404 ``not_found`` when it is no number)."""
    try:
        return int(context.path["seat"])
    except ValueError:
        raise ApiError.of("not_found", "No such seat.") from None


async def hand_seat_to_bot(context: Context) -> Any:
    """The seat's player leaves; a bot (played by the worker) takes the seat over. The
    token is checked against the match before the body is parsed."""
    match_id, token = context.path["match_id"], context.caller
    if token is None:
        raise ApiError.of("unauthorized", "Handing a seat over needs its token.")
    seat = seat_of(context)
    service = context.state.match_service
    await service.seated(match_id, token)
    body = await context.read_body()
    return await service.hand_seat_to_bot(match_id, token, body.kind, seat)


async def reclaim_seat(context: Context) -> Any:
    return await context.state.match_service.reclaim_seat(
        context.path["match_id"], context.caller, seat_of(context))


async def renew_seat_token(context: Context) -> Any:
    return await context.state.player_service.renew_seat_token(
        context.caller, context.path["match_id"], context.path["seat"])


CONFLICT_LAST = (
    "its union lists `Conflict` last, the order it was published in"
)


OPERATIONS = (
    Operation(
        id="handSeatToBot", method="POST", path="/v1/matches/{matchId}/seats/{seat}/bot",
        tag="matches", summary="Hand your seat to a bot (you leave).",
        description="Authorized by that seat's token, which stops working: from now on the "
        "bot worker plays the seat. Answers the match as a spectator sees it. The hand-over "
        "is a version of its own (a log entry with `seat: null`).",
        codes=(*codes.BODY, *codes.READ, "not_found", "match_finished", "bad_bots",
               "forbidden", "match_not_started", "match_cancelled"),
        budget="act", security=WRITE_SECURITY, graphql=mutation(hand_written=UNCHARGED),
        params=(MATCH_ID, seat_param("Your seat.")), body=HandSeatRequest,
        reply=Reply(MatchState, "Handed over.", headers=ETAG_HEADER),
        call=hand_seat_to_bot, order=("credential",), etag=version_of, headers=NO_STORE,
    ),
    Operation(
        id="resignSeat", method="POST", path="/v1/matches/{matchId}/seats/{seat}/resign",
        tag="matches", summary="Resign your seat (you are out).",
        description="Authorized by that seat's token or its player's credential. The seat is "
        "out of the match (ranked last) and a random bot plays it on, so that the rules stay "
        "whole; with fewer than two seats still in, the match ends (`termination: resign`). "
        "The seat's token stops working (401 `seat_handed_to_bot`); it cannot be taken back "
        "(409 `seat_forfeited`, also for a second resignation). Another seat's credential: "
        "403 `not_your_seat`. A version of its own (a `resign` log entry with `seat: null`). "
        "Answers the match as a spectator sees it. No body (or `{}`).",
        codes=(*codes.READ, "not_found", "match_finished", "forbidden", "match_not_started",
               "match_cancelled", "seat_forfeited", "not_your_seat"),
        budget="act", security=WRITE_SECURITY, graphql=mutation(hand_written=UNCHARGED),
        params=(MATCH_ID, seat_param("Your seat.")),
        reply=Reply(MatchState, "Resigned.", headers=ETAG_HEADER),
        call=lambda c: c.state.match_service.resign(c.path["match_id"], c.caller, seat_of(c)),
        etag=version_of, headers=NO_STORE,
    ),
    Operation(
        id="reclaimSeat", method="POST", path="/v1/matches/{matchId}/seats/{seat}/reclaim",
        tag="matches", summary="Take back a seat a bot took over.",
        description="For a seat handed to a bot, or taken by one at a timeout under the `bot` "
        "policy (not a forfeited seat: 409 `seat_forfeited`; a seat no bot took over: 409 "
        "`seat_not_away`). Who held it takes it back: its player's credential (the seat is "
        "bound to it again; no token in the answer), its old seat token or the match's app "
        "key (a new seat token, shown only once). Anyone else: 403 `not_your_seat`. The bot "
        "stops at once; a version of its own (a `seat_reclaimed` log entry with `seat: "
        "null`). Answers the match as the seat sees it. No body.",
        codes=(*codes.READ, "not_found", "match_finished", "match_not_started",
               "match_cancelled", "seat_forfeited", "seat_not_away", "not_your_seat"),
        budget="act", security=[*WRITE_SECURITY, *APP_SECURITY],
        graphql=mutation(hand_written=UNCHARGED),
        params=(MATCH_ID, seat_param("The seat.")),
        reply=Reply(ReclaimSeatResponse, "Taken back.", headers=ETAG_HEADER),
        call=reclaim_seat, etag=lambda answer: str(answer.state.version), headers=NO_STORE,
    ),
    Operation(
        id="renewSeatToken", method="POST", path="/v1/matches/{matchId}/seats/{seat}/token",
        tag="matches",
        summary="A new token for a seat bound to a player (recovery, rotation).",
        description="The seat's player recovers a token for its own seat (a lost one stops "
        "working); the match's app key rotates any player seat's. Each is a version of its "
        "own (a `seat_token_renewed` log entry). No body.",
        codes=(*codes.READ, "forbidden", "match_not_started", "match_cancelled"),
        budget="act", security=[*PLAYER_SECURITY, *APP_SECURITY],
        graphql=mutation(hand_written=CONFLICT_LAST),
        params=(MATCH_ID, seat_param("The seat.")),
        reply=Reply(SeatToken, "The new token (shown once)."),
        call=renew_seat_token, headers=NO_STORE,
    ),
)
