"""Per-game knowledge the built-in bots use: determinization, move priors, evaluation.

``model_for(engine)`` returns the ``GameModel`` of an engine (by its ``id``). Models import
only the engine they serve (``bots -> games``).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any, Protocol, cast

from pydantic import BaseModel

from service.games.base import Engine


class GameModel(Protocol):
    """What the generic greedy and search players need to know about one game."""

    engine: Engine[Any]
    scale: float
    """Score difference that counts as a clear lead (squashes evaluations to rewards)."""
    rollout_turns: int
    """Changes of the acting seat a search rollout plays before it evaluates."""

    def determinize(
        self, view: BaseModel, seat: int, rng: random.Random, legal: Sequence[Any] | None
    ) -> Any:
        """A full state consistent with ``view`` (hidden parts sampled with ``rng``)."""
        ...

    def actor(self, state: Any, prefer: int | None = None) -> int | None:
        """The seat that acts next (``prefer`` if it is among several active seats)."""
        ...

    def moves(self, state: Any, seat: int) -> list[Any]:
        """The moves a search considers for ``seat`` (the legal moves, or a sensible subset
        where the rules allow thousands of near-equivalent ones)."""
        ...

    def restrict(self, state: Any, seat: int, legal: Sequence[Any]) -> list[Any]:
        """``legal`` cut down the same way as ``moves`` (always a non-empty subset)."""
        ...

    def evaluate(self, state: Any) -> list[float]:
        """Estimated final score of every seat (the exact scores once the game is over)."""
        ...

    def prior(self, state: Any, seat: int, action: Any) -> float:
        """A cheap a-priori value of a move (no ``apply``): orders candidates, guides rollouts."""
        ...

    def greedy_key(self, state: Any, seat: int, action: Any) -> tuple[float, ...]:
        """The greedy player's preference: immediate score gain first, then tie-breaks."""
        ...


def rewards(scores: Sequence[float], scale: float) -> list[float]:
    """Per seat, a reward in (0, 1) from its lead over the best other seat."""
    out = []
    for seat, mine in enumerate(scores):
        best_other = max((s for o, s in enumerate(scores) if o != seat), default=0.0)
        lead = max(-40.0, min(40.0, (mine - best_other) / scale))
        out.append(1.0 / (1.0 + math.exp(-lead)))
    return out


_MODELS: dict[int, GameModel] = {}


def model_for(engine: Engine[Any]) -> GameModel:
    """The (cached) model of ``engine``; raises ``ValueError`` for a game without one."""
    model = _MODELS.get(id(engine))
    if model is None:
        if engine.id == "ny1901":
            from .ny1901 import NyModel

            model = cast(GameModel, NyModel(engine))  # type: ignore[arg-type]
        elif engine.id == "ginkgopolis":
            from .ginkgopolis import GkModel

            model = cast(GameModel, GkModel(engine))  # type: ignore[arg-type]
        else:
            raise ValueError(f"no bot model for game {engine.id!r}")
        _MODELS[id(engine)] = model
    return model
