"""Fixtures for the credential tests: a real local HTTP server that serves a JWKS document
(``JwksServer``: stdlib ``http.server`` in a thread, on a free port), signing keys of every
accepted kind, fake clocks, and a verifier wired to them."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric.ec import (
    SECP256R1,
    EllipticCurvePrivateKey,
)
from cryptography.hazmat.primitives.asymmetric.ec import (
    generate_private_key as ec_key,
)
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
from cryptography.hazmat.primitives.asymmetric.rsa import generate_private_key as rsa_key
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm

from service.identity.credentials import new_app_id
from service.identity.jwt import AppJwtKeys, JwksCache, JwtVerifier

NOW = 1_800_000_000
"""The fake wall clock's time (unix seconds)."""
AUDIENCE = "skyline-test"
APP = new_app_id()
OTHER_APP = new_app_id()
HS_SECRET = b"s" * 32
OTHER_HS_SECRET = b"o" * 32


class JwksServer:
    """Serves ``document`` at ``/jwks.json`` with ``status`` and ``headers``; counts requests.
    ``/redirect`` answers 302 to ``/jwks.json``."""

    def __init__(self) -> None:
        self.document: bytes = b'{"keys": []}'
        self.status = 200
        self.headers: dict[str, str] = {}
        self.delay = 0.0
        self.paths: list[str] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                with server._lock:
                    server.paths.append(self.path)
                if server.delay:
                    time.sleep(server.delay)
                if self.path == "/redirect":
                    self.send_response(302)
                    self.send_header("Location", "/jwks.json")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = server.document
                self.send_response(server.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for name, value in server.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self._thread.start()
        self._stopped = False

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/jwks.json"

    def serve(self, *keys: dict[str, Any], **headers: str) -> None:
        """Serve these JWKs (``Cache_Control="max-age=5"``: underscores become dashes)."""
        self.document = json.dumps({"keys": list(keys)}).encode()
        self.headers = {name.replace("_", "-"): value for name, value in headers.items()}

    @property
    def requests(self) -> int:
        with self._lock:
            return self.paths.count("/jwks.json")

    def stop(self) -> None:
        """The server goes down: its port refuses connections from now on."""
        if not self._stopped:
            self._stopped = True
            self._httpd.shutdown()
            self._httpd.server_close()
            self._thread.join()


@dataclass
class Clock:
    now: float

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass(frozen=True)
class Keys:
    rsa: RSAPrivateKey
    rsa_other: RSAPrivateKey
    ec: EllipticCurvePrivateKey
    ed: Ed25519PrivateKey

    def private(self, alg: str) -> Any:
        return {"RS256": self.rsa, "ES256": self.ec, "EdDSA": self.ed, "HS256": HS_SECRET}[alg]

    def jwk(self, key_alg: str, kid: str, /, **extra: Any) -> dict[str, Any]:
        """The public JWK of this alg's key (``alg`` and ``use`` set unless given as None)."""
        if key_alg == "RS256":
            data = RSAAlgorithm.to_jwk(self.rsa.public_key(), as_dict=True)
        elif key_alg == "ES256":
            data = ECAlgorithm.to_jwk(self.ec.public_key(), as_dict=True)
        else:
            data = OKPAlgorithm.to_jwk(self.ed.public_key(), as_dict=True)
        data = {**data, "kid": kid, "alg": key_alg, "use": "sig", **extra}
        return {name: value for name, value in data.items() if value is not None}


@pytest.fixture(scope="session")
def keys() -> Keys:
    return Keys(
        rsa=rsa_key(public_exponent=65537, key_size=2048),
        rsa_other=rsa_key(public_exponent=65537, key_size=2048),
        ec=ec_key(SECP256R1()),
        ed=Ed25519PrivateKey.generate(),
    )


@pytest.fixture
def jwks_server() -> Iterator[JwksServer]:
    server = JwksServer()
    yield server
    server.stop()


def sign(key: Any, alg: str, kid: str | None = "k1", **claims: Any) -> str:
    """A token: the standard claims for ``APP``'s user ``user-1`` valid from ``NOW`` for 10
    minutes, overridden by ``claims`` (None drops a claim)."""
    payload: dict[str, Any] = {"iss": APP, "aud": AUDIENCE, "sub": "user-1", "iat": NOW,
                               "exp": NOW + 600}
    payload.update(claims)
    payload = {name: value for name, value in payload.items() if value is not None}
    headers = {"kid": kid} if kid is not None else None
    return jwt.encode(payload, key, algorithm=alg, headers=headers)


@dataclass
class Rig:
    """A verifier wired to ``jwks_server``: ``APP`` has ``HS_SECRET`` as ``k1``/``hs1`` and
    the server's key set; ``OTHER_APP`` has ``OTHER_HS_SECRET`` as ``k1`` and no JWKS."""

    server: JwksServer
    wall: Clock
    mono: Clock
    cache: JwksCache
    verifier: JwtVerifier
    apps: dict[str, AppJwtKeys] = field(default_factory=dict)
    lookups: list[str] = field(default_factory=list)


@pytest.fixture
async def make_rig(jwks_server: JwksServer) -> AsyncIterator[Callable[..., Rig]]:
    caches: list[JwksCache] = []

    def make(**cache_options: Any) -> Rig:
        mono = Clock(1000.0)
        wall = Clock(float(NOW))
        cache = JwksCache(clock=mono, **cache_options)
        caches.append(cache)
        apps = {
            APP: AppJwtKeys(APP, {"k1": HS_SECRET, "hs1": HS_SECRET}, jwks_server.url),
            OTHER_APP: AppJwtKeys(OTHER_APP, {"k1": OTHER_HS_SECRET}, None),
        }
        lookups: list[str] = []

        async def keys_of(iss: str) -> AppJwtKeys | None:
            lookups.append(iss)
            return apps.get(iss)

        verifier = JwtVerifier(audience=AUDIENCE, keys_of=keys_of, jwks=cache, clock=wall)
        return Rig(jwks_server, wall, mono, cache, verifier, apps, lookups)

    yield make
    for cache in caches:
        await cache.aclose()
