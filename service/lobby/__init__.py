"""The lobby: quick match (``queue.py``: players queue, a match is formed as soon as enough
compatible players wait). Builds on ``service.players`` (callers, seating players, the feed)
and ``service.matches``."""

from .queue import QueueService

__all__ = ["QueueService"]
