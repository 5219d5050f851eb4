"""An ASGI app that forwards to another, chosen while the tests run.

schemathesis' pytest integration loads its schema when the test module is imported, from an
app that must exist then; the store a test should run against (a Redis reached through the
session's ``redis_url`` fixture, under a fresh key prefix) exists only once fixtures run.
The schema is therefore loaded through a ``Switchboard`` whose target a fixture sets for
each test (the OpenAPI document and the GraphQL schema do not depend on the store).
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send


class Switchboard:
    """Forwards every ASGI call to ``target`` (set by whoever runs the test)."""

    def __init__(self, target: ASGIApp) -> None:
        self.target = target

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.target(scope, receive, send)
