"""The search player: single-observer information-set Monte Carlo tree search.

Every iteration samples one determinization -- a full state consistent with the seat's view,
hidden parts drawn from what the seat cannot see (``determinize/``) -- and walks one shared
tree of moves down it (Cowling, Powley & Whitehouse, "Information Set Monte Carlo Tree
Search", 2012). A node's children are the moves tried there; selection is UCB1 with
availability counts (a move is a candidate only in the determinizations where it is legal).
To keep the branching factor of tile placements manageable each node considers only its
``width`` best moves by the game model's prior. Rollouts are short (``rollout_turns`` changes
of the acting seat) with an epsilon-greedy policy on the prior, then the game model's score
estimate is squashed into a per-seat reward from each seat's lead.

The bot receives only the view and the legal moves, never the real state. With an iteration
budget it is deterministic for a given seed (the generator derives from the seed and the
view); a time budget only stops it earlier.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from .base import Budget, ModelBot, derive_rng
from .games import GameModel, rewards

EXPLORATION = 0.7
ROLLOUT_GREEDINESS = 0.8
"""Probability that a rollout step takes the best move by prior (else a random move)."""


class _Node:
    __slots__ = ("avail", "children", "total", "visits")

    def __init__(self) -> None:
        self.children: dict[Any, _Node] = {}
        self.visits = 0
        self.total = 0.0
        self.avail = 0


class SearchBot(ModelBot):
    kind = "search"

    def __init__(self, seed: int = 0, budget: Budget | None = None, width: int = 8) -> None:
        self.seed = seed
        self.budget = budget or Budget()
        self.width = width

    def decide(self, model: GameModel, view: BaseModel, legal: Sequence[Any], seat: int) -> Any:
        rng = derive_rng(self.seed, seat, view, "search")
        root = _Node()
        iterations = self.budget.iterations
        deadline = (time.perf_counter() + self.budget.seconds
                    if self.budget.seconds is not None else None)
        legal = list(legal)
        done = 0
        moves: list[Any] = []
        while iterations is None or done < iterations:
            if deadline is not None and done and time.perf_counter() >= deadline:
                break
            state = model.determinize(view, seat, rng, legal)
            if not moves:
                # What the seat considers depends only on its own moves, not on the sample.
                moves = model.restrict(state, seat, legal)
            self._iterate(model, root, state, seat, moves, rng)
            done += 1
        if not root.children:
            state = model.determinize(view, seat, rng, legal)
            return self._by_prior(model, state, seat, model.restrict(state, seat, legal))[0]
        order = {action: index for index, action in enumerate(legal)}
        return max(
            (a for a in root.children if a in order),
            key=lambda a: (root.children[a].visits, root.children[a].total, -order[a]),
        )

    # ------------------------------------------------------------------ one iteration
    def _candidates(self, model: GameModel, state: Any, seat: int,
                    legal: Sequence[Any]) -> list[Any]:
        if len(legal) <= self.width:
            return list(legal)
        return self._by_prior(model, state, seat, legal)[: self.width]

    @staticmethod
    def _by_prior(model: GameModel, state: Any, seat: int, legal: Sequence[Any]) -> list[Any]:
        scored = [(-model.prior(state, seat, a), i) for i, a in enumerate(legal)]
        scored.sort()
        return [legal[i] for _, i in scored]

    def _iterate(self, model: GameModel, root: _Node, state: Any, seat: int,
                 legal: list[Any], rng: random.Random) -> None:
        engine = model.engine
        node = root
        path: list[tuple[_Node, int]] = []
        actor = seat
        moves = legal
        while True:
            candidates = self._candidates(model, state, actor, moves)
            untried = []
            for action in candidates:
                child = node.children.get(action)
                if child is None:
                    untried.append(action)
                else:
                    child.avail += 1
            if untried:
                action = untried[0]
                child = node.children[action] = _Node()
                child.avail = 1
                state, _ = engine.apply(state, actor, action)
                path.append((child, actor))
                break
            log_parent = 0.0
            best_value = -1.0
            best_action = candidates[0]
            for action in candidates:
                child = node.children[action]
                log_parent = math.log(child.avail)
                value = (child.total / child.visits
                         + EXPLORATION * math.sqrt(log_parent / child.visits))
                if value > best_value:
                    best_value, best_action = value, action
            child = node.children[best_action]
            state, _ = engine.apply(state, actor, best_action)
            path.append((child, actor))
            node = child
            next_actor = model.actor(state, seat)
            if next_actor is None:
                break
            actor = next_actor
            moves = model.moves(state, actor)
        reward = rewards(model.evaluate(self._rollout(model, state, seat, rng)), model.scale)
        for child, mover in path:
            child.visits += 1
            child.total += reward[mover]

    def _rollout(self, model: GameModel, state: Any, seat: int, rng: random.Random) -> Any:
        engine = model.engine
        actor = model.actor(state, seat)
        changes = 0
        previous = actor
        while actor is not None:
            if actor != previous:
                changes += 1
                if changes >= model.rollout_turns:
                    break
                previous = actor
            moves = model.moves(state, actor)
            if len(moves) == 1:
                action = moves[0]
            elif rng.random() < ROLLOUT_GREEDINESS:
                best = -math.inf
                action = moves[0]
                for move in moves:
                    value = model.prior(state, actor, move) + rng.random() * 0.01
                    if value > best:
                        best, action = value, move
            else:
                action = rng.choice(moves)
            state, _ = engine.apply(state, actor, action)
            actor = model.actor(state, seat)
        return state
