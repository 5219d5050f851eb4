"""An app's webhook endpoints: one document per app (``webhooks:<app id>``) listing them all
(at most ``MAX_ENDPOINTS``), written by compare-and-set (``Docs.update``), so two replicas
changing an app's endpoints never lose either change; and each endpoint's run of failed
attempts (``whhealth:<endpoint id>``), written by the workers apart from what the app
writes.

The run of failures is a counter that many attempts to one endpoint change at once, also by
compare-and-set; each write carries a token of its own (``Health.write``). Without it, two
attempts failing together would both write ``failures + 1`` with the same ``since``: the very
same bytes, which ``put_doc`` takes for one write repeated (idempotent by data equality) and
answers True to both, so one failure would not be counted."""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from service.players.docs import Docs

MAX_ENDPOINTS = 10
CACHE_SECONDS = 5.0
"""How long a replica trusts its copy of an app's endpoints when deriving events."""
CACHE_SIZE = 4096
ID_PREFIX = "we_"


def endpoints_key(app_id: str) -> str:
    return f"webhooks:{app_id}"


def health_key(endpoint_id: str) -> str:
    return f"whhealth:{endpoint_id}"


def new_endpoint_id() -> str:
    return ID_PREFIX + secrets.token_hex(10)


def is_endpoint_id(value: str) -> bool:
    return (value.startswith(ID_PREFIX) and len(value) == len(ID_PREFIX) + 20
            and all(c in "0123456789abcdef" for c in value[len(ID_PREFIX):]))


@dataclass(frozen=True, slots=True)
class Endpoint:
    id: str
    app: str
    url: str
    events: tuple[str, ...]
    warn_before: int
    """Seconds before a seat's deadline that ``timeout_soon`` is sent."""
    secret: str
    created: int
    """Milliseconds since the epoch."""
    disabled_at: int | None = None
    """When the worker disabled it after a run of failures (ms); None: enabled."""

    @property
    def enabled(self) -> bool:
        return self.disabled_at is None

    def wants(self, kind: str) -> bool:
        return kind == "ping" or kind in self.events

    def but(self, **changes: Any) -> Endpoint:
        return replace(self, **changes)

    def dump(self) -> dict[str, Any]:
        out = asdict(self)
        out["events"] = list(self.events)
        return out

    @classmethod
    def load(cls, raw: dict[str, Any]) -> Endpoint:
        return cls(**{**raw, "events": tuple(raw["events"])})


def _encode(endpoints: list[Endpoint]) -> bytes:
    return json.dumps([e.dump() for e in endpoints], separators=(",", ":"),
                      sort_keys=True).encode()


def _decode(data: bytes | None) -> list[Endpoint]:
    return [Endpoint.load(raw) for raw in json.loads(data)] if data else []


@dataclass(frozen=True, slots=True)
class Health:
    """An endpoint's current run of failed attempts: how many, and since when (ms)."""

    failures: int = 0
    since: int | None = None
    write: str = ""
    """A token of the write that stored it (see the module): no meaning beyond that."""

    def encode(self) -> bytes:
        return json.dumps(asdict(self), separators=(",", ":"), sort_keys=True).encode()

    @classmethod
    def decode(cls, data: bytes | None) -> Health:
        return cls(**json.loads(data)) if data else cls()


@dataclass
class Endpoints:
    docs: Docs
    clock: Callable[[], float] = time.monotonic
    _cache: dict[str, tuple[float, list[Endpoint]]] = field(default_factory=dict)

    async def all(self, app_id: str) -> list[Endpoint]:
        doc = await self.docs.get(endpoints_key(app_id))
        return _decode(doc.data if doc is not None else None)

    async def cached(self, app_id: str) -> list[Endpoint]:
        """The app's endpoints as read at most ``CACHE_SECONDS`` ago on this replica: an
        app without endpoints costs a write one dictionary lookup most of the time."""
        now = self.clock()
        found = self._cache.get(app_id)
        if found is not None and now - found[0] < CACHE_SECONDS:
            return found[1]
        endpoints = await self.all(app_id)
        if len(self._cache) >= CACHE_SIZE:
            self._cache.clear()
        self._cache[app_id] = (now, endpoints)
        return endpoints

    def forget(self, app_id: str) -> None:
        self._cache.pop(app_id, None)

    async def get(self, app_id: str, endpoint_id: str) -> Endpoint | None:
        return next((e for e in await self.all(app_id) if e.id == endpoint_id), None)

    async def change(
        self, app_id: str, change: Callable[[list[Endpoint]], list[Endpoint] | None]
    ) -> list[Endpoint]:
        """Apply ``change`` (the endpoints -> the new list, None: leave them) by
        compare-and-set; the endpoints after."""
        def apply(data: bytes | None) -> bytes | None:
            new = change(_decode(data))
            return None if new is None else _encode(new)

        stored = await self.docs.update(endpoints_key(app_id), apply)
        self.forget(app_id)
        return _decode(stored)

    async def health(self, endpoint_id: str) -> Health:
        doc = await self.docs.get(health_key(endpoint_id))
        return Health.decode(doc.data if doc is not None else None)

    async def healths(self, endpoint_ids: list[str]) -> list[Health]:
        docs = await self.docs.get_many([health_key(e) for e in endpoint_ids])
        return [Health.decode(d.data if d is not None else None) for d in docs]

    async def set_health(self, endpoint_id: str,
                         change: Callable[[Health], Health]) -> Health:
        """Apply ``change`` by compare-and-set until it lands (retried on a lost race, so
        concurrent increments are all counted); the health after."""
        token = secrets.token_hex(8)

        def apply(data: bytes | None) -> bytes | None:
            current = Health.decode(data)
            new = change(current)
            if data is not None and (new.failures, new.since) == (current.failures,
                                                                   current.since):
                return None  # nothing changes
            return replace(new, write=token).encode()

        stored = await self.docs.update(health_key(endpoint_id), apply)
        return Health.decode(stored)
