"""Players: apps (integrators), guest players and an app's own users, their credentials
checked into callers, "my matches" and (later) the player's event feed. ``PlayerService``
(``service.py``) is what REST, GraphQL and the command line call."""

from .apps import DEFAULT_APP
from .service import PlayerService

__all__ = ["DEFAULT_APP", "PlayerService"]
