"""What authentication (``auth.py``) reads of apps and players, declared here and implemented
by ``service.players`` (``apps.Apps``, ``directory.Directory``): identity checks credentials
without importing the packages above it (tests/test_boundaries.py, docs/decisions.md)."""

from __future__ import annotations

from typing import Protocol


class KnownApp(Protocol):
    """An app, as a credential is checked against it."""

    @property
    def id(self) -> str: ...

    @property
    def key(self) -> str | None:
        """The digest of its current API key (None: no key, or revoked)."""

    @property
    def revoked(self) -> bool: ...


class KnownPlayer(Protocol):
    """A player (a guest, or an app's user), as a credential is checked against it."""

    @property
    def id(self) -> str: ...

    @property
    def app(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def token(self) -> str | None:
        """The digest of a guest's player token (None: an app's user, or revoked)."""

    @property
    def deleted(self) -> bool: ...


class Apps(Protocol):
    async def get(self, app_id: str) -> KnownApp | None: ...


class Directory(Protocol):
    async def get(self, player_id: str) -> KnownPlayer | None: ...

    async def sign_in(self, app_id: str, sub: str, name: str, now: int) -> KnownPlayer:
        """The player of the app's user ``sub``, created on its first sign-in."""
