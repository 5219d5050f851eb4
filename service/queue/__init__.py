"""Quick match (lila's pool, issue 17): players queue for a game and a number of seats, a
match is formed as soon as enough compatible players wait (docs/lobby.md). ``service.py``:
``QueueService``, what REST and GraphQL call; ``rules.py``: tidy, form and mark a queue
(pure); ``records.py``: the queue document, ticket ids; ``models.py``: the wire models.
Builds on ``service.players`` (callers, seating players, the feed) and ``service.matches``."""

from .service import QueueService

__all__ = ["QueueService"]
