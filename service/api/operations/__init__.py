"""The operation table: every REST operation declared once (``Operation``), one module per
capability; ``OPERATIONS`` holds them all, in route order. Routes, OpenAPI path items,
problem codes and rate-limit budgets are derived from it (docs/architecture.md)."""

from __future__ import annotations

from . import games, invitations, matches, ops, pictures, players, queue, seats, tables, webhooks
from .base import Context, GraphQL, Operation, Param, Reply

OPERATIONS: tuple[Operation, ...] = (
    *games.OPERATIONS,
    *matches.OPERATIONS,
    *tables.OPERATIONS,
    *invitations.OPERATIONS,
    *queue.OPERATIONS,
    *webhooks.OPERATIONS,
    *ops.OPERATIONS,
    *seats.OPERATIONS,
    *pictures.OPERATIONS,
    *players.OPERATIONS,
)
"""Every operation the server serves (in route order)."""

__all__ = ["OPERATIONS", "Context", "GraphQL", "Operation", "Param", "Reply"]
