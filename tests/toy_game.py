"""A small engine with hidden information, for service and API tests.

Each round has two steps. *Draw*: seats in turn draw a card (only the drawer learns which)
or pass. *Choose*: every seat secretly plays one card from its hand at the same time (a
simultaneous step); when the last choice is in, the cards are revealed and the highest card
scores the sum of all of them. After ``rounds`` rounds the highest score wins.

Hidden information: hands, the deck order, and a seat's choice until the reveal.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from service import games
from service.games import rng
from service.games.base import (
    GAME_OVER,
    NOT_YOUR_TURN,
    Event,
    IllegalAction,
    Result,
    ScoreLine,
    SeatResult,
    WireInt,
    check_rules_version,
)


class ToyOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    rounds: WireInt = Field(default=3, ge=1, le=5)


class ToyDraw(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    type: Literal["draw"] = "draw"


class ToyPass(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    type: Literal["pass"] = "pass"


class ToyPlay(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    type: Literal["play"] = "play"
    card: WireInt = Field(ge=1, le=30)


ToyAction = Annotated[ToyDraw | ToyPass | ToyPlay, Field(discriminator="type")]


class ToyView(BaseModel):
    round: int
    rounds: int
    phase: Literal["draw", "choose", "over"]
    turn: int | None
    hand: list[int] | None = Field(description="Your hand; null for spectators.")
    hand_sizes: list[int]
    has_chosen: list[bool]
    my_choice: int | None
    deck_size: int
    scores: list[int]
    last_reveal: list[int] | None


@dataclass(frozen=True, slots=True)
class ToyState:
    players: int
    rounds: int
    round: int
    phase: str
    turn: int
    hands: tuple[tuple[int, ...], ...]
    deck: tuple[int, ...]
    chosen: tuple[int | None, ...]
    scores: tuple[int, ...]
    last_reveal: tuple[int, ...] | None
    rng: int


class ToyEngine:
    id = "toy"
    title = "Toy Cards"
    rules_versions = (1,)
    min_players = 2
    max_players = 4
    Options = ToyOptions
    Action = ToyAction
    View = ToyView

    def setup(self, players: int, options: BaseModel | None, seed: int,
              rules_version: int | None = None) -> ToyState:
        check_rules_version(self.id, self.rules_versions, rules_version)
        opts = options if isinstance(options, ToyOptions) else ToyOptions()
        deck, state = rng.shuffled(rng.seed_state(seed), list(range(1, 31)))
        hands = tuple(tuple(sorted(deck[i * 3 : i * 3 + 3])) for i in range(players))
        return ToyState(
            players=players, rounds=opts.rounds, round=1, phase="draw", turn=0, hands=hands,
            deck=tuple(deck[players * 3 :]), chosen=(None,) * players, scores=(0,) * players,
            last_reveal=None, rng=state,
        )

    def rules_version(self, state: ToyState) -> int:
        return 1

    def active_seats(self, state: ToyState) -> frozenset[int]:
        if state.phase == "draw":
            return frozenset({state.turn})
        if state.phase == "choose":
            return frozenset(s for s, c in enumerate(state.chosen) if c is None)
        return frozenset()

    def legal_actions(self, state: ToyState, seat: int) -> list[object]:
        if seat not in self.active_seats(state):
            return []
        if state.phase == "draw":
            return ([ToyDraw()] if state.deck else []) + [ToyPass()]
        return [ToyPlay(card=c) for c in state.hands[seat]]

    def apply(self, state: ToyState, seat: int, action: object) -> tuple[ToyState, list[Event]]:
        if state.phase == "over":
            raise IllegalAction(GAME_OVER, "The game is over.")
        if seat not in self.active_seats(state):
            raise IllegalAction(NOT_YOUR_TURN, "Not your turn.")
        if state.phase == "draw":
            return self._draw_step(state, seat, action)
        if not isinstance(action, ToyPlay):
            raise IllegalAction("wrong_phase", "Play a card now.")
        if action.card not in state.hands[seat]:
            raise IllegalAction("not_in_hand", "That card is not in your hand.")
        hands = list(state.hands)
        hands[seat] = tuple(c for c in state.hands[seat] if c != action.card)
        chosen = list(state.chosen)
        chosen[seat] = action.card
        events = [Event("chose", {"seat": seat}, {seat: {"card": action.card}})]
        state = replace(state, hands=tuple(hands), chosen=tuple(chosen))
        if any(c is None for c in chosen):
            return state, events
        cards = [c for c in chosen if c is not None]
        winner = cards.index(max(cards))
        scores = list(state.scores)
        scores[winner] += sum(cards)
        events.append(Event("revealed", {"cards": cards, "winner": winner}))
        over = state.round >= state.rounds
        state = replace(
            state, scores=tuple(scores), chosen=(None,) * state.players, last_reveal=tuple(cards),
            round=state.round + (0 if over else 1), phase="over" if over else "draw", turn=0,
        )
        return state, events

    def _draw_step(
        self, state: ToyState, seat: int, action: object
    ) -> tuple[ToyState, list[Event]]:
        nxt = (seat + 1) % state.players
        phase = "choose" if nxt == 0 else "draw"
        if isinstance(action, ToyPass):
            return replace(state, turn=nxt, phase=phase), [Event("passed", {"seat": seat})]
        if not isinstance(action, ToyDraw):
            raise IllegalAction("wrong_phase", "Draw or pass now.")
        if not state.deck:
            raise IllegalAction("deck_empty", "The deck is empty.")
        card, deck = state.deck[0], state.deck[1:]
        hands = list(state.hands)
        hands[seat] = tuple(sorted((*state.hands[seat], card)))
        event = Event("drew", {"seat": seat}, {seat: {"card": card}})
        return replace(state, hands=tuple(hands), deck=deck, turn=nxt, phase=phase), [event]

    def view(self, state: ToyState, seat: int | None) -> ToyView:
        return ToyView(
            round=state.round, rounds=state.rounds, phase=state.phase,  # type: ignore[arg-type]
            turn=state.turn if state.phase == "draw" else None,
            hand=list(state.hands[seat]) if seat is not None else None,
            hand_sizes=[len(h) for h in state.hands],
            has_chosen=[c is not None for c in state.chosen],
            my_choice=state.chosen[seat] if seat is not None else None,
            deck_size=len(state.deck), scores=list(state.scores),
            last_reveal=list(state.last_reveal) if state.last_reveal is not None else None,
        )

    def result(self, state: ToyState) -> Result | None:
        if state.phase != "over":
            return None
        best = max(state.scores)
        seats = [
            SeatResult(
                seat=s, score=score, breakdown=[ScoreLine(rule="tricks", points=score)],
                rank=1 + sum(1 for other in state.scores if other > score),
            )
            for s, score in enumerate(state.scores)
        ]
        return Result(seats=seats, winners=[s for s, v in enumerate(state.scores) if v == best])

    def dumps(self, state: ToyState) -> bytes:
        return json.dumps(
            [state.players, state.rounds, state.round, state.phase, state.turn,
             state.hands, state.deck, state.chosen, state.scores, state.last_reveal, state.rng],
            separators=(",", ":"),
        ).encode()

    def loads(self, data: bytes) -> ToyState:
        p, rounds, rnd, phase, turn, hands, deck, chosen, scores, reveal, r = json.loads(data)
        return ToyState(
            players=p, rounds=rounds, round=rnd, phase=phase, turn=turn,
            hands=tuple(tuple(h) for h in hands), deck=tuple(deck), chosen=tuple(chosen),
            scores=tuple(scores), last_reveal=tuple(reveal) if reveal is not None else None,
            rng=r,
        )


engine = ToyEngine()


@contextmanager
def registered() -> Iterator[None]:
    """The toy engine registered as ``toy`` next to the real games while the block runs
    (left registered afterwards if it already was)."""
    known = "toy" in games.ids()
    games.register("toy", "tests.toy_game:engine")
    try:
        yield
    finally:
        if not known:
            games.unregister("toy")
