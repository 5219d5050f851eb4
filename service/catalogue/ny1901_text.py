"""New York 1901: every message of the component catalogue (rule ids NY-... of the rules
digest), in English, marked for the translations (``service.i18n``: ``N_``, ``NN_``; the
Czech terms are the Czech rulebook's, the German ones the German review's). Keyed by the
engine's ids; placeholders are filled from the engine's data (``text.Words``), so no number is
written here. Proper names (characters, streets, parks, legendary skyscrapers) come from the
engine's data and stay untranslated; a ``name:`` comment marks a message that is a printed
name (a card's), which a language may keep in English (the German edition does).
"""

from __future__ import annotations

from typing import Final

from service.i18n import N_, NN_

from .text import Plural

DISTRICTS: Final[dict[str, str]] = {
    "red": N_("Red"),
    "blue": N_("Blue"),
    "yellow": N_("Yellow"),
    "green": N_("Green"),
    "pink": N_("Pink"),
}

LEVELS: Final[dict[str, str]] = {
    "start": N_("Starting property"),
    # name: a technology level (German keeps the word)
    "bronze": N_("Bronze"),
    "silver": N_("Silver"),
    # name: a technology level (German keeps the word)
    "gold": N_("Gold"),
}

SHAPES: Final[dict[str, str]] = {
    # name: a polyomino
    "domino": N_("domino"),
    # name: a polyomino
    "I3": N_("I-tromino"),
    # name: a polyomino
    "L3": N_("L-tromino"),
    "O4": N_("2×2 square"),
    # name: a polyomino
    "L4": N_("L-tetromino"),
    # name: a polyomino
    "T4": N_("T-tetromino"),
    # name: a polyomino
    "I4": N_("I-tetromino"),
    # name: a polyomino
    "S4": N_("S-tetromino"),
    # name: a polyomino
    "P5": N_("P-pentomino"),
    "R6": N_("2×3 rectangle"),
    # name: a polyomino
    "T5": N_("T-pentomino"),
    # name: a polyomino
    "L5": N_("L-pentomino"),
}

POINTS: Final[Plural] = NN_("{n} point", "{n} points")
POINTS_TIERS: Final[Plural] = NN_("{numbers} point", "{numbers} points")
"""Tiered points (3 / 6 / 10); the form follows the last number."""

STREET_CARD: Final = N_(
    "At the end of the game, {points} to the player with the most buildings along "
    "{street}; a tie gives nobody the bonus. A building counts for every street it borders; "
    "the starting property and legendary skyscrapers count."
)

GOLD_SKYSCRAPERS: Final[Plural] = NN_("{n} gold skyscraper", "{n} gold skyscrapers")
IRREGULAR_SKYSCRAPERS: Final[Plural] = NN_(
    "{numbers} irregular (non-rectangular) skyscraper",
    "{numbers} irregular (non-rectangular) skyscrapers",
)
BRONZE_SKYSCRAPERS: Final[Plural] = NN_(
    "{numbers} bronze skyscraper", "{numbers} bronze skyscrapers"
)

CHALLENGES: Final[dict[str, tuple[str, str]]] = {
    "gold_tycoon": (
        # name: a challenge card (the German edition keeps the English name)
        N_("Gold Tycoon"),
        N_("At the end of the game, {points} per district in which you have at least "
           "{golds}. A building in two districts counts in both."),
    ),
    "master_architect": (
        N_("Master Architect"),
        N_("At the end of the game, {points} for at least {buildings} of yours on the board "
           "(the highest step reached counts)."),
    ),
    "gold_prestige": (
        # name: a challenge card (the German edition keeps the English name)
        N_("Gold Prestige"),
        N_("Scored at once: when you build a gold skyscraper, {points} for each opponent's "
           "bronze, silver or starting-property building sharing a side with it."),
    ),
    "bronze_baron": (
        # name: a challenge card (the German edition keeps the English name)
        N_("Bronze Baron"),
        N_("At the end of the game, {points} for at least {buildings} of yours on the board "
           "(the highest step reached counts)."),
    ),
    "generation_king": (
        # name: a challenge card (the German edition keeps the English name)
        N_("Generation King"),
        N_("At the end of the game, {points} for each level (bronze, silver, gold) in which "
           "you have strictly the most skyscrapers on the board; a tie gives nobody that "
           "level's points."),
    ),
}

ACTION_CARDS: Final[dict[str, str]] = {
    # name: an action card (the German edition keeps the English name)
    "construction_boom": N_("Construction Boom"),
    # name: an action card (the German edition keeps the English name)
    "market_shift": N_("Market Shift"),
    # name: an action card (the German edition keeps the English name)
    "land_grab": N_("Land Grab"),
}
OPEN_MARKET_CARDS: Final[Plural] = NN_("the {n} open-market card", "the {n} open-market cards")
ACTION_CARD_TEXTS: Final[dict[str, dict[int, str]]] = {
    # Each text holds from its rules version on, until a later version's text replaces it.
    "construction_boom": {
        1: N_("Once per game, after your first build of the turn, build a second skyscraper "
              "on your own land (a plain build, never a demolition). Not allowed if the first "
              "build triggered the end of the game."),
    },
    "market_shift": {
        1: N_("Once per game, at the start of your turn, swap {cards} for the top {count} of "
              "the future market; the removed cards are shuffled and put under the future "
              "market."),
    },
    "land_grab": {
        1: N_("Once per game, in a turn in which you acquire land, acquire one more lot from "
              "the open market. It needs a free worker and a non-empty future market; no lot "
              "of {size} squares may be acquired in that turn, and it gives no second build."),
        2: N_("Once per game, acquire one more lot from the open market in a turn in which "
              "you acquire land, before or after the turn's build (with a worker that build "
              "released). It needs a free worker and a non-empty future market; no lot of "
              "{size} squares may be acquired in that turn, and it gives no second build."),
    },
}

SCORING: Final[dict[str, tuple[str, str]]] = {
    "buildings": (
        N_("Buildings"),
        N_("The printed points of every skyscraper you built, scored as you build it."),
    ),
    "unused_action_cards": (
        N_("Unused action cards"),
        N_("{points} per action card you did not play."),
    ),
}
STREET_RULE_NAME: Final = N_("{street} majority")
"""The name of a street card's line in the result (a street:<id> rule)."""
CHALLENGE_RULE_TEXT: Final = N_("The challenge card in play: {text}")
