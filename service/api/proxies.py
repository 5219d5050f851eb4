"""Which peers are trusted proxies, and the client address behind them.

``X-Forwarded-For`` / ``X-Forwarded-Proto`` are read only when the direct peer is one of the
operator's trusted proxies (``--trusted-proxies``, ``SKYLINE_TRUSTED_PROXIES``: addresses and
CIDR ranges, comma-separated; none by default). The rewriting is uvicorn's
``ProxyHeadersMiddleware`` (the same code a ``--proxy-headers`` uvicorn runs), applied inside
the app so that every transport and test sees one client address. Whether the direct peer was
a trusted proxy is kept in the scope for what else a proxy may vouch for (``X-Request-Id``)."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, MutableMapping
from typing import Any, cast

from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

TRUSTED_PEER = "skyline.trusted_proxy"
"""Scope key: True when the direct peer of this connection is a trusted proxy."""


class TrustedProxies:
    """A set of addresses and networks (``"*"`` trusts every peer: only behind a proxy that
    every request crosses)."""

    def __init__(self, entries: Iterable[str]) -> None:
        self.entries = tuple(e.strip() for e in entries if e.strip())
        self.everyone = "*" in self.entries
        self.networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        self.names: set[str] = set()  # a unix socket path or a name uvicorn reports
        for entry in self.entries:
            if entry == "*":
                continue
            try:
                self.networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                self.names.add(entry)

    def __bool__(self) -> bool:
        return bool(self.entries)

    def __contains__(self, host: object) -> bool:
        if not isinstance(host, str) or not host:
            return False
        if self.everyone or host in self.names:
            return True
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        return any(address in network for network in self.networks)


def parse_trusted(raw: str) -> tuple[str, ...]:
    """``"10.0.0.0/8, 127.0.0.1"`` -> the entries; a malformed address is a ValueError."""
    entries = tuple(e.strip() for e in raw.split(",") if e.strip())
    for entry in entries:
        if entry != "*" and not entry.startswith("/"):
            ipaddress.ip_network(entry, strict=False)  # raises ValueError
    return entries


class TrustedProxyHeaders:
    """Marks whether the direct peer is trusted, then lets uvicorn's middleware take the
    client address and scheme from the forwarded headers of trusted peers only."""

    def __init__(self, app: ASGIApp, trusted: Iterable[str] = ()) -> None:
        self.trusted = TrustedProxies(trusted)
        self.app: ASGIApp = app
        if self.trusted:
            self.app = cast(ASGIApp, ProxyHeadersMiddleware(
                app, trusted_hosts=list(self.trusted.entries)  # type: ignore[arg-type]
            ))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            mark_peer(scope, self.trusted)
        await self.app(scope, receive, send)


def mark_peer(scope: MutableMapping[str, Any], trusted: TrustedProxies) -> None:
    """Record in the scope whether the direct peer is one of ``trusted``."""
    peer = scope.get("client")
    scope[TRUSTED_PEER] = peer is not None and peer[0] in trusted


def from_trusted_proxy(scope: MutableMapping[str, Any]) -> bool:
    """Whether this request came through a trusted proxy (it may vouch for headers)."""
    return bool(scope.get(TRUSTED_PEER))


def client_address(scope: MutableMapping[str, Any]) -> str:
    """The client's address: the forwarded one behind a trusted proxy, else the peer's."""
    client = scope.get("client")
    return str(client[0]) if client else "unknown"
