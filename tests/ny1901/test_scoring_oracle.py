"""New York 1901 scoring against an independent rulebook oracle (``rulebook_scorer.py``).

Seeded random games compare the engine's score track after every step, and its final
``result`` (every breakdown line, the totals, ranks and winners), with the oracle that follows
the same action log. Scenario tests pin each scoring rule on a position with the tricky
neighbour: both the engine and the oracle must give the hand-computed number.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from functools import cache
from typing import Any

import pytest

from service.games.base import Result
from service.games.ny1901 import ENGINE as E
from service.games.ny1901 import Ny1901Options
from service.games.ny1901 import state as st
from service.games.ny1901.actions import LAND_GRAB, Ny1901Acquire, Ny1901Build, Ny1901Rebuild
from service.games.ny1901.shapes import TILE_INDEX, TILES
from service.games.ny1901.state import State
from tests.support.divergence import RulesDivergence, per_version

from .helpers import GEO, blank, give, kind, put
from .rulebook_scorer import (
    TILE_FACTS,
    Square,
    Track,
    board_of,
    placed_squares,
    sides,
    starting_track,
    token,
    track_of,
)

CHALLENGES = ("gold_prestige", "gold_tycoon", "master_architect", "bronze_baron",
              "generation_king", "none")


LEVELS = {"bronze": 1, "silver": 2, "gold": 3}


def choose(chooser: random.Random, legal: list[Any]) -> Any:
    """A random move, biased towards building the highest level on offer so that games
    reach gold (and Gold Prestige) often. The list is sorted first, so that the games do not
    change when the engine lists its moves in another order."""
    legal = sorted(legal, key=repr)
    builds = [a for a in legal if a.type in ("build", "rebuild")]
    if builds and chooser.random() < 0.8:
        top = max(LEVELS[TILE_FACTS[a.tile].level] for a in builds)
        return chooser.choice([a for a in builds if LEVELS[TILE_FACTS[a.tile].level] == top])
    return chooser.choice(legal)


def playout(players: int, seed: int, options: Ny1901Options) -> Iterator[
        tuple[State, int, Any, State]]:
    """(state before, seat, action, state after) of one seeded random game."""
    chooser = random.Random(seed)
    state = E.setup(players, options, seed)
    for _ in range(20000):
        if E.result(state) is not None:
            return
        seat = state.seat
        action = choose(chooser, E.legal_actions(state, seat))
        after, _ = E.apply(state, seat, action)
        yield state, seat, action, after
        state = after
    raise AssertionError(f"game {seed} did not end")


def games() -> Iterator[tuple[int, int, Ny1901Options]]:
    """(players, seed, options): every challenge card with 2-4 players, some expert games,
    and more four-player Gold Prestige games (its points depend on the neighbours)."""
    for seed in range(54):
        challenge = CHALLENGES[seed % len(CHALLENGES)]
        players = 2 + seed // len(CHALLENGES) % 3
        yield players, 9000 + seed, Ny1901Options(challenge=challenge, expert=seed % 7 == 3)
    for seed in range(36):
        yield 4, 9100 + seed, Ny1901Options(challenge="gold_prestige", expert=seed % 4 == 1)


@cache
def recorded() -> list[tuple[int, int, list[tuple[State, int, Any, State]]]]:
    """The games of ``games()``, played once per test session: (players, seed, steps)."""
    return [(players, seed, list(playout(players, seed, options)))
            for players, seed, options in games()]


def lines_of(result: Result) -> list[dict[str, int]]:
    out = []
    for seat in result.seats:
        lines: dict[str, int] = {}
        for line in seat.breakdown:
            assert line.rule not in lines, f"rule {line.rule} listed twice"
            lines[line.rule] = line.points
        out.append(lines)
    return out


def compare_result(track: Track, result: Result) -> None:
    totals, ranks, winners = track.ranking()
    assert lines_of(result) == track.final()
    assert [s.score for s in result.seats] == totals
    assert [s.rank for s in result.seats] == ranks
    assert result.winners == winners


def test_NY_F1_X3_score_track_after_every_step_matches_the_rulebook_oracle() -> None:
    """NY-F1 (printed points, kept when demolished) and NY-X3 (Gold Prestige at the build),
    compared after every step; the oracle's board must stay the engine's (NY-A4)."""
    seen: Counter[str] = Counter()
    for players, seed, steps in recorded():
        track: Track | None = None
        for before, seat, action, after in steps:
            if track is None:
                track = starting_track(before)
                assert [set(b) for b in track.buildings] == board_of(before), "NY-S1"
            if (action.type in ("build", "rebuild")
                    and TILE_FACTS[action.tile].level == "gold"
                    and track.challenge == "gold_prestige"):
                seen["gold_prestige_builds"] += 1
                squares = placed_squares(action.tile, action.rotation, action.x, action.y)
                around = sides(squares)
                if any(TILE_FACTS[t].level == "gold" and s & around
                       for other in range(players) if other != seat
                       for t, s in track.buildings[other]):
                    seen["next_to_an_opponent_gold"] += 1
                if track.gold_prestige(seat, action.tile, squares):
                    seen["scored_prestige"] += 1
            seen[action.type] += 1
            track.follow(seat, action)
            assert [after.score(s) for s in range(players)] == [
                track.score(s) for s in range(players)
            ], f"seed {seed}: {seat} {action}"
        assert track is not None
        assert [set(b) for b in track.buildings] == board_of(after)
    assert seen["rebuild"] >= 500 and seen["gold_prestige_builds"] >= 300
    assert seen["next_to_an_opponent_gold"] >= 30 and seen["scored_prestige"] >= 60


def test_NY_F1_to_F5_X1_X2_X4_X5_final_result_matches_the_rulebook_oracle() -> None:
    """The final ``result``: every breakdown line (NY-F1 buildings, X3 prestige, F2 streets,
    X1/X2/X4/X5 challenge, F4 unused cards), totals, ranks and winners (F5)."""
    seen: Counter[str] = Counter()
    for _, _, steps in recorded():
        track = starting_track(steps[0][0])
        for _, seat, action, _ in steps:
            track.follow(seat, action)
        result = E.result(steps[-1][3])
        assert result is not None
        compare_result(track, result)
        for lines in track.final():
            for rule, points in lines.items():
                if points and rule != "buildings":
                    seen[rule if rule.startswith("challenge") else rule.split(":")[0]] += 1
    assert seen["street"] >= 100 and seen["unused_action_cards"] >= 50
    assert seen["gold_prestige"] >= 50
    for challenge in ("gold_tycoon", "master_architect", "generation_king"):
        assert seen[f"challenge:{challenge}"] >= 3, challenge
    # Random play never keeps 4 bronzes (NY-X4): the random final positions below do.


STREET_CARDS = ("broadway", "nassau_broad", "wall_street", "pine_thames", "cedar_street")
PLACEMENTS: dict[int, list[tuple[int, int, int, frozenset[Square]]]] = {}


def placements_of(tile: str) -> list[tuple[int, int, int, frozenset[Square]]]:
    """(rotation, x, y, squares) of every on-board placement of the tile's shape."""
    shape = TILES[TILE_INDEX[tile]].shape
    if shape not in PLACEMENTS:
        PLACEMENTS[shape] = [(p.rotation, p.x, p.y, placed_squares(tile, p.rotation, p.x, p.y))
                             for p in GEO.placements if p.shape == shape]
    return PLACEMENTS[shape]


def random_final_position(seed: int) -> State:
    """A seeded random end position: random buildings of random seats on lots nobody else
    owns, close totals (ties), random used action cards, every challenge card."""
    chooser = random.Random(seed)
    players = 2 + seed % 3
    challenge = CHALLENGES[seed % len(CHALLENGES)]
    state = blank(players=players, challenge=challenge,
                  streets=tuple(chooser.sample(STREET_CARDS, 3)))  # type: ignore[arg-type]
    owner: dict[str, int] = {}
    built: set[Square] = set()
    supply = [t for t in TILE_FACTS if not TILE_FACTS[t].legendary and t != "start"]
    legendary = [t for t in TILE_FACTS if TILE_FACTS[t].legendary]
    spare = [[*supply, "start"] for _ in range(players)]
    for _ in range(chooser.randint(4, 10) * players):
        seat = chooser.randrange(players)
        if not spare[seat]:
            continue
        bronzes = [t for t in spare[seat] if TILE_FACTS[t].level == "bronze"]
        tile = chooser.choice(spare[seat] + bronzes + legendary[:1] * (chooser.random() < 0.3))
        options = placements_of(tile)
        for rotation, x, y, squares in chooser.sample(options, min(40, len(options))):
            lots = {token(square) for square in squares}
            if squares & built or any(owner.get(lot, seat) != seat for lot in lots):
                continue
            give(state, seat, *sorted(lot for lot in lots if lot not in owner))
            owner.update(dict.fromkeys(lots, seat))
            put(state, seat, tile, rotation, x, y)
            built |= squares
            if tile in legendary:
                legendary.remove(tile)
                spare[seat] = [t for t in spare[seat] if t not in legendary]
            else:
                spare[seat].remove(tile)
            break
    state.points = [chooser.randint(24, 27) for _ in range(players)]
    if challenge == "gold_prestige":
        state.prestige = [chooser.randint(0, 3) for _ in range(players)]
    state.cards = [chooser.randrange(8) for _ in range(players)]
    if chooser.random() < 0.6:  # tie some seats with the best total
        state.phase = st.OVER
        result = E.result(state)
        assert result is not None
        best = max(seat.score for seat in result.seats)
        for seat in chooser.sample(range(players), chooser.randint(2, players)):
            state.points[seat] += best - result.seats[seat].score
    return state


def test_NY_F2_F4_F5_X1_X2_X4_X5_random_final_positions_match_the_rulebook_oracle() -> None:
    """Seeded random end positions with close totals: every breakdown line, the tie-breaks
    (NY-F5) and every challenge card, Bronze Baron included."""
    seen: Counter[str] = Counter()
    for seed in range(150):
        state = random_final_position(seed)
        result = finish(state)
        for lines in lines_of(result):
            for rule, points in lines.items():
                seen[rule] += bool(points)
        ties = Counter(s.score for s in result.seats)
        best = max(ties)
        seen["tie_at_the_top"] += ties[best] > 1
        seen["won_on_a_tie_break"] += ties[best] > len(result.winners)
        seen["shared_victory"] += len(result.winners) > 1
    for challenge in CHALLENGES[1:-1]:
        assert seen[f"challenge:{challenge}"] >= 10, challenge
    assert seen["tie_at_the_top"] >= 60 and seen["won_on_a_tie_break"] >= 30
    assert seen["shared_victory"] >= 10


# ------------------------------------------------------------------------------ scenarios
def place(state: State, seat: int, tile: str, *squares: Square) -> State:
    """A building of ``seat`` covering exactly ``squares`` (its lots are given to the seat)."""
    wanted = frozenset(squares)
    xs, ys = [x for x, _ in wanted], [y for _, y in wanted]
    for rotation in range(4):
        for x in range(min(xs) - 1, max(xs) + 1):
            for y in range(min(ys) - 1, max(ys) + 1):
                try:
                    found = placed_squares(tile, rotation, x, y) == wanted
                except AssertionError:
                    continue
                shape = TILES[TILE_INDEX[tile]].shape
                if found and E.geometry_for(state.rules_version).find(
                        shape, rotation, x, y) is not None:
                    lots = {token(square) for square in wanted}
                    give(state, seat, *sorted(lots - owned(state, seat)))
                    return put(state, seat, tile, rotation, x, y)
    raise AssertionError(f"{tile} cannot cover {sorted(wanted)}")


def owned(state: State, seat: int) -> set[str]:
    board = E.board_for(state.rules_version)
    return {lot.name for i, lot in enumerate(board.lots) if state.lots[seat] >> i & 1}


def anywhere(state: State, seat: int, *tiles: str) -> State:
    """Buildings whose place does not matter for the rule under test: each on the first
    placement over lots nobody else owns and no building covers."""
    for tile in tiles:
        shape = TILES[TILE_INDEX[tile]].shape
        taken = {token(sq) for other in range(state.n) if other != seat
                 for sq in squares_of_lots(owned(state, other))}
        built = set().union(*[squares for b in track_of(state).buildings for _, squares in b])
        for p in E.geometry_for(state.rules_version).placements:
            squares = placed_squares(tile, p.rotation, p.x, p.y) if p.shape == shape else None
            if squares and not squares & built and not {token(s) for s in squares} & taken:
                place(state, seat, tile, *squares)
                break
        else:
            raise AssertionError(f"no room for {tile}")
    return state


def squares_of_lots(names: set[str]) -> set[Square]:
    return {(x, y) for y in range(16) for x in range(21) if token((x, y)) in names}


def build(state: State, track: Track, seat: int, tile: str, rotation: int, x: int, y: int,
          rebuild: bool = False) -> tuple[State, int]:
    """A build (or rebuild) of ``seat`` through the engine and through the oracle's track;
    every seat's score must agree. Returns the new state and the points it scored."""
    state.seat = seat
    state.phase = st.START if rebuild else st.ACQUIRED
    kind = Ny1901Rebuild if rebuild else Ny1901Build
    before = state.score(seat)
    after, _ = E.apply(state, seat, kind(tile, rotation, x, y))  # type: ignore[arg-type]
    track.build(seat, tile, placed_squares(tile, rotation, x, y), rebuild)
    assert [after.score(s) for s in range(state.n)] == [track.score(s) for s in range(state.n)]
    return after, after.score(seat) - before


def pink_corner(challenge: str = "gold_prestige") -> State:
    """Seat 0 owns pI (16, 11..13) and may build gold; around pI: pG + pH (16..19, 10),
    pJ (17..19, 11), pK (17, 12..13), pL + pM (16..19, 14)."""
    state = blank(players=4, challenge=challenge)
    give(state, 0, "pI")
    state.points = [18, 18, 18, 18]
    return state


def test_NY_X3_gold_prestige_ignores_an_adjacent_opponent_gold_building() -> None:
    """The new gold G1 on pI shares a side with seat 1's gold G1 (must not count) and with
    seat 2's bronze (counts), and seat 0's own bronze (never counts); seat 3's bronze touches
    it at a corner only (does not count): 5 printed points + 1."""
    state = pink_corner()
    place(state, 1, "G1", (17, 11), (18, 11), (19, 11))   # a side with (16, 11)
    place(state, 2, "B1", (17, 12), (17, 13))             # sides with (16, 12), (16, 13)
    place(state, 3, "B1", (17, 14), (18, 14))             # a corner with (16, 13) only
    place(state, 0, "B1", (16, 10), (17, 10))             # own, a side with (16, 11)
    track = track_of(state)
    after, points = build(state, track, 0, "G1", 1, 16, 11)
    assert points == 5 + 1 and after.prestige[0] == track.prestige[0] == 1


def test_NY_X3_T3_legendary_is_gold_it_scores_prestige_an_opponent_legendary_never_does() -> None:
    state = pink_corner()
    place(state, 1, "park_row", (17, 10), (18, 10), (17, 11), (18, 11))  # side with (16, 11)
    place(state, 2, "S1", (17, 12), (17, 13))                            # silver: counts
    _, points = build(state, track_of(state), 0, "G1", 1, 16, 11)
    assert points == 5 + 1
    # Woolworth on pB + pC beside the pink starting property on pA (counts); seat 2's
    # bronze on pD lies across Beaver Street (y = 12): no neighbour.
    state = blank(players=3, challenge="gold_prestige")
    give(state, 0, "pB", "pC")
    place(state, 1, "start", (11, 10), (11, 11))
    place(state, 2, "B1", (11, 13), (12, 13))
    state.points = [18, 0, 0]
    _, points = build(state, track_of(state), 0, "woolworth", 0, 12, 10)
    assert points == 8 + 1


def test_NY_X3_a_gold_rebuild_scores_prestige_a_silver_or_no_card_scores_none() -> None:
    state = pink_corner()
    place(state, 2, "B1", (17, 12), (17, 13))
    place(state, 0, "B3", (16, 11), (16, 12), (16, 13))  # demolished by the rebuild
    _, points = build(state, track_of(state), 0, "G1", 1, 16, 11, rebuild=True)
    assert points == 5 + 1
    state = pink_corner()
    place(state, 2, "B1", (17, 12), (17, 13))
    _, points = build(state, track_of(state), 0, "S2", 1, 16, 11)
    assert points == 4
    state = pink_corner(challenge="bronze_baron")
    place(state, 2, "B1", (17, 12), (17, 13))
    _, points = build(state, track_of(state), 0, "G1", 1, 16, 11)
    assert points == 5


def finish(state: State, track: Track | None = None) -> Result:
    """The engine's final result, checked against the oracle's (from ``track`` if given,
    else from the position's buildings and score track)."""
    state.phase = st.OVER
    result = E.result(state)
    assert result is not None
    compare_result(track if track is not None else track_of(state), result)
    return result


def line(result: Result, seat: int, rule: str) -> int:
    return lines_of(result)[seat][rule]


def test_NY_F2_a_street_touched_only_at_a_corner_does_not_count() -> None:
    """Cedar Street runs along y = 3 from x = 5 on: seat 1's building on rF has (4, 3) beside
    its square (5, 3) and counts; seat 0's on rE ((3..4, 2)) touches (5, 3) only at a corner
    (it borders Greenwich Street, no bonus card): it does not count."""
    state = blank(players=2, streets=("cedar_street", "broadway", "wall_street"))
    place(state, 0, "B1", (3, 2), (4, 2))
    place(state, 1, "B1", (3, 3), (4, 3))
    result = finish(state)
    assert [line(result, s, "street:cedar_street") for s in (0, 1)] == [0, 5]
    # One building counts for every street it borders: yB (9, 4..5) is on Cedar Street and
    # Broadway. Cedar is now tied 1:1, so nobody scores it.
    place(state, 0, "B2", (9, 4), (9, 5))
    result = finish(state)
    assert [line(result, s, "street:cedar_street") for s in (0, 1)] == [0, 0]
    assert [line(result, s, "street:broadway") for s in (0, 1)] == [5, 0]
    # The starting property counts as a building.
    place(state, 1, "start", (11, 10), (11, 11))   # pA: Broadway (x = 10), Wall Street
    result = finish(state)
    assert [line(result, s, "street:broadway") for s in (0, 1)] == [0, 0]
    assert [line(result, s, "street:wall_street") for s in (0, 1)] == [0, 5]


def test_NY_F1_F4_demolished_buildings_keep_their_points_unused_cards_score_one() -> None:
    state = blank(players=2, challenge="none")
    give(state, 0, "gC")
    state.points[0] = 6
    state.cards[0] = st.CARD_BOOM | st.CARD_GRAB
    track = track_of(state)
    state, points = build(state, track, 0, "B3", 0, 0, 8)
    assert points == 3
    state, points = build(state, track, 0, "S2", 0, 0, 8, rebuild=True)  # B3 demolished
    assert points == 4
    result = finish(state, track)
    assert line(result, 0, "buildings") == 6 + 3 + 4
    assert line(result, 0, "unused_action_cards") == 1
    assert line(result, 1, "unused_action_cards") == 3


def test_NY_X1_gold_tycoon_counts_legendary_golds_and_districts_not_neighbours() -> None:
    """Seat 0: two golds facing each other across Wall Street, both green (one district);
    Park Row and G3 side by side in blue (a legendary is gold: a second district); one gold
    in yellow beside seat 1's yellow gold (an opponent's gold does not help): 2 x 3."""
    state = blank(players=2, challenge="gold_tycoon")
    place(state, 0, "G1", (0, 8), (1, 8), (2, 8))
    place(state, 0, "G1", (1, 10), (2, 10), (3, 10))
    place(state, 0, "park_row", (11, 4), (12, 4), (11, 5), (12, 5))
    place(state, 0, "G3", (13, 4), (14, 4), (13, 5), (14, 5))
    place(state, 0, "G1", (6, 4), (7, 4), (8, 4))
    place(state, 0, "S1", (9, 4), (9, 5))          # a silver in yellow does not count
    place(state, 1, "G1", (6, 5), (7, 5), (8, 5))
    result = finish(state)
    assert [line(result, s, "challenge:gold_tycoon") for s in (0, 1)] == [6, 0]


def test_NY_X2_master_architect_counts_an_irregular_legendary_not_the_starting_property() -> None:
    state = blank(players=2, challenge="master_architect")
    place(state, 0, "singer", (16, 11), (17, 11), (18, 11), (17, 12), (17, 13))  # T *
    place(state, 0, "B4", (1, 10), (1, 11), (0, 11))                             # L *
    place(state, 0, "start", (11, 10), (11, 11))    # a domino, and no skyscraper
    place(state, 0, "B3", (0, 8), (1, 8), (2, 8))   # straight: regular
    result = finish(state)
    assert line(result, 0, "challenge:master_architect") == 0   # 2 irregular
    place(state, 0, "S3", (3, 3), (4, 3), (4, 4))                # rF: L *
    result = finish(state)
    assert line(result, 0, "challenge:master_architect") == 3   # 3 irregular
    anywhere(state, 0, "G5")
    result = finish(state)
    assert line(result, 0, "challenge:master_architect") == 6
    anywhere(state, 0, "S6")
    result = finish(state)
    assert line(result, 0, "challenge:master_architect") == 10


def test_NY_X4_bronze_baron_counts_bronzes_on_the_board_not_demolished_ones() -> None:
    state = blank(players=2, challenge="bronze_baron")
    place(state, 0, "B1", (1, 7), (2, 7))
    place(state, 0, "B2", (3, 7), (4, 7))
    place(state, 0, "B3", (0, 8), (1, 8), (2, 8))
    place(state, 0, "B4", (1, 10), (1, 11), (0, 11))
    place(state, 0, "start", (4, 10), (4, 11))      # the starting property is no bronze
    place(state, 1, "B3", (6, 4), (7, 4), (8, 4))   # an opponent's bronze does not help
    result = finish(state)
    assert line(result, 0, "challenge:bronze_baron") == 5     # 4 bronzes
    place(state, 0, "B5", (2, 10), (3, 10), (2, 11), (3, 11))
    result = finish(state)
    assert line(result, 0, "challenge:bronze_baron") == 10    # 5 bronzes
    state.points[0] = 10
    track = track_of(state)
    state, _ = build(state, track, 0, "S2", 0, 0, 8, rebuild=True)  # the B3 is demolished
    result = finish(state, track)
    assert line(result, 0, "challenge:bronze_baron") == 5     # 4 bronzes on the board


def test_NY_X5_generation_king_counts_a_legendary_as_gold_and_a_tie_scores_nobody() -> None:
    state = blank(players=3, challenge="generation_king")
    anywhere(state, 0, "B1", "B2", "S1", "G1")
    anywhere(state, 1, "B1", "S1", "S2", "woolworth")
    anywhere(state, 2, "B1", "G1", "start")
    result = finish(state)
    # bronze 2:1:1 -> seat 0; silver 1:2:0 -> seat 1; gold 1:1:1 (Woolworth is gold) -> nobody
    assert [line(result, s, "challenge:generation_king") for s in range(3)] == [5, 5, 0]
    anywhere(state, 1, "G2")
    result = finish(state)
    assert [line(result, s, "challenge:generation_king") for s in range(3)] == [5, 10, 0]


def equalise(state: State, seats: tuple[int, ...], total: int) -> State:
    """Adjust the building points so that ``seats`` end on ``total`` points."""
    result = finish(state)
    for seat in seats:
        state.points[seat] += total - result.seats[seat].score
    return state


def test_NY_F5_ties_go_to_the_tallest_legendary_then_the_most_golds_else_shared() -> None:
    state = blank(players=4, challenge="none")
    anywhere(state, 0, "park_row")            # 391 ft
    anywhere(state, 1, "singer")              # 612 ft
    anywhere(state, 2, "G1", "G2", "G3")      # more golds, but no legendary skyscraper
    equalise(state, (0, 1, 2), 30)
    equalise(state, (3,), 20)
    result = finish(state)
    assert [s.rank for s in result.seats] == [2, 1, 3, 4] and result.winners == [1]
    state = blank(players=3, challenge="none")
    anywhere(state, 0, "G1")
    anywhere(state, 1, "G1", "G2")
    anywhere(state, 2, "G3", "G4")
    equalise(state, (0, 1, 2), 30)
    result = finish(state)
    assert [s.rank for s in result.seats] == [3, 1, 1] and result.winners == [1, 2]


# ------------------------------------------------------------------------------ divergences


@pytest.mark.parametrize("version", per_version(
    "NY-C3: the engine offers Land Grab only between the first acquisition and the build; "
    "the revised ruling: action cards may be played any time in the turn, so Land Grab may "
    "also follow the turn's build"))
def test_NY_C3_land_grab_may_follow_the_turns_build(version: int) -> None:
    state = blank(players=2, challenge="none", rules_version=version)
    state.market = [kind("red", 2), kind("blue", 2), kind("yellow", 2), kind("green", 2)]
    state.future.remove(kind("red", 2))
    board = E.board_for(version)
    red = "rB" if version < 3 else next(  # a free 2-square red lot of that version's board
        lot.name for i, lot in enumerate(board.lots) if lot.district == 0 and lot.size == 2
        and not any(owned >> i & 1 for owned in state.lots))
    state, _ = E.apply(state, 0, Ny1901Acquire(red))        # a 2-square lot, 3 workers left
    assert LAND_GRAB in E.legal_actions(state, 0)           # before the build: offered
    build = next(a for a in E.legal_actions(state, 0)
                 if isinstance(a, Ny1901Build) and a.tile == "B1")
    state, _ = E.apply(state, 0, build)                     # covers the lot: 2 workers back
    assert state.future and state.free_workers(0) == 4
    if LAND_GRAB not in E.legal_actions(state, 0):
        raise RulesDivergence(f"after the build seat {state.seat} is to move, step "
                              f"{st.PHASE_NAMES[state.phase]}: no Land Grab for seat 0")
    state, _ = E.apply(state, 0, LAND_GRAB)
    acquisitions = E.legal_actions(state, 0)
    assert acquisitions and all(a.type == "acquire" for a in acquisitions)
    blue = next(a for a in acquisitions if a.lot.startswith("b"))
    state, _ = E.apply(state, 0, blue)                      # a worker the build released
    assert state.free_workers(0) == 3                       # the grab gives no build:
    assert [a.type for a in E.legal_actions(state, 0)] == ["construction_boom", "end_turn"]
