"""Webhooks in GraphQL: the same operations as REST's ``/v1/apps/me/webhooks``, on the same
``WebhookService`` (``service.webhooks``), with the same codes as union members (an unknown
endpoint: ``NotFound`` ``webhook_not_found``; a refused URL or setting: ``BadRequest``
``webhook_url_not_https``, ``webhook_url_forbidden``, ``bad_webhook``). Every operation needs
the app's key.

Queries ``webhooks``, ``webhook(id)`` and ``webhookDeliveries``; mutations ``createWebhook``
(the secret shown once), ``updateWebhook``, ``deleteWebhook``, ``pingWebhook``,
``enableWebhook`` and ``rotateWebhookSecret``, charged to the ``act`` budget as their REST
twins. The Query and Mutation types inherit these fields (``queries.py``, ``mutations.py``).
"""

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import strawberry
from pydantic import ValidationError

from service.errors import ApiError
from service.webhooks import WebhookService
from service.webhooks import models as m

from ..rate_limits import charge, limits_of
from .context import Context, Info
from .results import answer, result_union
from .types.failures import BadRequest, NotFound, Unauthorized, Unavailable
from .types.wire import PING_QUEUED, WEBHOOK, WEBHOOK_DELIVERIES, WEBHOOK_LIST, WEBHOOK_SECRET

FAILURES: tuple[type, ...] = (Unauthorized, NotFound, BadRequest, Unavailable)
T = TypeVar("T")
Webhook: Any = WEBHOOK.annotation


@strawberry.type(description="A new webhook endpoint and its signing secret (shown once).")
class WebhookCreated:
    """Hand-written: GraphQL nests the endpoint (``webhook``) where REST's ``WebhookCreated``
    extends ``Webhook`` with ``secret``; a published shape, so kept."""

    webhook: Webhook
    secret: str = strawberry.field(
        description=m.WebhookCreated.model_fields["secret"].description)

    @classmethod
    def from_model(cls, out: m.WebhookCreated) -> "WebhookCreated":
        return cls(webhook=WEBHOOK.convert(out), secret=out.secret)


webhook_result = result_union("WebhookResult", WEBHOOK.annotation, FAILURES,
                              "A webhook endpoint, or why not.")
webhooks_result = result_union("WebhooksResult", WEBHOOK_LIST.annotation, FAILURES,
                               "The app's webhook endpoints, or why not.")
created_result = result_union("CreateWebhookResult", WebhookCreated, FAILURES,
                              "A new webhook endpoint and its secret, or why not.")
secret_result = result_union("WebhookSecretResult", WEBHOOK_SECRET.annotation, FAILURES,
                             "The endpoint's new secret, or why not.")
ping_result = result_union("PingWebhookResult", PING_QUEUED.annotation, FAILURES,
                           "The queued ping, or why not.")
deliveries_result = result_union("WebhookDeliveriesResult", WEBHOOK_DELIVERIES.annotation,
                                 FAILURES,
                                 "A page of the endpoint's delivery log, or why not.")


def _webhooks(ctx: Context) -> WebhookService:
    service: WebhookService | None = getattr(ctx.request.app.state, "webhook_service", None)
    if service is None:
        raise ApiError.of("unauthorized", "Webhooks are not served here.")
    return service


def _body(model: type[Any], fields: dict[str, Any]) -> Any:
    """The arguments as REST's body, checked by the same model."""
    try:
        return model.model_validate({k: v for k, v in fields.items() if v is not None})
    except ValidationError as error:
        first = error.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "input"
        raise ApiError.of("malformed", f"{where}: {first['msg']}") from None


@strawberry.type
class WebhooksQuery:
    @strawberry.field(description="The calling app's webhook endpoints (needs the app's key; "
                      "REST: GET /v1/apps/me/webhooks).")
    async def webhooks(self, info: Info) -> webhooks_result:  # type: ignore[valid-type]
        ctx = info.context
        return await answer(FAILURES, lambda: _webhooks(ctx).all(ctx.credentials()),
                            WEBHOOK_LIST.convert, ctx.lang)

    @strawberry.field(description="One of the app's webhook endpoints (NotFound "
                      "`webhook_not_found`).")
    async def webhook(self, info: Info, id: strawberry.ID) -> webhook_result:  # type: ignore[valid-type]
        ctx = info.context
        return await answer(FAILURES, lambda: _webhooks(ctx).get(ctx.credentials(), str(id)),
                            WEBHOOK.convert, ctx.lang)

    @strawberry.field(description="An endpoint's delivery log, newest first: follow "
                      f"`nextCursor` (as `cursor`); `limit` 1 to {m.DELIVERIES_MAX} (default "
                      f"{m.DELIVERIES_DEFAULT}). REST: GET "
                      "/v1/apps/me/webhooks/{id}/deliveries.")
    async def webhook_deliveries(
        self, info: Info, id: strawberry.ID, cursor: str | None = None,
        limit: int | None = None,
    ) -> deliveries_result:  # type: ignore[valid-type]
        ctx = info.context
        return await answer(
            FAILURES,
            lambda: _webhooks(ctx).deliveries(ctx.credentials(), str(id), cursor, limit),
            WEBHOOK_DELIVERIES.convert, ctx.lang)


async def _charged(ctx: Context) -> Any:
    caller = ctx.credentials()
    await charge(limits_of(ctx.request.app), ctx.request.scope, "act")
    return caller


async def _on_endpoint(ctx: Context, id: strawberry.ID,
                       operation: Callable[[WebhookService, Any, str], Awaitable[T]],
                       render: Callable[[T], object]) -> object:
    """A mutation of one endpoint that takes nothing but its id: ``operation`` (a
    ``WebhookService`` method) for the charged caller, rendered, or the failure member."""
    async def call() -> T:
        service = _webhooks(ctx)
        return await operation(service, await _charged(ctx), str(id))

    return await answer(FAILURES, call, render, ctx.lang)


@strawberry.type
class WebhooksMutation:
    @strawberry.mutation(description="A new webhook endpoint of the calling app: events of "
                         "its matches are POSTed to `url`, signed (Standard Webhooks) with "
                         "the answer's `secret`, shown only now. BadRequest "
                         "`webhook_url_not_https`, `webhook_url_forbidden`, `bad_webhook`. "
                         "REST: POST /v1/apps/me/webhooks.")
    async def create_webhook(
        self, info: Info, url: str, events: list[str],
        warn_before_seconds: int | None = None,
    ) -> created_result:  # type: ignore[valid-type]
        ctx = info.context

        async def create() -> Any:
            caller = await _charged(ctx)
            body = _body(m.CreateWebhookRequest, {
                "url": url, "events": events, "warnBeforeSeconds": warn_before_seconds})
            return await _webhooks(ctx).create(caller, body)

        return await answer(FAILURES, create, WebhookCreated.from_model, ctx.lang)

    @strawberry.mutation(description="Change an endpoint's `url`, `events` or "
                         "`warnBeforeSeconds` (those left out stay). REST: PATCH "
                         "/v1/apps/me/webhooks/{id}.")
    async def update_webhook(
        self, info: Info, id: strawberry.ID, url: str | None = None,
        events: list[str] | None = None, warn_before_seconds: int | None = None,
    ) -> webhook_result:  # type: ignore[valid-type]
        ctx = info.context

        async def update() -> Any:
            caller = await _charged(ctx)
            body = _body(m.UpdateWebhookRequest, {
                "url": url, "events": events, "warnBeforeSeconds": warn_before_seconds})
            return await _webhooks(ctx).update(caller, str(id), body)

        return await answer(FAILURES, update, WEBHOOK.convert, ctx.lang)

    @strawberry.mutation(description="Delete an endpoint; its pending deliveries are "
                         "dropped. REST: DELETE /v1/apps/me/webhooks/{id}.")
    async def delete_webhook(self, info: Info, id: strawberry.ID) -> webhook_result:  # type: ignore[valid-type]
        return await _on_endpoint(info.context, id, WebhookService.delete,
                                  WEBHOOK.convert)

    @strawberry.mutation(description="Queue a `ping` event to the endpoint; its id names the "
                         "delivery. REST: POST /v1/apps/me/webhooks/{id}/ping.")
    async def ping_webhook(self, info: Info, id: strawberry.ID) -> ping_result:  # type: ignore[valid-type]
        return await _on_endpoint(info.context, id, WebhookService.ping, PING_QUEUED.convert)

    @strawberry.mutation(description="Enable an endpoint the server disabled after a run of "
                         "failed deliveries (the run is forgotten). REST: POST "
                         "/v1/apps/me/webhooks/{id}/enable.")
    async def enable_webhook(self, info: Info, id: strawberry.ID) -> webhook_result:  # type: ignore[valid-type]
        return await _on_endpoint(info.context, id, WebhookService.enable,
                                  WEBHOOK.convert)

    @strawberry.mutation(description="A new signing secret for the endpoint, shown once; the "
                         "old one signs nothing from now on. REST: POST "
                         "/v1/apps/me/webhooks/{id}/rotate-secret.")
    async def rotate_webhook_secret(
        self, info: Info, id: strawberry.ID
    ) -> secret_result:  # type: ignore[valid-type]
        return await _on_endpoint(info.context, id, WebhookService.rotate_secret,
                                  WEBHOOK_SECRET.convert)


__all__ = ["WebhooksMutation", "WebhooksQuery"]
