"""Where a webhook may point: ``https`` URLs (``http`` only when the operator allows it) whose
host resolves to public addresses only -- never loopback, private, link-local, unique-local,
multicast, reserved or a cloud's metadata address, unless the operator allows those networks
(``--webhook-allow-networks``). The URL is checked when it is registered and again before
every delivery, which then connects to the very address it checked (a name that resolves
elsewhere a moment later -- DNS rebinding -- is not asked again)."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeAlias
from urllib.parse import SplitResult, urlsplit

from service.errors import ApiError
from service.i18n import T

Address: TypeAlias = ipaddress.IPv4Address | ipaddress.IPv6Address
Network: TypeAlias = ipaddress.IPv4Network | ipaddress.IPv6Network

MAX_URL = 2048
RESOLVE_SECONDS = 2.0
METADATA = (
    ipaddress.ip_network("169.254.169.254/32"),  # AWS, GCP, Azure, OpenStack ...
    ipaddress.ip_network("169.254.170.2/32"),  # AWS ECS task metadata
    ipaddress.ip_network("100.100.100.200/32"),  # Alibaba Cloud
    ipaddress.ip_network("fd00:ec2::254/128"),  # AWS over IPv6
)
"""Cloud metadata services: refused even when a network around them is allowed, unless one
of them is allowed by name (its own /32 or /128)."""
FORBIDDEN_NAMES = ("localhost", "metadata.google.internal", "metadata")


@dataclass(frozen=True, slots=True)
class Target:
    """A checked URL: where to connect (``address``, ``port``) and what to ask for."""

    url: str
    scheme: str
    host: str
    """As written in the URL (a name, or an address without brackets)."""
    port: int
    address: Address


def parse_networks(text: str | Sequence[str]) -> tuple[Network, ...]:
    """``"127.0.0.0/8,::1/128"`` -> networks (``ValueError`` for a bad one)."""
    parts = text.split(",") if isinstance(text, str) else list(text)
    return tuple(ipaddress.ip_network(p.strip(), strict=False) for p in parts if p.strip())


class UrlPolicy:
    """The operator's rules: ``allow_http``, and the networks allowed despite being
    internal (``allow_networks``)."""

    def __init__(self, *, allow_http: bool = False,
                 allow_networks: Sequence[Network] = ()) -> None:
        self.allow_http = allow_http
        self.allow_networks = tuple(allow_networks)

    def split(self, url: str) -> SplitResult:
        """The URL's parts when its shape is acceptable (422 otherwise)."""
        if len(url) > MAX_URL or any(c.isspace() or ord(c) < 32 for c in url):
            raise ApiError.of("bad_webhook", T("A webhook URL is at most {limit} characters, "
                                               "without spaces.", limit=MAX_URL))
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 - raises ValueError for a bad port
        except ValueError:
            raise ApiError.of("bad_webhook", "The webhook URL is not a valid URL.") from None
        scheme = parts.scheme.lower()
        if scheme not in ("https", "http") or not parts.hostname:
            raise ApiError.of("webhook_url_not_https",
                              "A webhook URL is an https:// URL with a host.")
        if scheme == "http" and not self.allow_http:
            raise ApiError.of("webhook_url_not_https",
                              "A webhook URL must use https:// (this server does not send "
                              "webhooks over plain http).")
        if parts.username is not None or parts.password is not None:
            raise ApiError.of("bad_webhook", "A webhook URL carries no user name or password.")
        if parts.fragment:
            raise ApiError.of("bad_webhook", "A webhook URL has no #fragment.")
        return parts

    def allowed(self, address: Address) -> bool:
        """Whether deliveries may connect to ``address``."""
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        if any(address in n for n in METADATA):
            return any(address in n and n.num_addresses == 1 for n in self.allow_networks)
        if any(address in n for n in self.allow_networks):
            return True
        return address.is_global and not (
            address.is_multicast or address.is_reserved or address.is_private
            or address.is_loopback or address.is_link_local or address.is_unspecified
        )

    async def resolve(self, host: str, port: int) -> list[Address]:
        """The addresses ``host`` names (a literal address: itself); [] when it does not
        resolve."""
        literal = _literal(host)
        if literal is not None:
            return [literal]
        loop = asyncio.get_running_loop()
        try:
            infos = await asyncio.wait_for(
                loop.getaddrinfo(host, port, type=socket.SOCK_STREAM), RESOLVE_SECONDS)
        except (OSError, TimeoutError, UnicodeError):
            return []
        out: list[Address] = []
        for info in infos:
            found = _literal(str(info[4][0]))
            if found is not None and found not in out:
                out.append(found)
        return out

    async def check(self, url: str, *, resolve_required: bool) -> Target | None:
        """Check ``url`` (422 ``webhook_url_not_https`` / ``webhook_url_forbidden`` /
        ``bad_webhook``); the address to connect to, or None when its name does not resolve
        now and ``resolve_required`` is false (a registration: checked again at delivery)."""
        parts = self.split(url)
        host = parts.hostname or ""
        port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
        name = host.rstrip(".").lower()
        named_internal = name in FORBIDDEN_NAMES or name.endswith(".localhost")
        addresses = await self.resolve(host, port)
        if named_internal and not addresses:
            raise forbidden()
        if not addresses:
            if resolve_required:
                raise ApiError.of("webhook_url_forbidden",
                                  T("The webhook host {host} does not resolve.", host=host))
            return None
        refused = [a for a in addresses if not self.allowed(a)]
        if refused:
            raise forbidden()
        return Target(url=url, scheme=parts.scheme.lower(), host=host, port=port,
                      address=addresses[0])


def forbidden() -> ApiError:
    return ApiError.of(
        "webhook_url_forbidden",
        "The webhook URL points inside a private network (loopback, private, link-local, "
        "unique-local, multicast, reserved or a cloud metadata address); this server does "
        "not send webhooks there.",
    )


def _literal(host: str) -> Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return None
