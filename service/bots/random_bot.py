"""The random player: a uniformly random legal move (a baseline and a fuzzer)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from service.games.base import Engine

from .base import NoLegalMove, derive_rng


class RandomBot:
    kind = "random"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def choose(
        self, engine: Engine[Any], view: BaseModel, legal: Sequence[Any], seat: int
    ) -> Any:
        if not legal:
            raise NoLegalMove("no legal move to choose from")
        return derive_rng(self.seed, seat, view, "random").choice(list(legal))
