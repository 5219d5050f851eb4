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
                reply: Reply, call: Call, codes: tuple[str, ...], graphql: str,
                result: str = "WebhookResult", **more: Any) -> Operation:
    """An operation on the app's endpoints: its key needed, answers never cached shared;
    ``graphql``: the field's description, ``result``: its union (its description in
    ``RESULTS``)."""
    reads = method == "GET"
    spec = {"description": graphql, "args": {"webhookId": "id"}, "result": result,
            "result_description": RESULTS[result], "also": ("webhook_not_found",),
            "optional": more.pop("optional", ())}
    return Operation(
        id=id, method=method, path="/v1/apps/me/webhooks" + path, tag="webhooks",
        summary=summary, description=description + NEEDS_KEY, codes=codes,
        budget="read" if reads else "act", security=APP_SECURITY,
        graphql=query(more.pop("name", None), **spec) if reads else mutation(**spec),
        params=more.pop("params", (WEBHOOK_ID,)), reply=reply, call=call,
        headers=PRIVATE if reads else NO_STORE, **more,
    )


RESULTS = {
    "WebhookResult": "A webhook endpoint, or why not.",
    "WebhooksResult": "The app's webhook endpoints, or why not.",
    "CreateWebhookResult": "A new webhook endpoint and its secret, or why not.",
    "WebhookSecretResult": "The endpoint's new secret, or why not.",
    "PingWebhookResult": "The queued ping, or why not.",
    "WebhookDeliveriesResult": "A page of the endpoint's delivery log, or why not.",
}
"""The GraphQL result unions of the webhook operations, and their descriptions."""
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
        "The calling app's webhook endpoints (needs the app's key; REST: GET "
        "/v1/apps/me/webhooks).", "WebhooksResult", params=(), name="webhooks"),
    _webhook_op(
        "createWebhook", "POST", "", "A new webhook endpoint (its signing secret shown once).",
        "Events of the app's matches are POSTed to `url`, signed as Standard Webhooks with "
        "the answer's `secret` (`whsec_…`, shown only now). Refusals: "
        "`webhook_url_not_https`, `webhook_url_forbidden` (the URL points inside a private "
        "network), `bad_webhook` (an unknown event kind, `warnBeforeSeconds` out of range, "
        "too many endpoints).",
        Reply(WebhookCreated, "Created.", links=CREATED_LINKS), create_webhook, CHANGE,
        "A new webhook endpoint of the calling app: events of its matches are POSTed to "
        "`url`, signed (Standard Webhooks) with the answer's `secret`, shown only now. "
        "BadRequest `webhook_url_not_https`, `webhook_url_forbidden`, `bad_webhook`. REST: "
        "POST /v1/apps/me/webhooks.", "CreateWebhookResult", params=(),
        body=CreateWebhookRequest, status=201,
        location=lambda created: f"/v1/apps/me/webhooks/{created.id}"),
    _webhook_op(
        "getWebhook", "GET", "/{webhookId}", "One webhook endpoint.",
        "Its settings and health (`enabled`, `failures`).",
        Reply(Webhook, "The endpoint."), get_webhook, ONE,
        "One of the app's webhook endpoints (NotFound `webhook_not_found`).", name="webhook"),
    _webhook_op(
        "updateWebhook", "PATCH", "/{webhookId}",
        "Change an endpoint's URL, events or warning time.",
        "Fields left out stay as they are.",
        Reply(Webhook, "The endpoint after the change."), update_webhook,
        (*CHANGE, "webhook_not_found"),
        "Change an endpoint's `url`, `events` or `warnBeforeSeconds` (those left out stay). "
        "REST: PATCH /v1/apps/me/webhooks/{id}.", body=UpdateWebhookRequest),
    _webhook_op(
        "deleteWebhook", "DELETE", "/{webhookId}", "Delete an endpoint.",
        "Nothing more is sent to it; deliveries still pending are dropped.",
        Reply(Webhook, "The endpoint, deleted."), delete_webhook, ONE,
        "Delete an endpoint; its pending deliveries are dropped. REST: DELETE "
        "/v1/apps/me/webhooks/{id}."),
    _webhook_op(
        "pingWebhook", "POST", "/{webhookId}/ping", "Send a `ping` event to the endpoint.",
        "The event is queued (202) and delivered like any other; its id is the delivery's "
        "`webhook-id` and names it in the delivery log. No body.",
        Reply(PingQueued, "Queued."), ping_webhook, ONE,
        "Queue a `ping` event to the endpoint; its id names the delivery. REST: POST "
        "/v1/apps/me/webhooks/{id}/ping.", "PingWebhookResult", status=202),
    _webhook_op(
        "enableWebhook", "POST", "/{webhookId}/enable",
        "Enable an endpoint the server disabled.",
        "After a run of failed deliveries the server disables an endpoint (`enabled: "
        "false`); this turns it back on and forgets the run. No body.",
        Reply(Webhook, "The endpoint, enabled."), enable_webhook, ONE,
        "Enable an endpoint the server disabled after a run of failed deliveries (the run is "
        "forgotten). REST: POST /v1/apps/me/webhooks/{id}/enable."),
    _webhook_op(
        "rotateWebhookSecret", "POST", "/{webhookId}/rotate-secret",
        "A new signing secret (shown once).",
        "The old secret signs nothing from now on. No body.",
        Reply(WebhookSecret, "The new secret."), rotate_webhook_secret, ONE,
        "A new signing secret for the endpoint, shown once; the old one signs nothing from "
        "now on. REST: POST /v1/apps/me/webhooks/{id}/rotate-secret.", "WebhookSecretResult"),
    _webhook_op(
        "listWebhookDeliveries", "GET", "/{webhookId}/deliveries",
        "The endpoint's delivery log, newest first.",
        "One item per attempt: the event, its attempt number, when, the HTTP status or the "
        "error, how long it took and when the next attempt is due. Follow `nextCursor` (as "
        "`cursor`) for older ones; at least the last 1,000 attempts or 3 days are kept.",
        Reply(DeliveriesPage, "A page of attempts."), list_webhook_deliveries,
        (*codes.APP, "malformed", "webhook_not_found"),
        "An endpoint's delivery log, newest first: follow `nextCursor` (as `cursor`); "
        f"`limit` 1 to {DELIVERIES_MAX} (default {DELIVERIES_DEFAULT}). REST: GET "
        "/v1/apps/me/webhooks/{id}/deliveries.", "WebhookDeliveriesResult",
        name="webhookDeliveries", optional=("limit",),
        params=(WEBHOOK_ID,
                Param("cursor", "query", {"type": "string", "maxLength": 20},
                      "`nextCursor` of the previous page.", parse=query_once),
                Param("limit", "query", {"type": "integer", "minimum": 1,
                                         "maximum": DELIVERIES_MAX,
                                         "default": DELIVERIES_DEFAULT},
                      "The most items in the page.", parse=query_count))),
)
