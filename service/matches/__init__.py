"""The match service without HTTP: records and the log format, creating, reading, acting,
replaying, watching, bot seats and hand-overs. ``MatchService`` (``service.py``) composes
the modules; see docs/architecture.md."""

from .service import MatchService

__all__ = ["MatchService"]
