"""The registry of built-in players: their kinds and ``get_bot``.

It sits beside the bots (not in ``base.py``, which they all import) so that no bot module
imports another.
"""

from __future__ import annotations

from .base import Bot, Budget
from .greedy import GreedyBot
from .random_bot import RandomBot
from .search import SearchBot

KINDS = ("random", "greedy", "search")


def get_bot(kind: str, seed: int = 0, budget: Budget | None = None) -> Bot:
    """A built-in bot: ``"random"``, ``"greedy"`` or ``"search"`` (``budget`` only matters
    for search). Raises ``ValueError`` for an unknown kind."""
    if kind == "random":
        return RandomBot(seed)
    if kind == "greedy":
        return GreedyBot(seed)
    if kind == "search":
        return SearchBot(seed, budget or Budget())
    raise ValueError(f"unknown bot kind {kind!r} (known: {', '.join(KINDS)})")
