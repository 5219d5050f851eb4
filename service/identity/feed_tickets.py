"""Feed tickets: a short-lived credential for one player's event feed, for clients that
cannot send ``Authorization`` on an event stream (a browser's ``EventSource``).

``skf_<player id>.<timestamp>.<signature>``: the player id, signed (``itsdangerous``,
HMAC-SHA256) with the player's own ticket key, a random secret its document keeps. Any replica
that reads the player can check one; a ticket dies with its player (the key is dropped when
the player leaves for good) and after its lifetime.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

from itsdangerous import BadSignature, SignatureExpired, TimestampSigner

from service.errors import ApiError

PREFIX = "skf_"
SALT = "skyline.feed-ticket"
CLOCK_SKEW = 30


def new_key() -> str:
    return secrets.token_urlsafe(32)


class _Signer(TimestampSigner):
    def __init__(self, key: str, now: float) -> None:
        super().__init__(key, salt=SALT, digest_method=hashlib.sha256, key_derivation="hmac")
        self.now = int(now)

    def get_timestamp(self) -> int:
        return self.now


@dataclass(frozen=True, slots=True)
class FeedTicket:
    ticket: str
    expires: int


def issue(key: str, player_id: str, now: float, lifetime: int) -> FeedTicket:
    # A nonce after the player: two tickets issued in one second differ, so that each is
    # single-use on its own (limits.ticket_claims).
    signed = _Signer(key, now).sign(f"{player_id}:{secrets.token_urlsafe(6)}").decode("ascii")
    return FeedTicket(PREFIX + signed, int(now) + lifetime + 1)


def player_of(ticket: str) -> str | None:
    """The player a ticket names (unchecked), or None for what is no feed ticket."""
    if not ticket.startswith(PREFIX) or len(ticket) > 256 or not ticket.isascii():
        return None
    return ticket[len(PREFIX):].partition(".")[0].partition(":")[0] or None


def verify(ticket: str, key: str | None, now: float, lifetime: int) -> str:
    """The player ``ticket`` was issued to, checked with that player's ``key``."""
    refused = ApiError.of("ticket_invalid", "The feed ticket is not valid: get a new one.")
    if key is None:
        raise refused
    signer = _Signer(key, now)
    try:
        value, stamp = signer.unsign(ticket[len(PREFIX):], return_timestamp=True)
    except (BadSignature, SignatureExpired):
        raise refused from None
    signed, _, signature = ticket[len(PREFIX):].rpartition(".")
    if not hmac.compare_digest(signer.get_signature(signed), signature.encode("ascii")):
        raise refused  # base64 ignores the last character's low bits: one spelling only
    age = int(now) - int(stamp.timestamp())
    if age > lifetime or age < -CLOCK_SKEW:
        raise ApiError.of("ticket_invalid", "The feed ticket expired: get a new one.")
    return value.decode("ascii").partition(":")[0]
