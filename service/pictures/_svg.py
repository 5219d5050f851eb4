"""Tiny helpers to write SVG text deterministically (no ids from counters or randomness)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any
from xml.sax.saxutils import escape, quoteattr

SVG_NS = "http://www.w3.org/2000/svg"


def num(value: float) -> str:
    """A coordinate: integers stay integers, others get at most two decimals."""
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.2f}".rstrip("0").rstrip(".")


def attrs(values: Mapping[str, Any]) -> str:
    out = []
    for key, value in values.items():
        if value is None or value is False:
            continue
        name = key.rstrip("_").replace("_", "-")
        text = num(value) if isinstance(value, int | float) and not isinstance(value, bool) \
            else str(value)
        out.append(f" {name}={quoteattr(text)}")
    return "".join(out)


def fit(label: str, size: float, room: float) -> dict[str, Any]:
    """``textLength`` when a label would overflow ``room`` (an estimate; deterministic)."""
    estimate = len(label) * size * 0.56
    if estimate <= room:
        return {}
    return {"textLength": room, "lengthAdjust": "spacingAndGlyphs"}


def tag(name: str, content: str | None = None, /, **values: Any) -> str:
    if content is None:
        return f"<{name}{attrs(values)}/>"
    return f"<{name}{attrs(values)}>{content}</{name}>"


def text(x: float, y: float, label: str, **values: Any) -> str:
    return tag("text", escape(label), x=x, y=y, **values)


def title(label: str) -> str:
    return tag("title", escape(label))


def group(children: Iterable[str], **values: Any) -> str:
    return tag("g", "".join(children), **values)


def action_dict(action: Any) -> dict[str, Any] | None:
    """A legal move (engine dataclass, pydantic model or wire JSON) as a plain dict."""
    if action is None:
        return None
    if isinstance(action, Mapping):
        return dict(action)
    if dataclasses.is_dataclass(action) and not isinstance(action, type):
        return {f.name: getattr(action, f.name) for f in dataclasses.fields(action)}
    dump = getattr(action, "model_dump", None)
    if dump is not None:
        dumped: dict[str, Any] = dump(mode="json")
        return dumped
    raise TypeError(f"cannot highlight {type(action).__name__}")


def outline(cells: Iterable[tuple[int, int]], cell: float, ox: float, oy: float) -> str:
    """Path data of the outer edges of a set of grid cells (each side shared by two cells of
    the set is left out), as short segments in a stable order."""
    inside = set(cells)
    parts = []
    for x, y in sorted(inside, key=lambda c: (c[1], c[0])):
        px, py = ox + x * cell, oy + y * cell
        if (x, y - 1) not in inside:
            parts.append(f"M{num(px)} {num(py)}h{num(cell)}")
        if (x + 1, y) not in inside:
            parts.append(f"M{num(px + cell)} {num(py)}v{num(cell)}")
        if (x, y + 1) not in inside:
            parts.append(f"M{num(px)} {num(py + cell)}h{num(cell)}")
        if (x - 1, y) not in inside:
            parts.append(f"M{num(px)} {num(py)}v{num(cell)}")
    return "".join(parts)


def document(width: float, height: float, title_text: str, desc_text: str, body: str,
             *, prefix: str, style: str = "") -> str:
    head = (
        f'<svg xmlns="{SVG_NS}" viewBox="0 0 {num(width)} {num(height)}" '
        f'width="{num(width)}" height="{num(height)}" role="img" '
        f'aria-labelledby="{prefix}-title {prefix}-desc" '
        f'font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif">'
    )
    parts = [
        head,
        f'<title id="{prefix}-title">{escape(title_text)}</title>',
        f'<desc id="{prefix}-desc">{escape(desc_text)}</desc>',
    ]
    if style:
        parts.append(f"<style>{style}</style>")
    parts.append(body)
    parts.append("</svg>")
    return "".join(parts) + "\n"
