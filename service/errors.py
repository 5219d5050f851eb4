"""The service-level problems, shared by every package: as RFC 9457 problems with a stable ``code``.

Every refusal the service decides is an ``ApiError``; REST renders it as
``application/problem+json`` and GraphQL as a union result. Codes are part of the API: add
new ones, never rename. Illegal moves carry the engine's own code.

Titles and details are messages (``service.i18n``): English message ids with named
placeholders (``T("The match is at version {version}.", version=7)``), rendered in the
caller's language by the transport (``problem(lang)``); ``detail`` stays the English text.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from service.i18n import DEFAULT_LANGUAGE, N_, Lang, Text, render


class Problem(BaseModel):
    """RFC 9457 problem details, with a stable machine-readable `code`."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="allow"
    )
    type: str = "about:blank"
    title: str
    status: int
    detail: str
    code: str
    current_version: int | None = None
    request_id: str | None = Field(
        default=None,
        description="The request's id, as in its `X-Request-Id` response header: quote it "
        "when reporting a problem (every server log line about the request names it).",
    )


# code -> (status, title). docs/codes.md renders it with the operations that answer each
# code (service/api/problem_codes.py); the games' refusal codes are listed beside it. Titles
# are messages, translated like the details.
CODES: dict[str, tuple[int, str]] = {
    "malformed": (400, N_("Malformed request")),
    "bad_name": (400, N_("Invalid name")),
    "seed_not_allowed": (400, N_("Seed not allowed")),
    "unauthorized": (401, N_("Missing or invalid token")),
    "ticket_invalid": (401, N_("Invalid stream ticket")),
    "credential_revoked": (401, N_("Credential revoked")),
    "seat_handed_to_bot": (401, N_("Seat handed to a bot")),
    "malformed_token": (401, N_("Malformed token")),
    "token_expired": (401, N_("Token expired")),
    "token_not_yet_valid": (401, N_("Token not yet valid")),
    "token_bad_signature": (401, N_("Bad token signature")),
    "token_unknown_key": (401, N_("Unknown signing key")),
    "token_bad_audience": (401, N_("Wrong token audience")),
    "token_bad_issuer": (401, N_("Unknown token issuer")),
    "token_too_long_lived": (401, N_("Token lives too long")),
    "forbidden": (403, N_("Not allowed")),
    "guests_disabled": (403, N_("Guest players disabled")),
    "not_your_seat": (403, N_("Not your seat")),
    "not_found": (404, N_("Not found")),
    "match_not_found": (404, N_("Match not found")),
    "player_not_found": (404, N_("Player not found")),
    "ticket_not_found": (404, N_("Queue ticket not found")),
    "invite_not_found": (404, N_("Invitation not found")),
    "unknown_rules_version": (404, N_("Unknown rules version")),
    "webhook_not_found": (404, N_("Webhook not found")),
    "method_not_allowed": (405, N_("Method not allowed")),
    "not_your_turn": (409, N_("Not your turn")),
    "match_finished": (409, N_("Match finished")),
    "version_conflict": (409, N_("Version conflict")),
    "match_not_started": (409, N_("Match not started")),
    "match_not_finished": (409, N_("Match not finished")),
    "match_started": (409, N_("Match started")),
    "match_cancelled": (409, N_("Match cancelled")),
    "seat_taken": (409, N_("Seat taken")),
    "already_seated": (409, N_("Already seated")),
    "seat_forfeited": (409, N_("Seat forfeited")),
    "seat_not_away": (409, N_("Seat not away")),
    "idempotency_key_reused": (409, N_("Idempotency key reused")),
    "idempotency_key_expired": (409, N_("Idempotency key expired")),
    "rules_version_retired": (410, N_("Rules version retired")),
    "invite_expired": (410, N_("Invitation expired")),
    "invite_used_up": (410, N_("Invitation used up")),
    "invite_revoked": (410, N_("Invitation revoked")),
    "precondition_failed": (412, N_("Precondition failed")),
    "body_too_large": (413, N_("Request body too large")),
    "unsupported_media_type": (415, N_("Unsupported media type")),
    "unknown_game": (422, N_("Unknown game")),
    "unknown_app": (422, N_("Unknown app")),
    "bad_options": (422, N_("Invalid options")),
    "bad_player_count": (422, N_("Invalid player count")),
    "bad_bots": (422, N_("Invalid bot seats")),
    "bad_time_control": (422, N_("Invalid time control")),
    "bad_timeout_policy": (422, N_("Invalid timeout policy")),
    "invalid_action": (422, N_("Not a move of this game")),
    "bad_highlight": (422, N_("Invalid highlight")),
    "no_picture": (422, N_("No picture")),
    "bad_webhook": (422, N_("Invalid webhook")),
    "webhook_url_not_https": (422, N_("Webhook URL not https")),
    "webhook_url_forbidden": (422, N_("Webhook URL forbidden")),
    "too_many_streams": (429, N_("Too many event streams")),
    "rate_limited": (429, N_("Too many requests")),
    "quota_exceeded": (429, N_("Too many unfinished matches")),
    "too_many_waiting_tables": (429, N_("Too many waiting tables")),
    "busy": (503, N_("Too much contention")),
    "store_unavailable": (503, N_("Store unavailable")),
    "store_full": (503, N_("Store full")),
    "rules_version_unavailable": (503, N_("Rules version unavailable")),
    "replica_full": (503, N_("Server full")),
    "internal": (500, N_("Internal error")),
}


class ApiError(Exception):
    """An expected failure: HTTP ``status``, stable ``code``, human ``title``/``detail``.

    ``title`` and ``detail`` are messages: a ``Text`` (``T(...)`` with its values), or a
    string taken as a message id without values (translated when the catalogues have it, as
    every literal of ``ApiError.of`` is, else shown as it is). ``self.detail`` is the English
    text. ``extra`` adds problem members (``currentVersion``, ``errors``, ``retryAfter`` ...).
    The detail is shown to the caller: never put another seat's hidden information in it.
    """

    def __init__(
        self, status: int, code: str, title: str | Text, detail: str | Text, **extra: Any
    ) -> None:
        english = render(detail)
        super().__init__(f"{status} {code}: {english}")
        self.status = status
        self.code = code
        self.title = render(title)
        self.detail = english
        self.messages = (title, detail)
        self.extra = extra

    @classmethod
    def of(cls, code: str, detail: str | Text, **extra: Any) -> ApiError:
        """An error whose status and title come from the ``CODES`` table."""
        status, title = CODES[code]
        return cls(status, code, title, detail, **extra)

    def title_in(self, lang: Lang) -> str:
        return render(self.messages[0], lang)

    def detail_in(self, lang: Lang) -> str:
        """The detail in ``lang`` (``detail`` is the English one)."""
        return render(self.messages[1], lang)

    def problem(self, lang: Lang = DEFAULT_LANGUAGE) -> Problem:
        # A type URI per code: RFC 9457 reserves "about:blank" for problems that say no more
        # than the HTTP status phrase, and ours do.
        return Problem(
            type=f"urn:skyline:problem:{self.code}", title=self.title_in(lang),
            status=self.status, detail=self.detail_in(lang), code=self.code, **self.extra,
        )

    def to_json(self, lang: Lang = DEFAULT_LANGUAGE) -> dict[str, Any]:
        """The problem document, its title and detail in ``lang``."""
        body: dict[str, Any] = self.problem(lang).model_dump(
            mode="json", by_alias=True, exclude_none=True
        )
        return body
