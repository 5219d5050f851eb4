"""Who is calling, once a credential has been checked: a seat token (the string itself: the
match record checks it), a verified player or app (``Caller``), or nobody.

``service.players`` turns a player token, an app-signed JWT or an app key into a ``Caller``
(that needs the store); the match service takes a ``Credential`` wherever it used to take a
seat token, so a player holds one credential for every match it sits in.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Caller:
    """A checked player credential (player token or JWT) or app key."""

    app: str
    """The app the player belongs to, or the app itself."""
    player: str | None = None
    """The player's id; None for the app's own key (server-to-server calls)."""
    name: str | None = None
    """The player's display name (None for an app)."""
    expires_at: int | None = None
    """For an app-signed JWT: the Unix second from which it is no longer accepted (its
    ``exp`` plus the clock leeway). A stream opened with it ends then, at the next version
    it would send (``token_expired``). None: a credential that does not expire."""
    anonymous: bool = False
    """A guest's player token: minted by anyone for nothing (``POST /v1/players``), so it
    draws from its address's budgets and stream slots (``checked.py``)."""

    @property
    def is_app(self) -> bool:
        return self.player is None


Credential = str | Caller | None
"""A seat token (``sky_…``), a checked ``Caller``, or None (a spectator)."""


def credential_key(credential: Credential) -> str | None:
    """One string per caller for per-client caps: a seat token as it is, a player or app by
    its ids (whatever credential form it used), None for nobody."""
    if isinstance(credential, Caller):
        return f"{credential.app}/{credential.player or '-'}"
    return credential
