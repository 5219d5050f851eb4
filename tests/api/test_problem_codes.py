"""The problem codes each operation can answer (``service/api/problem_codes.py``): complete
against the code that raises them, published in the OpenAPI document (per operation and
status, and as ``Problem.code``'s known values, never an ``enum``), met by real requests,
and rendered into docs/codes.md.

Completeness is checked statically: every ``ApiError`` raised in ``service/`` (outside the
engines) is a raise site listed in ``SITES`` with the operations whose code path reaches it;
each site's codes must be in those operations' lists, and each operation's list must come
from its sites (so no operation lists a code it cannot answer).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from service import games
from service.api import problem_codes as pc
from service.api.openapi import build_openapi
from service.errors import CODES
from tests.api.conftest import TOY, bearer, create

ROOT = Path(__file__).resolve().parents[2]
SERVICE = ROOT / "service"

MATCH_OPS = ("getMatch", "getLegalMoves", "act", "handSeatToBot", "getLog", "streamEvents",
             "getBoardSvg", "createStreamTicket", "resignSeat", "reclaimSeat")
"""Operations that load a match (``StoredMatches.load``) and know the caller's seat."""
BODY_OPS = ("createMatch", "act", "handSeatToBot", "createPlayer", "enqueue", "joinMatch",
            "startMatch", "createInvitation", "createWebhook", "updateWebhook")
QUEUE_OPS = ("enqueue", "getQueueTicket", "leaveQueue")
EVERY = "*"
"""A site any operation reaches (its codes must be in ``EVERY_OPERATION``)."""
GRAPHQL = "/graphql"
"""The GraphQL endpoint's transport (its codes: ``GRAPHQL_TRANSPORT_CODES``); GraphQL's
operations answer what their REST twins answer, as union members."""
TABLE_OPS = ("joinMatch", "leaveMatch", "startMatch", "cancelMatch", "rematchMatch")
"""The lobby's writes to a waiting match (``service.matches.waiting``)."""
LIST_OPS = ("listLobby", "listMatches")
INVITE_OPS = ("createInvitation", "revokeInvitation", "getInvitation", "redeemInvitation",
              "listMyInvitations", "acceptInvitation", "declineInvitation")
"""Invitations (``service.invitations.service``)."""
MATCH_READ = (*MATCH_OPS, "renewSeatToken", *TABLE_OPS, "createInvitation",
              "revokeInvitation", "acceptInvitation", "declineInvitation", GRAPHQL)
APP_OPS = ("listAppPlayerMatches", "getAppPlayer", "deleteAppPlayer")
PLAYER_OPS = ("getMe", "deleteMe", "listMyMatches", *APP_OPS, "renewSeatToken",
              "streamPlayerEvents", "createFeedTicket")
WEBHOOK_OPS = ("listWebhooks", "createWebhook", "getWebhook", "updateWebhook",
               "deleteWebhook", "pingWebhook", "enableWebhook", "rotateWebhookSecret",
               "listWebhookDeliveries")
"""An app's webhook endpoints (``service.webhooks``, issue 18)."""
WEBHOOK_ONE = tuple(op for op in WEBHOOK_OPS if op not in ("listWebhooks", "createWebhook"))
WEBHOOK_URL = ("createWebhook", "updateWebhook")
AUTHENTICATED = (*MATCH_OPS, "createMatch", *PLAYER_OPS, *QUEUE_OPS, *TABLE_OPS, *LIST_OPS,
                 "createInvitation", "revokeInvitation", "listMyInvitations",
                 "acceptInvitation", "declineInvitation", *WEBHOOK_OPS, GRAPHQL)
"""Operations that check a bearer credential (a WebSocket's ``connection_init`` too)."""
"""Sites a match read reaches (a WebSocket's ``connection_init`` naming a match reads it)."""

SITES: dict[str, tuple[str, ...]] = {
    "service/api/credentials.py::bearer_token": MATCH_READ,
    "service/api/middleware.py::BodyLimit._too_large": (*BODY_OPS, GRAPHQL),
    "service/api/rest/actions.py::act": ("act",),
    "service/api/rest/http.py::read_body": BODY_OPS,
    "service/api/rest/http.py::non_negative_int": ("getLog", "streamEvents",
                                                   "streamPlayerEvents", *LIST_OPS,
                                                   "listMyInvitations",
                                                   "listWebhookDeliveries"),
    "service/api/rest/http.py::query_count": ("getLog", "streamEvents", "streamPlayerEvents",
                                              "listMyMatches", "listAppPlayerMatches",
                                              *LIST_OPS, "listMyInvitations",
                                              "listWebhookDeliveries"),
    "service/api/rest/http.py::entity_tags": ("act",),  # If-Match
    "service/api/operations/games.py::rules_version_param": ("getGame",),
    "service/catalogue/documents.py::catalogue_of": ("getGame",),  # GraphQL's `game` too
    "service/api/rest/ops.py::readyz": ("readyz",),
    "service/api/operations/pictures.py::parse_highlight": ("getBoardSvg",),
    "service/api/operations/seats.py::hand_seat_to_bot": ("handSeatToBot",),
    "service/api/operations/seats.py::seat_of": ("handSeatToBot", "resignSeat", "reclaimSeat"),
    # GraphQL's own checks: its operations answer what their REST twins answer.
    "service/api/graphql/mutations.py::build_mutation.Mutation.create_match.create":
        ("createMatch",),
    "service/api/graphql/mutations.py::build_mutation.Mutation.act.play": ("act",),
    "service/api/graphql/mutations.py::build_mutation.Mutation.hand_seat_to_bot.hand":
        ("handSeatToBot",),
    # matchUpdated: REST's streamEvents as a subscription (a negative after: malformed).
    "service/api/graphql/subscriptions.py::build_subscription.Subscription.match_updated":
        ("streamEvents",),
    "service/api/graphql/routes.py::SkylineGraphQL.__call__": (GRAPHQL,),
    "service/api/graphql/routes.py::SkylineGraphQL.on_ws_connect": (GRAPHQL,),
    "service/api/graphql/routes.py::_malformed": (GRAPHQL,),
    "service/api/graphql/routes.py::_problem_of": (GRAPHQL,),
    "service/api/graphql/routes.py::subscription_over_http": (GRAPHQL,),
    "service/app.py::_unexpected": (EVERY, GRAPHQL),
    "service/app.py::_http_error": (),  # Starlette's own refusals: see DYNAMIC
    "service/matches/act.py::Acting.act": ("act",),
    "service/matches/act.py::_key_reused": ("act",),
    "service/matches/act.py::_key_expired": ("act",),
    "service/matches/act.py::Acting._logged": ("act",),
    "service/matches/board.py::board_svg": ("getBoardSvg",),
    "service/matches/bot_seats.py::bot_seats": ("createMatch", "handSeatToBot", "startMatch"),
    "service/matches/bot_seats.py::BotSeats.hand_seat_to_bot": ("handSeatToBot",),
    "service/matches/bot_seats.py::BotSeats.act_as_bot": (),  # the bot worker's write path
    # Absent players (issue 18): resigning, taking a seat back.
    "service/matches/away_seats.py::no_such_seat": ("resignSeat", "reclaimSeat"),
    "service/matches/away_seats.py::_forfeited": ("resignSeat", "reclaimSeat"),
    "service/matches/away_seats.py::_over": ("resignSeat", "reclaimSeat"),
    "service/matches/away_seats.py::AwaySeats.resign": ("resignSeat",),
    "service/matches/away_seats.py::AwaySeats.reclaim": ("reclaimSeat",),
    "service/matches/views.py::handed_to_bot": MATCH_READ,
    "service/matches/create.py::engine_for_new": ("createMatch", "enqueue"),
    "service/matches/create.py::Creation.create_match": ("createMatch",),
    "service/matches/play.py::check_pins": ("act",),
    "service/matches/play.py::check_started": ("act", "handSeatToBot", "renewSeatToken",
                                               "resignSeat", "reclaimSeat"),
    "service/matches/create.py::Creation._waiting": ("createMatch",),
    "service/matches/create.py::clock_settings": ("createMatch",),
    "service/matches/storage.py::StoredMatches.expire": MATCH_READ,  # from load: busy
    "service/matches/views.py::hidden": (*MATCH_READ,),
    # The lobby's tables (issue 17).
    "service/api/operations/tables.py::game_param": LIST_OPS,
    "service/api/operations/tables.py::players_param": LIST_OPS,
    "service/api/operations/tables.py::live_only": ("listMatches",),
    "service/tables/lists.py::_limit": LIST_OPS,

    "service/tables/service.py::_app_of": LIST_OPS,
    "service/players/service.py::PlayerService.member": (
        *TABLE_OPS, "createInvitation", "revokeInvitation", "listMyInvitations",
        "acceptInvitation", "declineInvitation"),
    "service/matches/waiting.py::WaitingMatches._check_creator": ("startMatch", "cancelMatch"),
    "service/matches/waiting.py::WaitingMatches.join": ("joinMatch", "acceptInvitation"),
    "service/matches/waiting.py::WaitingMatches.leave": ("leaveMatch",),
    "service/matches/waiting.py::WaitingMatches.start": ("startMatch",),
    "service/matches/waiting.py::WaitingMatches.cancel": ("cancelMatch",),
    "service/matches/waiting.py::_cancelled": ("joinMatch", "leaveMatch", "startMatch",
                                               "cancelMatch", "acceptInvitation"),
    "service/matches/waiting.py::_started": ("joinMatch", "startMatch", "cancelMatch",
                                             "acceptInvitation"),
    "service/matches/waiting.py::_taken": ("joinMatch", "acceptInvitation"),
    "service/tables/rematch.py::Rematch.rematch": ("rematchMatch",),
    "service/tables/rematch.py::Rematch._link": ("rematchMatch",),
    # Invitations.
    "service/invitations/service.py::InvitationService._spectate_code": ("createInvitation",),
    "service/invitations/service.py::InvitationService._update": ("createInvitation",
                                                                "revokeInvitation",
                                                                "redeemInvitation"),
    "service/invitations/service.py::InvitationService.create": ("createInvitation",),
    "service/invitations/service.py::InvitationService.decline": ("declineInvitation",),
    "service/invitations/service.py::InvitationService._invitee": ("acceptInvitation",
                                                                 "declineInvitation"),
    "service/invitations/service.py::InvitationService.mine": ("listMyInvitations",),
    "service/invitations/service.py::InvitationService.redeem": ("redeemInvitation",),
    "service/invitations/service.py::InvitationService.revoke": ("revokeInvitation",),
    "service/invitations/service.py::InvitationService._revoke_spectate": ("revokeInvitation",),
    "service/invitations/service.py::_check_open": ("createInvitation",),
    "service/matches/invites.py::not_found": (
        "joinMatch", *(op for op in INVITE_OPS
                       if op not in ("createInvitation", "listMyInvitations"))),
    "service/matches/invites.py::refuse": ("joinMatch", "getInvitation", "redeemInvitation",
                                           "acceptInvitation", "declineInvitation"),
    "service/matches/play.py::play": ("act",),
    "service/matches/storage.py::busy": (),  # counted where it is called
    "service/matches/storage.py::check_rules": (  # from StoredMatches.load
        *MATCH_READ, "getInvitation", "redeemInvitation"),
    "service/matches/read.py::Reads.log": ("getLog",),  # limit out of 1..200
    "service/matches/storage.py::StoredMatches.create": ("createMatch",),
    "service/matches/storage.py::StoredMatches.load": MATCH_READ,
    "service/matches/storage.py::StoredMatches.write": ("act", "handSeatToBot",
                                                       "renewSeatToken", *TABLE_OPS,
                                                       "resignSeat", "reclaimSeat"),
    "service/matches/storage.py::StoredMatches.guard": ("createMatch", *MATCH_READ,
                                                        *QUEUE_OPS),
    "service/matches/storage.py::StoredMatches.guard_iter": ("streamEvents",),
    # And GraphQL's subscriptions.
    "service/live/hub.py::LiveHub.admit": ("streamEvents", "streamPlayerEvents"),
    "service/matches/watch.py::Watching.follow": ("streamEvents",),
    # A stream's credential checked again at every version (issue 20, item 9).
    "service/matches/watch.py::_revoked": ("streamEvents",),
    "service/matches/watch.py::_to_bot": ("streamEvents",),  # issue 18: a bot took the seat
    # ... and its JWT's expiry, on the match's stream and the player's feed.
    "service/matches/watch.py::expired": ("streamEvents", "streamPlayerEvents"),
    "service/api/rest/match_stream.py::_mode": ("streamEvents",),
    "service/api/rest/match_stream.py::_snapshot_every": ("streamEvents",),
    "service/matches/views.py::seat_of": MATCH_READ,
    "service/matches/views.py::view_revoked": MATCH_READ,
    "service/matches/views.py::no_seat": ("act", "handSeatToBot", "createStreamTicket",
                                          "resignSeat",
                                          "renewSeatToken", "leaveMatch", "rematchMatch",
                                          "createInvitation", "revokeInvitation"),
    "service/matches/seat_tickets.py::StreamTickets.issue_stream_ticket": ("createStreamTicket",),
    "service/matches/seat_tickets.py::StreamTickets.seat_of_ticket": ("streamEvents",),
    # Single-use tickets (issue 31, item 12): the match's stream and the player feed.
    "service/limits/ticket_claims.py::TicketClaims.claim": ("streamEvents", "streamPlayerEvents"),
    "service/api/rest/stream_credentials.py::stream_seat": ("streamEvents",),
    "service/matches/wire.py::parse_options": ("createMatch", "enqueue"),
    "service/matches/wire.py::parse_action": ("act",),
    "service/cli.py::show": (),  # the command line, not the API
    # Credentials (issue 16): every operation that looks at one checks it first.
    "service/identity/credentials.py::kind_of": AUTHENTICATED,
    "service/identity/jwt.py::JwksCache.key": AUTHENTICATED,
    "service/identity/jwt.py::JwtVerifier._claims": AUTHENTICATED,
    "service/identity/jwt.py::JwtVerifier._key": AUTHENTICATED,
    "service/identity/jwt.py::JwtVerifier.verify": AUTHENTICATED,
    "service/identity/jwt.py::_malformed": AUTHENTICATED,
    "service/identity/jwt.py::_refusal": AUTHENTICATED,
    "service/identity/jwt.py::_unknown_key": AUTHENTICATED,
    "service/identity/names.py::clean_name": (*AUTHENTICATED, "createPlayer"),
    "service/identity/auth.py::Authenticator._app": AUTHENTICATED,
    "service/identity/auth.py::Authenticator._player": AUTHENTICATED,
    "service/identity/auth.py::_refused": AUTHENTICATED,
    "service/players/directory.py::Directory.sign_in": AUTHENTICATED,
    "service/players/docs.py::Docs.update": AUTHENTICATED,  # a JWT's new name
    "service/players/docs.py::guard": (*AUTHENTICATED, "createPlayer", "redeemInvitation",
                                       "getInvitation"),
    "service/api/graphql/context.py::Context.resolve": (GRAPHQL,),
    "service/players/directory.py::Directory.create_guest": ("createPlayer",),
    "service/players/apps.py::Apps.require": ("createPlayer",),
    "service/players/apps.py::Apps.require_existing": (),  # `skyline apps`
    "service/players/directory.py::not_found": (*APP_OPS, "createMatch"),
    "service/players/service.py::PlayerService._own": (
        "getMe", "deleteMe", "listMyMatches", "streamPlayerEvents", "createFeedTicket"),
    "service/players/service.py::PlayerService.issue_feed_ticket": ("createFeedTicket",),
    # The feed's player checked again before every event (issue 20, item 9).
    "service/players/service.py::PlayerService.follow_feed": ("streamPlayerEvents", GRAPHQL),
    "service/players/service.py::_player_caller": ("listMyMatches", "streamPlayerEvents"),
    "service/identity/feed_tickets.py::verify": ("streamPlayerEvents",),
    "service/api/rest/feed.py::player_events": ("streamPlayerEvents",),
    "service/api/graphql/players.py::_players": (GRAPHQL,),
    "service/api/graphql/feed.py::build_feed_subscription.FeedSubscription.player_events":
        (GRAPHQL,),
    "service/api/graphql/players.py::PlayerMutation.create_player.create": ("createPlayer",),
    "service/players/service.py::PlayerService.delete_me": ("deleteMe",),
    "service/players/service.py::PlayerService.create_match": ("createMatch",),
    "service/players/service.py::_app_caller": APP_OPS,
    "service/players/listing.py::Listing.page": ("listMyMatches", "listAppPlayerMatches"),
    "service/players/listing.py::check_limit": ("listMyMatches", "listAppPlayerMatches",
                                                "listMyInvitations"),
    "service/players/listing.py::decode_cursor": ("listMyMatches", "listAppPlayerMatches",
                                                  "listMyInvitations", *LIST_OPS),
    "service/api/rest/http.py::query_once": ("listMyMatches", "listAppPlayerMatches",
                                             *LIST_OPS, "listMyInvitations",
                                             "listWebhookDeliveries"),
    "service/api/operations/players.py::turn_param": ("listMyMatches", "listAppPlayerMatches"),
    "service/api/operations/players.py::player_param": ("listAppPlayerMatches",),
    "service/matches/create.py::seats_of": ("createMatch",),
    "service/matches/seeds.py::check_chosen_seed": ("createMatch",),
    "service/matches/seat_players.py::SeatPlayers._seat": ("renewSeatToken",),
    "service/matches/seat_players.py::SeatPlayers.renew_seat_token": ("renewSeatToken",),
    "service/matches/seat_players.py::SeatPlayers.rename_player": (
        "deleteMe", "deleteAppPlayer"),
    # Quick match (issue 17).
    "service/api/operations/queue.py::wait_param": ("getQueueTicket",),
    "service/queue/service.py::QueueService._cas": QUEUE_OPS,
    "service/queue/service.py::QueueService.enqueue": ("enqueue",),
    "service/queue/service.py::QueueService.poll": ("getQueueTicket",),
    "service/queue/service.py::_queuer": QUEUE_OPS,
    "service/queue/service.py::ticket_not_found": ("getQueueTicket", "leaveQueue"),
    "service/api/graphql/queue.py::_queue": (GRAPHQL,),
    "service/api/graphql/queue.py::build_queue_mutation.QueueMutation.enqueue.queue": (
        "enqueue",),
    "service/api/graphql/queue.py::QueueQuery.queue_ticket.poll": ("getQueueTicket",),
    # The lobby's tables in GraphQL (issue 17): as their REST twins.
    "service/api/graphql/tables.py::_tables": (GRAPHQL,),
    "service/api/graphql/tables.py::_filters": ("listLobby", "listMatches"),
    # A generated GraphQL field's body arguments, checked by the body model.
    "service/api/graphql/fields.py::_body_of": (
        "joinMatch", "startMatch", "createWebhook", "updateWebhook"),
    "service/api/graphql/tables.py::_rematch": (GRAPHQL,),
    "service/api/graphql/invitations.py::_invitations": (GRAPHQL,),
    "service/api/graphql/invitations.py::_request": ("createInvitation",),
    "service/api/problem_codes.py::_graphql_member": (),  # renders docs/codes.md
    # Rate limits and quotas (issue 20, item 1): every operation has a budget (the
    # middleware), GraphQL's createMatch and act theirs too; creations a quota.
    "service/api/rate_limits.py::rate_limited": (*pc.OPERATION_CODES, GRAPHQL),
    "service/limits/quotas.py::ActiveMatchQuota.take": ("createMatch",),
    "service/limits/quotas.py::ActiveMatchQuota._guard": ("createMatch", "enqueue"),
    "service/limits/quotas.py::ActiveMatchQuota._exceeded": ("createMatch", "enqueue"),
    # Public tables waiting in the lobby per creator (issue 31 item 9).
    "service/tables/caps.py::too_many": ("createMatch",),
    "service/tables/caps.py::WaitingTablesCap.take": ("createMatch",),
    "service/tables/caps.py::_guard": ("createMatch",),
    # Webhooks (issue 18): the app's key, the URL policy, the endpoint's settings.
    "service/api/operations/webhooks.py::webhooks_of": WEBHOOK_OPS,
    "service/webhooks/service.py::_app_of": WEBHOOK_OPS,
    "service/webhooks/service.py::not_found": WEBHOOK_ONE,
    "service/webhooks/service.py::_check_events": WEBHOOK_URL,
    "service/webhooks/service.py::_check_warn": WEBHOOK_URL,
    "service/webhooks/service.py::WebhookService.create.add": ("createWebhook",),
    "service/webhooks/service.py::WebhookService.deliveries": ("listWebhookDeliveries",),
    "service/webhooks/outbox.py::Outbox.read_log": ("listWebhookDeliveries",),
    "service/webhooks/ssrf.py::UrlPolicy.split": WEBHOOK_URL,
    "service/webhooks/ssrf.py::UrlPolicy.check": WEBHOOK_URL,
    "service/webhooks/ssrf.py::forbidden": WEBHOOK_URL,
}
"""raise site (``path::qualified function``) -> the operations whose code path reaches it."""

DYNAMIC: dict[str, tuple[str, ...]] = {
    # BadClockInput, as the service words it.
    "service/matches/create.py::clock_settings": ("bad_time_control", "bad_timeout_policy"),
    # Starlette's HTTPException: an unknown path, a method the path lacks; the rest mapped.
    "service/app.py::_http_error": (*pc.UNROUTED, "body_too_large", "malformed"),
    # Strawberry's HTTPException, as the problem REST would answer.
    "service/api/graphql/routes.py::_problem_of": (
        "malformed", "not_found", "method_not_allowed", "body_too_large",
        "unsupported_media_type", "internal",
    ),
    # The engine's refusal code: the games' refusal codes (tests/test_refusal_codes.py).
    "service/matches/play.py::play": (),
    "service/api/problem_codes.py::_graphql_member": (),
}
"""Sites whose code is not a literal -> the service codes they may produce."""


def _functions(tree: ast.AST, prefix: str = "") -> Iterator[tuple[str, ast.AST]]:
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, ast.ClassDef):
            yield from _functions(child, f"{prefix}{child.name}.")
        elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield f"{prefix}{child.name}", child
            yield from _functions(child, f"{prefix}{child.name}.")


def _own_nodes(function: ast.AST) -> Iterator[ast.AST]:
    for child in ast.iter_child_nodes(function):
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield child
            yield from _own_nodes(child)


def _code_of(call: ast.Call) -> str | None:
    """The code of ``ApiError.of(code, ...)`` / ``ApiError(status, code, ...)`` / ``busy()``
    ("" when it is not a literal); None for any other call."""
    func = call.func
    if (isinstance(func, ast.Attribute) and func.attr == "of"
            and isinstance(func.value, ast.Name) and func.value.id == "ApiError"):
        argument = call.args[0] if call.args else None
    elif isinstance(func, ast.Name) and func.id == "ApiError":
        argument = call.args[1] if len(call.args) > 1 else None
        status = call.args[0] if call.args else None
        if isinstance(argument, ast.Constant) and isinstance(status, ast.Constant):
            assert CODES[argument.value][0] == status.value, ast.unparse(call)
    elif isinstance(func, ast.Name) and func.id == "busy":
        return "busy"
    else:
        return None
    if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
        return argument.value
    return ""


def raise_sites() -> dict[str, set[str]]:
    """site -> the codes raised there ("" for a code that is not a literal)."""
    sites: dict[str, set[str]] = {}
    for path in sorted(SERVICE.rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith("service/games/"):
            continue  # the engines raise IllegalAction, never ApiError
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for name, function in _functions(tree):
            for node in _own_nodes(function):
                if isinstance(node, ast.Call) and (code := _code_of(node)) is not None:
                    sites.setdefault(f"{relative}::{name}", set()).add(code)
    return sites


def test_every_raise_site_is_mapped_to_its_operations() -> None:
    sites = raise_sites()
    assert sorted(set(sites) - set(SITES)) == [], "map the new raise sites in SITES"
    assert sorted(set(SITES) - set(sites)) == [], "SITES lists sites that raise nothing"
    assert sorted(s for s, codes in sites.items() if "" in codes) == sorted(DYNAMIC)


def _site_codes(site: str, codes: set[str]) -> set[str]:
    return (codes - {""}) | set(DYNAMIC.get(site, ()))


def _allowed(operation: str) -> tuple[str, ...]:
    if operation == EVERY:
        return pc.EVERY_OPERATION
    if operation == GRAPHQL:
        return pc.GRAPHQL_TRANSPORT_CODES
    return pc.OPERATION_CODES[operation]


def test_every_code_raised_is_listed_on_the_operations_that_reach_it() -> None:
    for site, codes in raise_sites().items():
        for code in _site_codes(site, codes):
            assert code in CODES, f"{site}: {code} is not in service.errors.CODES"
            for operation in SITES[site]:
                allowed = _allowed(operation)
                assert code in allowed, f"{site} answers {code}: list it on {operation}"


def test_every_listed_code_is_raised_on_that_operations_path() -> None:
    reached: dict[str, set[str]] = {op: set() for op in [*pc.OPERATION_CODES, GRAPHQL]}
    for site, codes in raise_sites().items():
        for operation in SITES[site]:
            if operation != EVERY:
                reached[operation] |= _site_codes(site, codes)
    for operation, listed in [*pc.OPERATION_CODES.items(),
                              (GRAPHQL, pc.GRAPHQL_TRANSPORT_CODES)]:
        assert len(set(listed)) == len(listed), operation
        assert sorted(set(listed) - reached[operation]) == [], (
            f"{operation} lists codes nothing on its path raises"
        )


def test_every_service_code_is_listed_somewhere() -> None:
    listed = {code for codes in pc.OPERATION_CODES.values() for code in codes}
    listed |= {*pc.EVERY_OPERATION, *pc.UNROUTED}
    assert sorted(set(CODES) - listed) == []
    assert sorted(listed - set(CODES)) == []
    assert set(pc.HTTP_ONLY) <= set(CODES)


# -- the OpenAPI document -------------------------------------------------------------------


def _operations(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {op["operationId"]: op for item in doc["paths"].values() for op in item.values()}


def test_every_operation_of_the_document_has_its_codes() -> None:
    documented = set(_operations(build_openapi()))
    assert sorted(documented - set(pc.OPERATION_CODES)) == [], "list their codes"
    assert sorted(set(pc.OPERATION_CODES) - documented) == []


def test_each_problem_response_lists_exactly_that_operations_codes() -> None:
    doc = build_openapi()
    operations = _operations(doc)
    refusals = pc.refusal_extension()
    assert set(refusals) >= {"ny1901", "ginkgopolis"}
    for operation_id, operation in operations.items():
        problems = {int(s): r for s, r in operation["responses"].items() if s[0] in "45"}
        assert sorted(problems) == pc.statuses_for(operation_id), operation_id
        for status, response in problems.items():
            codes = response["x-problem-codes"]
            assert codes == pc.codes_for(operation_id, status), (operation_id, status)
            for code in codes:
                assert f"`{code}`" in response["description"]
            refuses = status == 422 and operation_id in pc.REFUSING_OPERATIONS
            assert ("x-refusal-codes" in response) == refuses, (operation_id, status)
            if refuses:
                assert response["x-refusal-codes"] == refusals
    create_422 = operations["createMatch"]["responses"]["422"]
    assert "invalid_action" not in create_422["x-problem-codes"]  # issue 14, item 6
    assert "invalid_action" not in create_422["description"]
    act_422 = operations["act"]["responses"]["422"]
    assert act_422["x-problem-codes"] == ["invalid_action"]
    wrong_step = act_422["x-refusal-codes"]["ny1901"]["wrong_step"]
    assert wrong_step["rules"] and wrong_step["description"]


def test_problem_code_is_an_extensible_string_not_an_enum() -> None:
    doc = build_openapi()
    code = doc["components"]["schemas"]["Problem"]["properties"]["code"]
    assert code["type"] == "string"
    assert "enum" not in code
    known = code["x-extensible-enum"]
    assert known == sorted(set(known)) == pc.known_codes()
    assert set(CODES) <= set(known)
    for refusals in pc.game_refusals().values():
        assert set(refusals) <= set(known)
    for value in known:
        assert f"`{value}`" in code["description"]
    assert "tolerate" in code["description"]


# -- real requests ----------------------------------------------------------------------------


def _template(path: str, doc: dict[str, Any]) -> str:
    parts = path.split("?")[0].strip("/").split("/")
    for template in doc["paths"]:
        pieces = template.strip("/").split("/")
        if len(pieces) == len(parts) and all(
            p == q or (p.startswith("{") and p.endswith("}")) for p, q in zip(pieces, parts,
                                                                              strict=True)
        ):
            return template
    raise AssertionError(f"no path template for {path}")


def test_problems_met_by_real_requests_are_listed_on_their_operation(
    client: TestClient,
) -> None:
    doc = build_openapi()
    paths = doc["paths"]
    toy = create(client, TOY)
    ny = create(client, "ny1901", players=2, seed=3)
    seen: set[tuple[str, str]] = set()

    def check(method: str, path: str, code: str, **kwargs: Any) -> None:
        response = client.request(method, path, **kwargs)
        body = response.json()
        assert body["code"] == code, (method, path, response.text)
        operation = paths[_template(path, doc)][method.lower()]
        documented = operation["responses"][str(response.status_code)]
        refusals = documented.get("x-refusal-codes", {})
        assert code in documented["x-problem-codes"] or any(
            code in codes for codes in refusals.values()
        ), (operation["operationId"], response.status_code, code)
        seen.add((operation["operationId"], code))

    post = "POST"
    check(post, "/v1/matches", "unknown_game", json={"game": "chess", "players": 2})
    check(post, "/v1/matches", "bad_player_count", json={"game": TOY, "players": 9})
    check(post, "/v1/matches", "bad_options",
          json={"game": TOY, "players": 2, "options": {"rounds": 9}})
    check(post, "/v1/matches", "bad_bots",
          json={"game": TOY, "players": 2, "bots": {"2": "random"}})
    check(post, "/v1/matches", "malformed", json={"game": TOY})
    check(post, "/v1/matches", "unsupported_media_type", content=b"{}",
          headers={"Content-Type": "text/plain"})
    check(post, "/v1/matches", "body_too_large", content=b"{" + b" " * 70_000 + b"}",
          headers={"Content-Type": "application/json"})
    check("GET", "/v1/games/chess", "not_found")
    check("GET", "/v1/games/ny1901?rulesVersion=999", "unknown_rules_version")
    check("GET", "/v1/games/ny1901?rulesVersion=x", "malformed")
    check("GET", "/v1/matches/nope", "match_not_found")
    check("GET", toy.url, "unauthorized", headers=bearer("sky_not-a-seat"))
    check("GET", f"{toy.url}/legal-moves", "unauthorized", headers={"Authorization": "Basic x"})
    check("GET", f"{toy.url}/log?after=x", "malformed")
    check("GET", f"{toy.url}/events?after=x", "malformed")
    check("GET", f"{toy.url}/events?ticket=skt_0.AAAA.forged", "ticket_invalid")
    check(post, f"{toy.url}/stream-tickets", "unauthorized")
    check("GET", f"{toy.url}/board.svg", "no_picture")
    check("GET", f"{ny.url}/board.svg?highlight=99999", "bad_highlight", headers=ny.auth(0))
    act = f"{ny.url}/actions"
    check(post, act, "not_your_turn", json={"action": {"type": "end_turn"}}, headers=ny.auth(1))
    check(post, act, "invalid_action", json={"action": {"type": "fly"}}, headers=ny.auth(0))
    check(post, act, "must_acquire", json={"action": {"type": "end_turn"}}, headers=ny.auth(0))
    check(post, act, "version_conflict",
          json={"action": {"type": "end_turn"}, "expectedVersion": 5}, headers=ny.auth(0))
    check(post, act, "precondition_failed", json={"action": {"type": "end_turn"}},
          headers={**ny.auth(0), "If-Match": '"5"'})
    check(post, act, "unauthorized", json={"action": {"type": "end_turn"}})
    check(post, f"{toy.url}/seats/0/bot", "bad_bots", json={"kind": "clever"},
          headers=toy.auth(0))
    check(post, f"{toy.url}/seats/1/bot", "unauthorized", json={"kind": "random"},
          headers=toy.auth(0))
    assert len(seen) >= 23


# -- docs ------------------------------------------------------------------------------------


def test_docs_codes_md_matches_the_data() -> None:
    text = pc.DOC.read_text(encoding="utf-8")
    assert pc.render_doc(text) == text, "run: python -m service.api.problem_codes"
    for game in pc.game_refusals():
        assert f"(`{game}`) refusal codes" in text
    for code in CODES:
        assert f"| `{code}` |" in text


def test_the_generated_docs_need_only_the_real_games(toy_game: None) -> None:
    # The toy game publishes no refusal codes: the rendered tables do not depend on it.
    assert TOY in games.ids()
    assert TOY not in pc.game_refusals()


def test_docs_state_the_compatibility_policy() -> None:
    api = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    assert "## Compatibility policy for `/v1`" in api
    for needle in ("Deprecation", "Sunset", "codes.md", "additive"):
        assert needle in api, needle
    graphql = (ROOT / "docs" / "graphql.md").read_text(encoding="utf-8")
    assert "codes.md" in graphql


@pytest.mark.parametrize("operation", sorted(pc.OPERATION_CODES))
def test_codes_for_keeps_the_table_order(operation: str) -> None:
    listed = pc.codes_for(operation)
    assert listed == [c for c in CODES if c in listed]
    assert sorted(listed) == sorted(pc.OPERATION_CODES[operation])
