"""Credentials -> who is calling. The prefix of a bearer credential decides how it is checked:
``sky_`` a seat token (checked by the match record itself), ``skp_`` a guest's player token,
``ska_`` an app key, three dot-separated parts an app-signed JWT (``jwt.py``). The apps
and players a credential names are read through ``lookups.py`` (``service.players``
implements it).

A token that names no player, a player without that token and a tampered token get the same
401 ``unauthorized``: the answer never tells whether a player id exists.
"""

from __future__ import annotations

from collections.abc import Callable

from service.errors import ApiError
from service.identity import checked, credentials
from service.identity.callers import Caller, Credential
from service.identity.jwt import JwtVerifier
from service.identity.names import clean_name

from .lookups import Apps, Directory

DEFAULT_USER_NAME = "Player"
"""The name of an app's user whose JWT carries no ``name``."""


def _refused() -> ApiError:
    return ApiError.of("unauthorized", "The token is not valid.")


class Authenticator:
    def __init__(
        self, apps: Apps, directory: Directory, verifier: JwtVerifier,
        clock: Callable[[], float],
    ) -> None:
        self.apps = apps
        self.directory = directory
        self.verifier = verifier
        self.clock = clock

    async def credential(self, token: str | None) -> Credential:
        """The caller a bearer credential names (None: anonymous; a seat token: itself)."""
        if token is None:
            return None
        kind = credentials.kind_of(token)
        if kind in ("seat", "spectator"):
            return token  # checked against the match it is used on
        if kind == "player":
            caller = await self._player(token)
        elif kind == "app":
            caller = await self._app(token)
        else:
            caller = await self._user(token)
        checked.note(token, own=not caller.anonymous)
        return caller

    async def _player(self, token: str) -> Caller:
        player_id = credentials.player_of_token(token)
        player = await self.directory.get(player_id) if player_id is not None else None
        if player is None:
            raise _refused()
        if player.deleted:
            raise ApiError.of("credential_revoked", "This player left for good.")
        if player.token is None or not credentials.same(token, player.token):
            raise _refused()
        return Caller(app=player.app, player=player.id, name=player.name, anonymous=True)

    async def _app(self, token: str) -> Caller:
        app_id = credentials.app_of_key(token)
        app = await self.apps.get(app_id) if app_id is not None else None
        if app is None:
            raise _refused()
        if app.key is not None and credentials.same(token, app.key):
            return Caller(app=app.id)
        if app.revoked:
            raise ApiError.of("credential_revoked", "This app key was revoked.")
        raise _refused()

    async def _user(self, token: str) -> Caller:
        claims = await self.verifier.verify(token)
        name = clean_name(claims.name) if claims.name is not None else DEFAULT_USER_NAME
        player = await self.directory.sign_in(
            claims.app_id, claims.sub, name, int(self.clock())
        )
        return Caller(app=player.app, player=player.id, name=player.name,
                      expires_at=claims.expires_at + self.verifier.leeway)
