"""Standard Webhooks (https://www.standardwebhooks.com): a secret ``whsec_<base64>`` per
endpoint, and the three headers of every delivery -- ``webhook-id`` (the event's stable id),
``webhook-timestamp`` (seconds, this attempt's) and ``webhook-signature`` (``v1,<base64 of
HMAC-SHA256 of "<id>.<timestamp>.<body>">``), made by the ``standardwebhooks`` library that
receivers verify with."""

from __future__ import annotations

import base64
import secrets
from datetime import UTC, datetime

from standardwebhooks import Webhook

SECRET_PREFIX = "whsec_"
SECRET_BYTES = 32


def new_secret() -> str:
    """A new signing secret (shown to the app once)."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def headers(secret: str, msg_id: str, body: bytes, now: float) -> dict[str, str]:
    """The Standard Webhooks headers of one attempt at ``now`` (Unix seconds)."""
    stamp = datetime.fromtimestamp(int(now), UTC)
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(now)),
        "webhook-signature": Webhook(secret).sign(msg_id, stamp, body),
    }
