"""The examples of the docs, as data: fenced blocks, how each is marked, and the pattern
language their expected outputs are written in (docs/testing.md, "The docs' examples are
tests").

- ``blocks(path)``: every fenced block of a Markdown file, with its line, language, text, the
  ``<!-- example: ... -->`` marker on the line above (if any) and whether it directly follows
  the previous block (only blank lines between).
- ``parse_pattern(text)``: an expected JSON document as the docs write it -- JSON where a bare
  ``...`` stands for elided members, elements or a value.
- ``mismatches(pattern, actual)``: why ``actual`` does not match ``pattern`` (empty when it
  does). Objects: the pattern's members must be there (more are allowed: the compatibility
  policy lets responses gain fields); lists: element by element, ``"..."`` standing for any
  run of elements; ``"..."`` as a value matches anything; in a string, ``...`` and a
  ``<placeholder>`` match any text; the values of ``matchId`` and ``token`` (drawn at random by
  the server) match any string; everything else must be equal, type included.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

ELIDED = "..."
RANDOM_KEYS = frozenset({"matchId", "token"})
"""Keys whose values the server draws at random: any string matches."""

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,})(?P<info>[^`\n]*)$")
_MARKER = re.compile(r"^\s*<!--\s*example:\s*(?P<marker>.*?)\s*-->\s*$")
_PLACEHOLDER = re.compile(r"<[^<>\n]+>")


@dataclass(frozen=True)
class Block:
    path: Path
    line: int
    """Of the opening fence, 1-based."""
    lang: str
    """The info string's first word ("" for a plain fence)."""
    text: str
    """The content, de-indented by the fence's indentation."""
    marker: str | None
    """The text of ``<!-- example: ... -->`` on the line above the fence."""
    follows: bool
    """Only blank lines separate it from the previous block."""

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of ``path``, in order."""
    lines = path.read_text("utf-8").split("\n")
    out: list[Block] = []
    index = 0
    last_end = -2
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        indent, fence = opening["indent"], opening["fence"]
        body: list[str] = []
        end = index + 1
        while end < len(lines) and not (
            lines[end].strip().startswith(fence) and not lines[end].strip().strip("`")
        ):
            line = lines[end]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            end += 1
        marker = _MARKER.match(lines[index - 1]) if index > 0 else None
        between = lines[last_end + 1:index]
        out.append(Block(
            path=path,
            line=index + 1,
            lang=(opening["info"].split() or [""])[0],
            text="\n".join(body) + "\n",
            marker=marker["marker"] if marker else None,
            follows=bool(out) and all(not line.strip() for line in between),
        ))
        last_end = end
        index = end + 1
    return out


# --------------------------------------------------------------------------- patterns
def parse_pattern(text: str) -> Any:
    """JSON with bare ``...``: a member (``{"a": 1, ...}``), an element (``[1, ...]``) or a
    value (``"view": {...}``, ``"x": ...``) left out. Each becomes the string ``"..."`` (a
    member: ``"...": "..."``), which ``mismatches`` reads as elided."""
    out: list[str] = []
    stack: list[str] = []
    previous = ""  # the last significant character outside strings
    index = 0
    while index < len(text):
        char = text[index]
        if char == '"':
            end = index + 1
            while text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            out.append(text[index:end + 1])
            previous = '"'
            index = end + 1
            continue
        if text.startswith(ELIDED, index):
            in_object = bool(stack) and stack[-1] == "{"
            out.append('"...": "..."' if in_object and previous in ("{", ",") else '"..."')
            previous = '"'
            index += len(ELIDED)
            continue
        if char in "{[":
            stack.append(char)
        elif char in "}]":
            stack.pop()
        if not char.isspace():
            previous = char
        out.append(char)
        index += 1
    return json.loads("".join(out), object_pairs_hook=_unique_elisions)


def _unique_elisions(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    return {key: value for key, value in pairs if key != ELIDED}


def text_matches(pattern: str, actual: str) -> bool:
    """``pattern`` with ``...`` and ``<placeholder>`` standing for any text."""
    if pattern == ELIDED:
        return True
    parts = _PLACEHOLDER.sub("\0", pattern.replace(ELIDED, "\0")).split("\0")
    regex = ".*".join(re.escape(part) for part in parts)
    return re.fullmatch(regex, actual, re.DOTALL) is not None


@dataclass
class Matcher:
    """Compares documents with patterns, remembering which random value (a match id, a token)
    the docs' example stands for: ``aliases[doc value] = real value``."""

    aliases: dict[str, str] = field(default_factory=dict)

    def mismatches(self, pattern: Any, actual: Any, where: str = "$") -> list[str]:
        if pattern == ELIDED:
            return []
        if isinstance(pattern, dict):
            if not isinstance(actual, dict):
                return [f"{where}: expected an object, got {_short(actual)}"]
            out = []
            for key, value in pattern.items():
                if key not in actual:
                    out.append(f"{where}: no member {key!r} (has {sorted(actual)})")
                elif key in RANDOM_KEYS and isinstance(value, str):
                    if not isinstance(actual[key], str):
                        out.append(f"{where}.{key}: expected a string, got {_short(actual[key])}")
                    elif value != ELIDED:
                        self.aliases.setdefault(value, actual[key])
                else:
                    out += self.mismatches(value, actual[key], f"{where}.{key}")
            return out
        if isinstance(pattern, list):
            if not isinstance(actual, list):
                return [f"{where}: expected a list, got {_short(actual)}"]
            return self._list(pattern, actual, where)
        if isinstance(pattern, str):
            if isinstance(actual, str) and text_matches(pattern, actual):
                return []
            return [f"{where}: expected {pattern!r}, got {_short(actual)}"]
        if type(pattern) is not type(actual) or pattern != actual:
            return [f"{where}: expected {json.dumps(pattern)}, got {_short(actual)}"]
        return []

    def _list(self, pattern: list[Any], actual: list[Any], where: str) -> list[str]:
        """Glob matching over elements: ``"..."`` is any run of elements. The segments between
        elisions are placed leftmost-first (they have fixed lengths, so that is enough)."""
        segments: list[list[Any]] = [[]]
        for item in pattern:
            if item == ELIDED:
                segments.append([])
            else:
                segments[-1].append(item)
        if len(segments) == 1:  # no elision: the same length, element by element
            if len(actual) != len(pattern):
                return [f"{where}: expected {len(pattern)} elements, got {len(actual)}"]
            return [m for i, (p, a) in enumerate(zip(pattern, actual, strict=True))
                    for m in self.mismatches(p, a, f"{where}[{i}]")]
        head, *middle, tail = segments
        if len(actual) < sum(len(s) for s in segments):
            return [f"{where}: expected at least {sum(len(s) for s in segments)} elements, "
                    f"got {len(actual)}"]
        out = [m for i, p in enumerate(head)
               for m in self.mismatches(p, actual[i], f"{where}[{i}]")]
        start = len(head)
        stop = len(actual) - len(tail)
        out += [m for i, p in enumerate(tail)
                for m in self.mismatches(p, actual[stop + i], f"{where}[{stop + i}]")]
        for segment in middle:
            if not segment:
                continue
            found = next(
                (i for i in range(start, stop - len(segment) + 1)
                 if not any(self.mismatches(p, actual[i + j], "")
                            for j, p in enumerate(segment))),
                None,
            )
            if found is None:
                out.append(f"{where}: no run of elements matches {_short(segment)}")
                continue
            start = found + len(segment)
        return out


def _short(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "…"


# --------------------------------------------------------------------------- outputs
@dataclass(frozen=True)
class Head:
    """An HTTP response head as ``curl -i`` prints it."""

    status: str
    headers: dict[str, str]


def split_head(output: str) -> tuple[Head | None, str]:
    """``curl -i`` output: the head (the last one, after any ``100 Continue``) and the body."""
    if not output.startswith("HTTP/"):
        return None, output
    head, _, body = output.replace("\r\n", "\n").partition("\n\n")
    while body.startswith("HTTP/"):
        head, _, body = body.partition("\n\n")
    status, *lines = head.split("\n")
    headers = {}
    for line in lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return Head(status.strip(), headers), body


def sse_events(text: str) -> Iterator[dict[str, str]]:
    """The events of a ``text/event-stream`` (comments skipped); a line ``...`` alone stands
    for more events (yielded as ``{"...": "..."}``)."""
    for chunk in re.split(r"\n\s*\n", text.replace("\r\n", "\n").strip()):
        if chunk.strip() == ELIDED:
            yield {ELIDED: ELIDED}
            continue
        event: dict[str, str] = {}
        for line in chunk.split("\n"):
            if not line or line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            event[name] = event[name] + "\n" + value.strip() if name in event else value.strip()
        if event:
            yield event
