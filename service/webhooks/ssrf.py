"""Where a webhook may point: ``https`` URLs (``http`` only when the operator allows it) whose
host resolves to public addresses only -- never loopback, private, link-local, unique-local,
multicast, reserved, unless the operator allows those networks (``--webhook-allow-networks``),
and never a cloud's metadata address, whatever the operator allows. The URL is checked when
it is registered and again before every delivery, which then connects to the very address it
checked (a name that resolves elsewhere a moment later -- DNS rebinding -- is not asked
again).

IPv6 has forms that carry an IPv4 address inside (``embedded``): IPv4-mapped
``::ffff:a.b.c.d`` (judged as the IPv4 address itself), IPv4-compatible ``::a.b.c.d``,
SIIT ``::ffff:0:a.b.c.d``, NAT64 ``64:ff9b::a.b.c.d`` (and the local-use ``64:ff9b:1::/48``),
6to4 ``2002:AABB:CCDD::`` and Teredo ``2001:0::/32`` (its server and its client, whose bits
are inverted). A host on a network that routes them reaches the IPv4 address through them, so
such an address is allowed only when it is allowed itself *and* every IPv4 address it carries
would be: ``2002:7f00:1::`` (127.0.0.1 by 6to4) is refused although 6to4 as such is global
unicast."""

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
    ipaddress.ip_network("fd20:ce::254/128"),  # Google Cloud over IPv6
)
"""Cloud metadata services: always refused, in any form that reaches them, whatever networks
the operator allows (credentials of the machine's role live there)."""
NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
"""The NAT64 well-known prefix (RFC 6052) and the local-use one (RFC 8215): the IPv4
address is the last 32 bits (for a /48 local prefix with a /96 translation, as deployed)."""
COMPATIBLE = ipaddress.ip_network("::/96")
"""IPv4-compatible addresses (deprecated, RFC 4291): ``::a.b.c.d``."""
SIIT = ipaddress.ip_network("::ffff:0:0:0/96")
"""IPv4-translated addresses (RFC 2765): ``::ffff:0:a.b.c.d``."""
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
        """Whether deliveries may connect to ``address``: neither it nor any IPv4 address
        it carries is refused (module doc)."""
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        return all(self._allowed_itself(a) for a in (address, *embedded(address)))

    def _allowed_itself(self, address: Address) -> bool:
        if is_metadata(address):
            return False
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


def embedded(address: Address) -> tuple[ipaddress.IPv4Address, ...]:
    """The IPv4 addresses an IPv6 address carries (module doc); () for an IPv4 address or an
    IPv6 address that carries none."""
    if isinstance(address, ipaddress.IPv4Address):
        return ()
    low = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    found: list[ipaddress.IPv4Address] = []
    if address.ipv4_mapped is not None:
        found.append(address.ipv4_mapped)
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:
        found.extend(address.teredo)
    if (any(address in n for n in NAT64) or address in SIIT
            or (address in COMPATIBLE and int(address) > 1)):  # :: and ::1 are themselves
        found.append(low)
    return tuple(found)


def is_metadata(address: Address) -> bool:
    """Whether ``address``, or an IPv4 address it carries, is a cloud metadata service."""
    return any(a in n for a in (address, *embedded(address)) for n in METADATA)


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
