"""Expected failures as union members, never as GraphQL ``errors``.

Every member implements ``Problem`` (``code``, ``message``): ``code`` is the service layer's
stable code (``service/errors.py``) -- or the game's refusal code for an ``IllegalMove``
(``service/games/<game>/codes.py``; every code is tabled in docs/codes.md) --
and ``message`` is the same human text REST puts in ``detail``. Each operation's result union
lists the members that operation can produce; ``failure_for`` maps an ``ApiError`` onto one of
them (``BadRequest`` or ``Unavailable`` when the specific member is not in that union).
"""

from __future__ import annotations

from collections.abc import Sequence

import strawberry

from service.errors import CODES, ApiError
from service.i18n import DEFAULT_LANGUAGE, Lang


@strawberry.interface(
    description="An expected failure; `code` is stable and machine-readable (docs/codes.md "
    "lists every code; new ones may be added: tolerate them)."
)
class Problem:
    code: str
    message: str


@strawberry.type(
    description="No match with that id (never created, or expired; a private match to an "
    "outsider); for the game query: no such game, or no such rules version of it; for an "
    "invitation: none, or it expired, was used up or revoked (`code` says which)."
)
class NotFound(Problem):
    pass


@strawberry.type(description="Missing, malformed, wrong or refused credential: a seat token "
                 "for another match, a revoked key, an expired or badly signed JWT (`code` "
                 "says which).")
class Unauthorized(Problem):
    pass


@strawberry.type(description="The token is valid but may not do this.")
class Forbidden(Problem):
    pass


@strawberry.type(description="The caller's seat may not act at the current version.")
class NotYourTurn(Problem):
    current_version: int


@strawberry.type(description="The match is over; nothing more can be played.")
class MatchFinished(Problem):
    current_version: int


@strawberry.type(
    description="`expectedVersion` was given and the match has moved on: reload and retry."
)
class VersionConflict(Problem):
    current_version: int


@strawberry.type(
    description="The rules refuse this move; `code` is the game's refusal code (stable; "
    "each game's codes and the rules they enforce: docs/codes.md)."
)
class IllegalMove(Problem):
    pass


@strawberry.type(
    description="The match is not in a state that allows this, or the seat is not free: "
    "`code` says which (seat_taken, already_seated, match_started, match_cancelled, "
    "match_not_started, match_not_finished). Reload the match before trying again."
)
class Conflict(Problem):
    pass


@strawberry.type(
    description="The request is invalid (`code`: malformed, unknown_game, bad_options, "
    "bad_player_count, bad_bots, idempotency_key_reused, ...)."
)
class BadRequest(Problem):
    pass


@strawberry.type(description="Temporarily unable to answer (store down, contention): retry.")
class Unavailable(Problem):
    retry_after: int | None = strawberry.field(description="Seconds to wait before retrying.")


FAILURES: tuple[type, ...] = (
    NotFound,
    Unauthorized,
    Forbidden,
    NotYourTurn,
    MatchFinished,
    VersionConflict,
    IllegalMove,
    Conflict,
    BadRequest,
    Unavailable,
)

_BY_CODE: dict[str, type] = {
    "not_found": NotFound,
    "match_not_found": NotFound,
    "rules_version_retired": NotFound,
    "unknown_rules_version": NotFound,
    "unauthorized": Unauthorized,
    "ticket_invalid": Unauthorized,  # REST's ?ticket= only; a 401 all the same
    "forbidden": Forbidden,
    "guests_disabled": Forbidden,
    "player_not_found": NotFound,
    "ticket_not_found": NotFound,
    "webhook_not_found": NotFound,  # issue 18
    # Lobby tables (issue 17): a waiting match's state, and its seats.
    "invite_not_found": NotFound,
    "invite_expired": NotFound,  # 410, as rules_version_retired
    "invite_used_up": NotFound,
    "invite_revoked": NotFound,
    "seat_taken": Conflict,
    "already_seated": Conflict,
    "match_started": Conflict,
    "match_cancelled": Conflict,
    "match_not_started": Conflict,
    "match_not_finished": Conflict,
    # Absent players (issue 18): a seat resigned, taken back, or handed to a bot.
    "seat_forfeited": Conflict,
    "seat_not_away": Conflict,
    "not_your_seat": Forbidden,
    "seat_handed_to_bot": Unauthorized,
    # Bearer credentials (issue 16): every refusal of one is Unauthorized, its code says why.
    "credential_revoked": Unauthorized,
    "malformed_token": Unauthorized,
    "token_expired": Unauthorized,
    "token_not_yet_valid": Unauthorized,
    "token_bad_signature": Unauthorized,
    "token_unknown_key": Unauthorized,
    "token_bad_audience": Unauthorized,
    "token_bad_issuer": Unauthorized,
    "token_too_long_lived": Unauthorized,
    "not_your_turn": NotYourTurn,
    "match_finished": MatchFinished,
    "version_conflict": VersionConflict,
    "precondition_failed": VersionConflict,
    "illegal_move": IllegalMove,
    "too_many_streams": Unavailable,
    "rate_limited": Unavailable,  # with retryAfter
    "quota_exceeded": Unavailable,
}


def _current_version(error: ApiError) -> int:
    value = error.extra.get("currentVersion", error.extra.get("current_version"))
    return value if isinstance(value, int) else -1


def _kind(code: str, status: int) -> type:
    kind = _BY_CODE.get(code)
    if kind is not None:
        return kind
    if status >= 500:
        return Unavailable
    if status == 422 and code not in CODES:
        return IllegalMove  # an engine's own refusal code
    return BadRequest


def failure_kind(code: str) -> type:
    """The member that renders problem ``code`` (``service.errors.CODES``)."""
    return _kind(code, CODES[code][0])


def failure_for(
    error: ApiError, allowed: Sequence[type], lang: Lang = DEFAULT_LANGUAGE
) -> object:
    """The union member of ``allowed`` that renders ``error``, its message in ``lang``."""
    message = error.detail_in(lang)
    kind = _kind(error.code, error.status)
    if kind not in allowed:
        kind = Unavailable if error.status >= 500 else BadRequest
    if kind in (NotYourTurn, MatchFinished, VersionConflict):
        return kind(code=error.code, message=message, current_version=_current_version(error))
    if kind is Unavailable:
        retry = error.extra.get("retryAfter")
        return Unavailable(
            code=error.code, message=message,
            retry_after=retry if isinstance(retry, int) else None,
        )
    return kind(code=error.code, message=message)


def bad_request(message: str, code: str = "malformed") -> BadRequest:
    return BadRequest(code=code, message=message)
