"""New York 1901: the components as frozen facts (no logic).

The published board map and tile shapes are not available, so these are Skyline's
reconstruction (``/work/shared/rules/ny1901.md`` and ``ny1901-board.md``). The board is plain
data loaded through ``board.py``; a transcription of the printed board can replace it as a
JSON file (``board.load_board_file``) without code changes.
"""

from __future__ import annotations

from typing import Final

# ---------------------------------------------------------------------------------------
# Districts (colour letter on the map, name). Order matters: it is the card-kind index.
DISTRICTS: Final = ("red", "blue", "yellow", "green", "pink")
DISTRICT_LETTERS: Final = ("r", "b", "y", "g", "p")
PINK: Final = 4
"""The district taken out of play with two players (NY-S4)."""

LOTS_PER_DISTRICT: Final = 13
LOT_SIZES: Final = (2, 3)

# ---------------------------------------------------------------------------------------
# The first drawing of the board (ny1901-board.md), played by rules versions 1 and 2; from
# version 3 the redrawn board, boards/v3.json. `..` street, `**` park, `##` blocked, else a lot.
BOARD_ROWS: Final = (
    ".. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. ..",
    "rA rA rA rB rB .. rJ rK rL rM .. ** ** bA bB .. bC bD bD bD ##",
    "rC rD rD rE rE .. rJ rK rL rM .. ** ** bA bB .. bC bE bE bF bF",
    "rC ** ** rF rF .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. ..",
    "rC rG rG rG rF .. yA yA yA yB .. bG bG bG bH .. bJ bK bK bK bL",
    "rH rH rI rI rI .. yC yC yC yB .. bI bI bI bH .. bJ bM bM bM bL",
    ".. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. ..",
    "## gA gA gB gB .. yD yD yE yE .. yG yH yH yI .. yK yK yK yL yL",
    "gC gC gC gD gD .. yF yF ** ** .. yG yJ yJ yI .. yM yM yM yL ##",
    ".. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. ..",
    "## gE gE gE gF .. gI gI gI gJ .. pA pB pB pB .. pG pG pH pH ##",
    "gG gG gH gH gF .. gK gK gK gJ .. pA pC pC pC .. pI pJ pJ pJ ##",
    ".. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. pI pK ** ** ##",
    "** ** ** ** gL .. gM gM ** ** .. pD pD pE pE .. pI pK ** ** ##",
    "** ** ** ** gL .. ## gM ** ** .. ## pF pF pE .. pL pL pM pM ##",
    ".. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. ..",
)
BOARD_WIDTH: Final = 21
BOARD_HEIGHT: Final = 16

# Streets: (id, name, on a bonus card, rectangles (x0, y0, x1, y1) inclusive).
STREETS: Final = (
    ("broadway", "Broadway", True, ((10, 0, 10, 15),)),
    ("nassau_broad", "Nassau & Broad", True, ((15, 0, 15, 15),)),
    ("wall_street", "Wall Street", True, ((0, 9, 20, 9),)),
    ("pine_thames", "Pine & Thames", True, ((0, 6, 20, 6),)),
    ("cedar_street", "Cedar Street", True, ((5, 3, 20, 3),)),
    ("fulton_street", "Fulton Street", False, ((0, 0, 20, 0),)),
    ("state_street", "State Street", False, ((0, 15, 20, 15),)),
    ("greenwich_street", "Greenwich Street", False, ((5, 0, 5, 15),)),
    ("beaver_street", "Beaver Street", False, ((0, 12, 15, 12),)),
)

# Parks: (name, rectangles).
PARKS: Final = (
    ("St. Paul's Churchyard", ((1, 3, 2, 3),)),
    ("City Hall Park", ((11, 1, 12, 2),)),
    ("Trinity Churchyard", ((8, 8, 9, 8),)),
    ("Battery Park", ((0, 13, 3, 14),)),
    ("Bowling Green", ((8, 13, 9, 14),)),
    ("Hanover Square", ((18, 12, 19, 13),)),
)

# ---------------------------------------------------------------------------------------
# Characters (NY-S1): one per district, each with a 2-square start lot on the first drawing
# (the redrawn board names its own start lots).
# Robert Fletcher and David Schneider are published; the other names are Skyline's.
CHARACTERS: Final = (
    ("Margaret Ashby", "red", "rL"),
    ("Robert Fletcher", "blue", "bJ"),
    ("Cornelius Brandt", "yellow", "yG"),
    ("Eleanor Whitcombe", "green", "gF"),
    ("David Schneider", "pink", "pA"),
)

# ---------------------------------------------------------------------------------------
# Street cards (NY-F2) and challenge cards (NY-X), in card order.
STREET_CARDS: Final = ("broadway", "nassau_broad", "wall_street", "pine_thames", "cedar_street")
CHALLENGES: Final = (
    "gold_tycoon",        # NY-X1
    "master_architect",   # NY-X2
    "gold_prestige",      # NY-X3
    "bronze_baron",       # NY-X4
    "generation_king",    # NY-X5
)
GOLD_TYCOON_POINTS: Final = 3
GOLD_TYCOON_MIN_GOLD: Final = 2
"""NY-X1: gold skyscrapers a district needs to score."""
GOLD_PRESTIGE_POINTS: Final = 1
"""NY-X3: per adjacent opponent building below gold."""
MASTER_ARCHITECT_POINTS: Final = ((5, 10), (4, 6), (3, 3))  # (at least n irregular, points)
BRONZE_BARON_POINTS: Final = ((6, 15), (5, 10), (4, 5))     # (at least n bronze, points)
GENERATION_KING_POINTS: Final = 5
STREET_POINTS: Final = 5
UNUSED_ACTION_CARD_POINTS: Final = 1
"""NY-F4: per action card not played."""

# ---------------------------------------------------------------------------------------
# Technology (NY-T1): thresholds (silver, gold) for the normal and the expert game (NY-S6).
THRESHOLDS: Final = (6, 18)
EXPERT_THRESHOLDS: Final = (10, 25)

# Levels: 0 starting property (no level), 1 bronze, 2 silver, 3 gold (legendary included).
START_LEVEL: Final = 0
BRONZE: Final = 1
SILVER: Final = 2
GOLD: Final = 3
LEVEL_NAMES: Final = ("start", "bronze", "silver", "gold")

# ---------------------------------------------------------------------------------------
# Shapes: cells (x, y) of rotation 0; rotations turn them clockwise in 90 degree steps.
SHAPES: Final = {
    "domino": ((0, 0), (1, 0)),
    "I3": ((0, 0), (1, 0), (2, 0)),
    "L3": ((0, 0), (0, 1), (1, 1)),
    "O4": ((0, 0), (1, 0), (0, 1), (1, 1)),
    "L4": ((0, 0), (0, 1), (0, 2), (1, 2)),
    "T4": ((0, 0), (1, 0), (2, 0), (1, 1)),
    "I4": ((0, 0), (1, 0), (2, 0), (3, 0)),
    "S4": ((1, 0), (2, 0), (0, 1), (1, 1)),
    "P5": ((0, 0), (1, 0), (0, 1), (1, 1), (0, 2)),
    "R6": ((0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1)),
    "T5": ((0, 0), (1, 0), (2, 0), (1, 1), (1, 2)),
    "L5": ((0, 0), (0, 1), (0, 2), (0, 3), (1, 3)),
}
IRREGULAR_SHAPES: Final = frozenset({"L3", "L4", "T4", "S4", "P5", "T5", "L5"})

# Tiles: (id, level, shape, points). Indices 0..17 are each player's supply (NY table),
# 18 the starting property, 19..22 the legendary skyscrapers (shared, NY-T3).
SUPPLY_TILES: Final = (
    ("B1", BRONZE, "domino", 2),
    ("B2", BRONZE, "domino", 2),
    ("B3", BRONZE, "I3", 3),
    ("B4", BRONZE, "L3", 3),
    ("B5", BRONZE, "O4", 4),
    ("B6", BRONZE, "L4", 4),
    ("S1", SILVER, "domino", 3),
    ("S2", SILVER, "I3", 4),
    ("S3", SILVER, "L3", 4),
    ("S4", SILVER, "T4", 5),
    ("S5", SILVER, "I4", 5),
    ("S6", SILVER, "S4", 6),
    ("G1", GOLD, "I3", 5),
    ("G2", GOLD, "L3", 5),
    ("G3", GOLD, "O4", 6),
    ("G4", GOLD, "L4", 6),
    ("G5", GOLD, "P5", 7),
    ("G6", GOLD, "R6", 8),
)
START_PROPERTY: Final = ("start", START_LEVEL, "domino", 0)
# Legendary: (id, name, shape, points, height in feet).
LEGENDARY: Final = (
    ("park_row", "Park Row", "O4", 6, 391),
    ("singer", "Singer", "T5", 7, 612),
    ("metropolitan_life", "Metropolitan Life", "L5", 8, 700),
    ("woolworth", "Woolworth", "R6", 8, 792),
)

WORKERS: Final = 4
ACTION_CARDS: Final = ("construction_boom", "market_shift", "land_grab")
END_UNBUILT: Final = 4
"""NY-E1: the end triggers when a player has only this many unbuilt supply tiles left."""
MARKET_SIZE: Final = 4
