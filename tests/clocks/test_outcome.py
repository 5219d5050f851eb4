"""Results with the service's part in them (issue 18): seats that left rank last (a later
one above an earlier one), the rules' order stays among the rest, a match the service ended
early has its seats still in share the win; ``termination`` says how it ended."""

from __future__ import annotations

from service.games.base import OpponentResult, Result, ScoreLine, SeatResult
from service.matches.outcome import outcome_of


def rules_result(ranks: list[int], opponents: list[int] | None = None) -> Result:
    seats = [SeatResult(seat=s, score=100 - r, breakdown=[ScoreLine(rule="x", points=100 - r)],
                        rank=r) for s, r in enumerate(ranks)]
    hal = [OpponentResult(name="Hal", score=100 - r, breakdown=[], rank=r)
           for r in opponents or []]
    return Result(seats=seats, winners=[s for s, r in enumerate(ranks) if r == 1],
                  opponents=hal)


def ranks(outcome: Result) -> dict[int, int]:
    return {s.seat: s.rank for s in outcome.seats}


def test_a_played_out_match_keeps_the_rules_result() -> None:
    outcome = outcome_of(rules_result([2, 1, 3]), 3, (), None)
    assert ranks(outcome) == {0: 2, 1: 1, 2: 3}
    assert outcome.winners == [1] and outcome.termination.reason == "normal"
    assert not any(s.forfeited for s in outcome.seats)
    assert [s.score for s in outcome.seats] == [98, 99, 97]  # scores untouched


def test_seats_that_left_rank_last_the_later_above_the_earlier() -> None:
    # Seat 1 won on points but resigned first, seat 0 timed out later.
    outcome = outcome_of(rules_result([2, 1, 3, 4]), 4, (1, 0), None)
    assert ranks(outcome) == {2: 1, 3: 2, 0: 3, 1: 4}
    assert outcome.winners == [2]
    assert {s.seat for s in outcome.seats if s.forfeited} == {0, 1}
    assert outcome.termination.reason == "normal"


def test_ties_among_the_seats_still_in_stay_ties() -> None:
    outcome = outcome_of(rules_result([1, 1, 3, 4]), 4, (0,), None)
    assert ranks(outcome) == {1: 1, 2: 2, 3: 3, 0: 4}
    outcome = outcome_of(rules_result([1, 2, 2, 4]), 4, (0,), None)
    assert ranks(outcome) == {1: 1, 2: 1, 3: 3, 0: 4} and outcome.winners == [1, 2]


def test_the_rules_own_opponent_is_ranked_with_the_seats_still_in() -> None:
    # Solo Ginkgopolis: the player beat Hal on points, then resigned.
    outcome = outcome_of(rules_result([1], opponents=[2]), 1, (0,), None)
    assert outcome.opponents[0].rank == 1 and ranks(outcome) == {0: 2}
    assert outcome.winners == []


def test_a_match_the_service_ended_early_has_the_seats_still_in_win() -> None:
    outcome = outcome_of(None, 2, (1,), "timeout")
    assert outcome.termination.reason == "timeout"
    assert ranks(outcome) == {0: 1, 1: 2} and outcome.winners == [0]
    assert [s.score for s in outcome.seats] == [0, 0]
    assert [s.forfeited for s in outcome.seats] == [False, True]
    three = outcome_of(None, 3, (2, 0), "resign")
    assert ranks(three) == {1: 1, 0: 2, 2: 3} and three.termination.reason == "resign"
