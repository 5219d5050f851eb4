"""The rules engines: ``get(game_id)`` and ``all()`` (docs/architecture.md, "The engine contract").

Engines register by module path so that importing this package stays cheap and a game's
module is imported only when it is first asked for.
"""

from __future__ import annotations

import importlib
from typing import Any

from .base import Engine

# game id -> "module:attribute" of its Engine instance
_REGISTRY: dict[str, str] = {}
_LOADED: dict[str, Engine[Any]] = {}


class UnknownGame(KeyError):
    """No engine is registered under that id."""


def register(game_id: str, target: str) -> None:
    """Register an engine by ``"module:attribute"`` (tests use this for toy games)."""
    _REGISTRY[game_id] = target
    _LOADED.pop(game_id, None)


def unregister(game_id: str) -> None:
    _REGISTRY.pop(game_id, None)
    _LOADED.pop(game_id, None)


def get(game_id: str) -> Engine[Any]:
    """The engine for ``game_id``; raises ``UnknownGame``."""
    engine = _LOADED.get(game_id)
    if engine is None:
        target = _REGISTRY.get(game_id)
        if target is None:
            raise UnknownGame(game_id)
        module_name, _, attribute = target.partition(":")
        engine = getattr(importlib.import_module(module_name), attribute)
        _LOADED[game_id] = engine
    return engine


def all() -> list[Engine[Any]]:
    """Every registered engine, in registration order."""
    return [get(game_id) for game_id in _REGISTRY]


def ids() -> list[str]:
    return list(_REGISTRY)


register("ny1901", "service.games.ny1901:ENGINE")
register("ginkgopolis", "service.games.ginkgopolis:ENGINE")
