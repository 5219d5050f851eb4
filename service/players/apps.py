"""Apps: the integrators (a website, a mobile app's backend, a bot platform) whose players and
matches Skyline keeps apart. The operator manages them (``skyline apps``); an app key
authorizes its backend's server-to-server calls.

A deployment without apps has one: ``DEFAULT_APP``, created on first use with guests on and
no key, so ``make run`` needs no set-up.
"""

from __future__ import annotations

import base64
import json
import secrets
import time
from collections.abc import Callable

from service.errors import ApiError
from service.i18n import T
from service.identity import credentials
from service.identity.jwt import AppJwtKeys

from .docs import Docs
from .records import APPS_KEY, AppRecord, PlayerRecord, app_key

DEFAULT_APP = credentials.DEFAULT_APP_ID
"""The app of players and matches when no app is named (``appId`` omitted)."""
URL_TEMPLATE_FIELD = "{matchId}"
CACHE_SECONDS = 30.0
CACHE_SIZE = 1024
MAX_KID_LENGTH = 128
"""An HS256 key id is 1 to 128 characters (a JWT header's ``kid``)."""


class Apps:
    def __init__(self, docs: Docs, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.docs = docs
        self.clock = clock
        self._cache: dict[str, tuple[float, AppRecord]] = {}

    async def get(self, app_id: str) -> AppRecord | None:
        """The app, or None; the default app exists as soon as it is asked for."""
        if not credentials.is_app_id(app_id):
            return None
        doc = await self.docs.get(app_key(app_id))
        if doc is not None:
            return AppRecord.decode(doc.data)
        if app_id == DEFAULT_APP:
            return await self._create(AppRecord(id=DEFAULT_APP, name="Default"))
        return None

    async def require(self, app_id: str | None) -> AppRecord:
        """The app named by a request (None: the default app); 422 ``unknown_app``."""
        app = await self.get(app_id or DEFAULT_APP)
        if app is None:
            raise ApiError.of("unknown_app", "No app with that appId.")
        return app

    async def cached(self, app_id: str) -> AppRecord:
        """The app's settings for display (its match URL template), read at most every
        ``CACHE_SECONDS`` per replica; never for checking a key."""
        now = self.clock()
        found = self._cache.get(app_id)
        if found is not None and now - found[0] < CACHE_SECONDS:
            return found[1]
        app = await self.get(app_id) or AppRecord(id=app_id, name="")
        if len(self._cache) >= CACHE_SIZE:
            self._cache.clear()
        self._cache[app_id] = (now, app)
        return app

    async def of_player(self, player: PlayerRecord) -> AppRecord:
        """The player's app (its settings: the match URL template)."""
        return await self.get(player.app) or AppRecord(id=player.app, name="")

    async def _create(self, app: AppRecord) -> AppRecord:
        await self.docs.put(app_key(app.id), 0, app.encode())
        doc = await self.docs.get(app_key(app.id))
        assert doc is not None
        stored = AppRecord.decode(doc.data)

        def listed(current: bytes | None) -> bytes | None:
            ids: list[str] = json.loads(current) if current else []
            if app.id in ids:
                return None
            return json.dumps(sorted([*ids, app.id])).encode()

        await self.docs.update(APPS_KEY, listed)
        return stored

    async def add(
        self, name: str, *, guests: bool = True, match_url: str | None = None,
        jwks_url: str | None = None, now: int = 0,
    ) -> tuple[AppRecord, str]:
        """A new app and its API key (shown once: the store keeps its digest)."""
        app_id = credentials.new_app_id()
        key = credentials.new_app_key(app_id)
        check_template(match_url)
        app = AppRecord(id=app_id, name=name, key=credentials.digest(key), guests=guests,
                        match_url=match_url, jwks_url=jwks_url, created=now)
        return await self._create(app), key

    async def list(self) -> list[AppRecord]:
        doc = await self.docs.get(APPS_KEY)
        ids: list[str] = json.loads(doc.data) if doc is not None else []
        docs = await self.docs.get_many([app_key(i) for i in ids])
        return [AppRecord.decode(d.data) for d in docs if d is not None]

    async def change(self, app_id: str, **changes: object) -> AppRecord:
        if "match_url" in changes:
            check_template(changes["match_url"])  # type: ignore[arg-type]
        await self.require_existing(app_id)
        stored = await self.docs.update(
            app_key(app_id), lambda data: AppRecord.decode(data).but(**changes).encode()
            if data is not None else None,
        )
        assert stored is not None
        return AppRecord.decode(stored)

    async def require_existing(self, app_id: str) -> AppRecord:
        app = await self.get(app_id)
        if app is None:
            raise ApiError.of("unknown_app", T("No app {app}.", app=repr(app_id[:48])))
        return app

    async def rotate_key(self, app_id: str) -> str:
        """A new key for the app; the old one stops working at once."""
        key = credentials.new_app_key(app_id)
        await self.change(app_id, key=credentials.digest(key), revoked=False)
        return key

    async def revoke(self, app_id: str) -> AppRecord:
        """The app's key stops working (``credential_revoked``) until a new one is rotated
        in; its players and matches stay."""
        return await self.change(app_id, key=None, revoked=True)

    async def add_hs256_secret(self, app_id: str, kid: str, *, rotate: bool = False) -> str:
        """A new HS256 secret under ``kid`` (shown once); other kids keep working. A kid the
        app has already is refused (its secret is never silently replaced) unless
        ``rotate``, which replaces the secret of a kid the app has (and refuses an unknown
        one). Atomic: two operators adding at once never lose either's kid."""
        if not kid or len(kid) > MAX_KID_LENGTH:
            raise ValueError(f"a kid is 1 to {MAX_KID_LENGTH} characters")
        secret = base64.urlsafe_b64encode(secrets.token_bytes(32)).decode().rstrip("=")
        await self.require_existing(app_id)

        def put(data: bytes | None) -> bytes | None:
            if data is None:
                return None
            app = AppRecord.decode(data)
            if kid in app.hs256 and not rotate:
                raise ValueError(f"app {app_id} has a secret under kid {kid!r} already "
                                 "(--rotate-hs256-kid replaces it, --remove-hs256-kid "
                                 "drops it)")
            if kid not in app.hs256 and rotate:
                raise ValueError(f"app {app_id} has no kid {kid!r} to rotate")
            return app.but(hs256={**app.hs256, kid: secret}).encode()

        await self.docs.update(app_key(app_id), put)
        return secret

    async def remove_hs256_kid(self, app_id: str, kid: str) -> AppRecord:
        """JWTs signed under ``kid`` stop verifying at once; other kids keep working."""
        await self.require_existing(app_id)

        def drop(data: bytes | None) -> bytes | None:
            if data is None:
                return None
            app = AppRecord.decode(data)
            if kid not in app.hs256:
                raise ValueError(f"app {app_id} has no kid {kid!r}")
            return app.but(hs256={k: v for k, v in app.hs256.items() if k != kid}).encode()

        await self.docs.update(app_key(app_id), drop)
        return await self.require_existing(app_id)

    async def jwt_keys(self, app_id: str) -> AppJwtKeys | None:
        """What verifies the app's JWTs (``JwtVerifier``'s ``keys_of``)."""
        app = await self.get(app_id)
        if app is None:
            return None
        hs256 = {kid: _b64(secret) for kid, secret in app.hs256.items()}
        return AppJwtKeys(app_id=app.id, hs256=hs256, jwks_url=app.jwks_url)


def _b64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def check_template(template: str | None) -> None:
    if template is None:
        return
    if URL_TEMPLATE_FIELD not in template or not template.startswith(("https://", "http://")):
        raise ValueError("a match URL template is an http(s) URL holding {matchId}")


def match_url(app: AppRecord, match_id: str) -> str | None:
    if app.match_url is None:
        return None
    return app.match_url.replace(URL_TEMPLATE_FIELD, match_id)
