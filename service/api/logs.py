"""Credentials never reach the logs: stream tickets (``?ticket=``) are redacted from every URL
the access log (``uvicorn.access``) and our own loggers print.

``install()`` puts ``RedactCredentials`` on those loggers (once; ``create_app`` calls it).
A logger's filters see each record before any handler does and survive uvicorn's logging
setup, so every handler -- uvicorn's, a JSON one, a test's -- gets the redacted text. The
parameter is found by its decoded name, as Starlette reads it (``tick%65t=`` is a ticket
too).
"""

from __future__ import annotations

import logging
from typing import Final
from urllib.parse import unquote_plus

SECRET_PARAMETERS: Final = frozenset({"ticket"})
REDACTED: Final = "[redacted]"
LOGGERS: Final = ("uvicorn.access", "uvicorn.error", "skyline")
"""The loggers that may print a request's URL."""


def redact(text: str) -> str:
    """``text`` with the value of every secret query parameter of any URL in it replaced by
    ``[redacted]`` (the rest unchanged)."""
    if "?" not in text:
        return text
    out: list[str] = []
    for index, part in enumerate(text.split("?")):
        if index == 0:
            out.append(part)
            continue
        query, space, rest = part.partition(" ")  # a log line goes on after the URL
        pairs = []
        for pair in query.split("&"):
            name, equals, _ = pair.partition("=")
            if equals and unquote_plus(name) in SECRET_PARAMETERS:
                pair = f"{name}={REDACTED}"
            pairs.append(pair)
        out.append("&".join(pairs) + space + rest)
    return "?".join(out)


class RedactCredentials(logging.Filter):
    """Redacts secret query parameters in a record's message and arguments."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.args, dict):
            record.args = {k: redact(v) if isinstance(v, str) else v
                           for k, v in record.args.items()}
        return True


def install() -> None:
    """Put the filter on every logger that may print a URL (at most once each)."""
    for name in LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactCredentials) for f in logger.filters):
            logger.addFilter(RedactCredentials())
