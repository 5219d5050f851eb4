"""Webhooks in GraphQL: the operations of REST's ``/v1/apps/me/webhooks`` are generated from
the operation table (``fields.py``); here are what they cannot say.

- ``WebhookCreated``: ``createWebhook``'s answer, a published shape of its own (``OUTPUTS``).
- ``webhookDeliveries``: its ``limit`` argument is published optional (``Int = null``, the
  service's default applying), where REST's query parameter declares its default; a
  generated field would publish ``Int! = 20``.
"""

from typing import Any

import strawberry

from service.errors import ApiError
from service.webhooks import WebhookService
from service.webhooks import models as m

from .context import Context, Info
from .convert import Codec
from .results import answer, result_union
from .types.failures import BadRequest, NotFound, Unauthorized, Unavailable
from .types.wire import WEBHOOK, WEBHOOK_DELIVERIES

FAILURES: tuple[type, ...] = (Unauthorized, NotFound, BadRequest, Unavailable)
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


OUTPUTS: dict[type, Codec] = {m.WebhookCreated: Codec(WebhookCreated, WebhookCreated.from_model)}
"""The answers GraphQL publishes in a shape of its own, by wire model."""

deliveries_result = result_union("WebhookDeliveriesResult", WEBHOOK_DELIVERIES.annotation,
                                 FAILURES,
                                 "A page of the endpoint's delivery log, or why not.")


def _webhooks(ctx: Context) -> WebhookService:
    service: WebhookService | None = getattr(ctx.request.app.state, "webhook_service", None)
    if service is None:
        raise ApiError.of("unauthorized", "Webhooks are not served here.")
    return service


@strawberry.type
class WebhooksQuery:
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


__all__ = ["OUTPUTS", "WebhooksQuery"]
