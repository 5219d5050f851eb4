"""Ginkgopolis' component catalogue, read from the engine's data for one rules version.

Every number and id comes from the engine (``data.py``, ``scoring.py``, and a freshly set up
match of that version for the starting city); every text from ``ginkgopolis_text.py``, in
the language asked for. Ids are the ones views, moves, events and results use: card ids
0..98 (building cards and tiles 0..59, urbanization cards 60..71, characters 72..98), labels
(red-5), token letters, colour and action names.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from service.games.ginkgopolis import GinkgopolisEngine, data, scoring
from service.i18n import Lang

from . import ginkgopolis_text as words
from .models import CatalogueModel, ScoringRuleInfo
from .text import Words

GAME = "ginkgopolis"
ITEM_KINDS = ("resource", "tile", "vp")


class GkColourInfo(CatalogueModel):
    """A colour of buildings, tiles and cards."""

    id: str = Field(description="The colour's id, as views name it.")
    name: str = Field(description="The colour's name, in the document's language.")
    produces: str = Field(
        description="What exploiting a building of this colour gives, one per floor: "
        "resource, tile or vp."
    )
    text: str = Field(
        description="What the colour's buildings produce, in the document's language."
    )


class GkActionInfo(CatalogueModel):
    """One of the three actions a played card leads to (GK-T2)."""

    id: str = Field(description="The action's id: exploit, urbanize or build_up.")
    name: str = Field(description="The action's name, in the document's language.")
    text: str = Field(description="What the action does, in the document's language.")


class GkBonusInfo(CatalogueModel):
    """An in-play bonus (GK-B1): items its owner gains each time they perform the action."""

    action: str = Field(description="The action that triggers it (see actions).")
    resources: int = Field(description="Resources gained.")
    tiles: int = Field(description="Tiles gained.")
    vp: int = Field(description="Victory points gained.")
    text: str = Field(description="The bonus in the document's language.")


class GkTileInfo(CatalogueModel):
    """A building tile; its id is also the id of the building card of the same colour and
    number."""

    id: int = Field(description="The tile's id, as views and moves name it.")
    label: str = Field(description="The tile's label (colour-number), as views show it.")
    colour: str = Field(description="The tile's colour.")
    number: int = Field(description="The tile's number.")
    start_tile: bool = Field(description="True for the tiles of the starting city (GK-S1).")


class GkBuildingCardInfo(CatalogueModel):
    """A building card: played alone it exploits that building, with a tile it builds on it;
    built up, it stays in front of the screen for its bonus or its end-game scoring."""

    id: int = Field(description="The card's id, as views and moves name it.")
    label: str = Field(description="The card's label (colour-number).")
    colour: str = Field(description="The card's colour.")
    number: int = Field(description="The card's number.")
    bonus: GkBonusInfo | None = Field(
        description="The in-play bonus of cards with one (numbers below the end-game cards); "
        "null for end-game cards."
    )
    end_game: bool = Field(description="True when the card scores at the end (endGameCards).")
    text: str = Field(
        description="What the card gives in front of the screen, in the document's language."
    )


class GkEndGameCardInfo(CatalogueModel):
    """A building card that scores at the end of the game (GK-B2)."""

    id: int = Field(description="The card's id, as views and moves name it.")
    label: str = Field(description="The card's label; its result line is card:<label>.")
    colour: str = Field(description="The card's colour.")
    number: int = Field(description="The card's number.")
    scored_colour: str | None = Field(
        description="For cards scoring resources on buildings of one colour: that colour; "
        "else null."
    )
    text: str = Field(description="How it scores, in the document's language.")


class GkUrbanizationCardInfo(CatalogueModel):
    """An urbanization card, named after its token's letter."""

    id: int = Field(description="The card's id, as views and moves name it.")
    letter: str = Field(description="The letter of its urbanization token.")
    label: str = Field(description="The card's label.")
    text: str = Field(description="What it does, in the document's language.")


class GkTokenStartInfo(CatalogueModel):
    """Where an urbanization token starts (GK-S1)."""

    letter: str = Field(description="The token's letter.")
    x: int = Field(description="Column of the city's coordinates (x to the right).")
    y: int = Field(description="Row of the city's coordinates (y downwards).")


class GkSpaceInfo(CatalogueModel):
    """A space of the city."""

    x: int = Field(description="Column of the city's coordinates (x to the right).")
    y: int = Field(description="Row of the city's coordinates (y downwards).")


class GkCharacterInfo(CatalogueModel):
    """A character card: starting items and an in-play bonus (GK-S4)."""

    id: int = Field(description="The card's id, as views and moves name it.")
    label: str = Field(description="The card's label (character-set-colour).")
    set: int = Field(description="The intro game's set it belongs to.")
    colour: str = Field(description="The character's colour.")
    start_resources: int = Field(description="Resources taken when it comes into play.")
    start_vp: int = Field(description="Victory points taken when it comes into play.")
    start_tiles: int = Field(description="Tiles taken when it comes into play.")
    start_text: str = Field(description="The starting items, in the document's language.")
    bonus: GkBonusInfo = Field(description="Its in-play bonus.")
    reconstructed: bool = Field(
        description="True for sets whose printed cards are not public (Skyline's "
        "reconstruction)."
    )


class GkResourceCountInfo(CatalogueModel):
    """Resources each player has, by player count."""

    players: int = Field(description="Number of players (1: the solo game).")
    resources: int = Field(description="Resources per player.")


class GinkgopolisCatalogue(CatalogueModel):
    """Every component of Ginkgopolis under one rules version: what a client draws and
    explains. Ids join the views, moves, events and results."""

    game: Literal["ginkgopolis"] = Field(default="ginkgopolis", description="The game's id.")
    rules_version: int = Field(description="The rules version this catalogue describes.")
    title: str = Field(description="The game's title.")
    colours: list[GkColourInfo] = Field(description="The three colours.")
    actions: list[GkActionInfo] = Field(description="The three actions.")
    tiles: list[GkTileInfo] = Field(description="Every building tile.")
    building_cards: list[GkBuildingCardInfo] = Field(description="Every building card.")
    end_game_cards: list[GkEndGameCardInfo] = Field(
        description="The building cards that score at the end of the game."
    )
    urbanization_cards: list[GkUrbanizationCardInfo] = Field(
        description="The urbanization cards."
    )
    urbanization_tokens: list[GkTokenStartInfo] = Field(
        description="Where each urbanization token starts."
    )
    start_spaces: list[GkSpaceInfo] = Field(
        description="The spaces of the starting city (its tiles are placed at random)."
    )
    characters: list[GkCharacterInfo] = Field(description="Every character card.")
    scoring_rules: list[ScoringRuleInfo] = Field(
        description="Every rule a final result's breakdown can name."
    )
    resources_per_player: list[GkResourceCountInfo] = Field(
        description="Resources of each player's colour, by player count."
    )
    new_hand_tokens: int = Field(description="New Hand tokens each player starts with.")
    hand_size: int = Field(description="Cards in a hand (GK-S5).")
    construction_site_markers: int = Field(description="Construction-site markers in the box.")


def _produces(colour: int) -> str:
    """The item a colour's buildings produce: building card 1 of each colour gives one item
    of its colour's kind (GK-B1)."""
    bonus = data.BUILDING_BONUS[data.tile_id(colour, 1)]
    assert bonus is not None
    counts = (bonus.resources, bonus.tiles, bonus.vp)
    return ITEM_KINDS[next(i for i, n in enumerate(counts) if n)]


def _items(resources: int, tiles: int, vp: int, say: Words) -> str:
    return say.list(
        say.plural(words.ITEMS[kind], n)
        for kind, n in zip(ITEM_KINDS, (resources, tiles, vp), strict=True) if n
    )


def _bonus(bonus: data.Bonus, say: Words) -> GkBonusInfo:
    action = data.ACTION_NAMES[bonus.action]
    return GkBonusInfo(
        action=action, resources=bonus.resources, tiles=bonus.tiles, vp=bonus.vp,
        text=say(words.BONUS_TEXTS[action],
                 items=_items(bonus.resources, bonus.tiles, bonus.vp, say)),
    )


def _end_text(card: int, say: Words) -> str:
    colour, number = data.colour_of(card), data.number_of(card)
    scored = data.end_card_scored_colour(card)

    def vp(count: int) -> str:
        return say.plural(words.ITEMS["vp"], count)

    if scored is not None:
        return say(words.RESOURCES_ON_COLOUR[data.COLOURS[scored]],
                   vp=vp(data.END_VP_PER_RESOURCE))
    if number == 14:
        return say(words.END_TEXTS["low_buildings"], vp=vp(data.END_LOW_VP),
                   floors=say.plural(words.FLOORS, data.END_LOW_FLOORS))
    if number == 15:
        return say(words.END_TEXTS["tall_buildings"], vp=vp(data.END_HIGH_VP),
                   floors=say.plural(words.FLOORS, data.END_HIGH_FLOORS))
    if number in data.END_BONUS_ACTIONS:
        action = data.ACTION_NAMES[data.END_BONUS_ACTIONS[number]]
        return say(words.END_TEXTS[action], vp=vp(data.END_BONUS_VP))
    if number == 19:
        return say(words.COLOUR_CARDS[data.COLOURS[colour]], vp=vp(data.END_COLOUR_VP))
    return say(words.END_TEXTS["flat"], vp=vp(data.END_FLAT_VP))


def _building_card(card: int, say: Words) -> GkBuildingCardInfo:
    bonus = data.BUILDING_BONUS[card]
    bonus_info = _bonus(bonus, say) if bonus is not None else None
    return GkBuildingCardInfo(
        id=card, label=data.card_label(card), colour=data.COLOURS[data.colour_of(card)],
        number=data.number_of(card), bonus=bonus_info, end_game=bonus is None,
        text=bonus_info.text if bonus_info is not None else _end_text(card, say),
    )


def _character(char: data.Character, say: Words) -> GkCharacterInfo:
    return GkCharacterInfo(
        id=char.id, label=data.card_label(char.id), set=char.set,
        colour=data.COLOURS[char.colour], start_resources=char.start_resources,
        start_vp=char.start_vp, start_tiles=char.start_tiles,
        start_text=say(words.CHARACTER_START,
                       items=_items(char.start_resources, char.start_tiles, char.start_vp, say)),
        bonus=_bonus(char.bonus, say), reconstructed=char.reconstructed,
    )


def _scoring_rules(end_cards: list[GkEndGameCardInfo], say: Words) -> list[ScoringRuleInfo]:
    """The rule ids of ``scoring.breakdown``, in its order."""
    name, text = words.SCORING["vp_in_play"]
    out = [ScoringRuleInfo(id="vp_in_play", prefix=False, name=say(name), text=say(text))]
    out += [
        ScoringRuleInfo(
            id=f"card:{card.label}", prefix=False,
            name=say(words.END_CARD_NAME, colour=say(words.COLOURS[card.colour]),
                     number=card.number),
            text=card.text,
        )
        for card in end_cards
    ]
    name, text = words.SCORING["new_hand_tokens"]
    out.append(ScoringRuleInfo(
        id="new_hand_tokens", prefix=False, name=say(name),
        text=say(text, vp=say.plural(words.ITEMS["vp"], scoring.NEW_HAND_VP)),
    ))
    name, text = words.SCORING["district"]
    out.append(ScoringRuleInfo(id="district:", prefix=True, name=say(name),
                               text=say(text, size=data.DISTRICT_MIN_BUILDINGS)))
    return out


def build(
    engine: GinkgopolisEngine, rules_version: int, lang: Lang = "en"
) -> GinkgopolisCatalogue:
    """The catalogue of ``rules_version`` (one of ``engine.rules_versions``), its texts in
    ``lang``."""
    say = Words(lang)
    # The starting city as this version sets it up (tiles shuffled, spaces and tokens fixed).
    start = engine.view(engine.setup(2, None, 0, rules_version=rules_version), None)
    cards = range(data.N_TILES)
    end_cards = [
        GkEndGameCardInfo(
            id=card, label=data.card_label(card), colour=data.COLOURS[data.colour_of(card)],
            number=data.number_of(card),
            scored_colour=None if (c := data.end_card_scored_colour(card)) is None
            else data.COLOURS[c],
            text=_end_text(card, say),
        )
        for card in cards if data.BUILDING_BONUS[card] is None
    ]
    return GinkgopolisCatalogue(
        rules_version=rules_version,
        title=engine.title,
        colours=[
            GkColourInfo(id=name, name=say(words.COLOURS[name]), produces=_produces(colour),
                         text=say(words.COLOUR_TEXTS[_produces(colour)]))
            for colour, name in enumerate(data.COLOURS)
        ],
        actions=[
            GkActionInfo(id=action, name=say(words.ACTIONS[action][0]),
                         text=say(words.ACTIONS[action][1]))
            for action in data.ACTION_NAMES
        ],
        tiles=[
            GkTileInfo(
                id=tile, label=data.tile_label(tile),
                colour=data.COLOURS[data.colour_of(tile)], number=data.number_of(tile),
                start_tile=tile in data.START_TILES,
            )
            for tile in range(data.N_TILES)
        ],
        building_cards=[_building_card(card, say) for card in cards],
        end_game_cards=end_cards,
        urbanization_cards=[
            GkUrbanizationCardInfo(
                id=card, letter=data.LETTERS[card - data.URB_BASE], label=data.card_label(card),
                text=say(words.URBANIZATION_CARD, letter=data.LETTERS[card - data.URB_BASE]),
            )
            for card in data.URBANIZATION_CARDS
        ],
        urbanization_tokens=sorted(
            (GkTokenStartInfo(letter=t.letter, x=t.x, y=t.y) for t in start.tokens),
            key=lambda t: t.letter,
        ),
        start_spaces=sorted(
            (GkSpaceInfo(x=b.x, y=b.y) for b in start.city), key=lambda s: (s.y, s.x)
        ),
        characters=[_character(c, say) for c in data.CHARACTERS],
        scoring_rules=_scoring_rules(end_cards, say),
        resources_per_player=[
            GkResourceCountInfo(players=n, resources=r)
            for n, r in sorted(data.RESOURCES_PER_PLAYER.items())
        ],
        new_hand_tokens=data.NEW_HAND_TOKENS,
        hand_size=data.HAND_SIZE,
        construction_site_markers=data.CONSTRUCTION_MARKERS,
    )
