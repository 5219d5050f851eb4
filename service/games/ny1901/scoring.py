"""Final scoring (NY-F2..F5, NY-X1, X2, X4, X5) and the ranking with the F5 tie-breaks."""

from __future__ import annotations

from ..base import Result, ScoreLine, SeatResult
from . import data
from .board import Board
from .shapes import TILES
from .state import State

GOLD_PRESTIGE = data.CHALLENGES.index("gold_prestige")


def street_majorities(state: State, board: Board) -> list[list[int]]:
    """NY-F2: per street card in play, the 5 points per seat (a tie gives nobody the bonus).
    A building counts for every street it borders; the starting property and the legendary
    skyscrapers count."""
    out = []
    for street_index in state.streets:
        along = board.street(data.STREET_CARDS[street_index]).along
        counts = [sum(1 for _, _, mask in state.buildings[seat] if mask & along)
                  for seat in range(state.n)]
        out.append(_unique_best(counts, data.STREET_POINTS))
    return out


def _unique_best(counts: list[int], points: int) -> list[int]:
    best = max(counts)
    if best == 0 or counts.count(best) > 1:
        return [0] * len(counts)
    return [points if count == best else 0 for count in counts]


def _level_counts(state: State, seat: int) -> list[int]:
    counts = [0, 0, 0, 0]
    for tile, _, _ in state.buildings[seat]:
        counts[TILES[tile].level] += 1
    return counts


def challenge_points(state: State, board: Board) -> list[int]:
    """NY-X1, X2, X4, X5 at the end of the game (X3 is scored during play)."""
    n = state.n
    if state.challenge < 0 or state.challenge == GOLD_PRESTIGE:
        return [0] * n
    name = data.CHALLENGES[state.challenge]
    if name == "gold_tycoon":
        out = []
        for seat in range(n):
            golds = [mask for tile, _, mask in state.buildings[seat]
                     if TILES[tile].level == data.GOLD]
            districts = sum(
                1 for district_mask in board.district_masks
                if sum(1 for mask in golds if mask & district_mask) >= data.GOLD_TYCOON_MIN_GOLD
            )
            out.append(data.GOLD_TYCOON_POINTS * districts)
        return out
    if name == "master_architect":
        return [
            _tiered(sum(1 for tile, _, _ in state.buildings[seat] if TILES[tile].irregular),
                    data.MASTER_ARCHITECT_POINTS)
            for seat in range(n)
        ]
    if name == "bronze_baron":
        return [_tiered(_level_counts(state, seat)[data.BRONZE], data.BRONZE_BARON_POINTS)
                for seat in range(n)]
    # generation_king
    totals = [0] * n
    levels = [_level_counts(state, seat) for seat in range(n)]
    for level in (data.BRONZE, data.SILVER, data.GOLD):
        for seat, points in enumerate(
                _unique_best([c[level] for c in levels], data.GENERATION_KING_POINTS)):
            totals[seat] += points
    return totals


def _tiered(count: int, table: tuple[tuple[int, int], ...]) -> int:
    for at_least, points in table:
        if count >= at_least:
            return points
    return 0


def breakdown(state: State, board: Board) -> list[list[ScoreLine]]:
    """Per seat: one line per scoring rule in play."""
    streets = street_majorities(state, board)
    challenge = challenge_points(state, board)
    out = []
    for seat in range(state.n):
        lines = [ScoreLine(rule="buildings", points=state.points[seat])]
        if state.challenge == GOLD_PRESTIGE:
            lines.append(ScoreLine(rule="gold_prestige", points=state.prestige[seat]))
        for k, street_index in enumerate(state.streets):
            lines.append(ScoreLine(rule=f"street:{data.STREET_CARDS[street_index]}",
                                   points=streets[k][seat]))
        if state.challenge >= 0 and state.challenge != GOLD_PRESTIGE:
            lines.append(ScoreLine(rule=f"challenge:{data.CHALLENGES[state.challenge]}",
                                   points=challenge[seat]))
        unused = len(data.ACTION_CARDS) - state.cards[seat].bit_count()
        lines.append(ScoreLine(rule="unused_action_cards",
                               points=unused * data.UNUSED_ACTION_CARD_POINTS))
        out.append(lines)
    return out


def tie_break_key(state: State, seat: int, score: int) -> tuple[int, int, int]:
    """NY-F5: total, then the height of the seat's legendary skyscraper; the number of gold
    skyscrapers decides only between tied seats without a legendary one."""
    height = 0
    for k, owner in enumerate(state.legend):
        if owner == seat:
            height = data.LEGENDARY[k][4]
    gold = 0
    if not height:
        gold = sum(1 for tile, _, _ in state.buildings[seat] if TILES[tile].level == data.GOLD)
    return score, height, gold


def result(state: State, board: Board) -> Result:
    lines = breakdown(state, board)
    scores = [sum(line.points for line in seat_lines) for seat_lines in lines]
    keys = [tie_break_key(state, seat, scores[seat]) for seat in range(state.n)]
    seats = []
    for seat in range(state.n):
        rank = 1 + sum(1 for other in range(state.n) if keys[other] > keys[seat])
        seats.append(SeatResult(seat=seat, score=scores[seat], breakdown=lines[seat], rank=rank))
    winners = [s.seat for s in seats if s.rank == 1]
    return Result(seats=seats, winners=winners)
