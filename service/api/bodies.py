"""What every JSON a client sends shares, over REST, GraphQL HTTP and WebSockets: the media
type a body must declare, and how deeply its JSON may nest (docs/security.md, "Hostile
bodies (items 5 and 10)").

- A request body is JSON only when it says so: ``Content-Type: application/json`` (or a
  ``+json`` type). A body without a content type, or with any other, is refused with 415
  ``unsupported_media_type``, so that a cross-site form or ``fetch`` without a CORS preflight
  (``text/plain``, ``application/x-www-form-urlencoded``, ``multipart/form-data``, or no type
  at all) can never be read as JSON. An empty body needs no content type.
- JSON nests at most ``MAX_JSON_DEPTH`` arrays and objects deep. Deeper JSON is refused before
  it is parsed (400 ``malformed``; a WebSocket closes with 4400): Python's parser recurses
  once per level, and some thousands of levels exhaust the stack. Every document the service
  takes is a few levels deep (a move: ``{"action": {"tiles": [1, 2]}}`` is three).
"""

from __future__ import annotations

import re
from typing import Final

MAX_JSON_DEPTH: Final = 32
"""Arrays and objects one JSON document may nest (the outermost one counts as 1)."""

_JSON_SUFFIX = "+json"
# A string (skipped whole, so that brackets inside it do not count), or a bracket. The
# possessive repetition keeps an unterminated string linear.
_TOKENS_BYTES = re.compile(rb'"(?:[^"\\]|\\.)*+"|[\[\]{}]', re.DOTALL)
_OPENERS = frozenset(b"[{")


def is_json_media(content_type: str | None) -> bool:
    """Whether a ``Content-Type`` value declares JSON: ``application/json`` or a ``+json``
    type, parameters (``; charset=utf-8``) ignored. None (no header) is not JSON."""
    if content_type is None:
        return False
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (
        media.startswith("application/") and media.endswith(_JSON_SUFFIX)
    )


def too_deep(raw: bytes | str, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether the JSON text ``raw`` nests more than ``limit`` arrays and objects, counted
    without parsing it (and without recursion): brackets inside strings do not count. Text
    that is not JSON may count either way; the parser refuses it anyway."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if data.count(b"[") + data.count(b"{") <= limit:
        return False  # the common case: too few brackets to nest that deep
    depth = 0
    for token in _TOKENS_BYTES.finditer(data):
        first = token.group()[0]
        if first in _OPENERS:
            depth += 1
            if depth > limit:
                return True
        elif first != 0x22 and depth:  # a closing bracket (0x22: a string)
            depth -= 1
    return False
