"""Webhooks in GraphQL: the operations of REST's ``/v1/apps/me/webhooks`` are generated from
the operation table (``fields.py``); here are what they cannot say.

- ``WebhookCreated``: ``createWebhook``'s answer, a published shape of its own (``OUTPUTS``).
"""

from typing import Any

import strawberry

from service.webhooks import models as m

from .convert import Codec
from .types.failures import BadRequest, NotFound, Unauthorized, Unavailable
from .types.wire import WEBHOOK

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

__all__ = ["OUTPUTS"]
