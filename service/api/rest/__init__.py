"""The REST API (DESIGN.md, "API surface"): Starlette routes over ``MatchService``, a module
per resource.

Each handler parses the request, calls one service method and renders the answer; every
refusal is an ``ApiError`` rendered as ``application/problem+json`` (``..problems``). No rule
is decided here.
"""

from __future__ import annotations

from starlette.routing import Route

from .actions import act
from .events import match_events
from .games import get_game, list_games
from .matches import create_match, get_match, legal_moves, match_log
from .ops import healthz, metrics, openapi, readyz
from .seats import hand_seat_to_bot
from .tickets import create_stream_ticket


def rest_routes() -> list[Route]:
    return [
        Route("/v1/games", list_games, methods=["GET"], name="list_games"),
        Route("/v1/games/{game_id}", get_game, methods=["GET"], name="get_game"),
        Route("/v1/matches", create_match, methods=["POST"], name="create_match"),
        Route("/v1/matches/{match_id}", get_match, methods=["GET"], name="get_match"),
        Route(
            "/v1/matches/{match_id}/legal-moves", legal_moves, methods=["GET"], name="legal_moves"
        ),
        Route("/v1/matches/{match_id}/actions", act, methods=["POST"], name="act"),
        Route(
            "/v1/matches/{match_id}/seats/{seat:int}/bot", hand_seat_to_bot, methods=["POST"],
            name="hand_seat_to_bot",
        ),
        Route("/v1/matches/{match_id}/log", match_log, methods=["GET"], name="match_log"),
        Route("/v1/matches/{match_id}/events", match_events, methods=["GET"], name="events"),
        Route(
            "/v1/matches/{match_id}/stream-tickets", create_stream_ticket, methods=["POST"],
            name="create_stream_ticket",
        ),
        Route("/healthz", healthz, methods=["GET"], name="healthz"),
        Route("/readyz", readyz, methods=["GET"], name="readyz"),
        Route("/metrics", metrics, methods=["GET"], name="metrics"),
        Route("/openapi.json", openapi, methods=["GET"], name="openapi"),
    ]
