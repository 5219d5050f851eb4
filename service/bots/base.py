"""The bot contract, budgets and the base of the model-driven players.

A bot sees exactly what its seat sees: the engine (the rules), the seat's view
(``engine.view(state, seat)``) and the seat's legal moves. It never receives the real state,
so it cannot peek at hidden information. The service worker calls::

    bot = get_bot("search", seed=match_seed, budget=Budget(iterations=200))
    action = bot.choose(engine, view, legal, seat)

``choose`` returns one element of ``legal``. Bots are deterministic: all randomness comes
from a ``random.Random`` derived from the bot's seed, the seat and the view's content
(``derive_rng``), so the same view, seed and iteration budget always give the same move --
also across processes and restarts, which suits a stateless worker. A time budget
(``Budget(seconds=...)``) is the only use of the clock and makes the search stop early.
"""

from __future__ import annotations

import hashlib
import random
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel

from service.games.base import Engine

from .games import GameModel, model_for


@dataclass(frozen=True, slots=True)
class Budget:
    """How much thinking a search bot may do per move.

    ``iterations``: simulations per move (deterministic for a given seed). ``seconds``: an
    optional wall-clock cap per move; when both are given the search stops at whichever comes
    first (then the move may depend on machine speed).
    """

    iterations: int | None = 200
    seconds: float | None = None

    @classmethod
    def parse(cls, text: str | None) -> Budget:
        """``"300"`` (iterations), ``"0.5s"`` (seconds) or ``"300,0.5s"`` (both)."""
        if not text:
            return cls()
        iterations: int | None = None
        seconds: float | None = None
        for part in text.split(","):
            part = part.strip()
            if part.endswith("s"):
                seconds = float(part[:-1])
            else:
                iterations = int(part)
        if iterations is None and seconds is not None:
            return cls(iterations=None, seconds=seconds)
        return cls(iterations=iterations, seconds=seconds)


class Bot(Protocol):
    """A computer player for one or more games."""

    kind: str

    def choose(
        self, engine: Engine[Any], view: BaseModel, legal: Sequence[Any], seat: int
    ) -> Any:
        """One element of ``legal`` (non-empty): the move for ``seat`` given its ``view``."""
        ...


class NoLegalMove(ValueError):
    """``choose`` was called with an empty list of legal moves."""


class ModelBot(ABC):
    """A bot that thinks with the game's model (``games/``): greedy and search.

    ``choose`` opens the same way for all of them -- no legal move raises ``NoLegalMove``, a
    single legal move is returned at once (no model is needed, so that works for any game),
    else the game's model is looked up (``ValueError`` for a game without one) -- and leaves
    the choice among two or more moves to ``decide``.
    """

    kind: str
    seed: int

    def choose(
        self, engine: Engine[Any], view: BaseModel, legal: Sequence[Any], seat: int
    ) -> Any:
        if not legal:
            raise NoLegalMove("no legal move to choose from")
        if len(legal) == 1:
            return legal[0]
        return self.decide(model_for(engine), view, legal, seat)

    @abstractmethod
    def decide(self, model: GameModel, view: BaseModel, legal: Sequence[Any], seat: int) -> Any:
        """One element of ``legal`` (two or more moves) for ``seat`` given its ``view``."""


def derive_rng(seed: int, seat: int, view: BaseModel, salt: str = "") -> random.Random:
    """A generator seeded from (seed, seat, the view's content): deterministic per position
    and independent of the order in which positions are asked about."""
    digest = hashlib.blake2b(view.model_dump_json().encode(), digest_size=16)
    digest.update(f"|{seed}|{seat}|{salt}".encode())
    return random.Random(int.from_bytes(digest.digest(), "big"))
