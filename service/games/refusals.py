"""Refusal codes: the stable ``code`` of every ``IllegalAction`` an engine can raise.

Each game lists its codes in ``<game>/codes.py`` and publishes them as the engine attribute
``refusal_codes`` (code -> ``Refusal``): the rule ids of ``shared/rules/<game>.md`` the
refusal enforces, and one line of English for the docs. The OpenAPI document
(``x-refusal-codes`` on ``act``'s 422) and ``docs/codes.md`` are rendered from them, and
``tests/test_refusal_codes.py`` checks that every code an engine raises is listed.

Codes are part of the API (``docs/api.md``, compatibility policy): add new ones, never rename
or remove one; clients must tolerate a code they do not know.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Refusal:
    rules: tuple[str, ...]
    """The rule ids the refusal enforces (``NY-A6``; a section id such as ``GK-T`` when it
    guards the turn's structure as a whole)."""
    description: str
    """What the refusal means, one English line (docs/codes.md)."""


def refusal_codes(engine: object) -> Mapping[str, Refusal]:
    """The engine's ``refusal_codes`` ({} for an engine that publishes none, a test's toy)."""
    codes = getattr(engine, "refusal_codes", None)
    return codes if isinstance(codes, Mapping) else {}
