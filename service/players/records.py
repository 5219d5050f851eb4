"""The stored documents of the player layer: apps, players and the link from an app's user id
to its player. Compact JSON in the store's documents (``DocStore``), read and written only
here."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from typing import Any

APPS_KEY = "apps"
"""The document listing every app id (the operator's ``skyline apps list``)."""


def app_key(app_id: str) -> str:
    return f"app:{app_id}"


def player_key(player_id: str) -> str:
    return f"player:{player_id}"


MATCHES_INDEX = "m"
"""A player's matches: members ``<13 digits: 10**13 - created ms>.<match id>``, so that the
store's ascending order is newest created first."""


def _dump(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), sort_keys=True).encode()


@dataclass(frozen=True, slots=True)
class AppRecord:
    id: str
    name: str
    key: str | None = None
    """The digest of the current API key (None: no key, or revoked)."""
    revoked: bool = False
    """The key was revoked (``skyline apps revoke``): a key presented is ``credential_revoked``
    until a new one is issued."""
    guests: bool = True
    """Whether ``POST /v1/players`` creates guest players of this app."""
    match_url: str | None = None
    """``matchUrlTemplate``: a link to a match in the app's own client (``{matchId}``)."""
    hs256: dict[str, str] = field(default_factory=dict)
    """kid -> shared secret (base64url) for HS256 JWTs."""
    jwks_url: str | None = None
    created: int = 0

    def encode(self) -> bytes:
        return _dump(asdict(self))

    @classmethod
    def decode(cls, data: bytes) -> AppRecord:
        return cls(**json.loads(data))

    def but(self, **changes: Any) -> AppRecord:
        return replace(self, **changes)


@dataclass(frozen=True, slots=True)
class PlayerRecord:
    id: str
    app: str
    name: str
    token: str | None = None
    """The digest of a guest's player token (None: an app user, or revoked)."""
    sub: str | None = None
    """The app's user id (players signed in with the app's JWTs)."""
    deleted: bool = False
    created: int = 0
    ticket_key: str | None = None
    """The secret signing its feed tickets (``identity.feed_tickets``); None once deleted."""

    def encode(self) -> bytes:
        return _dump(asdict(self))

    @classmethod
    def decode(cls, data: bytes) -> PlayerRecord:
        return cls(**json.loads(data))

    def but(self, **changes: Any) -> PlayerRecord:
        return replace(self, **changes)


@dataclass(frozen=True, slots=True)
class UserLink:
    """``user:<app>:<hash of sub>`` -> the player an app's user signs in as."""

    player: str
    deleted: bool = False

    def encode(self) -> bytes:
        return _dump(asdict(self))

    @classmethod
    def decode(cls, data: bytes) -> UserLink:
        return cls(**json.loads(data))
