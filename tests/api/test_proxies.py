"""Forwarded headers are believed from the operator's trusted proxies only (issue 20)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from service.api.proxies import (
    TrustedProxyHeaders,
    client_address,
    from_trusted_proxy,
    parse_trusted,
)


async def _seen(trusted: tuple[str, ...], peer: str, headers: dict[str, str]) -> dict[str, Any]:
    """What the app behind the middleware sees as client and trust, for a request from
    ``peer`` carrying ``headers``."""
    seen: dict[str, Any] = {}

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen["client"] = client_address(scope)
        seen["trusted"] = from_trusted_proxy(scope)
        seen["scheme"] = scope["scheme"]
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    transport = httpx.ASGITransport(app=TrustedProxyHeaders(app, trusted), client=(peer, 5000))
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
        assert (await http.get("/", headers=headers)).status_code == 204
    return seen


FORWARDED = {"X-Forwarded-For": "203.0.113.9", "X-Forwarded-Proto": "https"}


async def test_without_trusted_proxies_forwarded_headers_are_ignored() -> None:
    seen = await _seen((), "127.0.0.1", FORWARDED)
    assert seen == {"client": "127.0.0.1", "trusted": False, "scheme": "http"}


async def test_a_trusted_proxy_gives_the_client_address_and_scheme() -> None:
    seen = await _seen(("10.0.0.0/8",), "10.1.2.3", FORWARDED)
    assert seen == {"client": "203.0.113.9", "trusted": True, "scheme": "https"}


async def test_a_peer_outside_the_trusted_ranges_cannot_spoof_its_address() -> None:
    seen = await _seen(("10.0.0.0/8",), "192.0.2.7", FORWARDED)
    assert seen == {"client": "192.0.2.7", "trusted": False, "scheme": "http"}


async def test_behind_a_chain_the_first_untrusted_hop_is_the_client() -> None:
    # The client forged the first entry; the trusted proxy appended the real one.
    seen = await _seen(("10.0.0.0/8",), "10.0.0.2",
                       {"X-Forwarded-For": "6.6.6.6, 198.51.100.4, 10.0.0.5"})
    assert seen["client"] == "198.51.100.4"


def test_the_setting_refuses_what_is_not_an_address() -> None:
    assert parse_trusted(" 10.0.0.0/8, ::1 ,") == ("10.0.0.0/8", "::1")
    with pytest.raises(ValueError):
        parse_trusted("10.0.0.0/8,proxy.example")
