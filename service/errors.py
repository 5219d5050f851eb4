"""The service-level problems, shared by every package: as RFC 9457 problems with a stable ``code``.

Every refusal the service decides is an ``ApiError``; REST renders it as
``application/problem+json`` and GraphQL as a union result. Codes are part of the API: add
new ones, never rename. Illegal moves carry the engine's own code.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class Problem(BaseModel):
    """RFC 9457 problem details, with a stable machine-readable ``code``."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="allow"
    )
    type: str = "about:blank"
    title: str
    status: int
    detail: str
    code: str
    current_version: int | None = None


# code -> (status, title); docs/api.md lists the same table.
CODES: dict[str, tuple[int, str]] = {
    "malformed": (400, "Malformed request"),
    "unauthorized": (401, "Missing or invalid token"),
    "not_found": (404, "Not found"),
    "match_not_found": (404, "Match not found"),
    "method_not_allowed": (405, "Method not allowed"),
    "not_your_turn": (409, "Not your turn"),
    "match_finished": (409, "Match finished"),
    "version_conflict": (409, "Version conflict"),
    "idempotency_key_reused": (409, "Idempotency key reused"),
    "rules_version_retired": (410, "Rules version retired"),
    "precondition_failed": (412, "Precondition failed"),
    "body_too_large": (413, "Request body too large"),
    "unsupported_media_type": (415, "Unsupported media type"),
    "unknown_game": (422, "Unknown game"),
    "bad_options": (422, "Invalid options"),
    "bad_player_count": (422, "Invalid player count"),
    "bad_bots": (422, "Invalid bot seats"),
    "invalid_action": (422, "Not a move of this game"),
    "busy": (503, "Too much contention"),
    "store_unavailable": (503, "Store unavailable"),
    "rules_version_unavailable": (503, "Rules version unavailable"),
    "internal": (500, "Internal error"),
}


class ApiError(Exception):
    """An expected failure: HTTP ``status``, stable ``code``, human ``title``/``detail``.

    ``extra`` adds problem members (``currentVersion``, ``errors``, ``retryAfter`` ...).
    ``detail`` is shown to the caller: never put another seat's hidden information in it.
    """

    def __init__(self, status: int, code: str, title: str, detail: str, **extra: Any) -> None:
        super().__init__(f"{status} {code}: {detail}")
        self.status = status
        self.code = code
        self.title = title
        self.detail = detail
        self.extra = extra

    @classmethod
    def of(cls, code: str, detail: str, **extra: Any) -> ApiError:
        """An error whose status and title come from the ``CODES`` table."""
        status, title = CODES[code]
        return cls(status, code, title, detail, **extra)

    def problem(self) -> Problem:
        # A type URI per code: RFC 9457 reserves "about:blank" for problems that say no more
        # than the HTTP status phrase, and ours do.
        return Problem(
            type=f"urn:skyline:problem:{self.code}", title=self.title, status=self.status,
            detail=self.detail, code=self.code, **self.extra,
        )

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = self.problem().model_dump(
            mode="json", by_alias=True, exclude_none=True
        )
        return body
