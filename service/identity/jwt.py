"""App-signed JWTs: an integrator app's backend vouches for one of its own users.

An app that keeps its own accounts signs a short JWT for a user and the user's client calls
us with it. The token's ``iss`` names the app, ``sub`` the user (any string of up to 255
characters, the app's own id), ``aud`` is this service; ``exp`` and ``iat`` are required, a
token lives at most ``max_lifetime`` seconds (24 h), clocks may differ by ``leeway`` (60 s).

The keys come from the app's stored document (``AppJwtKeys``): HS256 shared secrets by key
id, and/or the URL of a JWKS document with the app's public keys (RS256, ES256, EdDSA).
Every check is PyJWT's (``jwt.decode``) except the times, checked here against an injected
clock (``exp``, ``nbf``, ``iat``, the lifetime). What the token says is trusted only as far
as choosing where to look: the header's ``alg`` picks HS256 or a JWK, and a JWK verifies only
tokens of its own algorithm, so a public key can never serve as an HMAC secret nor an RS256
key as an ES256 one (RFC 8725, 2.1). Each refusal has its own code (``errors.CODES``); no
detail repeats the token.

``JwksCache`` keeps each app's key set as long as its ``Cache-Control`` allows (clamped),
refetches it when it has expired or on an unknown key id -- a rotated key -- but at most once
per ``min_refetch_seconds`` per URL, whatever the callers send; concurrent lookups share one
fetch; a failed fetch keeps the previous copy. Fetches are plain GETs (5 s, no redirects, at
most 256 KB).
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import httpx
import jwt

from service.errors import ApiError
from service.i18n import T, Text

from .credentials import MAX_SUB_LENGTH, kind_of

log = logging.getLogger("skyline.identity")

ASYMMETRIC: Final = frozenset({"RS256", "ES256", "EdDSA"})
ALGORITHMS: Final = frozenset({"HS256", *ASYMMETRIC})
FETCH_TIMEOUT: Final = 5.0
MAX_JWKS_BYTES: Final = 256 * 1024

Fetch = Callable[[str], Awaitable[tuple[int, Mapping[str, str], bytes]]]
"""GET a URL: (status, headers with lowercase names, body)."""


@dataclass(frozen=True, slots=True)
class AppJwtKeys:
    """One app's verification settings (from the app's stored document)."""

    app_id: str
    hs256: Mapping[str, bytes]
    """Key id -> shared secret (HS256)."""
    jwks_url: str | None
    """Where the app publishes its public keys (RS256, ES256, EdDSA), if it has any."""


@dataclass(frozen=True, slots=True)
class UserClaims:
    """What a verified token says: the user ``sub`` of ``app_id``."""

    app_id: str
    sub: str
    name: str | None
    """The ``name`` claim as the app sent it (not yet checked as a display name)."""
    issued_at: int
    expires_at: int


class _TooLarge(Exception):
    pass


@dataclass(slots=True)
class _KeySet:
    """One URL's cached key set."""

    jwks: jwt.PyJWKSet | None = None
    keys: Mapping[str, jwt.PyJWK] | None = None
    """Usable keys by key id; None: never fetched successfully."""
    fresh_until: float = -math.inf
    attempted_at: float | None = None
    inflight: asyncio.Task[None] | None = None


_MAX_AGE = re.compile(r"[0-9]+")


class JwksCache:
    """The apps' JWKS documents, fetched over HTTP and kept per URL (module docstring)."""

    def __init__(
        self,
        *,
        fetch: Fetch | None = None,
        clock: Callable[[], float] = time.monotonic,
        default_max_age: float = 300,
        max_max_age: float = 86400,
        min_refetch_seconds: float = 10,
    ) -> None:
        self._fetch: Fetch = fetch if fetch is not None else self._http_get
        self._clock = clock
        self._min_refetch = min_refetch_seconds
        self._max_max_age = max(max_max_age, min_refetch_seconds)
        self._default_max_age = self._clamp(default_max_age)
        self._sets: dict[str, _KeySet] = {}
        self._client: httpx.AsyncClient | None = None

    async def key(self, url: str, kid: str) -> jwt.PyJWK:
        """The usable key ``kid`` of the key set at ``url``; raises ``token_unknown_key``."""
        entry = self._sets.get(url)
        if entry is None:
            entry = self._sets[url] = _KeySet()
        if entry.inflight is not None:
            await asyncio.shield(entry.inflight)
        now = self._clock()
        keys = entry.keys
        if keys is not None and kid in keys and now < entry.fresh_until:
            return keys[kid]
        if entry.attempted_at is None or now - entry.attempted_at >= self._min_refetch:
            if entry.inflight is None:
                entry.inflight = asyncio.get_running_loop().create_task(
                    self._refresh(url, entry)
                )
            await asyncio.shield(entry.inflight)
        if entry.keys is None:
            raise ApiError.of(
                "token_unknown_key", T("The app's signing keys cannot be fetched right now.")
            )
        found = entry.keys.get(kid)
        if found is None:
            raise _unknown_key()
        return found

    async def aclose(self) -> None:
        """Cancels the fetches under way and closes the HTTP client."""
        tasks = [entry.inflight for entry in self._sets.values() if entry.inflight is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()

    async def _refresh(self, url: str, entry: _KeySet) -> None:
        entry.attempted_at = self._clock()
        try:
            try:
                status, headers, body = await self._fetch(url)
            except Exception as error:  # the app's server: anything may go wrong
                log.warning("JWKS %s: fetch failed: %s", url, type(error).__name__)
                return
            if status != 200:
                log.warning("JWKS %s: HTTP status %d", url, status)
                return
            parsed = _parse_key_set(body)
            if parsed is None:
                log.warning("JWKS %s: no usable keys", url)
                return
            entry.jwks, entry.keys = parsed
            entry.fresh_until = self._clock() + self._max_age(headers)
        finally:
            entry.inflight = None

    def _clamp(self, seconds: float) -> float:
        return min(max(seconds, self._min_refetch), self._max_max_age)

    def _max_age(self, headers: Mapping[str, str]) -> float:
        """How long a response may be kept, from its ``Cache-Control``."""
        value = headers.get("cache-control")
        if value is None:
            return self._default_max_age
        directives: dict[str, str] = {}
        for part in value.split(","):
            name, _, argument = part.partition("=")
            directives.setdefault(name.strip().lower(), argument.strip().strip('"'))
        if "no-store" in directives or "no-cache" in directives:
            return self._min_refetch
        max_age = directives.get("max-age")
        if max_age is None or _MAX_AGE.fullmatch(max_age) is None:
            return self._default_max_age
        if len(max_age) > 12:
            return self._max_max_age
        return self._clamp(int(max_age))

    async def _http_get(self, url: str) -> tuple[int, Mapping[str, str], bytes]:
        """The default fetch: one shared client, 5 s in all, no redirects, 256 KB at most."""
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=FETCH_TIMEOUT,
                follow_redirects=False,
                headers={"Accept": "application/jwk-set+json, application/json"},
            )
        async with asyncio.timeout(FETCH_TIMEOUT), self._client.stream("GET", url) as response:
            headers = {name.lower(): value for name, value in response.headers.items()}
            if response.status_code != 200:
                return response.status_code, headers, b""
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > MAX_JWKS_BYTES:
                    raise _TooLarge(url)
            return response.status_code, headers, bytes(body)


def _parse_key_set(body: bytes) -> tuple[jwt.PyJWKSet, dict[str, jwt.PyJWK]] | None:
    """The key set of a JWKS document and its usable keys by id (signature keys of an
    accepted algorithm, with a key id), or None when it has none."""
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
        return None
    # Only well-typed candidates reach PyJWT, which skips the keys it cannot load.
    candidates = [key for key in document["keys"] if _candidate(key)]
    try:
        key_set = jwt.PyJWKSet(candidates)
    except (jwt.PyJWTError, TypeError, ValueError, KeyError, AttributeError):
        return None
    usable: dict[str, jwt.PyJWK] = {}
    for key in key_set:
        if key.algorithm_name in ASYMMETRIC and key.key_id is not None:
            usable.setdefault(key.key_id, key)
    return (key_set, usable) if usable else None


def _candidate(key: object) -> bool:
    """Whether a JWKS member may be a usable key: an object with a key id, for signatures
    (or no ``use``), of an accepted algorithm (or none: PyJWT infers it from the key type)."""
    if not isinstance(key, dict):
        return False
    kid, use, alg = key.get("kid"), key.get("use", "sig"), key.get("alg")
    return (
        isinstance(kid, str) and kid != "" and use == "sig"
        and (alg is None or (isinstance(alg, str) and alg in ASYMMETRIC))
    )


def _unknown_key() -> ApiError:
    return ApiError.of("token_unknown_key", T("The app has no signing key with this key id."))


def _malformed(detail: Text) -> ApiError:
    return ApiError.of("malformed_token", detail)


class JwtVerifier:
    """Checks app-signed JWTs (module docstring): ``verify(token)`` -> ``UserClaims``."""

    def __init__(
        self,
        *,
        audience: str,
        keys_of: Callable[[str], Awaitable[AppJwtKeys | None]],
        jwks: JwksCache,
        clock: Callable[[], float] = time.time,
        leeway: int = 60,
        max_lifetime: int = 86400,
    ) -> None:
        self._audience = audience
        self._keys_of = keys_of
        self._jwks = jwks
        self._clock = clock
        self._leeway = leeway
        self._max_lifetime = max_lifetime

    @property
    def leeway(self) -> int:
        """Seconds a token is still accepted after its ``exp`` (clocks differ)."""
        return self._leeway

    async def verify(self, token: str) -> UserClaims:
        """The user ``token`` vouches for; raises the ``ApiError`` of the first check that
        fails."""
        if kind_of(token) != "jwt":
            raise _malformed(T("The token is not a JWT."))
        try:
            header = jwt.get_unverified_header(token)
            unverified = jwt.decode(token, options={"verify_signature": False})
        except jwt.PyJWTError:
            raise _malformed(T("The token's header or claims cannot be read.")) from None
        kid = header.get("kid")
        alg = header.get("alg")
        if not isinstance(kid, str) or not kid:
            raise _malformed(T("The token's header names no key id (kid)."))
        if not isinstance(alg, str) or alg not in ALGORITHMS:
            raise _malformed(T("The token's algorithm is not accepted; use one of {algorithms}.",
                               algorithms=sorted(ALGORITHMS)))
        iss = unverified.get("iss") if isinstance(unverified, dict) else None
        if not isinstance(iss, str) or not iss:
            raise _malformed(T("The token names no issuer (iss)."))
        app = await self._keys_of(iss)
        if app is None:
            raise ApiError.of("token_bad_issuer", T("No app issues tokens as this issuer."))
        key = await self._key(app, alg, kid)
        try:
            claims = jwt.decode(
                token, key, algorithms=[alg], audience=self._audience, issuer=iss,
                leeway=self._leeway,
                # The times are checked below, against our clock.
                options={"require": ["exp", "iat", "sub"], "verify_exp": False,
                         "verify_nbf": False, "verify_iat": False},
            )
        except jwt.PyJWTError as error:
            raise _refusal(error) from None
        return self._claims(app, claims)

    async def _key(self, app: AppJwtKeys, alg: str, kid: str) -> bytes | jwt.PyJWK:
        """The key that may verify a token of ``alg`` signed with ``kid``: an HMAC secret only
        for HS256, a JWK only for its own algorithm."""
        if alg == "HS256":
            secret = app.hs256.get(kid)
            if secret is None:
                raise _unknown_key()
            return secret
        if app.jwks_url is None:
            raise ApiError.of(
                "token_unknown_key", T("The app publishes no public keys (JWKS).")
            )
        key = await self._jwks.key(app.jwks_url, kid)
        if key.algorithm_name != alg:
            raise ApiError.of(
                "token_unknown_key",
                T("The app's key with this key id is for another algorithm."),
            )
        return key

    def _claims(self, app: AppJwtKeys, claims: dict[str, Any]) -> UserClaims:
        exp = _seconds(claims, "exp")
        iat = _seconds(claims, "iat")
        nbf = _seconds(claims, "nbf") if claims.get("nbf") is not None else None
        now = self._clock()
        if exp <= now - self._leeway:
            raise ApiError.of("token_expired", T("The token has expired."))
        if iat > now + self._leeway or (nbf is not None and nbf > now + self._leeway):
            raise ApiError.of("token_not_yet_valid", T("The token is not valid yet."))
        if exp < iat:
            raise _malformed(T("The token expires before it was issued."))
        if exp - iat > self._max_lifetime:
            raise ApiError.of(
                "token_too_long_lived",
                T("A token may live {max} seconds at most, this one {seconds}.",
                  max=self._max_lifetime, seconds=exp - iat),
            )
        sub = claims["sub"]
        if not isinstance(sub, str) or not 1 <= len(sub) <= MAX_SUB_LENGTH:
            raise _malformed(
                T("The token's subject (sub) must be 1 to {max} characters.",
                  max=MAX_SUB_LENGTH)
            )
        name = claims.get("name")
        if name is not None and not isinstance(name, str):
            raise _malformed(T("The token's name claim must be a string."))
        return UserClaims(app_id=app.app_id, sub=sub, name=name, issued_at=iat,
                          expires_at=exp)


def _seconds(claims: Mapping[str, Any], claim: str) -> int:
    """A NumericDate claim as whole seconds; ``malformed_token`` when it is not a number."""
    value = claims.get(claim)
    if isinstance(value, bool) or not isinstance(value, int | float) or (
        isinstance(value, float) and not math.isfinite(value)
    ):
        raise _malformed(T("The token's {claim} claim is not a number of seconds.",
                           claim=claim))
    return int(value)


def _refusal(error: jwt.PyJWTError) -> ApiError:
    """The refusal for what PyJWT found wrong (the order matters: subclasses first)."""
    if isinstance(error, jwt.InvalidSignatureError):
        return ApiError.of("token_bad_signature", T("The token's signature does not match."))
    if isinstance(error, jwt.ExpiredSignatureError):
        return ApiError.of("token_expired", T("The token has expired."))
    if isinstance(error, jwt.ImmatureSignatureError):
        return ApiError.of("token_not_yet_valid", T("The token is not valid yet."))
    if isinstance(error, jwt.InvalidAudienceError):
        return ApiError.of("token_bad_audience", T("The token is meant for another audience."))
    if isinstance(error, jwt.InvalidIssuerError):
        return ApiError.of("token_bad_issuer", T("The token's issuer does not match."))
    if isinstance(error, jwt.MissingRequiredClaimError):
        return _malformed(T("The token lacks the {claim} claim.", claim=error.claim))
    if isinstance(error, jwt.InvalidKeyError):
        return ApiError.of("token_unknown_key", T("The app's key for this key id is unusable."))
    return _malformed(T("The token cannot be decoded."))
