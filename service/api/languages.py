"""Languages over HTTP (docs/api.md, "Languages"): which language a request gets, the headers
every answer carries, and entity tags that name the language.

- ``lang_of(request)``: the ``lang`` query parameter (``en``, ``cs``, ``de``) wins, else
  ``Accept-Language``, else English (``service.i18n.negotiate``);
- ``ContentLanguage``: ASGI middleware that answers every HTTP request with
  ``Content-Language: <lang>`` and ``Vary: Accept-Language`` (added to any ``Vary`` the
  handler set);
- ``tagged(opaque, lang)``: an entity tag in a language. English keeps the plain tag
  (``"7"``), the others add ``;lang=<lang>`` (``"7;lang=cs"``), so a cache or an
  ``If-None-Match`` never mixes two languages' answers, and the tags clients already hold
  (English) keep working (docs/decisions.md, "ETags and languages").
"""

from __future__ import annotations

from typing import Final
from urllib.parse import parse_qsl

from starlette.datastructures import Headers
from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.i18n import DEFAULT_LANGUAGE, LANGUAGES, Lang, negotiate

LANG_PARAM: Final = "lang"
LANGUAGE_SUFFIX: Final = "(?:;lang=(?:" + "|".join(
    lang for lang in LANGUAGES if lang != DEFAULT_LANGUAGE) + "))?"
"""A regular expression of the language part an entity tag may end with (none: English)."""


def _query_lang(query_string: bytes | str) -> str | None:
    text = query_string.decode("latin-1") if isinstance(query_string, bytes) else query_string
    for name, value in parse_qsl(text, keep_blank_values=True):
        if name == LANG_PARAM:
            return value
    return None


def lang_of_scope(scope: Scope) -> Lang:
    """The language of an HTTP or WebSocket connection's request."""
    headers = Headers(scope=scope)
    return negotiate(headers.get("accept-language"), _query_lang(scope.get("query_string", b"")))


def lang_of(request: HTTPConnection) -> Lang:
    """The language of ``request`` (``lang`` parameter, ``Accept-Language``, English)."""
    return lang_of_scope(request.scope)


def tagged(opaque: str, lang: Lang) -> str:
    """The quoted entity tag of ``opaque`` in ``lang``: ``"7"`` in English, ``"7;lang=cs"``
    in Czech."""
    return f'"{opaque}"' if lang == DEFAULT_LANGUAGE else f'"{opaque};lang={lang}"'


def none_match(header: str | None, etag: str) -> bool:
    """``If-None-Match`` names ``etag`` (weak comparison, RFC 9110 13.1.2: ``W/"7"`` matches
    ``"7"``) or is ``*``. Tags of another language never match."""
    if header is None:
        return False
    tags = [tag.strip() for tag in header.split(",")]
    return "*" in tags or any(tag.removeprefix("W/") == etag for tag in tags)


def _vary(existing: bytes | None) -> bytes:
    if existing is None:
        return b"Accept-Language"
    names = [name.strip().lower() for name in existing.split(b",")]
    if b"accept-language" in names or b"*" in names:
        return existing
    return existing + b", Accept-Language"


class ContentLanguage:
    """Every HTTP answer says its language (``Content-Language``) and that it varies with
    ``Accept-Language`` (``Vary``)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        lang = lang_of_scope(scope).encode()

        async def with_language(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", [])
                           if k.lower() not in (b"vary", b"content-language")]
                vary = None
                language = None
                for key, value in message.get("headers", []):
                    if key.lower() == b"vary":
                        vary = value if vary is None else vary + b", " + value
                    elif key.lower() == b"content-language":
                        language = value
                headers.append((b"content-language", language or lang))
                headers.append((b"vary", _vary(vary)))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_language)
