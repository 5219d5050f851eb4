"""Which language a request gets: the ``lang`` parameter, else ``Accept-Language``, else
English (docs/api.md, "Languages")."""

from __future__ import annotations

import re
from typing import Final, Literal, TypeGuard, get_args

from babel import Locale, UnknownLocaleError
from babel.core import parse_locale

Lang = Literal["en", "cs", "de"]
"""A language the service answers in."""
LANGUAGES: Final[tuple[Lang, ...]] = get_args(Lang)
"""English first: the fallback, and the source language of every message."""
DEFAULT_LANGUAGE: Final[Lang] = "en"

MAX_RANGES = 32
"""Language ranges of ``Accept-Language`` looked at (the rest is ignored)."""
MAX_HEADER = 1024
_QVALUE = re.compile(r"0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?")
"""RFC 9110 12.4.2's ``qvalue``, in ASCII digits (``float`` reads other scripts' too)."""


def is_language(value: object) -> TypeGuard[Lang]:
    return value in LANGUAGES


def _language_of(tag: str) -> str | None:
    """The language subtag of a BCP 47 tag (``cs-CZ`` -> ``cs``), lower case; None when the
    tag is not one (``*``, ``x-klingon``, digits)."""
    try:
        language = parse_locale(tag.strip().replace("_", "-"), sep="-")[0]
    except ValueError:
        return None
    return language.lower() or None


def _quality(params: list[str]) -> float | None:
    """The ``q`` weight of a language range (1 when absent); None when malformed."""
    for param in params:
        name, _, value = param.partition("=")
        if name.strip().lower() == "q":
            weight = value.strip()
            return float(weight) if _QVALUE.fullmatch(weight) is not None else None
    return 1.0


def preferred_languages(accept_language: str | None) -> list[str]:
    """The ranges of an ``Accept-Language`` header, best first (RFC 9110 12.5.4: by q-value,
    the header's order among equals; ``q=0`` and malformed ranges dropped)."""
    if not accept_language or len(accept_language) > MAX_HEADER:
        return []
    weighted: list[tuple[float, int, str]] = []
    for index, item in enumerate(accept_language.split(",")[:MAX_RANGES]):
        tag, *params = item.split(";")
        tag = tag.strip()
        weight = _quality(params)
        if not tag or weight is None or weight == 0:
            continue
        weighted.append((-weight, index, tag))
    return [tag for _, _, tag in sorted(weighted)]


def negotiate(accept_language: str | None, lang: str | None = None) -> Lang:
    """The language to answer in.

    ``lang`` (a query parameter, a GraphQL connection parameter) wins: ``en``, ``cs`` or
    ``de`` -- a regional tag counts as its language (``cs-CZ``), anything else is English.
    Without it, the best ``Accept-Language`` range the service has (q-values honoured,
    ``de-AT`` matches ``de``, ``*`` matches English); English when none matches.
    """
    if lang is not None:
        chosen = _language_of(lang)
        return chosen if is_language(chosen) else DEFAULT_LANGUAGE
    ranges = [tag for tag in preferred_languages(accept_language) if tag != "*"]
    try:
        found = Locale.negotiate(ranges, list(LANGUAGES), sep="-")
    except (ValueError, UnknownLocaleError):
        found = None
    if found is not None and is_language(found.language):
        return found.language
    # Locale.negotiate stops at the first tag Babel cannot parse; try the rest one by one.
    for tag in ranges:
        language = _language_of(tag)
        if is_language(language):
            return language
    return DEFAULT_LANGUAGE
