"""The REST API (docs/api.md): Starlette routes over ``MatchService``, a module
per resource.

Each handler parses the request, calls one service method and renders the answer; every
refusal is an ``ApiError`` rendered as ``application/problem+json`` (``..problems``). No rule
is decided here.
"""

from __future__ import annotations

from starlette.routing import Route

from .actions import act
from .events import match_events
from .feed import create_feed_ticket, player_events
from .games import get_game, list_games
from .invitations import (
    accept_invitation,
    create_invitation,
    decline_invitation,
    get_invitation,
    my_invitations,
    redeem_invitation,
    revoke_invitation,
)
from .matches import get_match, legal_moves, match_log
from .ops import healthz, metrics, openapi, readyz
from .players import app_matches, app_player, create_player, me, my_matches, renew_seat_token
from .queue import enqueue, queue_ticket
from .seats import hand_seat_to_bot, reclaim_seat, resign_seat
from .tables import (
    cancel_match,
    join_match,
    leave_match,
    lobby,
    matches_root,
    rematch_match,
    start_match,
)
from .tickets import create_stream_ticket
from .webhooks import (
    enable_webhook,
    ping_webhook,
    rotate_webhook_secret,
    webhook,
    webhook_deliveries,
    webhooks,
)


def rest_routes() -> list[Route]:
    return [
        Route("/v1/games", list_games, methods=["GET"], name="list_games"),
        Route("/v1/games/{game_id}", get_game, methods=["GET"], name="get_game"),
        Route("/v1/matches", matches_root, methods=["GET", "POST"], name="create_match"),
        Route("/v1/lobby", lobby, methods=["GET"], name="lobby"),
        Route("/v1/matches/{match_id}/join", join_match, methods=["POST"], name="join_match"),
        Route("/v1/matches/{match_id}/leave", leave_match, methods=["POST"],
              name="leave_match"),
        Route("/v1/matches/{match_id}/start", start_match, methods=["POST"],
              name="start_match"),
        Route("/v1/matches/{match_id}/cancel", cancel_match, methods=["POST"],
              name="cancel_match"),
        Route("/v1/matches/{match_id}/rematch", rematch_match, methods=["POST"],
              name="rematch_match"),
        Route("/v1/matches/{match_id}/invitations", create_invitation, methods=["POST"],
              name="create_invitation"),
        Route("/v1/matches/{match_id}/invitations/{code}", revoke_invitation,
              methods=["DELETE"], name="revoke_invitation"),
        Route("/v1/invitations/{code}", get_invitation, methods=["GET"],
              name="get_invitation"),
        Route("/v1/invitations/{code}/redeem", redeem_invitation, methods=["POST"],
              name="redeem_invitation"),
        Route("/v1/me/invitations", my_invitations, methods=["GET"], name="my_invitations"),
        Route("/v1/me/invitations/{invitation_id}/accept", accept_invitation,
              methods=["POST"], name="accept_invitation"),
        Route("/v1/me/invitations/{invitation_id}/decline", decline_invitation,
              methods=["POST"], name="decline_invitation"),
        Route("/v1/matches/{match_id}", get_match, methods=["GET"], name="get_match"),
        Route(
            "/v1/matches/{match_id}/legal-moves", legal_moves, methods=["GET"], name="legal_moves"
        ),
        Route("/v1/matches/{match_id}/actions", act, methods=["POST"], name="act"),
        Route(
            "/v1/matches/{match_id}/seats/{seat:int}/bot", hand_seat_to_bot, methods=["POST"],
            name="hand_seat_to_bot",
        ),
        Route(
            "/v1/matches/{match_id}/seats/{seat:int}/resign", resign_seat, methods=["POST"],
            name="resign_seat",
        ),
        Route(
            "/v1/matches/{match_id}/seats/{seat:int}/reclaim", reclaim_seat, methods=["POST"],
            name="reclaim_seat",
        ),
        Route(
            "/v1/matches/{match_id}/seats/{seat:int}/token", renew_seat_token,
            methods=["POST"], name="renew_seat_token",
        ),
        Route("/v1/matches/{match_id}/log", match_log, methods=["GET"], name="match_log"),
        Route("/v1/matches/{match_id}/events", match_events, methods=["GET"], name="events"),
        Route(
            "/v1/matches/{match_id}/stream-tickets", create_stream_ticket, methods=["POST"],
            name="create_stream_ticket",
        ),
        Route("/v1/players", create_player, methods=["POST"], name="create_player"),
        Route("/v1/me", me, methods=["GET", "DELETE"], name="me"),
        Route("/v1/me/matches", my_matches, methods=["GET"], name="my_matches"),
        Route("/v1/me/events", player_events, methods=["GET"], name="player_events"),
        Route("/v1/me/stream-tickets", create_feed_ticket, methods=["POST"],
              name="create_feed_ticket"),
        Route("/v1/queue", enqueue, methods=["POST"], name="enqueue"),
        Route("/v1/queue/{ticket}", queue_ticket, methods=["GET", "DELETE"],
              name="queue_ticket"),
        Route("/v1/apps/me/matches", app_matches, methods=["GET"], name="app_matches"),
        Route("/v1/apps/me/players/{sub}", app_player, methods=["GET", "DELETE"],
              name="app_player"),
        Route("/v1/apps/me/webhooks", webhooks, methods=["GET", "POST"], name="webhooks"),
        Route("/v1/apps/me/webhooks/{webhook_id}", webhook,
              methods=["GET", "PATCH", "DELETE"], name="webhook"),
        Route("/v1/apps/me/webhooks/{webhook_id}/ping", ping_webhook, methods=["POST"],
              name="ping_webhook"),
        Route("/v1/apps/me/webhooks/{webhook_id}/enable", enable_webhook, methods=["POST"],
              name="enable_webhook"),
        Route("/v1/apps/me/webhooks/{webhook_id}/rotate-secret", rotate_webhook_secret,
              methods=["POST"], name="rotate_webhook_secret"),
        Route("/v1/apps/me/webhooks/{webhook_id}/deliveries", webhook_deliveries,
              methods=["GET"], name="webhook_deliveries"),
        Route("/healthz", healthz, methods=["GET"], name="healthz"),
        Route("/readyz", readyz, methods=["GET"], name="readyz"),
        Route("/metrics", metrics, methods=["GET"], name="metrics"),
        Route("/openapi.json", openapi, methods=["GET"], name="openapi"),
    ]
