"""Compressed answers (docs/api.md, "Compression"; docs/decisions.md, issue 15).

``Compression`` is ASGI middleware around ``starlette_compress.CompressMiddleware``: an
answer of a compressible type (JSON, problem documents, SVG, HTML, scripts, the event
stream ...) is sent as zstd, br or gzip when the request's ``Accept-Encoding`` allows it
(that preference order, whatever the q-values say), identity otherwise; ordinary answers
under ``minimum_size`` bytes stay identity. ``text/event-stream`` is compressed too and
flushed at every event (a deflate ``Z_SYNC_FLUSH``), so an EventSource decodes each event
as it arrives, never waiting for the next.

Event streams are gzip or identity, never zstd or br, and their gzip keeps a 4 KiB window:
a stream holds its compressor for as long as it is open, and a replica holds thousands of
streams. Measured per open stream (``docs/performance.md``, "Live streams at scale"): zstd
at the library's level 2.1 MB, br 590 KB, gzip with the default 32 KiB window 175 KB, this
gzip about 24 KB; a full-mode New York event still shrinks from 14 KB to 2.5 KB (patch-mode
events are under 1 KB before compression). ``STREAM_PATH`` names the streams: the path is
all a middleware sees before it must choose its coder.

Entity tags: a content-coding is a representation of its own (RFC 9110 8.8.3), so a
compressed answer's strong tag names its coding: ``"7"`` becomes ``"7;br"`` (``"7;lang=cs"``
becomes ``"7;lang=cs;br"``). The handlers never see those suffixes: before a request reaches
them,

- ``If-None-Match`` loses the suffix of the coding this request is answered in (a tag of
  another coding keeps its suffix and matches nothing: that representation is not the one
  this request would get), and a 304 answered to such a tag names the coded tag again;
- ``If-Match`` loses any coding suffix: it pins the match version, which every coding of it
  shares (as every language does).
"""

from __future__ import annotations

import gzip
import re
import zlib
from typing import Final

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette_compress import CompressMiddleware, add_compress_type

# Not exported: the library's gzip stream encoder (subclassed for a smaller window), its
# responder loop (flush per event), and the very parser it chooses its coding with.
from starlette_compress._gzip import _GzipStreamEncoder
from starlette_compress._responder import CompressionResponder
from starlette_compress._utils import parse_accept_encoding

from .problems import PROBLEM_JSON

MINIMUM_SIZE: Final = 500
"""Ordinary answers shorter than this stay identity (compressing them gains nothing)."""
CODINGS: Final = ("zstd", "br", "gzip")
"""The content-codings answered, in the order they are preferred."""

# Our own +json types are compressible too (the library lists plain JSON only).
for _media in (PROBLEM_JSON, "application/graphql-response+json"):
    add_compress_type(_media)

GZIP_LEVEL: Final = 4
"""The library's default gzip level, kept for event streams."""
STREAM_WINDOW_BITS: Final = 12
"""An event stream's deflate window: 4 KiB (zlib's default: 15, 32 KiB)."""
STREAM_MEM_LEVEL: Final = 4
"""An event stream's deflate hash memory level (zlib's default: 8)."""
STREAM_PATH: Final = re.compile(r"/v1/(.+/)?events")
"""Request paths answered with an event stream (``text/event-stream``)."""

_QUOTED = re.compile(r'(W/)?"([^"]*)"')
"""An entity tag in a list (its opaque part may hold commas: only quotes delimit it)."""


def negotiated_coding(accept_encoding: str) -> str | None:
    """The coding ``CompressMiddleware`` answers a request with this ``Accept-Encoding`` in
    (when the answer is compressible): the first of ``CODINGS`` the header accepts; None:
    identity. The library's own parser decides, so the two cannot disagree."""
    accepted = parse_accept_encoding(accept_encoding) if accept_encoding else frozenset()
    return next((coding for coding in CODINGS if coding in accepted), None)


def coded_tag(tag: str, coding: str) -> str:
    """``"7"`` -> ``"7;br"``; a weak tag stays as it is (weak tags may be shared by
    representations that differ only in their bytes)."""
    if tag.startswith('"') and tag.endswith('"') and len(tag) >= 2:
        return f'{tag[:-1]};{coding}"'
    return tag


def strip_codings(header: str, codings: tuple[str, ...]) -> tuple[str, set[str]]:
    """``header`` (an entity-tag list) with the ``;<coding>`` suffix of ``codings`` taken off
    each tag, and the stripped tags (strong form, ``"7"``); the rest is left as it was."""
    stripped: set[str] = set()

    def plain(found: re.Match[str]) -> str:
        weak, opaque = found.group(1) or "", found.group(2)
        base, _, coding = opaque.rpartition(";")
        if not base or coding not in codings:
            return found.group(0)
        stripped.add(f'"{base}"')
        return f'{weak}"{base}"'

    return _QUOTED.sub(plain, header), stripped


class _StreamGzip(_GzipStreamEncoder):
    """The library's gzip stream encoder with the event streams' window (module doc)."""

    __slots__ = ()

    def __init__(self, level: int = GZIP_LEVEL) -> None:
        self._obj = zlib.compressobj(
            level, zlib.DEFLATED, 16 + STREAM_WINDOW_BITS, STREAM_MEM_LEVEL
        )


def is_stream(scope: Scope) -> bool:
    return scope.get("method") in ("GET", "HEAD") and bool(
        STREAM_PATH.fullmatch(scope.get("path", ""))
    )


def _varying(send: Send) -> Send:
    """``send`` adding ``Vary: Accept-Encoding`` to the response's headers."""

    async def varying(message: Message) -> None:
        if message["type"] == "http.response.start":
            MutableHeaders(scope=message).add_vary_header("Accept-Encoding")
        await send(message)

    return varying


class Compression:
    """``CompressMiddleware`` (zstd, br, gzip) with entity tags per coding (module doc)."""

    def __init__(self, app: ASGIApp, minimum_size: int = MINIMUM_SIZE) -> None:
        self.app = app
        self.compress = CompressMiddleware(
            app, minimum_size=minimum_size, zstd=True, brotli=True, gzip=True
        )
        self.streams = CompressionResponder(
            app, minimum_size, "gzip",
            lambda body: gzip.compress(body, compresslevel=GZIP_LEVEL),
            lambda content_length: _StreamGzip(),
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        accepted = ",".join(Headers(scope=scope).getlist("accept-encoding"))
        stream = is_stream(scope)
        if stream:
            codings = parse_accept_encoding(accepted) if accepted else frozenset()
            coding: str | None = "gzip" if "gzip" in codings else None
        else:
            coding = negotiated_coding(accepted)
        headers: list[tuple[bytes, bytes]] = []
        revalidated: set[str] = set()
        """The tags of this request's coding If-None-Match named, without the suffix."""
        for key, value in scope["headers"]:
            if key == b"if-none-match" and coding is not None:
                text, found = strip_codings(value.decode("latin-1"), (coding,))
                value, revalidated = text.encode("latin-1"), revalidated | found
            elif key == b"if-match":
                value = strip_codings(value.decode("latin-1"), CODINGS)[0].encode("latin-1")
            headers.append((key, value))

        async def send_tagged(message: Message) -> None:
            if message["type"] == "http.response.start":
                answer = MutableHeaders(scope=message)
                tag = answer.get("etag")
                encoding = answer.get("content-encoding")
                if tag is not None and encoding in CODINGS:
                    answer["etag"] = coded_tag(tag, encoding)
                elif (tag is not None and coding is not None and message["status"] == 304
                      and tag in revalidated):
                    answer["etag"] = coded_tag(tag, coding)
            await send(message)

        # In place, not a copy: what the app records in the scope (the matched route, which
        # the request metrics read) must reach the middleware around this one.
        if stream and coding is not None:
            scope["headers"] = headers
            await self.streams(scope, receive, send)
            return
        scope["headers"] = headers
        if stream:  # identity: only Vary to add, and no coder's wrappers held while open
            await self.app(scope, receive, _varying(send))
            return
        await self.compress(scope, receive, send_tagged)
