"""Players in GraphQL: the same models as REST's (``service.players.models``), generated in
``wire.py``; here only the filter argument of ``myMatches``, which is no model."""

from __future__ import annotations

from enum import Enum

import strawberry


@strawberry.enum(description="Filter on a match's status.")
class MatchStatusFilter(Enum):
    """Hand-written: a query argument (REST's ``status`` parameter), not a wire model."""

    WAITING = "waiting"
    ACTIVE = "active"
    FINISHED = "finished"
    CANCELLED = "cancelled"
