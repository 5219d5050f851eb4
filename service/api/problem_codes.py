"""Which problem ``code`` each REST operation can answer (``OPERATION_CODES``, read from
the operation table: ``service.api.operations``), and the games' refusal codes.

The data behind the OpenAPI document's ``x-problem-codes`` / ``x-refusal-codes`` (and the
problem responses each operation declares) and behind ``docs/codes.md``, whose tables
``codes_markdown()`` renders (``python -m service.api.problem_codes`` rewrites them;
``tests/api/test_problem_codes.py`` fails when they drift, and checks these lists against
every place in ``service/`` that raises a code).

Every code is part of the ``/v1`` contract (docs/api.md, compatibility policy): new codes
are added, none is renamed or removed, and clients must tolerate a code they do not know.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from service import games
from service.errors import CODES, ApiError
from service.games.refusals import Refusal, refusal_codes

from .operations import OPERATIONS, codes

_BODY, _CREDENTIALS, _READ = codes.BODY, codes.CREDENTIALS, codes.READ
_PLAYER = _APP = codes.CREDENTIALS
_WEBHOOK_URL = codes.WEBHOOK_URL

RATE_LIMITED = "rate_limited"
"""Every operation may answer it (its budget spent: ``service/api/rate_limits.py``)."""
OPERATION_CODES: dict[str, tuple[str, ...]] = {
    op.id: (*op.codes, RATE_LIMITED) for op in OPERATIONS
}
"""operationId -> the service codes (``service.errors.CODES``) it can answer, from the
operation table (``service.api.operations``)."""

REFUSING_OPERATIONS = tuple(op.id for op in OPERATIONS if op.refusals)
"""Operations that ask the rules: their 422 also carries the games' refusal codes."""

EVERY_OPERATION = ("internal",)
"""Codes any operation may answer (a bug: 500); not declared per operation."""

UNROUTED = ("not_found", "method_not_allowed")
"""Codes of requests that match no operation (an unknown path, or a method a path lacks)."""

GRAPHQL_TRANSPORT_CODES = (
    "malformed", "not_found", "match_not_found", "method_not_allowed",
    "rules_version_retired", "body_too_large", "unsupported_media_type", "internal",
    "rules_version_unavailable", *_CREDENTIALS, "seat_handed_to_bot", RATE_LIMITED,
)
"""Codes of ``/graphql`` itself, outside any operation's result union: an HTTP problem for a
request the transport refuses, or the reason a WebSocket's ``connection_init`` is closed with
(docs/graphql.md)."""

HTTP_ONLY = (
    "not_found", "method_not_allowed", "precondition_failed", "body_too_large",
    "unsupported_media_type", "internal", "ticket_invalid",
)
"""Codes GraphQL never puts in a failure member: REST's routing, headers and media types,
the request-size limit (answered as an HTTP problem before GraphQL runs), a bug (a
masked GraphQL error), and the event stream's tickets (REST's ``?ticket=``)."""

ILLEGAL_MOVE_STATUS = 422
ILLEGAL_MOVE_TITLE = "Illegal move"
REFUSAL_PLACEHOLDER = "a_refusal_code"
"""Stands for any game's refusal code (not a service code) where one is rendered."""


def with_rate_limited(codes: tuple[str, ...]) -> tuple[str, ...]:
    """An operation's codes as answered: ``rate_limited`` added (every operation has a
    budget)."""
    return (*codes, RATE_LIMITED)


def codes_of(codes: tuple[str, ...], status: int | None = None) -> list[str]:
    """The service codes among ``codes`` (with HTTP ``status``), in table order."""
    return [code for code in CODES
            if code in codes and (status is None or CODES[code][0] == status)]


def statuses_of(codes: tuple[str, ...], refuses: bool = False) -> list[int]:
    """The HTTP statuses of the problems ``codes`` are (422 too for an operation that asks
    the rules), ascending."""
    statuses = {CODES[code][0] for code in codes}
    if refuses:
        statuses.add(ILLEGAL_MOVE_STATUS)
    return sorted(statuses)


def codes_for(operation: str, status: int | None = None) -> list[str]:
    """The service codes ``operation`` answers (with HTTP ``status``), in table order."""
    return [
        code for code in CODES
        if code in OPERATION_CODES[operation] and (status is None or CODES[code][0] == status)
    ]


def statuses_for(operation: str) -> list[int]:
    """The HTTP statuses of the problems ``operation`` answers, ascending."""
    statuses = {CODES[code][0] for code in OPERATION_CODES[operation]}
    if operation in REFUSING_OPERATIONS:
        statuses.add(ILLEGAL_MOVE_STATUS)
    return sorted(statuses)


def game_refusals() -> dict[str, dict[str, Refusal]]:
    """game id -> its refusal codes (sorted), for every registered engine that lists them."""
    out: dict[str, dict[str, Refusal]] = {}
    for engine in games.all():
        refusals = refusal_codes(engine)
        if refusals:
            out[engine.id] = {code: refusals[code] for code in sorted(refusals)}
    return out


def refusal_extension() -> dict[str, Any]:
    """``x-refusal-codes``: game id -> code -> ``{rules, description}``."""
    return {
        game: {code: {"rules": list(r.rules), "description": r.description}
               for code, r in refusals.items()}
        for game, refusals in game_refusals().items()
    }


def known_codes() -> list[str]:
    """Every code a problem may carry now: the service's and every registered game's."""
    found = dict.fromkeys(CODES)
    for refusals in game_refusals().values():
        found.update(dict.fromkeys(refusals))
    return sorted(found)


# ---------------------------------------------------------------------------- docs/codes.md

BEGIN = "<!-- BEGIN GENERATED: python -m service.api.problem_codes -->"
END = "<!-- END GENERATED -->"
DOC = Path(__file__).resolve().parents[2] / "docs" / "codes.md"


def _ticks(items: Iterable[str]) -> str:
    return ", ".join(f"`{item}`" for item in items)


def _graphql_member(code: str) -> str:
    from service.api.graphql.types.failures import FAILURES, failure_for

    if code == "internal":
        return "(a masked GraphQL error)"
    if code in HTTP_ONLY:
        return "(HTTP only)"
    if code in CODES:
        error = ApiError.of(code, "-", currentVersion=0, retryAfter=1)
    else:
        error = ApiError(ILLEGAL_MOVE_STATUS, code, ILLEGAL_MOVE_TITLE, "-")
    return f"`{type(failure_for(error, FAILURES)).__name__}`"


def codes_markdown() -> str:
    """The generated part of docs/codes.md (between ``BEGIN`` and ``END``)."""
    lines = [
        "### Service codes",
        "",
        "| Status | `code` | Title | Operations | GraphQL member |",
        "| --- | --- | --- | --- | --- |",
    ]
    for code, (status, title) in sorted(CODES.items(), key=lambda item: item[1][0]):
        operations = [op for op in OPERATION_CODES if code in OPERATION_CODES[op]]
        if code in EVERY_OPERATION:
            where = "any"
        else:
            where = _ticks(operations)
            if code in UNROUTED:
                where = ", ".join(filter(None, [where, "no operation (unknown path or method)"]))
        if code in GRAPHQL_TRANSPORT_CODES:
            where += "; `/graphql` transport"
        lines.append(f"| {status} | `{code}` | {title} | {where} | {_graphql_member(code)} |")
    for game, refusals in game_refusals().items():
        title = games.get(game).title
        refusing = _ticks(REFUSING_OPERATIONS)
        lines += [
            "",
            f"### {title} (`{game}`) refusal codes",
            "",
            f"Status {ILLEGAL_MOVE_STATUS} (title \"{ILLEGAL_MOVE_TITLE}\") on {refusing}; "
            f"GraphQL: {_graphql_member(REFUSAL_PLACEHOLDER)} on `act`.",
            "",
            "| `code` | Rules | Meaning |",
            "| --- | --- | --- |",
        ]
        for code, refusal in refusals.items():
            lines.append(f"| `{code}` | {', '.join(refusal.rules)} | {refusal.description} |")
    return "\n".join(lines) + "\n"


def render_doc(text: str) -> str:
    """``text`` (docs/codes.md) with its generated part replaced by ``codes_markdown()``."""
    head, begin, rest = text.partition(BEGIN)
    _, end, tail = rest.partition(END)
    if not begin or not end:
        raise ValueError(f"{DOC.name} lacks the {BEGIN!r} ... {END!r} markers")
    return f"{head}{BEGIN}\n\n{codes_markdown()}\n{END}{tail}"


def main() -> int:
    """Rewrite docs/codes.md's tables from the data (``--check``: fail when they drift)."""
    text = DOC.read_text(encoding="utf-8")
    rendered = render_doc(text)
    if "--check" in sys.argv[1:]:
        if rendered != text:
            print(f"{DOC} is out of date: run python -m service.api.problem_codes",
                  file=sys.stderr)
            return 1
        return 0
    DOC.write_text(rendered, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
