"""What every game's sentences share: the position on a grid, and reading the wire data."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from service.i18n import T, Text


def space(x: object, y: object) -> Text:
    """A square or space of a grid, as a phrase."""
    return T("column {x}, row {y}", x=x, y=y)


def number(data: Mapping[str, Any], name: str, default: int = 0) -> int:
    value = data.get(name, default)
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def strings(data: Mapping[str, Any], name: str) -> list[str]:
    value = data.get(name)
    if not isinstance(value, Sequence) or isinstance(value, str):
        return []
    return [str(item) for item in value]


def attribute(value: Any, name: str, default: Any = None) -> Any:
    """``value.name`` of a view (a model) or a dict of one."""
    if isinstance(value, Mapping):
        return value.get(name, default)
    return getattr(value, name, default)
