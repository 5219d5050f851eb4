"""Match storage: the ``MatchStore`` contract (``base.py``), ``memory.py`` and ``redis.py``.

``open_store(redis_url, redis_cluster, prefix)`` picks the backend from configuration.
"""

from __future__ import annotations

from .base import (
    DueSignal,
    LogEntry,
    MatchExists,
    MatchNotFound,
    MatchStore,
    StoreUnavailable,
    write_tag,
)
from .memory import MemoryStore
from .redis import RedisStore

__all__ = [
    "DueSignal",
    "LogEntry",
    "MatchExists",
    "MatchNotFound",
    "MatchStore",
    "MemoryStore",
    "RedisStore",
    "StoreUnavailable",
    "open_store",
    "write_tag",
]


def open_store(
    redis_url: str | None, redis_cluster: str | None, prefix: str = "skyline:"
) -> MatchStore:
    """The configured store: a Redis Cluster when ``redis_cluster`` (``"host:port,..."``) is
    given, else a single Redis when ``redis_url`` is, else the embedded ``MemoryStore``.
    Connections are opened lazily, on the first operation."""
    if redis_cluster:
        return RedisStore.from_cluster_nodes(redis_cluster, prefix=prefix)
    if redis_url:
        return RedisStore.from_url(redis_url, prefix=prefix)
    return MemoryStore()
