"""The credentials this replica saw verified as clients of their own (issue 31, items 1 and
2): only those are charged to budgets of their own; every other request -- no credential, a
credential not checked yet, one the service refused, one anyone may mint for nothing --
draws from its address's budgets.

A credential is remembered (by its digest, never itself) for ``ttl`` seconds after its last
verification, at most ``capacity`` of them (the least recently verified forgotten first):
only verified credentials that cost something to mint enter (app keys, an app's users'
JWTs, seat tokens of matches an app key created), so made-up tokens cannot fill it. A
credential refused later (401: a revoked key, an expired JWT) is forgotten at once.

Per replica: a credential's first request on a replica is charged to its address.
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable

DEFAULT_TTL_SECONDS = 600.0
DEFAULT_CAPACITY = 100_000


def digest_of(credential: str) -> str:
    """The digest a credential is remembered and charged by (as ``client_key``)."""
    return hashlib.sha256(credential.encode("utf-8", "surrogatepass")).hexdigest()[:32]


class VerifiedClients:
    def __init__(self, *, ttl: float = DEFAULT_TTL_SECONDS, capacity: int = DEFAULT_CAPACITY,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self.capacity = capacity
        self.clock = clock
        self._seen: OrderedDict[str, float] = OrderedDict()

    def __len__(self) -> int:
        return len(self._seen)

    def knows(self, credential: str) -> bool:
        """Whether ``credential`` was verified as its own client within ``ttl``."""
        key = digest_of(credential)
        seen = self._seen.get(key)
        if seen is None:
            return False
        if self.clock() - seen > self.ttl:
            del self._seen[key]
            return False
        return True

    def add(self, credential: str) -> None:
        key = digest_of(credential)
        self._seen[key] = self.clock()
        self._seen.move_to_end(key)
        while len(self._seen) > self.capacity:
            self._seen.popitem(last=False)

    def forget(self, credential: str) -> None:
        self._seen.pop(digest_of(credential), None)
