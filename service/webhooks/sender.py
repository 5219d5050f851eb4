"""One HTTP attempt: POST the body to the address the URL policy checked just now (never
resolved again by the HTTP client), redirects not followed, with connect and read timeouts
and a deadline on the whole attempt (the read timeout is per read: a receiver answering a
byte at a time would hold the attempt for ever). TLS is verified against the URL's host name
(SNI)."""

from __future__ import annotations

import asyncio
import ipaddress
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import httpx

from service.errors import ApiError

from .ssrf import Target, UrlPolicy

USER_AGENT = "Skyline-Webhooks/1"
MAX_RESPONSE_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class Outcome:
    status: int | None
    error: str | None
    duration_ms: int

    @property
    def ok(self) -> bool:
        return self.error is None and self.status is not None and 200 <= self.status < 300


class Sender:
    def __init__(self, policy: UrlPolicy, *, connect_timeout: float = 5.0,
                 read_timeout: float = 10.0, deadline: float | None = None) -> None:
        self.policy = policy
        self.deadline = deadline if deadline is not None else connect_timeout + read_timeout
        """Seconds the whole attempt may take, whatever each read takes."""
        timeout = httpx.Timeout(read_timeout, connect=connect_timeout, pool=connect_timeout)
        # No environment proxies: a proxy would connect somewhere else than the checked
        # address.
        self.client = httpx.AsyncClient(timeout=timeout, follow_redirects=False,
                                        trust_env=False)

    async def aclose(self) -> None:
        await self.client.aclose()

    async def post(self, url: str, headers: dict[str, str], body: bytes) -> Outcome:
        started = time.monotonic()

        def done(status: int | None, error: str | None) -> Outcome:
            return Outcome(status, error, int((time.monotonic() - started) * 1000))

        try:
            async with asyncio.timeout(self.deadline):
                return await self._attempt(url, headers, body, done)
        except TimeoutError:
            return done(None, "timeout")

    async def _attempt(self, url: str, headers: dict[str, str], body: bytes,
                       done: Callable[[int | None, str | None], Outcome]) -> Outcome:
        try:
            target = await self.policy.check(url, resolve_required=True)
        except ApiError as error:
            return done(None, "unresolvable" if "resolve" in error.detail else
                        "forbidden_address")
        assert target is not None
        try:
            async with self.client.stream(
                "POST", _to_address(target), content=body,
                headers={**headers, "Host": _host_header(target),
                         "Content-Type": "application/json", "User-Agent": USER_AGENT},
                extensions={"sni_hostname": target.host} if target.scheme == "https" else {},
            ) as response:
                received = 0
                async for chunk in response.aiter_raw():
                    received += len(chunk)
                    if received > MAX_RESPONSE_BYTES:
                        break
        except httpx.TimeoutException:
            return done(None, "timeout")
        except httpx.HTTPError:
            return done(None, "connection")
        if 300 <= response.status_code < 400:
            return done(response.status_code, "redirect")
        if not 200 <= response.status_code < 300:
            return done(response.status_code, "status")
        return done(response.status_code, None)


def _to_address(target: Target) -> str:
    parts = urlsplit(target.url)
    host = (f"[{target.address}]" if isinstance(target.address, ipaddress.IPv6Address)
            else str(target.address))
    return urlunsplit((parts.scheme, f"{host}:{target.port}", parts.path or "/", parts.query,
                       ""))


def _host_header(target: Target) -> str:
    default = 443 if target.scheme == "https" else 80
    host = f"[{target.host}]" if ":" in target.host else target.host
    return host if target.port == default else f"{host}:{target.port}"
