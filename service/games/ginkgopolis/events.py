"""The events of Ginkgopolis as a seat (or a spectator) sees them: data, not rules.

Cards and tiles are named by their labels (``data.card_label``/``tile_label``): building
cards and tiles ``red-1`` .. ``yellow-20``, urbanization cards ``urbanization-A`` ..
``urbanization-L``, characters ``character-<set>-<colour>``. What lies behind a screen or in
a hand (cards drawn, the items an action brought, VP won back) is reported to its seat only;
the fields carrying it are optional and say who sees them. Rule ids (GK-...) are the
rulebook's, as in ``rules.py``, ``flow.py`` and ``hal.py``, the code that emits the events;
``tests/test_event_models.py`` holds it to these models.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field
from typing_extensions import TypeAliasType

from ..events import EventData, EventPart, event_union, sometimes
from .data import N_CARDS, N_TILES, card_label, tile_label

if TYPE_CHECKING:
    GkCardName = str
    GkTileName = str
else:
    # Named aliases: one schema each in the published documents, referenced by every field.
    GkCardName = TypeAliasType("GkCardName", Annotated[
        Literal[tuple(card_label(card) for card in range(N_CARDS))],
        Field(description="A card's label: a building card (red-1 .. yellow-20), an "
              "urbanization card (urbanization-A .. urbanization-L) or a character "
              "(character-<set>-<colour>)."),
    ])
    GkTileName = TypeAliasType("GkTileName", Annotated[
        Literal[tuple(tile_label(tile) for tile in range(N_TILES))],
        Field(description="A tile's label, colour and number (red-1 .. yellow-20), the same "
              "as its building card's."),
    ])

TokenLetter = Literal["A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K", "L"]


def _space(description: str) -> Any:
    return Field(min_length=2, max_length=2, description=description + " As [x, y], the view's "
                 "city coordinates.")


_SEAT = "The seat that acted."
_ONLY_THE_SEAT = "Only the seat that acted sees this field."


class GkGains(EventPart):
    """The items one action brought a seat: the space's production and its bonuses."""

    resources: int = Field(description="Resources taken from the supply.")
    tiles: int = Field(description="Tiles drawn from the supply.")
    vp: int = Field(description="Victory points scored.")


class GkRevealedChoice(EventPart):
    """One seat's revealed card choice."""

    seat: int = Field(description="The seat that chose.")
    card: GkCardName = Field(description="The card it plays.")
    tile: GkTileName | None = Field(
        description="The tile it plays with the card; null when the card is played alone."
    )
    discarded: list[GkCardName] | None = sometimes(
        "Solo game only: the hand's cards that neither the seat nor Hal plays, now discarded."
    )


# --------------------------------------------------------------------------- setup, draft


class GkCardsDrawnData(EventData):
    """A seat drew cards into its hand (the deal, a New Hand, the end of a turn)."""

    kind = "cards_drawn"
    seat: int = Field(description="The seat that drew.")
    count: int = Field(description="How many cards it drew (fewer when the deck ran out).")
    cards: list[GkCardName] | None = sometimes(
        "The cards drawn. Only the seat that drew them sees this field."
    )


class GkCharacterKeptData(EventData):
    """A seat kept a character of its draft pack (hidden until all are kept, GK-S4)."""

    kind = "character_kept"
    seat: int = Field(description=_SEAT)


class GkDraftPassedData(EventData):
    """Every seat kept a character; the rest of each pack went to the next seat (GK-S4)."""

    kind = "draft_passed"
    pack_size: int = Field(description="How many characters each pack now holds.")
    pack: list[GkCardName] | None = sometimes(
        "The characters of the pack this seat receives. Each seat sees only its own pack "
        "(spectators: none)."
    )


class GkCharactersRevealedData(EventData):
    """The draft is over: the kept characters are revealed in front of the screens, with
    their starting items (GK-S4)."""

    kind = "characters_revealed"
    characters: list[list[GkCardName]] = Field(
        description="Per seat (the index is the seat), the characters it kept."
    )


# --------------------------------------------------------------------------- choices


class GkChoiceCommittedData(EventData):
    """A seat committed its hidden card choice for the turn (GK-T1)."""

    kind = "choice_committed"
    seat: int = Field(description=_SEAT)


class GkNewHandsAnnouncedData(EventData):
    """Rules version 1: the sealed choices included New Hands; these seats discard their
    hands, draw 4 and choose again (GK-T1)."""

    kind = "new_hands_announced"
    seats: list[int] = Field(description="The seats, in turn order from the first player.")


class GkNewHandAnnouncedData(EventData):
    """Rules version 2: a seat announced a New Hand; it discards its hand, draws 4 and chooses
    again (GK-T1)."""

    kind = "new_hand_announced"
    seat: int = Field(description=_SEAT)


class GkHandDiscardedData(EventData):
    """A seat spent a New Hand token and discarded its hand face up (GK-T1)."""

    kind = "hand_discarded"
    seat: int = Field(description=_SEAT)
    cards: list[GkCardName] = Field(description="The discarded cards.")


class GkChoicesRevealedData(EventData):
    """Every seat committed: the choices are revealed and resolved in turn order (GK-T2)."""

    kind = "choices_revealed"
    choices: list[GkRevealedChoice] = Field(
        description="One choice per seat, in turn order from the first player."
    )


# --------------------------------------------------------------------------- actions


class GkUrbanizedData(EventData):
    """A seat urbanized: it built a tile on the space of the card's token and took the
    production of the buildings around it (GK-T2)."""

    kind = "urbanized"
    seat: int = Field(description=_SEAT)
    card: GkCardName = Field(description="The urbanization card played.")
    tile: GkTileName = Field(description="The tile built.")
    at: list[int] = _space("The space built on (where the token was).")
    gained: GkGains | None = sometimes("What it brought the seat. " + _ONLY_THE_SEAT)


class GkTokenMove(EventPart):
    """Another urbanization token that moved along with the first one."""

    token: TokenLetter = Field(description="The token's letter.")
    at: list[int] = _space("The token's new space.")


class GkTokenMovedData(EventData):
    """An urbanization token moved to a new space at the edge of the city (GK-T2)."""

    kind = "token_moved"
    token: TokenLetter = Field(description="The token's letter.")
    at: list[int] = _space("The token's new space.")
    others: list[GkTokenMove] | None = sometimes(
        "Rules version 3 and later: the other tokens that moved too, so that the tokens keep "
        "their "
        "alphabetical order around the city. Present only when some did."
    )


class GkBuiltUpData(EventData):
    """A seat built a tile on top of the building of the card it played (GK-T2)."""

    kind = "built_up"
    seat: int = Field(description=_SEAT)
    card: GkCardName = Field(description="The building card played (it goes in front of the "
                             "seat's screen).")
    covered: GkTileName = Field(description="The tile that was on top of the building.")
    tile: GkTileName = Field(description="The tile built on top.")
    height: int = Field(description="The building's floors, the new one included.")
    vp_paid: int = Field(description="VP paid: the difference when the new number is lower.")
    colour_fee: int = Field(description="Resources paid because the colour changed (0 or 1).")
    gained: GkGains | None = sometimes("What the bonuses brought the seat. " + _ONLY_THE_SEAT)


class GkResourcesReturnedData(EventData):
    """The resources on a built-up building went back to their owner (GK-T2), who scores
    1 VP each unless it built up its own building."""

    kind = "resources_returned"
    owner: int = Field(description="The owner: a seat, or Hal (index 1) in the solo game.")
    count: int = Field(description="How many resources went back.")
    vp: int | None = sometimes("The VP the owner scored. Only the owner (a seat) sees this "
                               "field; Hal's score is public in the view.")


class GkTileTakenBackData(EventData):
    """A seat's chosen tile could not be placed: it stays behind the screen and the card is
    exploited instead (GK-T2)."""

    kind = "tile_taken_back"
    seat: int = Field(description=_SEAT)


class GkExploitStartedData(EventData):
    """A seat exploits an urbanization card alone and must choose its item next (GK-T2)."""

    kind = "exploit_started"
    seat: int = Field(description=_SEAT)
    card: GkCardName = Field(description="The urbanization card played.")


class GkItemTakenData(EventData):
    """A seat exploiting an urbanization card took its item (GK-T2)."""

    kind = "item_taken"
    seat: int = Field(description=_SEAT)
    item: Literal["resource", "tile", ""] = Field(
        description="resource or tile; empty when neither was left in the supply."
    )
    gained: GkGains | None = sometimes("What it brought the seat. " + _ONLY_THE_SEAT)


class GkExploitedData(EventData):
    """A seat exploited a building card: the building's production and the bonuses (GK-T2)."""

    kind = "exploited"
    seat: int = Field(description=_SEAT)
    card: GkCardName = Field(description="The building card played (then discarded).")
    gained: GkGains | None = sometimes("What it brought the seat. " + _ONLY_THE_SEAT)


# --------------------------------------------------------------------------- turns, the end


class GkHandsPassedData(EventData):
    """The turn is over: the hands passed to the next seat and the first player changed;
    hands are refilled next (GK-T3)."""

    kind = "hands_passed"
    first_player: int = Field(description="The first player of the new turn.")


class GkDeckRebuiltData(EventData):
    """The deck was rebuilt from the discard pile and the construction-site cards (GK-T4)."""

    kind = "deck_rebuilt"
    added: list[GkCardName] = Field(
        description="The construction-site cards shuffled in with the discard pile."
    )
    discarded: list[GkCardName] = Field(
        description="Cards discarded again from the new deck (2-3 players and solo)."
    )
    deck: int = Field(description="The cards in the new deck.")


class GkTileSupplyExhaustedData(EventData):
    """The tile supply ran out for the first time: every seat commits, hidden, the tiles it
    puts back (GK-E1)."""

    kind = "tile_supply_exhausted"


class GkTilesReturnCommittedData(EventData):
    """A seat committed the tiles it puts back (GK-E1)."""

    kind = "tiles_return_committed"
    seat: int = Field(description=_SEAT)


class GkTilesReturnedData(EventData):
    """Every seat committed: the tiles put back are revealed (1 VP each) and shuffled into a
    new supply (GK-E1)."""

    kind = "tiles_returned"
    tiles: list[list[GkTileName]] = Field(
        description="Per seat (the index is the seat), the tiles it put back."
    )


class GkEndTriggeredData(EventData):
    """The end of the game was triggered: it ends after this turn (GK-E2)."""

    kind = "end_triggered"
    reason: Literal["all_resources_placed", "supply_exhausted_twice"] = Field(
        description="all_resources_placed: a seat has all its resources in the city; "
        "supply_exhausted_twice: the tile supply ran out a second time."
    )


class GkGameOverData(EventData):
    """The last turn was played: the match is finished and its result (final scoring) is in
    the match state."""

    kind = "game_over"
    turn: int = Field(description="The number of the last turn.")


# --------------------------------------------------------------------------- Hal (solo)


class GkHalCardRevealedData(EventData):
    """Solo game: Hal revealed the card the seat gave him (GK-H2)."""

    kind = "hal_card_revealed"
    card: GkCardName = Field(description="Hal's card.")


class GkHalExtraCardData(EventData):
    """Solo game, expert Hal: given an urbanization card, Hal drew one more (GK-H4)."""

    kind = "hal_extra_card"
    card: GkCardName = Field(description="The card Hal drew.")
    used: bool = Field(description="Whether Hal plays it instead of the card he was given.")


class GkHalUrbanizedData(EventData):
    """Solo game: Hal urbanized with the top tile of the supply (GK-H2)."""

    kind = "hal_urbanized"
    card: GkCardName = Field(description="The urbanization card Hal played.")
    tile: GkTileName = Field(description="The tile built.")
    at: list[int] = _space("The space built on (where the token was).")
    vp: int = Field(description="The VP Hal scored: the floors of the buildings around it.")


class GkHalBuiltUpData(EventData):
    """Solo game: Hal built the top tile of the supply on the building of his card (GK-H2)."""

    kind = "hal_built_up"
    card: GkCardName = Field(description="The building card Hal played.")
    covered: GkTileName = Field(description="The tile that was on top of the building.")
    tile: GkTileName = Field(description="The tile built on top.")
    height: int = Field(description="The building's floors, the new one included.")
    vp_paid: int = Field(description="VP Hal paid (never below 0).")


class GkHalCannotPlayData(EventData):
    """Solo game: Hal could not perform his card, so the game ends after this turn (GK-H3)."""

    kind = "hal_cannot_play"
    card: GkCardName = Field(description="Hal's card (discarded).")
    reason: Literal["no_tile", "no_resources"] = Field(
        description="no_tile: the tile supply is empty; no_resources: Hal cannot pay."
    )


GkEvent = event_union(
    "Gk",
    "Ginkgopolis",
    __name__,
    [
        GkCardsDrawnData,
        GkCharacterKeptData,
        GkDraftPassedData,
        GkCharactersRevealedData,
        GkChoiceCommittedData,
        GkNewHandsAnnouncedData,
        GkNewHandAnnouncedData,
        GkHandDiscardedData,
        GkChoicesRevealedData,
        GkUrbanizedData,
        GkTokenMovedData,
        GkBuiltUpData,
        GkResourcesReturnedData,
        GkTileTakenBackData,
        GkExploitStartedData,
        GkItemTakenData,
        GkExploitedData,
        GkHandsPassedData,
        GkDeckRebuiltData,
        GkTileSupplyExhaustedData,
        GkTilesReturnCommittedData,
        GkTilesReturnedData,
        GkEndTriggeredData,
        GkGameOverData,
        GkHalCardRevealedData,
        GkHalExtraCardData,
        GkHalUrbanizedData,
        GkHalBuiltUpData,
        GkHalCannotPlayData,
    ],
)
"""Every event of Ginkgopolis, discriminated by ``kind`` (the engine's ``Events``)."""
