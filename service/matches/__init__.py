"""The match service without HTTP: records and the log format, creating, reading, acting,
replaying, watching, bot seats and hand-overs. ``MatchService`` (``service.py``) composes
the modules; see docs/architecture.md."""

from collections.abc import Callable

from .service import LiveFigure, MatchService

__all__ = ["LiveFigure", "MatchService", "live_gauges"]


def live_gauges(service: MatchService) -> Callable[[], list[LiveFigure]]:
    """What ``Metrics.live`` calls at each scrape."""
    return service.live_figures
