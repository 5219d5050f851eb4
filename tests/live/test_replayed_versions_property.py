"""Property (issue 30, item 1): for random matches of both games -- random legal moves, bot
seats, hand-overs, resignations and timeouts -- resuming the stream of the finished match
from every version gives, at each version, what ``GET /v1/matches/{id}`` answered then, in
full and in patch mode (over GraphQL, resumed from every version of random matches of both
games: ``tests/graphql/test_replayed_versions.py``)."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service import games
from service.clocks import OnTimeout, TimeControl
from service.errors import ApiError
from service.games.base import dump_action
from service.matches import MatchService
from service.matches.models import CreateMatchRequest
from service.matches.play import game_state
from service.store import SqliteStore
from tests.support.replayed import Answers, differences, record_gets, resumed

OPS = ("move", "move", "move", "move", "move", "move", "hand_over", "resign", "timeout")


async def _random_match(spec: dict[str, Any]) -> tuple[MatchService, str, Answers, int]:
    """Play ``spec``'s match to its end, GET recorded at every version."""
    service = MatchService(SqliteStore(":memory:"), ttl_finished=None, ttl_idle=None)
    game, players, rng = spec["game"], spec["players"], random.Random(spec["seed"])
    extra: dict[str, Any] = {}
    if spec["timed"]:
        extra = {"time_control": TimeControl("correspondence", seconds_per_move=600),
                 "on_timeout": OnTimeout(spec["policy"], "random")}
    bots = {str(s): "random" for s in spec["bot_seats"] if s < players and s > 0}
    created = await service.create_match(
        CreateMatchRequest(game=game, players=players, seed=spec["seed"], bots=bots or None),
        extra=extra or None)
    match_id = created.match_id
    tokens = {s.seat: s.token for s in created.seats}
    engine = games.get(game)
    answers: Answers = {}
    version = await record_gets(service, match_id, tokens, answers)
    steps = 0
    while True:
        version, record = await service.storage.load(match_id)
        state = game_state(engine, record)
        if record.finished or state is None or engine.result(state) is not None:
            break
        steps += 1
        humans = [s for s in tokens if s not in record.bots]
        # At most one bot seat still in: the others can resign, which ends the match.
        bots_in = [s for s in record.bots if s not in record.forfeited]
        active = sorted(engine.active_seats(state))
        op = rng.choice(OPS) if steps < spec["length"] else "resign"
        try:
            if op == "hand_over" and len(humans) > 1 and not bots_in:
                seat = rng.choice(humans)
                await service.hand_seat_to_bot(match_id, tokens.pop(seat), "random")
            elif op == "resign" and humans:
                seat = rng.choice(humans)
                await service.resign(match_id, tokens[seat], seat)
                tokens.pop(seat)
            elif op == "timeout" and record.deadlines() and (
                    spec["policy"] == "forfeit" or not bots_in):
                deadline = min(record.deadlines().values())
                await service.timeouts.fire(match_id, deadline, deadline)
            else:
                seat = rng.choice(active)
                move = dump_action(engine, rng.choice(engine.legal_actions(state, seat)))
                if seat in record.bots:
                    await service.act_as_bot(match_id, seat, move, version)
                else:
                    await service.act(match_id, tokens[seat], move, None, None)
        except ApiError as error:  # e.g. a last human seat may not be handed over
            if error.code not in ("forbidden", "unauthorized", "conflict", "invalid_action"):
                raise
            continue
        version = await record_gets(service, match_id, tokens, answers)
    return service, match_id, answers, version


async def _check(spec: dict[str, Any]) -> None:
    service, match_id, answers, final = await _random_match(spec)
    service.watching.resume_window = final + 1  # replay it all (default: a snapshot)
    assert sorted(answers) == list(range(final + 1))  # one GET per version
    for after in range(final):
        for mode in ("full", "patch"):
            sent = await resumed(service, match_id, None, after, mode)
            assert sorted(sent) == list(range(after + 1, final + 1)), (after, mode)
            assert differences(answers, sent, None) == [], (after, mode)


def _specs(longest: int) -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        st.fixed_dictionaries({"game": st.just("ny1901"), "players": st.integers(2, 3)}),
        st.fixed_dictionaries({"game": st.just("ginkgopolis"), "players": st.integers(1, 3)}),
    ).flatmap(lambda base: st.fixed_dictionaries({
        **{k: st.just(v) for k, v in base.items()},
        "seed": st.integers(0, 10_000),
        "timed": st.booleans(),
        "policy": st.sampled_from(["forfeit", "bot"]),
        "bot_seats": st.lists(st.integers(1, 2), max_size=1),
        "length": st.integers(3, longest),
    }))


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=_specs(12))
def test_resuming_from_every_version_replays_what_get_answered(spec: dict[str, Any]) -> None:
    asyncio.run(_check(spec))


@pytest.mark.slow
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=_specs(60))
def test_resuming_from_every_version_of_longer_matches(spec: dict[str, Any]) -> None:
    asyncio.run(_check(spec))
