"""The REST API: the routes of the operation table (``service.api.operations``: one generic
handler per operation), the handlers the table points to where an operation needs its own
(``act``, the event streams, the operator's probes), what they share (``http``, ``sse``),
and ``/openapi.json``.

Every refusal is an ``ApiError`` rendered as ``application/problem+json``
(``..problems``). No rule is decided here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from starlette.routing import Route

from .ops import openapi

if TYPE_CHECKING:
    from ..operations import Operation


def rest_routes(operations: Sequence[Operation] | None = None) -> list[Route]:
    """The routes of ``operations`` (default: the table, ``service.api.operations``; it
    uses this package's handlers, so it is read here, not imported with the package), and
    the OpenAPI document's."""
    from ..operations import OPERATIONS
    from ..operations.routes import operation_routes

    return [
        *operation_routes(OPERATIONS if operations is None else operations),
        Route("/openapi.json", openapi, methods=["GET"], name="openapi"),
    ]
