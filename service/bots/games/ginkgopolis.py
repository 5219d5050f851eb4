"""Ginkgopolis knowledge for the built-in bots.

Evaluation: the final-scoring formula applied to the position now (VP, end-of-game cards,
New Hand tokens, districts) plus a small value for the tiles and resources behind the screen
(they become buildings and points later). Priors estimate what a card choice brings without
applying it: an exploit by the floors of the building, an urbanization by the buildings
around the token, a build-up by the height gained minus its costs.

Returning tiles (GK-E1) allows every subset of the tiles behind the screen -- up to tens of
thousands of moves -- so the search and the greedy player only consider returning none,
all, or the lower-numbered half.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from service.games.ginkgopolis import scoring
from service.games.ginkgopolis.actions import (
    GkChooseCard,
    GkNewHand,
    GkPlaceToken,
    GkReturnTiles,
    GkTakeItem,
)
from service.games.ginkgopolis.city import neighbours
from service.games.ginkgopolis.data import NUMBERS, URB_BASE
from service.games.ginkgopolis.engine import GinkgopolisEngine
from service.games.ginkgopolis.rules import build_up_costs, can_build_up
from service.games.ginkgopolis.state import CHOOSE, OVER, RESOLVE, RETURN, GkState
from service.games.ginkgopolis.views import GkView, active_seats

from ..determinize.ginkgopolis import determinize

TILE_VALUE = 0.5
RESOURCE_VALUE = 0.4
ITEM_VALUE = (0.6, 0.7, 1.0)
"""Rough worth of one item by building colour: red resource, blue tile, yellow VP."""


class GkModel:
    scale = 8.0
    rollout_turns = 8

    def __init__(self, engine: GinkgopolisEngine) -> None:
        self.engine = engine

    # ------------------------------------------------------------------ determinization
    def determinize(
        self, view: BaseModel, seat: int, rng: random.Random, legal: Sequence[Any] | None
    ) -> GkState:
        assert isinstance(view, GkView)
        return determinize(self.engine, view, seat, rng, legal)

    def actor(self, state: GkState, prefer: int | None = None) -> int | None:
        active = active_seats(state)
        if not active or state.phase == OVER:
            return None
        if prefer is not None and prefer in active:
            return prefer
        return min(active)

    def moves(self, state: GkState, seat: int) -> list[Any]:
        legal = self.engine.legal_actions(state, seat)
        if state.phase == RETURN:
            return self.restrict(state, seat, legal)
        return legal

    def restrict(self, state: GkState, seat: int, legal: Sequence[Any]) -> list[Any]:
        if state.phase != RETURN or len(legal) <= 3:
            return list(legal)
        by_size = sorted(legal, key=lambda m: len(m.tiles) if type(m) is GkReturnTiles else 0)
        return [by_size[0], by_size[len(by_size) // 2], by_size[-1]]

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, state: GkState) -> list[float]:
        over = state.phase == OVER
        out = []
        for owner in range(state.owners):
            total = float(sum(points for _, points in scoring.breakdown(state, owner)))
            if not over and owner < state.players:
                total += TILE_VALUE * len(state.tiles[owner])
                total += RESOURCE_VALUE * state.res_screen[owner]
            out.append(total)
        return out

    # ------------------------------------------------------------------ move knowledge
    def _exploit_value(self, state: GkState, card: int) -> float:
        if card >= URB_BASE:
            return 0.8
        key = state.where.get(card)
        if key is None:
            return 0.0
        stack = state.stacks[key]
        return len(stack) * ITEM_VALUE[stack[-1] // NUMBERS]

    def prior(self, state: GkState, seat: int, action: Any) -> float:
        kind = type(action)
        if kind is GkChooseCard:
            card, tile = action.card, action.tile
            if tile is None:
                return self._exploit_value(state, card)
            if card >= URB_BASE:
                if state.res_screen[seat] < 1:
                    return self._exploit_value(state, card) - 0.5
                around = 0.0
                for key in neighbours(state.tokens[card - URB_BASE]):
                    stack = state.stacks.get(key)
                    if stack is not None:
                        around += len(stack) * ITEM_VALUE[stack[-1] // NUMBERS]
                return 1.2 + around
            if not can_build_up(state, seat, card, tile):
                return self._exploit_value(state, card) - 0.5
            key, need, vp_cost = build_up_costs(state, card, tile)
            height = len(state.stacks[key])
            owner = state.owner[key]
            value = 1.5 + 0.8 * (height + 1) - vp_cost - 0.5 * (need - height - 1)
            if owner >= 0 and owner != seat:
                value -= 0.5 * height
            return value
        if kind is GkTakeItem:
            return 0.6 if action.item == "resource" else 0.7
        if kind is GkNewHand:
            return 0.2
        if kind is GkReturnTiles:
            return (1.0 - TILE_VALUE) * len(action.tiles) if state.end else 0.0
        if kind is GkPlaceToken:
            return 0.0
        return 0.0  # draft_character

    def greedy_key(self, state: GkState, seat: int, action: Any) -> tuple[float, ...]:
        """Score gain once the action has resolved (others take neutral choices: a card
        alone, nothing returned); ties: build up over urbanize over exploit over New Hand."""
        before = self.evaluate(state)[seat]
        after, _ = self.engine.apply(state, seat, action)
        after = self._settle(after, seat)
        gain = self.evaluate(after)[seat] - before
        category = 0.0
        if type(action) is GkChooseCard:
            category = 1.0 if action.tile is None else 2.0 if action.card >= URB_BASE else 3.0
        return (round(gain, 6), category, self.prior(state, seat, action))

    def _settle(self, state: GkState, seat: int) -> GkState:
        """Play on until ``seat`` must choose again (or the game ends): the others take the
        first of their moves, ``seat``'s own follow-ups go by prior."""
        for _ in range(64):
            active = active_seats(state)
            if not active or state.phase == OVER:
                break
            if state.phase == CHOOSE and seat in active:
                break
            actor = min(active)
            moves = self.moves(state, actor)
            if actor == seat and state.phase == RESOLVE:
                move = max(moves, key=lambda m: self.prior(state, seat, m))
            else:
                move = moves[0]
            state, _ = self.engine.apply(state, actor, move)
        return state
