"""New York 1901's component catalogue, read from the engine's data for one rules version.

Every number and id comes from the engine (``data.py``, ``board.py``, ``shapes.py``); every
text from ``ny1901_text.py``, in the language asked for. Ids are the ones views, moves,
events and results use: lot names (rA), tile ids (B1, park_row), street ids (broadway),
challenge and action card ids, district colours, level names, character names.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from service.games.ny1901 import Ny1901Engine, data
from service.games.ny1901.board import Board
from service.games.ny1901.shapes import (
    SHAPE_NAMES,
    START_TILE,
    SUPPLY,
    TILES,
    TWIN_OF,
    Tile,
    rotate,
)
from service.i18n import Lang

from . import ny1901_text as words
from .models import CatalogueModel, ScoringRuleInfo
from .text import Words, numbers

GAME = "ny1901"


class Ny1901SquareInfo(CatalogueModel):
    """One square of the board grid."""

    x: int = Field(description="Column, 0 at the west (left) edge.")
    y: int = Field(description="Row, 0 at the north (top) edge.")


class Ny1901LotInfo(CatalogueModel):
    """A lot: 2 or 3 squares of one district; a lot card names its district and size."""

    name: str = Field(description="The lot's id, as views and moves name it (for example rA).")
    district: str = Field(description="The district's colour (see districts).")
    size: int = Field(description="Number of squares (2 or 3).")
    squares: list[Ny1901SquareInfo] = Field(description="The lot's squares.")
    access_squares: list[Ny1901SquareInfo] = Field(
        description="The lot's squares that share a side with a street or park square: a "
        "new building must cover at least one such square (NY-A6)."
    )


class Ny1901StreetInfo(CatalogueModel):
    """A named street; a crossing square belongs to both streets."""

    id: str = Field(description="The street's id, as street cards and views name it.")
    name: str = Field(description="The street's name.")
    bonus: bool = Field(description="True when the street has a street card (NY-F2).")
    squares: list[Ny1901SquareInfo] = Field(description="The street's squares.")


class Ny1901ParkInfo(CatalogueModel):
    """A park: open space that counts like a street for the NY-A6 rule."""

    name: str = Field(description="The park's name.")
    squares: list[Ny1901SquareInfo] = Field(description="The park's squares.")


class Ny1901StartLotInfo(CatalogueModel):
    """The start lot of one district's character (NY-S1)."""

    district: str = Field(description="The district's colour.")
    lot: str = Field(description="The lot's name.")


class Ny1901BoardInfo(CatalogueModel):
    """The board's geometry: a grid of squares (x to the east, y to the south)."""

    width: int = Field(description="Number of columns.")
    height: int = Field(description="Number of rows.")
    rows: list[str] = Field(
        description="The map, one text per row, two characters per square separated by "
        "spaces: .. street, ** park, ## blocked (never buildable), else the lot's name "
        "(the same as the views' boardRows)."
    )
    lots: list[Ny1901LotInfo] = Field(description="Every lot, in the views' order.")
    streets: list[Ny1901StreetInfo] = Field(description="Every named street.")
    parks: list[Ny1901ParkInfo] = Field(description="Every park.")
    blocked: list[Ny1901SquareInfo] = Field(
        description="Squares of pre-printed buildings and piers: never buildable."
    )
    start_lots: list[Ny1901StartLotInfo] = Field(
        description="Per district, its character's start lot."
    )


class Ny1901DistrictInfo(CatalogueModel):
    """A district of the board, one colour."""

    id: str = Field(description="The district's colour, as views and lot cards name it.")
    name: str = Field(description="The district's name, in the document's language.")
    lots: int = Field(description="Number of lots of the district.")
    removed_with_two_players: bool = Field(
        description="True for the district that is out of play in a two-player game (NY-S4)."
    )


class Ny1901LevelInfo(CatalogueModel):
    """A building level, in demolition order (NY-T2): a new building must be of a higher
    level than every building it replaces."""

    id: str = Field(description="The level's id, as views name it.")
    name: str = Field(description="The level's name, in the document's language.")
    rank: int = Field(description="Its place in the demolition order, 0 lowest.")
    unlock_score: int | None = Field(
        description="The score from which a player may build this level (NY-T1); null for "
        "the starting property, which is never built."
    )
    expert_unlock_score: int | None = Field(
        description="The same in the expert game (NY-S6)."
    )


class Ny1901TileInfo(CatalogueModel):
    """A skyscraper tile of a player's supply, or the starting property."""

    id: str = Field(description="The tile's id, as views and moves name it.")
    level: str = Field(description="The tile's level (see levels).")
    points: int = Field(description="The printed points, scored when it is built.")
    shape: str = Field(description="The shape's id (several tiles share a shape).")
    shape_name: str = Field(description="The shape's name, in the document's language.")
    squares: list[Ny1901SquareInfo] = Field(
        description="The footprint unturned (rotation 0); rotation r of a move turns it "
        "clockwise r quarter turns, and the move's x and y are the top-left corner of the "
        "turned footprint's bounding box."
    )
    size: int = Field(description="Number of squares of the footprint.")
    irregular: bool = Field(description="True for a non-rectangular footprint (NY-X2).")
    count_per_player: int = Field(description="How many of this tile each player has.")
    same_as: str | None = Field(
        description="The first tile identical to this one (same level, shape and points): "
        "moves list only the first unused tile of such a group. Null when it is the first."
    )


class Ny1901LegendaryInfo(CatalogueModel):
    """A legendary skyscraper: shared by all, built once per game, gold level (NY-T3)."""

    id: str = Field(description="The tile's id, as views and moves name it.")
    name: str = Field(description="The building's name.")
    level: str = Field(description="The level it counts as (gold).")
    points: int = Field(description="The printed points, scored when it is built.")
    height_feet: int = Field(description="The building's height in feet (tie-break, NY-F5).")
    shape: str = Field(description="The shape's id.")
    shape_name: str = Field(description="The shape's name, in the document's language.")
    squares: list[Ny1901SquareInfo] = Field(
        description="The footprint unturned (rotation 0), turned as for supply tiles."
    )
    size: int = Field(description="Number of squares of the footprint.")
    irregular: bool = Field(description="True for a non-rectangular footprint (NY-X2).")


class Ny1901StreetCardInfo(CatalogueModel):
    """A Streets of New York card: a majority bonus for one street (NY-F2)."""

    id: str = Field(description="The street's id, as views and options name it.")
    name: str = Field(description="The street's name.")
    points: int = Field(description="The bonus for the unique leader.")
    text: str = Field(description="How it scores, in the document's language.")


class Ny1901TierInfo(CatalogueModel):
    """One step of a tiered challenge."""

    at_least: int = Field(description="Buildings needed for this step.")
    points: int = Field(description="Points of this step.")


class Ny1901ChallengeInfo(CatalogueModel):
    """A challenge card (NY-X); one is in play unless the learning game is chosen."""

    id: str = Field(description="The card's id, as views and options name it.")
    name: str = Field(description="The card's name, in the document's language.")
    text: str = Field(description="How it scores, in the document's language.")
    scored_during_play: bool = Field(
        description="True when it scores as you build (Gold Prestige), false at the end."
    )
    tiers: list[Ny1901TierInfo] = Field(
        description="For tiered cards, the steps (the highest reached counts); else empty."
    )


class Ny1901CharacterInfo(CatalogueModel):
    """A character card: one per district, with its start lot (NY-S1)."""

    name: str = Field(description="The character's name, as the views' seats name it.")
    district: str = Field(description="The character's district colour.")
    start_lot: str = Field(description="The 2-square start lot on this rules version's board.")


class Ny1901ActionCardInfo(CatalogueModel):
    """An action card: every player has one of each, each playable once per game (NY-C)."""

    id: str = Field(description="The card's id, as views and moves name it.")
    name: str = Field(description="The card's name, in the document's language.")
    text: str = Field(
        description="What it does under this rules version, in the document's language."
    )


class Ny1901LotCardInfo(CatalogueModel):
    """A kind of lot card (its district and size) and how many the deck holds."""

    district: str = Field(description="The district's colour.")
    size: int = Field(description="The lot size (2 or 3).")
    count: int = Field(description="Number of cards of this kind (one per lot).")


class Ny1901Catalogue(CatalogueModel):
    """Every component of New York 1901 under one rules version: what a client draws and
    explains. Ids join the views, moves, events and results."""

    game: Literal["ny1901"] = Field(default="ny1901", description="The game's id.")
    rules_version: int = Field(description="The rules version this catalogue describes.")
    title: str = Field(description="The game's title.")
    board: Ny1901BoardInfo = Field(description="The board of this rules version.")
    districts: list[Ny1901DistrictInfo] = Field(description="The districts, in card order.")
    levels: list[Ny1901LevelInfo] = Field(description="Building levels, lowest first.")
    tiles: list[Ny1901TileInfo] = Field(description="Each player's supply of skyscrapers.")
    starting_property: Ny1901TileInfo = Field(
        description="Each player's starting property (no level, no points; none in the "
        "expert game)."
    )
    legendary: list[Ny1901LegendaryInfo] = Field(description="The legendary skyscrapers.")
    street_cards: list[Ny1901StreetCardInfo] = Field(
        description="The street cards (some are in play in a match: the view's streets)."
    )
    challenges: list[Ny1901ChallengeInfo] = Field(
        description="The challenge cards (at most one is in play: the view's challenge)."
    )
    characters: list[Ny1901CharacterInfo] = Field(description="The character cards.")
    action_cards: list[Ny1901ActionCardInfo] = Field(description="Each player's action cards.")
    lot_cards: list[Ny1901LotCardInfo] = Field(description="The lot card deck by kind.")
    scoring_rules: list[ScoringRuleInfo] = Field(
        description="Every rule a final result's breakdown can name."
    )
    workers_per_player: int = Field(description="Workers each player has (NY-A1).")
    open_market_size: int = Field(description="Cards in the open market (NY-S2).")
    end_trigger_unbuilt_tiles: int = Field(
        description="The end is triggered when a player has only this many unbuilt "
        "skyscrapers left (NY-E1)."
    )


def board_for(engine: Ny1901Engine, rules_version: int) -> Board:
    """The board a match under ``rules_version`` is played on (the first drawing for
    versions 1 and 2, the redrawn board from version 3: ``Ny1901Engine.board_for``)."""
    return engine.board_for(rules_version)


def _squares(board: Board, mask: int) -> list[Ny1901SquareInfo]:
    out = []
    rest = mask
    while rest:
        low = rest & -rest
        rest ^= low
        x, y = board.xy(low.bit_length() - 1)
        out.append(Ny1901SquareInfo(x=x, y=y))
    return out


def _footprint(tile: Tile) -> list[Ny1901SquareInfo]:
    cells = rotate(data.SHAPES[SHAPE_NAMES[tile.shape]], 0)
    return [Ny1901SquareInfo(x=x, y=y) for x, y in cells]


def _board(board: Board) -> Ny1901BoardInfo:
    return Ny1901BoardInfo(
        width=board.width,
        height=board.height,
        rows=list(board.rows),
        lots=[
            Ny1901LotInfo(
                name=lot.name, district=data.DISTRICTS[lot.district], size=lot.size,
                squares=_squares(board, lot.mask),
                access_squares=_squares(board, lot.mask & board.access_mask),
            )
            for lot in board.lots
        ],
        streets=[
            Ny1901StreetInfo(id=s.id, name=s.name, bonus=s.bonus, squares=_squares(board, s.mask))
            for s in board.streets
        ],
        parks=[Ny1901ParkInfo(name=p.name, squares=_squares(board, p.mask)) for p in board.parks],
        blocked=_squares(board, board.blocked_mask),
        start_lots=[
            Ny1901StartLotInfo(district=data.DISTRICTS[d], lot=board.lots[i].name)
            for d, i in enumerate(board.start_lots)
        ],
    )


def _tile(tile: Tile, count: int, say: Words) -> Ny1901TileInfo:
    shape = SHAPE_NAMES[tile.shape]
    twin = TWIN_OF[tile.index] if tile.index < SUPPLY else tile.index
    return Ny1901TileInfo(
        id=tile.id, level=data.LEVEL_NAMES[tile.level], points=tile.points, shape=shape,
        shape_name=say(words.SHAPES[shape]), squares=_footprint(tile),
        size=len(data.SHAPES[shape]), irregular=tile.irregular,
        count_per_player=count,
        same_as=TILES[twin].id if twin != tile.index else None,
    )


def _legendary(tile: Tile, say: Words) -> Ny1901LegendaryInfo:
    shape = SHAPE_NAMES[tile.shape]
    _, name, _, _, height = data.LEGENDARY[tile.legendary]
    return Ny1901LegendaryInfo(
        id=tile.id, name=name, level=data.LEVEL_NAMES[tile.level], points=tile.points,
        height_feet=height, shape=shape, shape_name=say(words.SHAPES[shape]),
        squares=_footprint(tile), size=len(data.SHAPES[shape]), irregular=tile.irregular,
    )


def _levels(say: Words) -> list[Ny1901LevelInfo]:
    unlock = {data.START_LEVEL: None, data.BRONZE: 0, data.SILVER: data.THRESHOLDS[0],
              data.GOLD: data.THRESHOLDS[1]}
    expert = {data.START_LEVEL: None, data.BRONZE: 0, data.SILVER: data.EXPERT_THRESHOLDS[0],
              data.GOLD: data.EXPERT_THRESHOLDS[1]}
    return [
        Ny1901LevelInfo(id=name, name=say(words.LEVELS[name]), rank=level,
                        unlock_score=unlock[level], expert_unlock_score=expert[level])
        for level, name in enumerate(data.LEVEL_NAMES)
    ]


def _tiers(table: tuple[tuple[int, int], ...]) -> list[Ny1901TierInfo]:
    return [Ny1901TierInfo(at_least=n, points=p) for n, p in sorted(table)]


def _challenge(challenge_id: str, say: Words) -> Ny1901ChallengeInfo:
    name, template = words.CHALLENGES[challenge_id]
    tiers: list[Ny1901TierInfo] = []
    if challenge_id == "gold_tycoon":
        text = say(template, points=say.plural(words.POINTS, data.GOLD_TYCOON_POINTS),
                   golds=say.plural(words.GOLD_SKYSCRAPERS, data.GOLD_TYCOON_MIN_GOLD))
    elif challenge_id in ("master_architect", "bronze_baron"):
        table = (data.MASTER_ARCHITECT_POINTS if challenge_id == "master_architect"
                 else data.BRONZE_BARON_POINTS)
        tiers = _tiers(table)
        buildings = (words.IRREGULAR_SKYSCRAPERS if challenge_id == "master_architect"
                     else words.BRONZE_SKYSCRAPERS)
        # The form follows the last number, as in "3, 6 or 10 points".
        text = say(
            template,
            points=say.plural(words.POINTS_TIERS, tiers[-1].points,
                              numbers=numbers([t.points for t in tiers])),
            buildings=say.plural(buildings, tiers[-1].at_least,
                                 numbers=numbers([t.at_least for t in tiers])),
        )
    elif challenge_id == "gold_prestige":
        text = say(template, points=say.plural(words.POINTS, data.GOLD_PRESTIGE_POINTS))
    else:
        text = say(template, points=say.plural(words.POINTS, data.GENERATION_KING_POINTS))
    return Ny1901ChallengeInfo(
        id=challenge_id, name=say(name), text=text,
        scored_during_play=challenge_id == "gold_prestige", tiers=tiers,
    )


def _action_card(card_id: str, rules_version: int, say: Words) -> Ny1901ActionCardInfo:
    texts = words.ACTION_CARD_TEXTS[card_id]
    template = texts[max(v for v in texts if v <= rules_version)]
    size = max(data.LOT_SIZES)
    text = say(template, size=size, count=data.MARKET_SIZE,
               cards=say.plural(words.OPEN_MARKET_CARDS, data.MARKET_SIZE))
    return Ny1901ActionCardInfo(id=card_id, name=say(words.ACTION_CARDS[card_id]), text=text)


def _scoring_rules(
    streets: list[Ny1901StreetCardInfo], challenges: list[Ny1901ChallengeInfo], say: Words
) -> list[ScoringRuleInfo]:
    """The rule ids of ``scoring.breakdown``, in its order."""
    def rule(rule_id: str, name: str, text: str) -> ScoringRuleInfo:
        return ScoringRuleInfo(id=rule_id, prefix=False, name=name, text=text)

    name, text = words.SCORING["buildings"]
    out = [rule("buildings", say(name), say(text))]
    prestige = next(c for c in challenges if c.scored_during_play)
    out.append(rule(prestige.id, prestige.name, prestige.text))
    out += [rule(f"street:{s.id}", say(words.STREET_RULE_NAME, street=s.name), s.text)
            for s in streets]
    out += [rule(f"challenge:{c.id}", c.name, say(words.CHALLENGE_RULE_TEXT, text=c.text))
            for c in challenges if not c.scored_during_play]
    name, text = words.SCORING["unused_action_cards"]
    out.append(rule("unused_action_cards", say(name),
                    say(text, points=say.plural(words.POINTS, data.UNUSED_ACTION_CARD_POINTS))))
    return out


def build(engine: Ny1901Engine, rules_version: int, lang: Lang = "en") -> Ny1901Catalogue:
    """The catalogue of ``rules_version`` (one of ``engine.rules_versions``), its texts in
    ``lang``."""
    say = Words(lang)
    board = board_for(engine, rules_version)
    street_cards = [
        Ny1901StreetCardInfo(
            id=street_id, name=board.street(street_id).name, points=data.STREET_POINTS,
            text=say(words.STREET_CARD, points=say.plural(words.POINTS, data.STREET_POINTS),
                     street=board.street(street_id).name),
        )
        for street_id in data.STREET_CARDS
    ]
    challenges = [_challenge(c, say) for c in data.CHALLENGES]
    return Ny1901Catalogue(
        rules_version=rules_version,
        title=engine.title,
        board=_board(board),
        districts=[
            Ny1901DistrictInfo(
                id=colour, name=say(words.DISTRICTS[colour]),
                lots=sum(1 for lot in board.lots if lot.district == d),
                removed_with_two_players=d == data.PINK,
            )
            for d, colour in enumerate(data.DISTRICTS)
        ],
        levels=_levels(say),
        tiles=[_tile(t, sum(1 for u in TILES[:SUPPLY] if u.id == t.id), say)
               for t in TILES[:SUPPLY]],
        starting_property=_tile(TILES[START_TILE], 1, say),
        legendary=[_legendary(t, say) for t in TILES if t.legendary >= 0],
        street_cards=street_cards,
        challenges=challenges,
        characters=[
            Ny1901CharacterInfo(
                name=name, district=colour,
                start_lot=board.lots[board.start_lots[data.DISTRICTS.index(colour)]].name,
            )
            for name, colour, _ in data.CHARACTERS
        ],
        action_cards=[_action_card(c, rules_version, say) for c in data.ACTION_CARDS],
        lot_cards=[
            Ny1901LotCardInfo(
                district=data.DISTRICTS[board.lots[lots[0]].district],
                size=board.lots[lots[0]].size, count=len(lots),
            )
            for lots in board.kind_lots if lots
        ],
        scoring_rules=_scoring_rules(street_cards, challenges, say),
        workers_per_player=data.WORKERS,
        open_market_size=data.MARKET_SIZE,
        end_trigger_unbuilt_tiles=data.END_UNBUILT,
    )
