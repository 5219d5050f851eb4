"""Every service error code maps onto the union member GraphQL promises for it."""

from __future__ import annotations

import pytest

from service.api.graphql.results import ACT_FAILURES, CREATE_FAILURES, READ_FAILURES
from service.api.graphql.types.failures import (
    BadRequest,
    Conflict,
    Forbidden,
    IllegalMove,
    MatchFinished,
    NotFound,
    NotYourTurn,
    Unauthorized,
    Unavailable,
    VersionConflict,
    failure_for,
)
from service.errors import CODES, ApiError

EXPECTED = {
    "malformed": BadRequest,
    "unauthorized": Unauthorized,
    "ticket_invalid": Unauthorized,
    "forbidden": Forbidden,
    "not_found": NotFound,
    "match_not_found": NotFound,
    "rules_version_retired": NotFound,
    "unknown_rules_version": NotFound,
    "not_your_turn": NotYourTurn,
    "match_finished": MatchFinished,
    "version_conflict": VersionConflict,
    "precondition_failed": VersionConflict,
    "illegal_move": IllegalMove,
    "busy": Unavailable,
    "store_unavailable": Unavailable,
    "too_many_streams": Unavailable,  # 429: come back after retryAfter
    "rate_limited": Unavailable,  # 429 with retryAfter (issue 20, item 1)
    "quota_exceeded": Unavailable,  # 429: a match must finish first
    "replica_full": Unavailable,
    # Issue 16: credentials and players.
    "credential_revoked": Unauthorized,
    "seat_handed_to_bot": Unauthorized,  # issue 18: absent players
    "seat_forfeited": Conflict,
    "seat_not_away": Conflict,
    "not_your_seat": Forbidden,
    "malformed_token": Unauthorized,
    "token_expired": Unauthorized,
    "token_not_yet_valid": Unauthorized,
    "token_bad_signature": Unauthorized,
    "token_unknown_key": Unauthorized,
    "token_bad_audience": Unauthorized,
    "token_bad_issuer": Unauthorized,
    "token_too_long_lived": Unauthorized,
    "guests_disabled": Forbidden,
    "player_not_found": NotFound,
    # Issue 17: quick match.
    "ticket_not_found": NotFound,
    # Issue 17: the lobby's tables (their 409s are Conflict; an invitation's 404 and 410s,
    # as a retired rules version's 410, NotFound).
    "seat_taken": Conflict,
    "already_seated": Conflict,
    "match_started": Conflict,
    "match_cancelled": Conflict,
    "match_not_started": Conflict,
    "match_not_finished": Conflict,
    "invite_not_found": NotFound,
    "invite_expired": NotFound,
    "invite_used_up": NotFound,
    "invite_revoked": NotFound,
    # Issue 18: webhooks (their 422s are BadRequest).
    "webhook_not_found": NotFound,
}


@pytest.mark.parametrize("code", sorted(CODES))
def test_every_code_has_a_member_in_every_union(code: str) -> None:
    error = ApiError.of(code, "why", currentVersion=3, retryAfter=1)
    for allowed in (READ_FAILURES, CREATE_FAILURES, ACT_FAILURES):
        member = failure_for(error, allowed)
        assert type(member) in allowed
        assert (member.code, member.message) == (code, "why")  # type: ignore[attr-defined]
    member = failure_for(error, ACT_FAILURES)
    assert type(member) is EXPECTED.get(code, Unavailable if error.status >= 500 else BadRequest)
    if isinstance(member, (NotYourTurn, MatchFinished, VersionConflict)):
        assert member.current_version == 3
    if isinstance(member, Unavailable):
        assert member.retry_after == 1


def test_an_engine_refusal_is_an_illegal_move_with_the_engines_code() -> None:
    member = failure_for(ApiError(422, "not_in_hand", "Illegal move", "Not in hand."),
                         ACT_FAILURES)
    assert isinstance(member, IllegalMove) and member.code == "not_in_hand"
