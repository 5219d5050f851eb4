"""Marking an engine's departure from the rules text per rules version: version 1 keeps the
departure (a strict xfail that must go on failing), version 2 agrees with the rules."""

from __future__ import annotations

from typing import Any

import pytest


class RulesDivergence(AssertionError):
    """The engine does something the rules text does not allow (or vice versa)."""


def per_version(reason: str, fixed_in: int = 2, newest: int = 3) -> list[Any]:
    """Rules versions 1..``newest`` as parameters; those before ``fixed_in`` a strict xfail
    naming ``reason`` (a fix stays in every later version)."""
    return [
        pytest.param(v, marks=pytest.mark.xfail(strict=True, raises=RulesDivergence,
                                                reason=f"rules version {v}: {reason}"),
                     id=f"v{v}")
        if v < fixed_in else pytest.param(v, id=f"v{v}")
        for v in range(1, newest + 1)
    ]
