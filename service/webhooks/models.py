"""Wire models of webhooks (camelCase JSON): they feed OpenAPI and the GraphQL types."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field
from pydantic.config import JsonDict

from service.matches.models import InputModel, WireModel

EVENT_KINDS = (
    "your_turn", "match_started", "match_finished", "timeout_soon", "timed_out", "invited",
    "player_joined", "player_left", "match_cancelled", "rematch_offered", "seat_changed",
)
"""What an endpoint may subscribe to (an open list: more may be added). ``ping`` is sent on
request to any endpoint."""
WARN_MIN_SECONDS = 10
WARN_MAX_SECONDS = 7 * 86400
WARN_DEFAULT_SECONDS = 300
DELIVERIES_MAX = 100
DELIVERIES_DEFAULT = 20
URL_MAX = 2048

_URL = ("An `https://` URL the server POSTs events to (`http://` only where the operator "
        "allows it). Its host must resolve to public addresses: loopback, private, "
        "link-local, unique-local, multicast, reserved and cloud metadata addresses are "
        "refused (422 `webhook_url_forbidden`) unless the operator allows them.")
_EVENTS = ("The event kinds to send (at least one): " + ", ".join(f"`{k}`" for k in EVENT_KINDS)
           + ". An unknown kind is 422 `bad_webhook`.")
_WARN = (f"Seconds before a seat's deadline that `timeout_soon` is sent: {WARN_MIN_SECONDS} "
         f"to {WARN_MAX_SECONDS} (7 days); out of range: 422 `bad_webhook`.")
_EVENT_SCHEMA: JsonDict = {"items": {"type": "string", "enum": list(EVENT_KINDS)},
                 "minItems": 1, "maxItems": len(EVENT_KINDS)}
_WARN_SCHEMA: JsonDict = {"minimum": WARN_MIN_SECONDS, "maximum": WARN_MAX_SECONDS}


class CreateWebhookRequest(InputModel):
    url: str = Field(description=_URL, json_schema_extra={"maxLength": URL_MAX,
                                                          "pattern": "^https?://"})
    events: list[str] = Field(description=_EVENTS, json_schema_extra=_EVENT_SCHEMA)
    warn_before_seconds: int | None = Field(
        default=None, description=_WARN + f" Omitted: {WARN_DEFAULT_SECONDS}.",
        json_schema_extra=_WARN_SCHEMA)


class UpdateWebhookRequest(InputModel):
    url: str | None = Field(default=None, description=_URL + " Omitted: unchanged.",
                            json_schema_extra={"maxLength": URL_MAX, "pattern": "^https?://"})
    events: list[str] | None = Field(default=None, description=_EVENTS + " Omitted: unchanged.",
                                     json_schema_extra=_EVENT_SCHEMA)
    warn_before_seconds: int | None = Field(default=None, description=_WARN + " Omitted: "
                                            "unchanged.", json_schema_extra=_WARN_SCHEMA)


class Webhook(WireModel):
    """A webhook endpoint of the calling app (its secret is never shown again)."""

    id: str = Field(description="The endpoint's id (`we_…`).")
    url: str
    events: list[str] = Field(description="The event kinds it gets (and `ping`).")
    warn_before_seconds: int
    enabled: bool = Field(description="False once the server disabled it after a run of "
                          "failed deliveries (`disabledAt`): `enableWebhook` turns it back on.")
    disabled_at: datetime | None = Field(description="RFC 3339, UTC; null while enabled.")
    failures: int = Field(description="Failed attempts in a row (0 after a success).")
    created_at: datetime


class WebhookCreated(Webhook):
    """A new endpoint, with its signing secret."""

    secret: str = Field(description="The signing secret `whsec_…` (Standard Webhooks): "
                        "shown only now. Verify every delivery's `webhook-signature` with "
                        "it.")


class WebhookList(WireModel):
    items: list[Webhook] = Field(description="The app's endpoints, oldest first.")


class WebhookSecret(WireModel):
    id: str = Field(description="The endpoint's id.")
    secret: str = Field(description="The new signing secret `whsec_…`, shown only now; the "
                        "old one signs nothing from now on.")


class PingQueued(WireModel):
    webhook_id: str
    event_id: str = Field(description="The `ping` event's id (`msg_…`): its delivery's "
                          "`webhook-id` header, and its entries in the delivery log.")


class DeliveryAttempt(WireModel):
    """One attempt to deliver one event to the endpoint."""

    event_id: str = Field(description="The event's id (`msg_…`, the `webhook-id` header): "
                          "the same on every attempt.")
    type: str = Field(description="The event kind.")
    attempt: int = Field(description="1 for the first attempt, 2 for the first retry, ...")
    at: datetime = Field(description="When the attempt was made (RFC 3339, UTC).")
    status: int | None = Field(description="The receiver's HTTP status; null when none came "
                               "(see `error`).")
    error: str | None = Field(description="Why no 2xx came: `timeout`, `connection`, "
                              "`forbidden_address`, `unresolvable`, `redirect`, `status`; "
                              "null on success.")
    duration_ms: int
    outcome: str = Field(description="`delivered`, `retrying` (`nextRetryAt`) or `failed` "
                         "(given up after the retry window, or the endpoint was disabled).")
    next_retry_at: datetime | None = Field(description="When the next attempt is due; null: "
                                           "none.")


class DeliveriesPage(WireModel):
    items: list[DeliveryAttempt] = Field(description="Newest first.")
    next_cursor: str | None = Field(description="Pass it as `cursor` for older attempts; "
                                    "null: none kept.")
