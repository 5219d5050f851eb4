"""Match storage: the ``MatchStore`` contract (``base.py``), ``memory.py`` and ``redis.py``."""

from .base import LogEntry, MatchExists, MatchNotFound, MatchStore, StoreUnavailable

__all__ = ["LogEntry", "MatchExists", "MatchNotFound", "MatchStore", "StoreUnavailable"]
