"""Webhooks in GraphQL: the same operations as REST's ``/v1/apps/me/webhooks``, on the same
``WebhookService`` (``service.notify``), with the same codes as union members (an unknown
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
from service.notify import WebhookService
from service.notify import models as m

from ..rate_limits import charge, limits_of
from .context import Context, Info
from .results import answer, result_union
from .types.failures import BadRequest, NotFound, Unauthorized, Unavailable

FAILURES: tuple[type, ...] = (Unauthorized, NotFound, BadRequest, Unavailable)
T = TypeVar("T")
_OUT = m.Webhook.model_fields
_TRY = m.DeliveryAttempt.model_fields


def _time(value: Any) -> str | None:
    return None if value is None else value.isoformat().replace("+00:00", "Z")


@strawberry.type(description="A webhook endpoint of the calling app (REST's Webhook).")
class Webhook:
    id: strawberry.ID = strawberry.field(description=_OUT["id"].description)
    url: str
    events: list[str] = strawberry.field(description=_OUT["events"].description)
    warn_before_seconds: int
    enabled: bool = strawberry.field(description=_OUT["enabled"].description)
    disabled_at: str | None = strawberry.field(description="RFC 3339, UTC; null while "
                                               "enabled.")
    failures: int = strawberry.field(description=_OUT["failures"].description)
    created_at: str = strawberry.field(description="RFC 3339, UTC.")

    @classmethod
    def from_model(cls, out: m.Webhook) -> "Webhook":
        return cls(id=strawberry.ID(out.id), url=out.url, events=list(out.events),
                   warn_before_seconds=out.warn_before_seconds, enabled=out.enabled,
                   disabled_at=_time(out.disabled_at), failures=out.failures,
                   created_at=str(_time(out.created_at)))


@strawberry.type(description="A new webhook endpoint and its signing secret (shown once).")
class WebhookCreated:
    webhook: Webhook
    secret: str = strawberry.field(
        description=m.WebhookCreated.model_fields["secret"].description)

    @classmethod
    def from_model(cls, out: m.WebhookCreated) -> "WebhookCreated":
        return cls(webhook=Webhook.from_model(out), secret=out.secret)


@strawberry.type(description="An endpoint's new signing secret (shown once).")
class WebhookSecret:
    id: strawberry.ID
    secret: str = strawberry.field(
        description=m.WebhookSecret.model_fields["secret"].description)


@strawberry.type(description="A queued ping.")
class PingQueued:
    webhook_id: strawberry.ID
    event_id: str = strawberry.field(description=m.PingQueued.model_fields["event_id"]
                                     .description)


@strawberry.type(description="One attempt to deliver one event (REST's DeliveryAttempt).")
class DeliveryAttempt:
    event_id: str = strawberry.field(description=_TRY["event_id"].description)
    type: str = strawberry.field(description=_TRY["type"].description)
    attempt: int = strawberry.field(description=_TRY["attempt"].description)
    at: str = strawberry.field(description="RFC 3339, UTC.")
    status: int | None = strawberry.field(description=_TRY["status"].description)
    error: str | None = strawberry.field(description=_TRY["error"].description)
    duration_ms: int
    outcome: str = strawberry.field(description=_TRY["outcome"].description)
    next_retry_at: str | None = strawberry.field(description="RFC 3339, UTC; null: none.")


@strawberry.type(description="A page of an endpoint's delivery log, newest first.")
class WebhookDeliveriesPage:
    items: list[DeliveryAttempt]
    next_cursor: str | None = strawberry.field(
        description="Pass it as `cursor` for older attempts; null: none kept.")

    @classmethod
    def from_model(cls, page: m.DeliveriesPage) -> "WebhookDeliveriesPage":
        return cls(items=[DeliveryAttempt(
            event_id=i.event_id, type=i.type, attempt=i.attempt, at=str(_time(i.at)),
            status=i.status, error=i.error, duration_ms=i.duration_ms, outcome=i.outcome,
            next_retry_at=_time(i.next_retry_at)) for i in page.items],
            next_cursor=page.next_cursor)


@strawberry.type(description="The app's webhook endpoints, oldest first.")
class WebhookList:
    items: list[Webhook]

    @classmethod
    def from_model(cls, out: m.WebhookList) -> "WebhookList":
        return cls(items=[Webhook.from_model(w) for w in out.items])


webhook_result = result_union("WebhookResult", Webhook, FAILURES,
                              "A webhook endpoint, or why not.")
webhooks_result = result_union("WebhooksResult", WebhookList, FAILURES,
                               "The app's webhook endpoints, or why not.")
created_result = result_union("CreateWebhookResult", WebhookCreated, FAILURES,
                              "A new webhook endpoint and its secret, or why not.")
secret_result = result_union("WebhookSecretResult", WebhookSecret, FAILURES,
                             "The endpoint's new secret, or why not.")
ping_result = result_union("PingWebhookResult", PingQueued, FAILURES,
                           "The queued ping, or why not.")
deliveries_result = result_union("WebhookDeliveriesResult", WebhookDeliveriesPage, FAILURES,
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
                            WebhookList.from_model, ctx.lang)

    @strawberry.field(description="One of the app's webhook endpoints (NotFound "
                      "`webhook_not_found`).")
    async def webhook(self, info: Info, id: strawberry.ID) -> webhook_result:  # type: ignore[valid-type]
        ctx = info.context
        return await answer(FAILURES, lambda: _webhooks(ctx).get(ctx.credentials(), str(id)),
                            Webhook.from_model, ctx.lang)

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
            WebhookDeliveriesPage.from_model, ctx.lang)


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

        return await answer(FAILURES, update, Webhook.from_model, ctx.lang)

    @strawberry.mutation(description="Delete an endpoint; its pending deliveries are "
                         "dropped. REST: DELETE /v1/apps/me/webhooks/{id}.")
    async def delete_webhook(self, info: Info, id: strawberry.ID) -> webhook_result:  # type: ignore[valid-type]
        return await _on_endpoint(info.context, id, WebhookService.delete,
                                  Webhook.from_model)

    @strawberry.mutation(description="Queue a `ping` event to the endpoint; its id names the "
                         "delivery. REST: POST /v1/apps/me/webhooks/{id}/ping.")
    async def ping_webhook(self, info: Info, id: strawberry.ID) -> ping_result:  # type: ignore[valid-type]
        return await _on_endpoint(info.context, id, WebhookService.ping, lambda out: PingQueued(
            webhook_id=strawberry.ID(out.webhook_id), event_id=out.event_id))

    @strawberry.mutation(description="Enable an endpoint the server disabled after a run of "
                         "failed deliveries (the run is forgotten). REST: POST "
                         "/v1/apps/me/webhooks/{id}/enable.")
    async def enable_webhook(self, info: Info, id: strawberry.ID) -> webhook_result:  # type: ignore[valid-type]
        return await _on_endpoint(info.context, id, WebhookService.enable,
                                  Webhook.from_model)

    @strawberry.mutation(description="A new signing secret for the endpoint, shown once; the "
                         "old one signs nothing from now on. REST: POST "
                         "/v1/apps/me/webhooks/{id}/rotate-secret.")
    async def rotate_webhook_secret(
        self, info: Info, id: strawberry.ID
    ) -> secret_result:  # type: ignore[valid-type]
        return await _on_endpoint(info.context, id, WebhookService.rotate_secret,
                                  lambda out: WebhookSecret(id=strawberry.ID(out.id),
                                                            secret=out.secret))


__all__ = ["WebhooksMutation", "WebhooksQuery"]
