"""Stream tickets: a short-lived credential for one seat's event stream of one match.

A browser's ``EventSource`` cannot send an ``Authorization`` header, and a seat token in a
URL would end up in logs and histories. So a seat exchanges its token for a ticket
(``skt_<seat>.<timestamp>.<signature>``) and opens the stream with ``?ticket=``.

A ticket is signed (``itsdangerous``, HMAC-SHA256) with the seat's token digest -- the secret
the match record keeps per seat (``seats.digest``) -- salted with the match id. Hence:

- no state and no configuration: any replica that can read the match can check a ticket;
- a ticket is for one match (the salt) and one seat (its key and its payload);
- a ticket dies with its seat's token: a seat handed to a bot has no digest any more;
- whoever can read the store could sign tickets, but such a reader already sees the whole
  engine state, hidden information included: a ticket grants no more than that.

Pure: no clock (``now`` is given), no I/O, no web framework.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from itsdangerous import BadSignature, TimestampSigner

TICKET_PREFIX: Final = "skt_"
CLOCK_SKEW: Final = 30
"""Seconds a ticket may seem to come from the future (another replica's clock runs ahead)."""
_SALT: Final = "skyline.stream-ticket:"
_SEAT = re.compile(r"[0-9]{1,2}")
NONCE_SEPARATOR: Final = ":"
"""Between a ticket's seat and its nonce (tickets from before issue 31 have none)."""


class TicketRefused(ValueError):
    """The ticket is not valid: ``reason`` says whether it is ``expired`` or ``invalid``
    (malformed, tampered with, for another match or seat, or its seat's token is gone)."""

    def __init__(self, reason: Literal["expired", "invalid"]) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Ticket:
    ticket: str
    seat: int
    expires: int
    """Unix seconds: the ticket is refused from this moment on."""


class _Signer(TimestampSigner):
    """A signer for one match and seat key whose clock is ``now``."""

    def __init__(self, key: str, match_id: str, now: float) -> None:
        super().__init__(
            key, salt=_SALT + match_id, digest_method=hashlib.sha256, key_derivation="hmac"
        )
        self.now = int(now)

    def get_timestamp(self) -> int:
        return self.now


def issue(key: str, match_id: str, seat: int, now: float, lifetime: int) -> Ticket:
    """A ticket for ``seat`` of ``match_id``, signed with that seat's ``key`` (its token
    digest), valid for ``lifetime`` seconds from ``now``."""
    # A nonce after the seat: two tickets issued in one second differ, so that each is
    # single-use on its own (limits.ticket_claims).
    value = f"{seat}{NONCE_SEPARATOR}{secrets.token_urlsafe(6)}"
    signed = _Signer(key, match_id, now).sign(value).decode("ascii")
    return Ticket(TICKET_PREFIX + signed, seat, int(now) + lifetime + 1)


def verify(
    ticket: str, match_id: str, keys: Sequence[str | None], now: float, lifetime: int
) -> int:
    """The seat ``ticket`` was issued to for ``match_id``, whose seats' keys (token digests;
    None: no token) are ``keys``; raises ``TicketRefused``."""
    body = ticket.removeprefix(TICKET_PREFIX)
    seat_text = body.partition(".")[0].partition(NONCE_SEPARATOR)[0]
    if body == ticket or not body.isascii() or _SEAT.fullmatch(seat_text) is None:
        raise TicketRefused("invalid")
    seat = int(seat_text)
    key = keys[seat] if seat < len(keys) else None
    if key is None:
        raise TicketRefused("invalid")
    signer = _Signer(key, match_id, now)
    try:
        value, signed_at = signer.unsign(body, return_timestamp=True)
    except BadSignature:
        raise TicketRefused("invalid") from None
    signed, _, signature = body.rpartition(".")
    if not hmac.compare_digest(signer.get_signature(signed), signature.encode("ascii")):
        # The signature's last character carries bits base64 ignores: only its canonical
        # spelling is the ticket, or one ticket would be several single-use tickets.
        raise TicketRefused("invalid")
    if value.partition(NONCE_SEPARATOR.encode())[0] != seat_text.encode("ascii"):
        raise TicketRefused("invalid")
    age = signer.now - int(signed_at.timestamp())
    if age > lifetime or age < -CLOCK_SKEW:
        raise TicketRefused("expired")
    return seat
