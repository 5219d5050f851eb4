"""A conformance suite for any engine of the contract in ``service/games/base.py``.

Each game's tests call ``check_random_games`` over many seeds (property tests over seeded
random playouts) and add their own rule-by-rule and scenario tests. The checks:

- every game ends within ``max_steps`` and then has a result;
- ``active_seats`` and ``legal_actions`` agree: an active seat has at least one legal
  action, an inactive seat has none and is refused with ``IllegalAction``;
- every listed action applies (all of them at every ``full_check_every``-th step, the chosen
  one at every step), and leaves its input state untouched;
- actions that are not listed (legal earlier, or for another seat) are refused with
  ``IllegalAction`` and a stable, non-empty code, and the state is unchanged afterwards;
- the state round-trips through ``dumps``/``loads`` losslessly at every step;
- replaying the action log from the seed reproduces every state byte for byte;
- every action survives the wire (``dump_action`` -> ``parse_action``) unchanged;
- scores equal the sum of their breakdown, ranks are consistent with ``winners``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from service.games.base import Engine, IllegalAction, dump_action, parse_action


@dataclass
class Playout:
    seed: int
    players: int
    log: list[tuple[int, Any]] = field(default_factory=list)
    states: list[bytes] = field(default_factory=list)
    final: Any = None
    rules_version: int = 1


def _assert_refused(engine: Engine[Any], state: Any, seat: int, action: Any) -> str:
    before = engine.dumps(state)
    try:
        engine.apply(state, seat, action)
    except IllegalAction as refusal:
        assert refusal.code and refusal.code == refusal.code.strip(), "empty error code"
        assert engine.dumps(state) == before, "a refused action changed the state"
        return refusal.code
    raise AssertionError(f"seat {seat} applied an unlisted action {action!r}")


def play_random_game(
    engine: Engine[Any],
    players: int,
    seed: int,
    options: BaseModel | None = None,
    *,
    max_steps: int = 5000,
    full_check_every: int = 0,
    refusal_probes: int = 2,
    on_step: Callable[[Any, Any], None] | None = None,
    rules_version: int | None = None,
) -> Playout:
    """Play one seeded random game with the conformance checks; return its log and states.

    ``full_check_every``: apply every listed action at every n-th step (0: never).
    ``on_step(state_before, state_after)`` lets a game add its own invariants.
    ``rules_version``: play under that rules version (None: the current one).
    """
    chooser = random.Random(seed)
    state = engine.setup(players, options, seed, rules_version)
    playout = Playout(seed=seed, players=players, rules_version=engine.rules_version(state))
    seen_actions: list[tuple[int, Any]] = []
    for step in range(max_steps):
        blob = engine.dumps(state)
        assert engine.dumps(engine.loads(blob)) == blob, "dumps/loads is not lossless"
        playout.states.append(blob)
        if engine.result(state) is not None:
            assert engine.active_seats(state) == frozenset(), "a finished game has active seats"
            break
        active = sorted(engine.active_seats(state))
        assert active, f"step {step}: no seat may act but the game is not over"
        for seat in range(players):
            if seat not in active:
                assert engine.legal_actions(state, seat) == [], f"inactive seat {seat} has moves"
        seat = chooser.choice(active)
        legal = engine.legal_actions(state, seat)
        assert legal, f"step {step}: active seat {seat} has no legal action"
        assert len(set(legal)) == len(legal), "legal_actions lists a move twice"
        if full_check_every and step % full_check_every == 0:
            for action in legal:
                engine.apply(state, seat, action)
                assert engine.dumps(state) == blob, "apply mutated its input state"
        for _ in range(refusal_probes):
            if not seen_actions:
                break
            _, other = chooser.choice(seen_actions)
            probe_seat = chooser.randrange(players)
            if probe_seat in active and other in engine.legal_actions(state, probe_seat):
                continue
            _assert_refused(engine, state, probe_seat, other)
        action = chooser.choice(legal)
        assert parse_action(engine, dump_action(engine, action)) == action, "wire round trip"
        new_state, events = engine.apply(state, seat, action)
        assert engine.dumps(state) == blob, "apply mutated its input state"
        for event in events:
            event.for_seat(None)
        if on_step is not None:
            on_step(state, new_state)
        playout.log.append((seat, action))
        seen_actions.append((seat, action))
        state = new_state
    else:
        raise AssertionError(f"game {seed} did not end within {max_steps} steps")
    playout.final = state
    check_result(engine, state, players)
    return playout


def check_result(engine: Engine[Any], state: Any, players: int) -> None:
    result = engine.result(state)
    assert result is not None
    assert sorted(s.seat for s in result.seats) == list(range(players))
    entries = [*result.seats, *result.opponents]
    for entry in entries:
        assert entry.score == sum(line.points for line in entry.breakdown)
    assert min(entry.rank for entry in entries) == 1
    for a in entries:  # a higher score always ranks better; tie-breaks may split equal ones
        for b in entries:
            if a.score > b.score:
                assert a.rank < b.rank, f"{a} scored more than {b} but does not rank better"
    assert sorted(result.winners) == sorted(s.seat for s in result.seats if s.rank == 1)


def check_replay(
    engine: Engine[Any], playout: Playout, options: BaseModel | None = None
) -> None:
    """Replaying the log from the seed reproduces every recorded state byte for byte."""
    state = engine.setup(playout.players, options, playout.seed, playout.rules_version)
    assert engine.dumps(state) == playout.states[0]
    for index, (seat, action) in enumerate(playout.log, start=1):
        state, _ = engine.apply(state, seat, action)
        assert engine.dumps(state) == playout.states[index], f"replay diverged at {index}"


def check_random_games(
    engine: Engine[Any],
    players: int,
    seeds: range,
    options: BaseModel | None = None,
    **kwargs: Any,
) -> list[Playout]:
    playouts = []
    for seed in seeds:
        playout = play_random_game(engine, players, seed, options, **kwargs)
        check_replay(engine, playout, options)
        playouts.append(playout)
    return playouts
