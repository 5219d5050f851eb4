"""A match: the caller's view (``getMatch``), its legal moves (``getLegalMoves``), a move
(``act``, the hot path: its own handler), the log (``getLog``), the event stream
(``streamEvents``: its own handler) and its tickets (``createStreamTicket``)."""

from __future__ import annotations

from typing import Any

from service.matches.models import (
    LOG_PAGE_MAX,
    MAX_SEED,
    ActRequest,
    ActResponse,
    LegalMoves,
    LogPage,
    MatchState,
    StreamTicket,
)

from ..rest.actions import act
from ..rest.http import query_count
from ..rest.match_stream import match_events
from . import codes
from .base import (
    ETAG_HEADER,
    MATCH_ID,
    NO_STORE,
    PRIVATE,
    READ_SECURITY,
    UNCHARGED,
    WRITE_SECURITY,
    Context,
    GraphQL,
    Operation,
    Param,
    Reply,
    if_none_match,
    mutation,
    query,
)

GET_MATCH = "getMatch"
GET_LEGAL_MOVES = "getLegalMoves"
ACT = "act"
GET_LOG = "getLog"
STREAM_EVENTS = "streamEvents"
"""The ids other operations link to."""


def links_same_match(*targets: str) -> dict[str, Any]:
    """Links to operations on the same match (``matchId`` carried over)."""
    params = {"path.matchId": "$request.path.matchId"}
    return {
        target[0].upper() + target[1:]: {"operationId": target, "parameters": params}
        for target in targets
    }


ACT_LINK = {
    "PlayALegalMove": {
        "operationId": ACT,
        "parameters": {"path.matchId": "$request.path.matchId"},
        "requestBody": {"action": "$response.body#/moves/0",
                        "expectedVersion": "$response.body#/version"},
    }
}


def version_of(answer: Any) -> str:
    """The ETag's opaque part: the match version of the answer."""
    return str(answer.version)


async def get_log(context: Context) -> Any:
    limit = context.query["limit"]
    return await context.state.match_service.log(
        context.path["match_id"], context.caller, context.query["after"] or 0, context.lang,
        limit=LOG_PAGE_MAX if limit is None else limit,
    )


async def create_stream_ticket(context: Context) -> Any:
    """A ticket for the seat whose token authorizes the request (401 without one)."""
    return await context.state.match_service.issue_stream_ticket(context.path["match_id"],
                                                                  context.caller)


STREAM_DESCRIPTION = (
    "Each event (`MatchStreamEvent`, the schema of one event): `event: state`, `id: "
    "<version>`, `data: <MatchState JSON>`. A fresh stream starts with the current state; "
    "`Last-Event-ID` (or `?after=`) sends every later version first -- up to the server's "
    "resume window (default 100 versions) behind; further behind, one `snapshot` event of "
    "the current state instead (the log has the versions in between). `mode=patch` sends a "
    "`snapshot` first, then `patch` events (RFC 6902 operations from the previous event's "
    "state), and a `snapshot` again every `snapshotEvery` versions and whenever no patch can "
    "be made. Event names are an open list: ignore unknown ones. The stream ends after the "
    "final state (and, on a server started with `--sse-max-seconds`, after that long: "
    "reconnect with `Last-Event-ID`, nothing is lost); a seat's stream whose credential "
    "stops reading the seat (checked at every version) ends with `event: revoked`, `data: "
    "{\"code\": \"seat_handed_to_bot\"}` when the seat went to a bot, `credential_revoked` "
    "when its token was renewed or its player left; a stopping server ends it with a "
    "`retry:` delay; 204 when nothing can follow. Streams are capped per client (429 "
    "`too_many_streams`) and per server (503 `replica_full`), both with `Retry-After`. "
    "Responses are compressed (gzip, br) when `Accept-Encoding` asks, each event flushed at "
    "once."
)
LOG_DESCRIPTION = (
    "Versions after `after`, with the events the caller may see; the caller's own moves "
    f"include the action. At most `limit` entries (1 to {LOG_PAGE_MAX}; more is BadRequest "
    "`malformed`): `nextAfter` is where the next page starts."
)
HOT_PATH = (
    "the hot path: its action a typed `@oneOf` input decoded per game, `expectedVersion` and "
    "`idempotencyKey` arguments where REST has headers; service/api/graphql/mutations.py"
)
NOT_MODIFIED = {"304": {"description": "Not modified.", "headers": ETAG_HEADER}}

OPERATIONS = (
    Operation(
        id=GET_MATCH, method="GET", path="/v1/matches/{matchId}", tag="matches",
        summary="The match as the caller may see it.",
        description="Without a token: the spectator's view.",
        codes=codes.READ, budget="read", security=READ_SECURITY,
        graphql=query("match", description="A match as the caller (a seat, or a spectator) "
                      "sees it.", args={"matchId": "id"},
                      result_description="The match as the caller sees it."),
        params=(MATCH_ID, if_none_match()),
        reply=Reply(MatchState, "The caller's state.", headers=ETAG_HEADER,
                    links=links_same_match(GET_LEGAL_MOVES, GET_LOG)),
        more=NOT_MODIFIED,
        call=lambda c: c.state.match_service.get_state(c.path["match_id"], c.caller),
        headers=PRIVATE, etag=version_of, revalidate=True,
    ),
    Operation(
        id=GET_LEGAL_MOVES, method="GET", path="/v1/matches/{matchId}/legal-moves",
        tag="matches", summary="The caller's legal moves now.",
        description="A spectator (no token) has no moves. The ETag is the version: send it "
        "back as `If-None-Match` for a 304 while nothing has moved.",
        codes=codes.READ, budget="read", security=READ_SECURITY,
        graphql=query("legalMoves", description="The caller's legal moves now (none for a "
                      "spectator).", result_description="The caller's legal moves."),
        params=(MATCH_ID, if_none_match()),
        reply=Reply(LegalMoves, "Legal moves.", headers=ETAG_HEADER, links=ACT_LINK),
        more=NOT_MODIFIED,
        call=lambda c: c.state.match_service.legal_moves(c.path["match_id"], c.caller, c.lang),
        headers=PRIVATE, etag=version_of, revalidate=True,
    ),
    Operation(
        id=ACT, method="POST", path="/v1/matches/{matchId}/actions", tag="matches",
        summary="Play a move.",
        codes=(*codes.BODY, *codes.READ, "not_your_turn", "match_finished",
               "version_conflict", "match_not_started", "match_cancelled",
               "idempotency_key_reused", "idempotency_key_expired", "precondition_failed",
               "invalid_action", "forbidden"),
        budget="act", security=WRITE_SECURITY,
        graphql=mutation(hand_written=HOT_PATH), refusals=True,
        params=(
            MATCH_ID,
            # No `pattern`: the syntax is HTTP's (RFC 9110 8.8.3), which tools know by the
            # header's name (schemathesis cannot generate a header value matching a pattern
            # that needs `"`, and would send a wrong one as a valid one).
            Param("If-Match", "header", {"type": "string"},
                  "Pin the version: `*` or ETags as received (`\"7\"`, quoted). Compared "
                  "strongly: a weak tag (`W/\"7\"`) never matches (412), and an unquoted "
                  "value is malformed (400). 412 when the match moved on."),
            Param("Idempotency-Key", "header",
                  {"type": "string", "minLength": 1, "maxLength": 255},
                  "A retry with the same key returns the first result."),
        ),
        body=ActRequest,
        reply=Reply(ActResponse, "Applied.", headers=ETAG_HEADER,
                    links=links_same_match(GET_MATCH, GET_LEGAL_MOVES, GET_LOG)),
        handler=act,
    ),
    Operation(
        id=GET_LOG, method="GET", path="/v1/matches/{matchId}/log", tag="matches",
        summary="Versions after `after`, as the caller may see them.",
        description="A page of at most `limit` versions: to read the whole history, ask "
        "again with `after` = `nextAfter` until it is null.",
        codes=("malformed", *codes.READ), budget="read", security=READ_SECURITY,
        graphql=query("log", description=LOG_DESCRIPTION,
                      result_description="The match history the caller may see."),
        params=(
            MATCH_ID,
            Param("after", "query",
                  {"type": "integer", "minimum": 0, "maximum": MAX_SEED, "default": 0},
                  parse=query_count),
            Param("limit", "query", {"type": "integer", "minimum": 1,
                                     "maximum": LOG_PAGE_MAX, "default": LOG_PAGE_MAX},
                  "The most entries in the page; `nextAfter` is where the next one starts.",
                  parse=query_count),
        ),
        reply=Reply(LogPage, "Log entries."),
        call=get_log, headers=PRIVATE, order=("params", "credential"),
    ),
    Operation(
        id=STREAM_EVENTS, method="GET", path="/v1/matches/{matchId}/events",
        tag="matches",
        summary="Server-Sent Events: the caller's state at each new version.",
        description=STREAM_DESCRIPTION,
        codes=("malformed", *codes.READ, "too_many_streams", "replica_full",
               "ticket_invalid"),
        budget="stream", security=READ_SECURITY,
        graphql=GraphQL("subscription", "matchUpdated"),
        params=(
            MATCH_ID,
            Param("after", "query",
                  {"type": "integer", "minimum": 0, "maximum": MAX_SEED, "default": 0}),
            Param("Last-Event-ID", "header", {"type": "string", "pattern": r"^[0-9]{0,15}$"}),
            Param("mode", "query", {"type": "string", "enum": ["full", "patch"],
                                    "default": "full"},
                  "`full`: each version's whole state; `patch`: JSON Patches between "
                  "snapshots (smaller; for mobile clients)."),
            Param("snapshotEvery", "query",
                  {"type": "integer", "minimum": 1, "maximum": 10_000, "default": 50},
                  "Patch mode: a whole `snapshot` after this many versions."),
            Param("ticket", "query", {"type": "string", "maxLength": 200},
                  "A stream ticket (`createStreamTicket`) instead of the seat token, for "
                  "clients that cannot send it (a browser's EventSource sends no headers of "
                  "its own): the stream is that seat's. Accepted here only, for the match it "
                  "was issued for, until its `expiresAt` (401 `ticket_invalid`: fetch a new "
                  "one, for every reconnection too, passing `after=<last id>`). Not with the "
                  "seat token as well (400 `malformed`)."),
        ),
        reply=Reply(None, "An event stream; its schema is that of one event (OpenAPI 3.2's "
                    "`itemSchema`).", content={"text/event-stream": {"schema": {
                        "$ref": "#/components/schemas/MatchStreamEvent"}}}),
        more={"204": {"description": "The match is finished and the caller has seen it "
                      "all."}},
        handler=match_events,
    ),
    Operation(
        id="createStreamTicket", method="POST", path="/v1/matches/{matchId}/stream-tickets",
        tag="matches", summary="A short-lived ticket to open your seat's event stream.",
        description="For clients that cannot send the seat token on the event stream (a "
        "browser's EventSource sends no headers of its own): open `streamEvents` with "
        "`?ticket=<ticket>` instead of the token. A ticket names this seat of this match, is "
        "accepted on the event stream only, until `expiresAt` (a minute by default), and "
        "stops working when the seat's token does. Fetch one per connection. Spectators need "
        "none: they open the stream without credentials (401 `unauthorized` here). No body.",
        codes=(*codes.READ, "forbidden"), budget="act", security=WRITE_SECURITY,
        graphql=mutation(hand_written=UNCHARGED),
        params=(MATCH_ID,),
        reply=Reply(StreamTicket, "The ticket."),
        call=create_stream_ticket, headers=NO_STORE,
    ),
)
