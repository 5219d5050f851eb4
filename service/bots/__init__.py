"""Built-in computer players (random, greedy, search) usable as seats; see ``base.py``."""

from .base import Bot, Budget, NoLegalMove
from .registry import KINDS, get_bot

__all__ = ["KINDS", "Bot", "Budget", "NoLegalMove", "get_bot"]
