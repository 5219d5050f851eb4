"""Marking an engine's departure from the rules text per rules version: version 1 keeps the
departure (a strict xfail that must go on failing), version 2 agrees with the rules."""

from __future__ import annotations

from typing import Any

import pytest


class RulesDivergence(AssertionError):
    """The engine does something the rules text does not allow (or vice versa)."""


def per_version(reason: str) -> list[Any]:
    """Rules versions 1 and 2 as parameters; version 1 a strict xfail naming ``reason``."""
    return [pytest.param(1, marks=pytest.mark.xfail(strict=True, raises=RulesDivergence,
                                                    reason=f"rules version 1: {reason}"),
                         id="v1"),
            pytest.param(2, id="v2")]
