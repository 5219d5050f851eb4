"""The ``limits`` counting storage of one kind of budget, on bounded and named connections.

The ``limits`` library opens its own Redis connections, beside the store's: left to its
defaults a pool of up to 1,000 per process, unnamed (issue 31, item 12: a replica held 165
connections where the docs promised at most 65, none named). Every counting storage here
uses a blocking pool of ``max_connections`` (a command waits up to ``POOL_TIMEOUT`` for a
free one, then fails: the callers treat a failure as "not counted") and names its
connections ``skyline-<what>-<pid>`` (``CLIENT SETNAME``), so an operator's ``CLIENT LIST``
says which process and which part of it holds each one. On a cluster, ``max_connections``
is per node (the cluster client's own bound). The embedded store counts in memory.
"""

from __future__ import annotations

import logging
from typing import Any

from limits.aio.storage import Storage
from limits.storage import storage_from_string
from redis.asyncio import BlockingConnectionPool

from .redis import connection_name

POOL_TIMEOUT = 2.0
"""Seconds a count waits for a free connection before it fails (and goes uncounted)."""


def counting_storage(uri: str, *, key_prefix: str, what: str,
                     max_connections: int) -> Storage:
    """The async ``limits`` storage at ``uri`` (``async+redis://``, ``async+redis+cluster://``
    or ``async+memory://``), its Redis connections bounded and named (module doc)."""
    settings: dict[str, Any] = {}
    if uri.startswith("async+redis"):
        name = connection_name(what)
        settings = {"implementation": "redispy", "key_prefix": key_prefix}
        if uri.startswith("async+redis+cluster"):
            settings.update(max_connections=max_connections, client_name=name,
                            socket_timeout=POOL_TIMEOUT, socket_connect_timeout=POOL_TIMEOUT)
        else:
            settings["connection_pool"] = BlockingConnectionPool.from_url(
                uri.removeprefix("async+"), max_connections=max_connections,
                timeout=POOL_TIMEOUT, client_name=name, socket_timeout=POOL_TIMEOUT,
                socket_connect_timeout=POOL_TIMEOUT)
    storage = storage_from_string(uri, **settings)
    assert isinstance(storage, Storage), "an async+ storage URI"
    return storage


async def close_counting(storage: Storage, what: str) -> None:
    """Close a counting storage's Redis connections (best effort: a failure is logged)."""
    client = getattr(getattr(storage, "bridge", None), "storage", None)
    closing = getattr(client, "aclose", None)
    if closing is not None:
        try:
            await closing()
        except Exception:
            logging.getLogger("skyline.store").debug("closing the %s storage failed", what,
                                                     exc_info=True)
