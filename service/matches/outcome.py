"""How a match ended, for its players: the rules' result, with the service's part in it.

The engines rank the seats by the rulebook. The service adds what the rules never see
(``records.MatchRecord.forfeited``, ``termination``): a seat that resigned or timed out under
``forfeit`` is ranked last, whatever its score (a later forfeit ranks above an earlier one,
the seat that stayed in longer); and a match the service ended early (fewer than two seats
still in) has no rules' result at all -- its seats still in share the win, with the scores
the rules never counted shown as 0.

The classes keep the wire names ``Result`` and ``SeatResult`` (OpenAPI components, GraphQL
types: clients generated before these fields keep their type names); in Python they are
``MatchOutcome`` and ``SeatOutcome``, apart from the engines' ``games.base`` ones.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from service.games import base

TerminationReason = Literal["normal", "timeout", "resign"]
"""The reasons this build gives; the wire says a string (an open list: more may come)."""


class Termination(BaseModel):
    model_config = ConfigDict(frozen=True)
    reason: str = Field(
        examples=["normal", "timeout", "resign"],
        description="`normal`: the game ended by its rules (seats that left before are "
        "`forfeited`); `timeout`: the service ended it when a seat's time ran out and fewer "
        "than two seats were still in; `resign`: likewise after a resignation. More may be "
        "added."
    )


class SeatResult(base.SeatResult):
    forfeited: bool = Field(
        default=False,
        description="True for a seat that resigned or timed out under the `forfeit` policy: "
        "ranked last, whatever its score.",
    )


class Result(base.Result):
    """Final scores and ranks, and how the match ended.

    `score` equals the sum of `breakdown` for every seat and opponent. Ranks are shared by
    seats and `opponents` (1 = best; equal results share a rank), so a solo player beaten by
    an automaton has rank 2 and `winners` (seats only) is empty. Seats that left
    (`forfeited`) rank last."""

    seats: list[SeatResult]  # type: ignore[assignment]
    termination: Termination = Field(
        default=Termination(reason="normal"),
        description="How the match ended (results told before this field: `normal`).")


MatchOutcome = Result
SeatOutcome = SeatResult


def outcome_of(result: base.Result | None, players: int, forfeited: tuple[int, ...],
               termination: str | None) -> MatchOutcome:
    """The outcome of a finished match: the rules' ``result`` (None: the service ended it
    before the rules did) re-ranked with the ``forfeited`` seats (in the order they left)
    last; ``termination``: the record's (None: ended by the rules)."""
    reason: TerminationReason = "normal"
    if termination == "timeout":
        reason = "timeout"
    elif termination == "resign":
        reason = "resign"
    out = set(forfeited)
    if result is None:
        seats = [base.SeatResult(seat=s, score=0, breakdown=[], rank=1)
                 for s in range(players)]
        opponents: list[base.OpponentResult] = []
    else:
        seats, opponents = list(result.seats), list(result.opponents)
    # Seats still in (and the rules' own opponents) keep the rules' order among them.
    staying = [s.rank for s in seats if s.seat not in out] + [o.rank for o in opponents]

    def rank(old: int) -> int:
        if not out:
            return old  # nobody left: the rules' ranks as they are
        return 1 + sum(1 for other in staying if other < old)

    # The last to leave ranks first among those that left.
    left_rank = {seat: len(staying) + 1 + n for n, seat in enumerate(reversed(forfeited))}
    ranked = [
        SeatResult(seat=s.seat, score=s.score, breakdown=list(s.breakdown),
                    rank=left_rank[s.seat] if s.seat in out else rank(s.rank),
                    forfeited=s.seat in out)
        for s in seats
    ]
    return Result(
        seats=ranked,
        winners=sorted(s.seat for s in ranked if s.rank == 1 and not s.forfeited),
        opponents=[o.model_copy(update={"rank": rank(o.rank)}) for o in opponents],
        termination=Termination(reason=reason),
    )
