"""A from-the-rulebook scorer for New York 1901 (``shared/rules/ny1901.md``), for tests only.

Written from the rules text, not from the engine: the tile table is transcribed from the
rules' component table, streets and start lots from ``ny1901-board.md`` (the first drawing,
rules versions 1 and 2) and ``docs/ny1901-board.md`` (the redrawn board, rules version 3), and
every rule is a small, slow loop over squares. It reads the engine only for component *data*
(the ASCII maps ``data.BOARD_ROWS`` and ``boards/v3.json``, the drawn tile shapes that the
wire's ``rotation`` refers to) and to learn the state's shape when it has to start from a
position.

- ``Track`` follows a game from its action log: the score track during play (NY-F1 printed
  points, NY-X3 Gold Prestige), the buildings on the board (NY-A4 demolitions), the action
  cards used (NY-C, for NY-F4) and the legendary skyscrapers' builders (NY-T3).
- ``Track.final()`` scores the end of the game (NY-F1..F5, NY-X1, X2, X4, X5) and ranks it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from service.games.ny1901 import ENGINE as E
from service.games.ny1901 import data
from service.games.ny1901.board import BOARDS
from service.games.ny1901.state import State

from .test_oracle import footprint, turned

Square = tuple[int, int]
Building = tuple[str, frozenset[Square]]
"""(tile id, squares)."""

WIDTH, HEIGHT = 21, 16


@dataclass(frozen=True)
class Fact:
    """One tile of the rules' component table."""

    level: str  # "start", "bronze", "silver", "gold"
    points: int
    squares: int
    irregular: bool  # marked * in the table
    drawn: str  # the key of its drawing in data.SHAPES (the wire's rotation refers to it)
    height: int = 0  # feet, legendary skyscrapers only (NY-F5)

    @property
    def legendary(self) -> bool:
        return self.height > 0


# Transcribed from the table "Tile set per player" and the legendary list (ny1901.md).
TILE_FACTS: dict[str, Fact] = {
    "B1": Fact("bronze", 2, 2, False, "domino"),
    "B2": Fact("bronze", 2, 2, False, "domino"),
    "B3": Fact("bronze", 3, 3, False, "I3"),
    "B4": Fact("bronze", 3, 3, True, "L3"),
    "B5": Fact("bronze", 4, 4, False, "O4"),
    "B6": Fact("bronze", 4, 4, True, "L4"),
    "S1": Fact("silver", 3, 2, False, "domino"),
    "S2": Fact("silver", 4, 3, False, "I3"),
    "S3": Fact("silver", 4, 3, True, "L3"),
    "S4": Fact("silver", 5, 4, True, "T4"),
    "S5": Fact("silver", 5, 4, False, "I4"),
    "S6": Fact("silver", 6, 4, True, "S4"),
    "G1": Fact("gold", 5, 3, False, "I3"),
    "G2": Fact("gold", 5, 3, True, "L3"),
    "G3": Fact("gold", 6, 4, False, "O4"),
    "G4": Fact("gold", 6, 4, True, "L4"),
    "G5": Fact("gold", 7, 5, True, "P5"),
    "G6": Fact("gold", 8, 6, False, "R6"),
    "start": Fact("start", 0, 2, False, "domino"),
    "park_row": Fact("gold", 6, 4, False, "O4", 391),
    "singer": Fact("gold", 7, 5, True, "T5", 612),
    "metropolitan_life": Fact("gold", 8, 5, True, "L5", 700),
    "woolworth": Fact("gold", 8, 6, False, "R6", 792),
}
SKYSCRAPER_LEVELS = ("bronze", "silver", "gold")



@dataclass(frozen=True)
class Map:
    """One drawing of the board as its description gives it."""

    rows: tuple[str, ...]
    """The ASCII map (component data)."""
    streets: dict[str, frozenset[Square]]
    """The five streets on a bonus card, transcribed."""
    start_lots: dict[str, str]


FIRST_DRAWING = Map(
    rows=tuple(data.BOARD_ROWS),
    # ny1901-board.md, "Streets": the five on a bonus card.
    streets={
        "broadway": frozenset((10, y) for y in range(HEIGHT)),
        "nassau_broad": frozenset((15, y) for y in range(HEIGHT)),
        "wall_street": frozenset((x, 9) for x in range(WIDTH)),
        "pine_thames": frozenset((x, 6) for x in range(WIDTH)),
        "cedar_street": frozenset((x, 3) for x in range(5, WIDTH)),
    },
    # ny1901-board.md, "Start lots".
    start_lots={"red": "rL", "blue": "bJ", "yellow": "yG", "green": "gF", "pink": "pA"},
)
REDRAWN = Map(
    rows=tuple(json.loads((BOARDS / "v3.json").read_text(encoding="utf-8"))["rows"]),
    # docs/ny1901-board.md, "Streets" (rules version 3).
    streets={
        "broadway": frozenset((10, y) for y in range(HEIGHT)),
        "nassau_broad": frozenset((15, y) for y in range(HEIGHT)),
        "wall_street": frozenset((x, 11) for x in range(WIDTH)),
        "pine_thames": frozenset((x, 8) for x in range(WIDTH)),
        "cedar_street": frozenset((x, 5) for x in range(WIDTH)),
    },
    # docs/ny1901-board.md, "Start lots".
    start_lots={"red": "rG", "blue": "bB", "yellow": "yI", "green": "gG", "pink": "pB"},
)


def map_of(rules_version: int) -> Map:
    """The drawing a match of ``rules_version`` is played on (the board's descriptions)."""
    return FIRST_DRAWING if rules_version < 3 else REDRAWN


DISTRICT_LETTERS = {"r": "red", "b": "blue", "y": "yellow", "g": "green", "p": "pink"}
ACTION_CARDS = ("construction_boom", "market_shift", "land_grab")

STREET_POINTS = 5  # NY-F2
GOLD_TYCOON = 3  # NY-X1, per district
MASTER_ARCHITECT = ((5, 10), (4, 6), (3, 3))  # NY-X2: (at least n irregular, points)
BRONZE_BARON = ((6, 15), (5, 10), (4, 5))  # NY-X4
GENERATION_KING = 5  # NY-X5, per level


def token(square: Square, drawing: Map = FIRST_DRAWING) -> str:
    x, y = square
    return drawing.rows[y].split()[x]


def district(square: Square, drawing: Map = FIRST_DRAWING) -> str | None:
    mark = token(square, drawing)
    return DISTRICT_LETTERS.get(mark[0]) if mark[1].isupper() else None


def lot_squares(name: str, drawing: Map = FIRST_DRAWING) -> frozenset[Square]:
    return frozenset((x, y) for y in range(HEIGHT) for x in range(WIDTH)
                     if token((x, y), drawing) == name)


def sides(squares: frozenset[Square]) -> set[Square]:
    """Squares sharing a side (not only a corner) with one of ``squares``."""
    out = set()
    for x, y in squares:
        out |= {(x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)}
    return out - squares


def squares_of_mask(mask: int) -> frozenset[Square]:
    return frozenset((i % WIDTH, i // WIDTH) for i in range(WIDTH * HEIGHT) if mask >> i & 1)


def placed_squares(tile: str, rotation: int, x: int, y: int) -> frozenset[Square]:
    """The squares of a build/rebuild action (the wire convention: clockwise quarter turns of
    the drawn tile, anchored at the top-left corner of its bounding box)."""
    mask = footprint(turned(TILE_FACTS[tile].drawn, rotation), x, y)
    assert mask is not None, (tile, rotation, x, y)
    squares = squares_of_mask(mask)
    assert len(squares) == TILE_FACTS[tile].squares, tile
    return squares


def tiered(count: int, table: tuple[tuple[int, int], ...]) -> int:
    return next((points for at_least, points in table if count >= at_least), 0)


def strict_most(counts: list[int], points: int) -> list[int]:
    """``points`` to the one seat with strictly the most (at least one); else nobody."""
    best = max(counts)
    if best == 0 or counts.count(best) != 1:
        return [0] * len(counts)
    return [points if count == best else 0 for count in counts]


@dataclass
class Track:
    """The rulebook's view of one game: what is on the board and on the score track."""

    players: int
    challenge: str | None
    streets: tuple[str, ...]
    buildings: list[list[Building]]
    printed: list[int]
    prestige: list[int]
    used_cards: list[set[str]] = field(default_factory=list)
    drawing: Map = FIRST_DRAWING

    def __post_init__(self) -> None:
        if not self.used_cards:
            self.used_cards = [set() for _ in range(self.players)]

    # ------------------------------------------------------------------------- during play
    def score(self, seat: int) -> int:
        """The score track (NY-F1: printed points and Gold Prestige)."""
        return self.printed[seat] + self.prestige[seat]

    def gold_prestige(self, seat: int, tile: str, squares: frozenset[Square]) -> int:
        """NY-X3: a new gold building (legendary ones are gold, NY-T3) scores 1 per
        opponent's bronze, silver or starting-property building sharing a side with it."""
        if self.challenge != "gold_prestige" or TILE_FACTS[tile].level != "gold":
            return 0
        around = sides(squares)
        return sum(
            1
            for other in range(self.players)
            if other != seat
            for other_tile, other_squares in self.buildings[other]
            if TILE_FACTS[other_tile].level in ("start", "bronze", "silver")
            and other_squares & around
        )

    def build(self, seat: int, tile: str, squares: frozenset[Square], rebuild: bool) -> int:
        """NY-A2 / A4: place the building (a rebuild first removes the seat's buildings it
        overlaps, NY-A4; no points are lost) and score it. Returns the points scored."""
        kept = [b for b in self.buildings[seat] if not b[1] & squares]
        assert rebuild == (len(kept) < len(self.buildings[seat])), "rebuild = demolition"
        prestige = self.gold_prestige(seat, tile, squares)
        self.buildings[seat] = [*kept, (tile, squares)]
        self.printed[seat] += TILE_FACTS[tile].points
        self.prestige[seat] += prestige
        return TILE_FACTS[tile].points + prestige

    def follow(self, seat: int, action: Any) -> None:
        """One step of the action log."""
        if action.type in ("build", "rebuild"):
            squares = placed_squares(action.tile, action.rotation, action.x, action.y)
            self.build(seat, action.tile, squares, action.type == "rebuild")
        elif action.type in ACTION_CARDS:
            assert action.type not in self.used_cards[seat], "an action card is used once"
            self.used_cards[seat].add(action.type)

    # ------------------------------------------------------------------------- the end
    def skyscrapers(self, seat: int, level: str | None = None) -> list[Building]:
        return [
            b
            for b in self.buildings[seat]
            if TILE_FACTS[b[0]].level != "start"
            and (level is None or TILE_FACTS[b[0]].level == level)
        ]

    def street_points(self, street: str) -> list[int]:
        """NY-F2: most buildings along the street (a square sharing a side with it; the
        starting property and legendary skyscrapers count), 5 points; a tie: nobody."""
        counts = [
            sum(1 for _, squares in self.buildings[seat]
                if sides(squares) & self.drawing.streets[street])
            for seat in range(self.players)
        ]
        return strict_most(counts, STREET_POINTS)

    def challenge_points(self) -> list[int]:
        n = self.players
        if self.challenge == "gold_tycoon":  # NY-X1 (and F3: a building counts in each)
            out = []
            for seat in range(n):
                per_district: dict[str, int] = {}
                for _, squares in self.skyscrapers(seat, "gold"):
                    for name in {district(square, self.drawing) for square in squares}:
                        assert name is not None
                        per_district[name] = per_district.get(name, 0) + 1
                out.append(GOLD_TYCOON * sum(1 for c in per_district.values() if c >= 2))
            return out
        if self.challenge == "master_architect":  # NY-X2
            return [
                tiered(
                    sum(1 for t, _ in self.skyscrapers(seat) if TILE_FACTS[t].irregular),
                    MASTER_ARCHITECT,
                )
                for seat in range(n)
            ]
        if self.challenge == "bronze_baron":  # NY-X4
            return [tiered(len(self.skyscrapers(s, "bronze")), BRONZE_BARON) for s in range(n)]
        if self.challenge == "generation_king":  # NY-X5
            totals = [0] * n
            for level in SKYSCRAPER_LEVELS:
                counts = [len(self.skyscrapers(seat, level)) for seat in range(n)]
                for seat, points in enumerate(strict_most(counts, GENERATION_KING)):
                    totals[seat] += points
            return totals
        return [0] * n  # no challenge card, or Gold Prestige (scored during play)

    def final(self) -> list[dict[str, int]]:
        """Per seat, the score lines (rule -> points) named as the engine names them."""
        challenge = self.challenge_points()
        streets = {street: self.street_points(street) for street in self.streets}
        out = []
        for seat in range(self.players):
            lines = {"buildings": self.printed[seat]}
            if self.challenge == "gold_prestige":
                lines["gold_prestige"] = self.prestige[seat]
            elif self.challenge is not None:
                lines[f"challenge:{self.challenge}"] = challenge[seat]
            for street in self.streets:
                lines[f"street:{street}"] = streets[street][seat]
            lines["unused_action_cards"] = len(ACTION_CARDS) - len(self.used_cards[seat])
            out.append(lines)
        return out

    def legendary_height(self, seat: int) -> int:
        return max((TILE_FACTS[t].height for t, _ in self.buildings[seat]), default=0)

    def beats(self, a: int, b: int, totals: list[int]) -> bool:
        """NY-F5: the higher total; between tied players the taller legendary skyscraper
        (one beats none); if neither built one, the more gold skyscrapers."""
        if totals[a] != totals[b]:
            return totals[a] > totals[b]
        height_a, height_b = self.legendary_height(a), self.legendary_height(b)
        if height_a or height_b:
            return height_a > height_b
        return len(self.skyscrapers(a, "gold")) > len(self.skyscrapers(b, "gold"))

    def ranking(self) -> tuple[list[int], list[int], list[int]]:
        """(totals, ranks, winners): rank 1 + the number of players who beat you."""
        totals = [sum(lines.values()) for lines in self.final()]
        seats = range(self.players)
        ranks = [1 + sum(1 for b in seats if self.beats(b, a, totals)) for a in seats]
        return totals, ranks, [s for s in seats if ranks[s] == 1]


# ----------------------------------------------------------------------------- from a state
def track_of(state: State) -> Track:
    """The rulebook's view of an engine position (scenario tests, the start of a game): its
    buildings and score track as they stand, its cards in play from the public view."""
    view = E.view(state, None)
    buildings = [sorted(seat_buildings) for seat_buildings in board_of(state)]
    return Track(
        players=state.n,
        challenge=view.challenge,
        streets=tuple(street.id for street in view.streets),
        buildings=buildings,
        printed=list(state.points),
        prestige=list(state.prestige),
        used_cards=[set(seat.used_action_cards) for seat in view.seats],
        drawing=map_of(state.rules_version),
    )


def starting_track(state: State) -> Track:
    """NY-S1 / S6 from the rules: each player's starting property on its character's start
    lot (none in the expert game), nothing scored, no action card used."""
    view = E.view(state, None)
    drawing = map_of(state.rules_version)
    buildings: list[list[Building]] = [
        [] if view.expert
        else [("start", lot_squares(drawing.start_lots[seat.character_district], drawing))]
        for seat in view.seats
    ]
    return Track(
        players=state.n,
        challenge=view.challenge,
        streets=tuple(street.id for street in view.streets),
        buildings=buildings,
        printed=[0] * state.n,
        prestige=[0] * state.n,
        drawing=drawing,
    )


def board_of(state: State) -> list[set[Building]]:
    """The engine's buildings per seat, in the oracle's terms."""
    view = E.view(state, None)
    return [
        {(b.tile, frozenset((q.x, q.y) for q in b.squares))
         for b in view.buildings if b.owner == seat}
        for seat in range(state.n)
    ]
