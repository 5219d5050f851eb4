"""The REST API (DESIGN.md, "API surface"): Starlette routes over ``MatchService``, a module
per resource.

Each handler parses the request, calls one service method and renders the answer; every
refusal is an ``ApiError`` rendered as ``application/problem+json`` (``..problems``). No rule
is decided here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from starlette.routing import Route

from .invitations import (
    accept_invitation,
    create_invitation,
    decline_invitation,
    get_invitation,
    my_invitations,
    redeem_invitation,
    revoke_invitation,
)
from .ops import healthz, metrics, openapi, readyz
from .queue import enqueue, queue_ticket

if TYPE_CHECKING:
    from ..operations import Operation
from .webhooks import (
    enable_webhook,
    ping_webhook,
    rotate_webhook_secret,
    webhook,
    webhook_deliveries,
    webhooks,
)


def rest_routes(operations: Sequence[Operation] | None = None) -> list[Route]:
    """The routes of ``operations`` (default: the table, ``service.api.operations``; it
    uses this package's handlers, so it is read here, not imported with the package), then
    those not declared there yet."""
    from ..operations import OPERATIONS
    from ..operations.routes import operation_routes

    return [
        *operation_routes(OPERATIONS if operations is None else operations),
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
        Route("/v1/queue", enqueue, methods=["POST"], name="enqueue"),
        Route("/v1/queue/{ticket}", queue_ticket, methods=["GET", "DELETE"],
              name="queue_ticket"),
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
