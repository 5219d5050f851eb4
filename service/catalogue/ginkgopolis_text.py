"""Ginkgopolis: every message of the component catalogue (rule ids GK-... of the rules
digest), in English, marked for the translations (``service.i18n``: ``N_``, ``NN_``). The
Czech terms are the Czech rulebook's; the German ones are Skyline's own translation (no German
rulebook was at hand), and the German catalogue says so in a translator comment on each.
Keyed by the engine's ids; placeholders are filled from the engine's data (``text.Words``),
so no number of a card is written here. A colour inside a sentence is part of the sentence
(one message per colour), as Czech and German inflect it.
"""

from __future__ import annotations

from typing import Final

from service.i18n import N_, NN_

from .text import Plural

COLOURS: Final[dict[str, str]] = {"red": N_("Red"), "blue": N_("Blue"), "yellow": N_("Yellow")}
"""A colour's name (the first word of a building's name: Red 5)."""

ITEMS: Final[dict[str, Plural]] = {
    "resource": NN_("{n} resource", "{n} resources"),
    "tile": NN_("{n} tile", "{n} tiles"),
    "vp": NN_("{n} VP", "{n} VP"),
}
"""An amount of an item, as something gained or paid."""

COLOUR_TEXTS: Final[dict[str, str]] = {
    # Keyed by the item a colour's buildings produce.
    "resource": N_("Exploiting one of these buildings gives a resource per floor."),
    "tile": N_("Exploiting one of these buildings gives a tile per floor."),
    "vp": N_("Exploiting one of these buildings gives a VP per floor."),
}

ACTIONS: Final[dict[str, tuple[str, str]]] = {
    "exploit": (
        N_("Exploit"),
        N_("Play a card alone. A building card: take one item per floor of that building "
           "(red buildings give resources, blue tiles, yellow VP). An urbanization card: take "
           "a resource or a tile. Then your exploit bonuses apply and the card is discarded."),
    ),
    "urbanize": (
        N_("Urbanize"),
        N_("Play an urbanization card with a tile: the tile replaces that letter's token and "
           "gets one of your resources and a construction-site marker; the token moves to an "
           "empty space next to the new tile, and every building next to it is exploited. "
           "Then your urbanize bonuses apply and the card is discarded."),
    ),
    "build_up": (
        N_("Build up"),
        N_("Play a building card with a tile: the building's resources go back to their "
           "owner (another owner scores a VP for each), your tile goes on top (pay the "
           "difference in VP if its number is lower, and a resource if its colour differs), "
           "then one of your resources per floor goes on it with a construction-site marker. "
           "Then your build-up bonuses apply and the card stays in front of your screen as a "
           "bonus card."),
    ),
}

BONUS_TEXTS: Final[dict[str, str]] = {
    "exploit": N_("Each time you exploit: gain {items}."),
    "urbanize": N_("Each time you urbanize: gain {items}."),
    "build_up": N_("Each time you build up: gain {items}."),
}
CHARACTER_START: Final = N_("Take {items} when the character comes into play.")

URBANIZATION_CARD: Final = N_(
    "Alone: take a resource or a tile. With a tile: urbanize at token {letter}."
)

END_CARD_NAME: Final = N_("{colour} {number}")
"""A building's (and its card's, its tile's) name: Red 5."""
FLOORS: Final[Plural] = NN_("{n} floor", "{n} floors")
END_TEXTS: Final[dict[str, str]] = {
    "low_buildings": N_(
        "At the end of the game: {vp} per building you own of at most {floors}."
    ),
    "tall_buildings": N_(
        "At the end of the game: {vp} per building you own of at least {floors}."
    ),
    "exploit": N_(
        "At the end of the game: {vp} per card in front of your screen (characters "
        "included) with an exploit bonus."
    ),
    "urbanize": N_(
        "At the end of the game: {vp} per card in front of your screen (characters "
        "included) with an urbanize bonus."
    ),
    "build_up": N_(
        "At the end of the game: {vp} per card in front of your screen (characters "
        "included) with a build-up bonus."
    ),
    "flat": N_("At the end of the game: {vp}."),
}
RESOURCES_ON_COLOUR: Final[dict[str, str]] = {
    "red": N_("At the end of the game: {vp} per resource of yours on red buildings."),
    "blue": N_("At the end of the game: {vp} per resource of yours on blue buildings."),
    "yellow": N_("At the end of the game: {vp} per resource of yours on yellow buildings."),
}
COLOUR_CARDS: Final[dict[str, str]] = {
    "red": N_("At the end of the game: {vp} per red card in front of your screen "
              "(characters and this card included)."),
    "blue": N_("At the end of the game: {vp} per blue card in front of your screen "
               "(characters and this card included)."),
    "yellow": N_("At the end of the game: {vp} per yellow card in front of your screen "
                 "(characters and this card included)."),
}

SCORING: Final[dict[str, tuple[str, str]]] = {
    "vp_in_play": (N_("VP in play"), N_("Victory points gained during the game.")),
    "new_hand_tokens": (
        N_("Unused New Hand tokens"), N_("{vp} per New Hand token not spent.")
    ),
    "district": (
        N_("Districts"),
        N_("A district is {size} or more edge-connected buildings of one colour. In each, "
           "the player with the most resources scores every resource in it and the second "
           "player their own resources; a tie goes to the owner of the tallest building, then "
           "of the tallest building with the highest number; a player alone scores both "
           "places. The rest of the rule id names the district by its lowest building "
           "(district:blue-5)."),
    ),
}
