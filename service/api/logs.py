"""Credentials never reach the logs: stream tickets (``?ticket=``) are redacted from every URL
the access log (``uvicorn.access``) and our own loggers print. And every line logged while a
request is handled names its request id (``service.api.request_ids``, issue 20).

``install()`` puts ``RedactCredentials`` on those loggers (once; ``create_app`` calls it).
A logger's filters see each record before any handler does and survive uvicorn's logging
setup, so every handler -- uvicorn's, a JSON one, a test's -- gets the redacted text. The
parameter is found by its decoded name, as Starlette reads it (``tick%65t=`` is a ticket
too).

Request ids: ``install()`` also wraps the log record factory, which every logger (ours,
uvicorn's, a library's) creates its records with, so no logger or handler can miss it: a
record created while a request is handled gets ``request_id`` (an attribute, for structured
handlers; ``""`` outside requests) and its message ends with `` [request_id=<id>]``. uvicorn's
access formatter prints no message, so ``skyline serve`` adds ``request_id`` to its format
(``ACCESS_FORMAT``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Final
from urllib.parse import unquote_plus

from .request_ids import current_request_id

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


ACCESS_FORMAT: Final = (
    '%(levelprefix)s %(client_addr)s - "%(request_line)s" %(status_code)s '
    "[request_id=%(request_id)s]"
)
"""uvicorn's access line, with the request id."""


def serve_log_config() -> dict[str, Any]:
    """uvicorn's logging configuration, its access lines naming the request id."""
    import copy

    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config["formatters"]["access"]["fmt"] = ACCESS_FORMAT
    return config


class _RequestIdRecords:
    """A log record factory: the wrapped one's records, stamped with the request id."""

    def __init__(self, wrapped: Callable[..., logging.LogRecord]) -> None:
        self.wrapped = wrapped

    def __call__(self, *args: Any, **kwargs: Any) -> logging.LogRecord:
        record = self.wrapped(*args, **kwargs)
        request_id = current_request_id.get()
        record.request_id = request_id or ""
        if request_id:
            # Request ids hold no "%" (request_ids.SANE), so %-formatting is unchanged.
            record.msg = f"{record.msg} [request_id={request_id}]"
        return record


def install() -> None:
    """Put the filter on every logger that may print a URL (at most once each), and the
    request id on every record (once)."""
    for name in LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactCredentials) for f in logger.filters):
            logger.addFilter(RedactCredentials())
    factory = logging.getLogRecordFactory()
    if not isinstance(factory, _RequestIdRecords):
        logging.setLogRecordFactory(_RequestIdRecords(factory))
