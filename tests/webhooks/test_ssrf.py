"""The URL policy over every form an IPv4 address takes inside IPv6 (issue 31, item 12): an
address carrying a refused IPv4 address is refused in every form (6to4 used to pass), a
public one's global forms pass, and the cloud metadata services are refused in every form
whatever networks the operator allows."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.webhooks.ssrf import METADATA, UrlPolicy, embedded, parse_networks

V4 = ipaddress.IPv4Address
V6 = ipaddress.IPv6Address


def _v6(value: int) -> V6:
    return V6(value)


FORMS: dict[str, Callable[[V4], V6]] = {
    "mapped ::ffff:a.b.c.d": lambda a: _v6(0xFFFF << 32 | int(a)),
    "compatible ::a.b.c.d": lambda a: _v6(int(a)),
    "SIIT ::ffff:0:a.b.c.d": lambda a: _v6(0xFFFF << 48 | int(a)),
    "NAT64 64:ff9b::a.b.c.d": lambda a: _v6(0x64FF9B << 96 | int(a)),
    "NAT64 local 64:ff9b:1::a.b.c.d": lambda a: _v6((0x64FF9B0001 << 80) | int(a)),
    "6to4 2002:a.b.c.d::": lambda a: _v6(0x2002 << 112 | int(a) << 80),
    "6to4 with subnet and host": lambda a: _v6(0x2002 << 112 | int(a) << 80 | 0xBEEF << 64 | 1),
    "Teredo server": lambda a: _v6(0x20010000 << 96 | int(a) << 64 | 0xFFFFFFFF),
    "Teredo client (inverted)": lambda a: _v6(
        0x20010000 << 96 | int(V4("8.8.4.4")) << 64 | (int(a) ^ 0xFFFFFFFF)),
}
"""Every way an IPv6 address carries an IPv4 address, as a function of that address."""

REFUSED_V4 = ["127.0.0.1", "127.8.9.1", "10.1.2.3", "172.16.0.1", "192.168.0.1",
              "169.254.1.1", "0.0.0.0", "224.0.0.1", "240.0.0.1", "100.64.0.1",
              "169.254.169.254", "169.254.170.2", "100.100.100.200"]
PUBLIC_V4 = ["8.8.8.8", "1.1.1.1", "93.184.216.34"]
GLOBAL_FORMS = ["mapped ::ffff:a.b.c.d", "6to4 2002:a.b.c.d::", "6to4 with subnet and host"]
"""The forms that are themselves global unicast (the others are reserved or Teredo's
``2001::/32``, refused as such)."""
EVERYTHING = UrlPolicy(allow_http=True, allow_networks=parse_networks("0.0.0.0/0,::/0"))
"""An operator who allows every network."""


def test_every_form_of_the_address_is_what_the_policy_carries() -> None:
    for form, make in FORMS.items():
        for raw in (*REFUSED_V4, *PUBLIC_V4):
            if form.startswith("compatible") and raw == "0.0.0.0":
                continue  # "::", the unspecified address (refused as such)
            address = make(V4(raw))
            assert V4(raw) in embedded(address), (form, raw, str(address))


@pytest.mark.parametrize("raw", REFUSED_V4)
@pytest.mark.parametrize("form", list(FORMS))
def test_a_refused_ipv4_address_is_refused_in_every_form(form: str, raw: str) -> None:
    policy = UrlPolicy()
    assert not policy.allowed(V4(raw))
    assert not policy.allowed(FORMS[form](V4(raw))), str(FORMS[form](V4(raw)))


@pytest.mark.parametrize("raw", PUBLIC_V4)
@pytest.mark.parametrize("form", GLOBAL_FORMS)
def test_a_public_ipv4_address_passes_in_its_global_forms(form: str, raw: str) -> None:
    assert UrlPolicy().allowed(FORMS[form](V4(raw)))


@pytest.mark.parametrize("form", ["plain", *FORMS])
@pytest.mark.parametrize("metadata", ["169.254.169.254", "169.254.170.2", "100.100.100.200"])
def test_the_metadata_services_are_refused_in_every_form_whatever_is_allowed(
        form: str, metadata: str) -> None:
    address: V4 | V6 = V4(metadata) if form == "plain" else FORMS[form](V4(metadata))
    for allow in ("0.0.0.0/0,::/0", f"{metadata}/32", "169.254.0.0/16,::/0,2002::/16",
                  "64:ff9b::/96,2001::/32,::/96"):
        policy = UrlPolicy(allow_http=True, allow_networks=parse_networks(allow))
        assert not policy.allowed(address), (str(address), allow)


@pytest.mark.parametrize("raw", ["fd00:ec2::254", "fd20:ce::254"])
def test_the_ipv6_metadata_services_are_refused_whatever_is_allowed(raw: str) -> None:
    for allow in ("::/0", f"{raw}/128", "fd00::/8"):
        policy = UrlPolicy(allow_networks=parse_networks(allow))
        assert not policy.allowed(V6(raw)), allow


def test_an_allowed_network_lets_its_embedded_forms_through_but_no_other() -> None:
    loopback = UrlPolicy(allow_http=True, allow_networks=parse_networks("127.0.0.0/8"))
    assert loopback.allowed(FORMS["6to4 2002:a.b.c.d::"](V4("127.0.0.1")))
    assert loopback.allowed(FORMS["mapped ::ffff:a.b.c.d"](V4("127.0.0.1")))
    assert not loopback.allowed(FORMS["6to4 2002:a.b.c.d::"](V4("10.0.0.1")))


@settings(max_examples=500, deadline=None)
@given(st.integers(min_value=0, max_value=2**32 - 1), st.sampled_from(sorted(FORMS)),
       st.sampled_from(["", "127.0.0.0/8", "10.0.0.0/8,::1/128", "0.0.0.0/0"]))
def test_no_form_passes_where_its_ipv4_address_is_refused(
        value: int, form: str, allow: str) -> None:
    policy = UrlPolicy(allow_http=True, allow_networks=parse_networks(allow))
    address = V4(value)
    if form.startswith("compatible") and value <= 1:
        return  # "::" and "::1" are the unspecified and loopback addresses, judged as such
    if not policy.allowed(address):
        assert not policy.allowed(FORMS[form](address))
    if any(address in n for n in METADATA):
        assert not EVERYTHING.allowed(FORMS[form](address))


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=0, max_value=2**128 - 1))
def test_no_ipv6_address_passes_if_an_address_it_carries_is_refused(value: int) -> None:
    address = V6(value)
    policy = UrlPolicy()
    if policy.allowed(address):
        assert all(policy.allowed(a) for a in embedded(address))
    assert not EVERYTHING.allowed(address) or not any(
        a in n for a in (address, *embedded(address)) for n in METADATA)
