"""Tables: matches that wait for players (lila's lobby, docs/lobby.md). ``service.py``:
``TableService`` (create, join, leave, start, cancel a waiting match; the lobby and live
lists); ``lists.py``: those lists, indexes of the app's lobby document filtered by the
records; ``rematch.py``: ``Rematch``; ``caps.py``: waiting public tables per creator;
``models.py``: the wire models. Builds on ``service.players`` and ``service.matches``."""

from .caps import WaitingTablesCap
from .rematch import Rematch
from .service import TableService

__all__ = ["Rematch", "TableService", "WaitingTablesCap"]
