"""Seat tokens: the credential of one seat of one match.

A token is 32 random bytes (``secrets``), shown once when the match is created. The record
keeps only its SHA-256 digest: tokens are high-entropy, so a plain hash is enough and a stolen
record grants nothing. A token identifies one seat of one match; every stored digest is
compared with ``hmac.compare_digest`` so the time taken does not depend on which one matches.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Sequence

TOKEN_PREFIX = "sky_"


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def digest(token: str) -> str:
    """The stored form of a token (base64 of its SHA-256)."""
    raw = hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()
    return base64.b64encode(raw).decode("ascii").rstrip("=")


def seat_of(token: str, digests: Sequence[str | None]) -> int | None:
    """The seat whose digest matches ``token``, or None. Compares against every seat."""
    candidate = digest(token).encode("ascii")
    found: int | None = None
    for seat, stored in enumerate(digests):
        # Bot seats have no digest; compare against a dummy so timing stays uniform.
        reference = (stored or "-").encode("ascii")
        if hmac.compare_digest(candidate, reference) and stored is not None:
            found = seat
    return found
