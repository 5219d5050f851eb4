"""Bots only ever submit legal moves: seeded games of both games, every player count, every
bot kind (the search with a small iteration budget), mixed at one table."""

from __future__ import annotations

import pytest

from service.bots import KINDS, Budget, NoLegalMove, get_bot
from service.bots.selfplay import match_specs, play_match

from .helpers import GAMES_AND_COUNTS, engine


@pytest.mark.parametrize(("game", "players"), GAMES_AND_COUNTS)
def test_every_kind_plays_whole_games_with_legal_moves(game: str, players: int) -> None:
    kinds = ["search", "greedy", "random"]
    eng = engine(game)
    for seed in range(2):
        seat_kinds = [kinds[(s + seed) % 3] for s in range(players)]
        bots = [get_bot(kind, seed * 10 + s, Budget(iterations=4))
                for s, kind in enumerate(seat_kinds)]
        state = eng.setup(players, None, 100 + seed)
        moves = 0
        while eng.result(state) is None:
            for seat in sorted(eng.active_seats(state)):
                legal = eng.legal_actions(state, seat)
                action = bots[seat].choose(eng, eng.view(state, seat), legal, seat)
                assert action in legal, (seat_kinds[seat], action)
                state, _ = eng.apply(state, seat, action)
                moves += 1
                break
        assert moves > 0


@pytest.mark.parametrize("game", ["ny1901", "ginkgopolis"])
def test_many_two_player_games_random_and_greedy(game: str) -> None:
    # play_match raises if a bot ever answers with a move that is not in the legal list.
    for spec in match_specs(game, 2, ["greedy", "random"], 10, seed=7, budget=Budget(2)):
        outcome = play_match(spec)
        assert outcome.moves > 0 and len(outcome.scores) == 2


def test_ginkgopolis_draft_option_is_played_legally() -> None:
    for spec in match_specs("ginkgopolis", 3, ["search", "greedy", "random"], 3, seed=5,
                            budget=Budget(3), options={"characters": "draft"}):
        assert play_match(spec).moves > 0


@pytest.mark.parametrize("kind", KINDS)
def test_no_legal_move_is_an_error(kind: str) -> None:
    eng = engine("ny1901")
    state = eng.setup(2, None, 1)
    with pytest.raises(NoLegalMove):
        get_bot(kind).choose(eng, eng.view(state, 1), [], 1)


def test_registry_and_budget_parsing() -> None:
    assert get_bot("search", 3, Budget(iterations=7)).budget == Budget(iterations=7)
    with pytest.raises(ValueError):
        get_bot("oracle")
    assert Budget.parse("300") == Budget(iterations=300)
    assert Budget.parse("0.5s") == Budget(iterations=None, seconds=0.5)
    assert Budget.parse("300,0.5s") == Budget(iterations=300, seconds=0.5)
    assert Budget.parse(None) == Budget()


@pytest.mark.parametrize("game", ["ny1901", "ginkgopolis"])
def test_a_time_budget_still_answers_a_legal_move(game: str) -> None:
    eng = engine(game)
    state = eng.setup(2, None, 12)
    seat = min(eng.active_seats(state))
    legal = eng.legal_actions(state, seat)
    bot = get_bot("search", 1, Budget(iterations=None, seconds=0.01))
    assert bot.choose(eng, eng.view(state, seat), legal, seat) in legal
