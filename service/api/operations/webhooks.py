"""An app's webhook endpoints (``/v1/apps/me/webhooks``, the app's key, through
``WebhookService``): listed, created (the signing secret shown once), read, changed,
deleted, pinged, enabled, their secret rotated, and their delivery log."""

from __future__ import annotations

from typing import Any

from service.errors import ApiError
from service.webhooks import WebhookService
from service.webhooks.models import (
    DELIVERIES_DEFAULT,
    DELIVERIES_MAX,
    CreateWebhookRequest,
    DeliveriesPage,
    PingQueued,
    UpdateWebhookRequest,
    Webhook,
    WebhookCreated,
    WebhookList,
    WebhookSecret,
)

from ..rest.http import query_count, query_once
from . import codes
from .base import (
    APP_SECURITY,
    NO_STORE,
    PRIVATE,
    RESOLVER,
    Call,
    Context,
    Operation,
    Param,
    Reply,
    mutation,
    query,
)

WEBHOOK_ID = Param("webhookId", "path", {"type": "string", "minLength": 1, "maxLength": 64},
                   "The endpoint's id (`we_…`, createWebhook's `id`).")
NEEDS_KEY = " Needs the app's key (docs/clocks-and-notifications.md)."
ONE = (*codes.APP, "webhook_not_found")
"""An endpoint by its id."""
CHANGE = (*codes.BODY, *codes.APP, *codes.WEBHOOK_URL, "bad_webhook")
"""An endpoint's settings, checked."""


def webhooks_of(context: Context) -> WebhookService:
    service: WebhookService | None = getattr(context.state, "webhook_service", None)
    if service is None:
        raise ApiError.of("unauthorized", "Webhooks are not served here.")
    return service


def _id(context: Context) -> str:
    return str(context.path["webhook_id"])


async def list_webhooks(context: Context) -> Any:
    return await webhooks_of(context).all(context.caller)


async def create_webhook(context: Context) -> Any:
    return await webhooks_of(context).create(context.caller, context.body)


async def get_webhook(context: Context) -> Any:
    return await webhooks_of(context).get(context.caller, _id(context))


async def update_webhook(context: Context) -> Any:
    return await webhooks_of(context).update(context.caller, _id(context), context.body)


async def delete_webhook(context: Context) -> Any:
    return await webhooks_of(context).delete(context.caller, _id(context))


async def ping_webhook(context: Context) -> Any:
    return await webhooks_of(context).ping(context.caller, _id(context))


async def enable_webhook(context: Context) -> Any:
    return await webhooks_of(context).enable(context.caller, _id(context))


async def rotate_webhook_secret(context: Context) -> Any:
    return await webhooks_of(context).rotate_secret(context.caller, _id(context))


async def list_webhook_deliveries(context: Context) -> Any:
    return await webhooks_of(context).deliveries(
        context.caller, _id(context), context.query["cursor"], context.query["limit"])


def _webhook_op(id: str, method: str, path: str, summary: str, description: str,
                reply: Reply, call: Call, codes: tuple[str, ...], **more: Any) -> Operation:
    """An operation on the app's endpoints: its key needed, answers never cached shared."""
    reads = method == "GET"
    return Operation(
        id=id, method=method, path="/v1/apps/me/webhooks" + path, tag="webhooks",
        summary=summary, description=description + NEEDS_KEY, codes=codes,
        budget="read" if reads else "act", security=APP_SECURITY,
        graphql=query(more.pop("graphql", None), hand_written=RESOLVER)
            if reads else mutation(hand_written=RESOLVER),
        params=more.pop("params", (WEBHOOK_ID,)), reply=reply, call=call,
        headers=PRIVATE if reads else NO_STORE, **more,
    )


BY_ID = {"webhookId": "$response.body#/id"}
CREATED_LINKS = {
    "GetWebhook": {"operationId": "getWebhook", "parameters": BY_ID},
    "PingWebhook": {"operationId": "pingWebhook", "parameters": BY_ID},
    "ListWebhookDeliveries": {"operationId": "listWebhookDeliveries", "parameters": BY_ID},
}

OPERATIONS = (
    _webhook_op(
        "listWebhooks", "GET", "", "The app's webhook endpoints.",
        "Oldest first; secrets are never shown again.",
        Reply(WebhookList, "The endpoints."), list_webhooks, codes.APP,
        params=(), graphql="webhooks"),
    _webhook_op(
        "createWebhook", "POST", "", "A new webhook endpoint (its signing secret shown once).",
        "Events of the app's matches are POSTed to `url`, signed as Standard Webhooks with "
        "the answer's `secret` (`whsec_…`, shown only now). Refusals: "
        "`webhook_url_not_https`, `webhook_url_forbidden` (the URL points inside a private "
        "network), `bad_webhook` (an unknown event kind, `warnBeforeSeconds` out of range, "
        "too many endpoints).",
        Reply(WebhookCreated, "Created.", links=CREATED_LINKS), create_webhook, CHANGE,
        params=(), body=CreateWebhookRequest, status=201,
        location=lambda created: f"/v1/apps/me/webhooks/{created.id}"),
    _webhook_op(
        "getWebhook", "GET", "/{webhookId}", "One webhook endpoint.",
        "Its settings and health (`enabled`, `failures`).",
        Reply(Webhook, "The endpoint."), get_webhook, ONE, graphql="webhook"),
    _webhook_op(
        "updateWebhook", "PATCH", "/{webhookId}",
        "Change an endpoint's URL, events or warning time.",
        "Fields left out stay as they are.",
        Reply(Webhook, "The endpoint after the change."), update_webhook,
        (*CHANGE, "webhook_not_found"), body=UpdateWebhookRequest),
    _webhook_op(
        "deleteWebhook", "DELETE", "/{webhookId}", "Delete an endpoint.",
        "Nothing more is sent to it; deliveries still pending are dropped.",
        Reply(Webhook, "The endpoint, deleted."), delete_webhook, ONE),
    _webhook_op(
        "pingWebhook", "POST", "/{webhookId}/ping", "Send a `ping` event to the endpoint.",
        "The event is queued (202) and delivered like any other; its id is the delivery's "
        "`webhook-id` and names it in the delivery log. No body.",
        Reply(PingQueued, "Queued."), ping_webhook, ONE, status=202),
    _webhook_op(
        "enableWebhook", "POST", "/{webhookId}/enable",
        "Enable an endpoint the server disabled.",
        "After a run of failed deliveries the server disables an endpoint (`enabled: "
        "false`); this turns it back on and forgets the run. No body.",
        Reply(Webhook, "The endpoint, enabled."), enable_webhook, ONE),
    _webhook_op(
        "rotateWebhookSecret", "POST", "/{webhookId}/rotate-secret",
        "A new signing secret (shown once).",
        "The old secret signs nothing from now on. No body.",
        Reply(WebhookSecret, "The new secret."), rotate_webhook_secret, ONE),
    _webhook_op(
        "listWebhookDeliveries", "GET", "/{webhookId}/deliveries",
        "The endpoint's delivery log, newest first.",
        "One item per attempt: the event, its attempt number, when, the HTTP status or the "
        "error, how long it took and when the next attempt is due. Follow `nextCursor` (as "
        "`cursor`) for older ones; at least the last 1,000 attempts or 3 days are kept.",
        Reply(DeliveriesPage, "A page of attempts."), list_webhook_deliveries,
        (*codes.APP, "malformed", "webhook_not_found"), graphql="webhookDeliveries",
        params=(WEBHOOK_ID,
                Param("cursor", "query", {"type": "string", "maxLength": 20},
                      "`nextCursor` of the previous page.", parse=query_once),
                Param("limit", "query", {"type": "integer", "minimum": 1,
                                         "maximum": DELIVERIES_MAX,
                                         "default": DELIVERIES_DEFAULT},
                      "The most items in the page.", parse=query_count))),
)
