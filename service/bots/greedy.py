"""The greedy player: the move with the best immediate score gain.

Per-game tie-breaks live in the game model (``games/*.py``: ``greedy_key``); among equal keys
the first legal move (the engine's stable order) wins, so the greedy player needs no
randomness except for sampling the hidden parts of one determinization, which it derives
from its seed and the view.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from .base import ModelBot, derive_rng
from .games import GameModel


class GreedyBot(ModelBot):
    kind = "greedy"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def decide(self, model: GameModel, view: BaseModel, legal: Sequence[Any], seat: int) -> Any:
        rng = derive_rng(self.seed, seat, view, "greedy")
        state = model.determinize(view, seat, rng, legal)
        moves = model.restrict(state, seat, legal)
        best = moves[0]
        best_key = model.greedy_key(state, seat, best)
        for action in moves[1:]:
            key = model.greedy_key(state, seat, action)
            if key > best_key:
                best, best_key = action, key
        return best
