"""Live viewers: the per-replica fan-out hub (``hub.py``) -- one store watch per watched
match, admission caps, shutdown."""

from .hub import (
    DEFAULT_MAX_WATCHERS,
    DEFAULT_MAX_WATCHERS_PER_CLIENT,
    DEFAULT_RESUME_WINDOW,
    Lease,
    LiveHub,
    Shutdown,
)

__all__ = [
    "DEFAULT_MAX_WATCHERS",
    "DEFAULT_MAX_WATCHERS_PER_CLIENT",
    "DEFAULT_RESUME_WINDOW",
    "Lease",
    "LiveHub",
    "Shutdown",
]
