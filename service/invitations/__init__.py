"""Invitations (lila's challenge, docs/lobby.md): to a player of the app, seat codes and
spectator codes of a waiting match. ``service.py``: ``InvitationService``; ``models.py``: the
wire models. Builds on ``service.tables`` (a seat taken with an invitation is a table's
join), ``service.players`` and ``service.matches``."""

from .service import InvitationService

__all__ = ["InvitationService"]
