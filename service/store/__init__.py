"""Match storage: the ``MatchStore`` contract (``base.py``), ``sqlite.py`` (the embedded
store: one process, one file) and ``redis.py`` (single node and cluster: any number of
replicas). Both stores also implement ``DocStore`` (``base.py``): versioned documents, their
indexes and event feeds per key, for the player layer.

``open_store(redis_url, redis_cluster, prefix, data_dir=...)`` picks the backend from
configuration.
"""

from __future__ import annotations

import os

from .base import (
    PAGE_LIMIT,
    Doc,
    DocStore,
    DueSignal,
    FeedItem,
    FeedPage,
    LogEntry,
    MatchExists,
    MatchNotFound,
    MatchStore,
    Schedules,
    StoreFull,
    StoreUnavailable,
    write_tag,
)
from .redis import DEFAULT_MAX_CONNECTIONS, RedisStore, connection_name
from .sqlite import DEFAULT_FILENAME, SqliteStore, StoreFileError, StoreInUse

__all__ = [
    "DEFAULT_DATA_DIR",
    "DEFAULT_FILENAME",
    "DEFAULT_MAX_CONNECTIONS",
    "PAGE_LIMIT",
    "Doc",
    "DocStore",
    "DueSignal",
    "FeedItem",
    "FeedPage",
    "LogEntry",
    "MatchExists",
    "MatchNotFound",
    "MatchStore",
    "RedisStore",
    "Schedules",
    "SqliteStore",
    "StoreFileError",
    "StoreFull",
    "StoreInUse",
    "StoreUnavailable",
    "open_store",
    "write_tag",
]

DEFAULT_DATA_DIR = "skyline-data"
"""Where ``skyline serve`` keeps the embedded store's file by default (relative to the
working directory)."""


def open_store(
    redis_url: str | None,
    redis_cluster: str | None,
    prefix: str = "skyline:",
    *,
    data_dir: str | os.PathLike[str] = DEFAULT_DATA_DIR,
    redis_max_connections: int = DEFAULT_MAX_CONNECTIONS,
) -> MatchStore:
    """The configured store: a Redis Cluster when ``redis_cluster`` (``"host:port,..."``) is
    given, else a single Redis when ``redis_url`` is, else the embedded ``SqliteStore`` in
    ``data_dir`` (created if missing; ``":memory:"``: a private in-memory database). Redis
    connections are opened lazily (at most ``redis_max_connections`` for commands, per node
    on a cluster, plus one pub/sub connection per node for watchers); the SQLite file is
    opened now and raises ``StoreFileError`` when it cannot be used."""
    if redis_cluster:
        return RedisStore.from_cluster_nodes(
            redis_cluster, prefix=prefix, max_connections=redis_max_connections,
            client_name=connection_name("store"),
        )
    if redis_url:
        return RedisStore.from_url(redis_url, prefix=prefix, max_connections=redis_max_connections,
                                   client_name=connection_name("store"))
    if os.fspath(data_dir) == ":memory:":
        return SqliteStore(":memory:")
    return SqliteStore(os.path.join(data_dir, DEFAULT_FILENAME))
