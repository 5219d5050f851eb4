"""New York 1901 knowledge for the built-in bots.

Evaluation: points on the score track plus the end-of-game bonuses as if the game ended now
(street majorities, the challenge card, unused action cards) plus a small value for own land
that is still empty (it will carry buildings). Priors rank moves without applying them:
builds by points (and a touch more when they border a bonus street), acquisitions by how
well the lot joins the seat's land, action cards by what they usually bring.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from service.games.ny1901 import data, scoring
from service.games.ny1901 import state as st
from service.games.ny1901.actions import (
    Ny1901Acquire,
    Ny1901Build,
    Ny1901ConstructionBoom,
    Ny1901EndTurn,
    Ny1901LandGrab,
    Ny1901MarketShift,
    Ny1901Rebuild,
)
from service.games.ny1901.board import spread
from service.games.ny1901.engine import Ny1901Engine
from service.games.ny1901.shapes import TILE_INDEX, TILES
from service.games.ny1901.state import State
from service.games.ny1901.views import Ny1901View

from ..determinize.ny1901 import determinize

LAND_VALUE = 0.6
"""Estimated points a still-empty owned square will bring."""


class NyModel:
    scale = 8.0
    rollout_turns = 4

    def __init__(self, engine: Ny1901Engine) -> None:
        self.engine = engine
        # (rules version, street cards) -> lot squares along them: each match's own board.
        self._along: dict[tuple[int, tuple[int, ...]], int] = {}

    # ------------------------------------------------------------------ determinization
    def determinize(
        self, view: BaseModel, seat: int, rng: random.Random, legal: Sequence[Any] | None
    ) -> State:
        assert isinstance(view, Ny1901View)
        return determinize(self.engine, view, seat, rng, legal)

    def actor(self, state: State, prefer: int | None = None) -> int | None:
        return None if state.phase == st.OVER else state.seat

    def moves(self, state: State, seat: int) -> list[Any]:
        return self.engine.legal_actions(state, seat)

    def restrict(self, state: State, seat: int, legal: Sequence[Any]) -> list[Any]:
        return list(legal)

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, state: State) -> list[float]:
        board = self.engine.board_for(state.rules_version)
        streets = scoring.street_majorities(state, board)
        challenge = scoring.challenge_points(state, board)
        over = state.phase == st.OVER
        out = []
        for seat in range(state.n):
            total = float(state.points[seat] + state.prestige[seat] + challenge[seat])
            total += sum(street[seat] for street in streets)
            total += len(data.ACTION_CARDS) - state.cards[seat].bit_count()
            if not over:
                free = state.land[seat] & ~state.built[seat]
                total += LAND_VALUE * free.bit_count()
            out.append(total)
        if over:
            # Ties on points are broken by the rulebook (NY-F5): nudge the winners.
            result = self.engine.result(state)
            if result is not None:
                for winner in result.winners:
                    out[winner] += 0.5
        return out

    # ------------------------------------------------------------------ move knowledge
    def _along_bonus(self, state: State) -> int:
        """Lot squares along the bonus streets in play (cached per street set)."""
        key = (state.rules_version, state.streets)
        mask = self._along.get(key)
        if mask is None:
            board = self.engine.board_for(state.rules_version)
            mask = 0
            for index in state.streets:
                mask |= board.street(data.STREET_CARDS[index]).along
            self._along[key] = mask
        return mask

    def _mask(self, state: State, action: Ny1901Build | Ny1901Rebuild) -> tuple[int, int]:
        tile = TILES[TILE_INDEX[action.tile]]
        geometry = self.engine.geometry_for(state.rules_version)
        placement = geometry.find(tile.shape, action.rotation, action.x, action.y)
        return tile.index, placement.mask if placement is not None else 0

    def prior(self, state: State, seat: int, action: Any) -> float:
        kind = type(action)
        if kind is Ny1901Build or kind is Ny1901Rebuild:
            tile_index, mask = self._mask(state, action)
            tile = TILES[tile_index]
            value = float(tile.points) + 0.1 * tile.level
            if mask & self._along_bonus(state):
                value += 0.5
            if kind is Ny1901Rebuild:
                value -= 2.0  # a rebuild spends the whole turn
            return value
        if kind is Ny1901Acquire:
            board = self.engine.board_for(state.rules_version)
            lot = board.lots[board.lot_index[action.lot]]
            touching = (spread(state.land[seat], board.neighbors) & lot.mask).bit_count()
            return 1.0 + 0.3 * touching + 0.2 * lot.size
        if kind is Ny1901ConstructionBoom:
            return 3.0
        if kind is Ny1901LandGrab:
            return 0.5
        if kind is Ny1901EndTurn:
            return 0.0
        if kind is Ny1901MarketShift:
            return -1.0
        return 0.0  # return_lot: forced

    def greedy_key(self, state: State, seat: int, action: Any) -> tuple[float, ...]:
        """Immediate score gain; zero-gain steps that lead to a build this turn (acquire,
        construction boom) count the best build they open. Ties: builds over acquisitions
        over land grab over ending the turn over market shift; higher levels; better-joined
        lots."""
        engine = self.engine
        kind = type(action)
        if kind is Ny1901Build or kind is Ny1901Rebuild:
            after, _ = engine.apply(state, seat, action)
            gain = after.score(seat) - state.score(seat)
            return (float(gain), 5.0, float(TILES[TILE_INDEX[action.tile]].level), 0.0)
        if kind is Ny1901Acquire or kind is Ny1901ConstructionBoom:
            after, _ = engine.apply(state, seat, action)
            best = 0.0
            for build in engine.rules_for(state.rules_version).plain_builds(after, seat):
                best = max(best, float(TILES[TILE_INDEX[build.tile]].points))
            category = 4.0 if kind is Ny1901ConstructionBoom else 3.0
            return (best, category, 0.0, self.prior(state, seat, action))
        if kind is Ny1901LandGrab:
            return (0.0, 2.0, 0.0, 0.0)
        if kind is Ny1901EndTurn:
            return (0.0, 1.0, 0.0, 0.0)
        if kind is Ny1901MarketShift:
            return (0.0, 0.0, 0.0, 0.0)
        return (0.0, -1.0, 0.0, 0.0)
