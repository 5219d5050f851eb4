"""Ginkgopolis in sentences: one per event (from the event's data as the caller sees it:
what lies behind another seat's screen is not in that data, so never in its sentence) and
one per legal move. Seats are "Seat 0", "Seat 1" ... (the numbers of the API); in the solo
game owner 1 is Hal. Czech terms are the Czech rulebook's; the German ones are Skyline's own
translation (marked so in the German catalogue).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from service.catalogue import ginkgopolis_text as names
from service.games.ginkgopolis import data as gk
from service.i18n import N_, TN, Sentences, T, Text, plural, sentences

from .common import attribute, number, space, strings

GAME = "ginkgopolis"
HAL = "Hal"
"""The solo game's virtual player (a name in every language)."""
Namer = Callable[[int], Text | str]

_BY_LABEL = {gk.card_label(card): card for card in range(gk.N_CARDS)}

CHARACTERS: dict[str, str] = {
    "red": N_("Red character {set}"),
    "blue": N_("Blue character {set}"),
    "yellow": N_("Yellow character {set}"),
}
"""A character card's name, by colour (the colour agrees with the noun)."""


def seat_names(view: Any) -> Namer:
    """Seat -> "Seat 2"; in the solo game (one seat, Hal beside it) index 1 is Hal."""
    solo = attribute(view, "players") == 1 or attribute(view, "hal") is not None

    def name(seat: int) -> Text | str:
        if solo and seat == 1:
            return HAL
        return T("Seat {seat}", seat=seat)

    return name


def card_name(card: int | str) -> Text | str:
    """A card (by id or label) by its name: Red 7, Urbanization A, Red character 4; a tile is
    named as its building card."""
    index = _BY_LABEL.get(card) if isinstance(card, str) else card
    if index is None or not 0 <= index < gk.N_CARDS:
        return str(card)
    if index < gk.N_TILES:
        colour = gk.COLOURS[gk.colour_of(index)]
        return T(names.END_CARD_NAME, colour=T(names.COLOURS[colour]),
                 number=gk.number_of(index))
    if index < gk.CHAR_BASE:
        return T("Urbanization {letter}", letter=gk.LETTERS[index - gk.URB_BASE])
    character = gk.CHARACTERS[index - gk.CHAR_BASE]
    return T(CHARACTERS[gk.COLOURS[character.colour]], set=character.set)


def _names(cards: list[str]) -> list[Text | str]:
    return [card_name(card) for card in cards]


def _space(at: Any) -> Text:
    if isinstance(at, list | tuple) and len(at) == 2:
        return space(at[0], at[1])
    return space("?", "?")


def _items(resources: int, tiles: int, vp: int) -> list[Text]:
    amounts = zip(("resource", "tile", "vp"), (resources, tiles, vp), strict=True)
    return [plural(names.ITEMS[kind], n) for kind, n in amounts if n]


def _vp(count: int) -> Text:
    return plural(names.ITEMS["vp"], count)


def _gains(who: Text | str, data: Mapping[str, Any]) -> Text | None:
    """What an action brought the seat: only the seat itself has ``gained`` in its data."""
    gained = data.get("gained")
    if not isinstance(gained, Mapping):
        return None
    items = _items(number(gained, "resources"), number(gained, "tiles"), number(gained, "vp"))
    if not items:
        return T("{player} gained nothing.", player=who)
    return T("{player} gained {items}.", player=who, items=items)


def event(kind: str, data: Mapping[str, Any], player: Namer) -> Text | Sentences | None:
    """The sentence of one event (None: a kind without one)."""
    who = player(number(data, "seat"))
    card = card_name(str(data.get("card", "")))
    tile = card_name(str(data.get("tile", "")))
    if kind == "cards_drawn":
        cards = strings(data, "cards")
        if cards:
            return T("{player} drew {cards}.", player=who, cards=_names(cards))
        return TN("{player} drew {n} card.", "{player} drew {n} cards.", number(data, "count"),
                  player=who)
    if kind == "character_kept":
        return T("{player} kept a character.", player=who)
    if kind == "draft_passed":
        pack = strings(data, "pack")
        if pack:
            return T("The draft packs were passed on; your new pack: {cards}.",
                     cards=_names(pack))
        return TN("The draft packs were passed on ({n} character in each).",
                  "The draft packs were passed on ({n} characters in each).",
                  number(data, "pack_size"))
    if kind == "characters_revealed":
        kept = data.get("characters") or []
        return sentences(T("The characters were revealed."), *(
            T("{player} has {cards}.", player=player(seat), cards=_names(list(cards)))
            for seat, cards in enumerate(kept) if cards
        ))
    if kind == "choice_committed":
        return T("{player} chose a card.", player=who)
    if kind == "new_hands_announced":
        seats = [player(s) for s in data.get("seats") or [] if isinstance(s, int)]
        return TN("New Hand for {players}: they discard their hands, draw {n} card and "
                  "choose again.", "New Hand for {players}: they discard their hands, draw "
                  "{n} cards and choose again.", gk.HAND_SIZE, players=seats)
    if kind == "new_hand_announced":
        return TN("{player} takes a New Hand: discards the hand, draws {n} card and chooses "
                  "again.", "{player} takes a New Hand: discards the hand, draws {n} cards "
                  "and chooses again.", gk.HAND_SIZE, player=who)
    if kind == "hand_discarded":
        return T("{player} spent a New Hand token and discarded {cards}.", player=who,
                 cards=_names(strings(data, "cards")))
    if kind == "choices_revealed":
        return sentences(T("The choices were revealed."), *_choices(data, player))
    if kind == "urbanized":
        return sentences(
            T("{player} urbanized with card {card}: tile {tile} at {space}.", player=who,
              card=card, tile=tile, space=_space(data.get("at"))),
            _gains(who, data),
        )
    if kind == "token_moved":
        moved = [T("Token {token} moved to {space}.", token=data.get("token", ""),
                   space=_space(data.get("at")))]
        for other in data.get("others") or []:
            moved.append(T("Token {token} moved to {space}.", token=attribute(other, "token"),
                           space=_space(attribute(other, "at"))))
        return sentences(*moved)
    if kind == "built_up":
        vp_paid, fee = number(data, "vp_paid"), number(data, "colour_fee")
        return sentences(
            TN("{player} built up {building} with tile {tile}: {n} floor.",
               "{player} built up {building} with tile {tile}: {n} floors.",
               number(data, "height"), player=who, building=card, tile=tile),
            T("{player} paid {vp}.", player=who, vp=_vp(vp_paid)) if vp_paid else None,
            TN("{player} paid {n} resource for the new colour.",
               "{player} paid {n} resources for the new colour.", fee, player=who)
            if fee else None,
            _gains(who, data),
        )
    if kind == "resources_returned":
        owner = player(number(data, "owner"))
        vp = data.get("vp")
        return sentences(
            TN("{owner} got {n} resource back.", "{owner} got {n} resources back.",
               number(data, "count"), owner=owner),
            T("{owner} scored {vp}.", owner=owner, vp=_vp(vp))
            if isinstance(vp, int) and vp else None,
        )
    if kind == "tile_taken_back":
        return T("{player} could not place the tile: it goes back behind the screen and the "
                 "card is exploited instead.", player=who)
    if kind == "exploit_started":
        return T("{player} exploits card {card}: a resource or a tile.", player=who, card=card)
    if kind == "item_taken":
        item = data.get("item")
        taken = (T("{player} took a resource.", player=who) if item == "resource" else
                 T("{player} took a tile.", player=who) if item == "tile" else
                 T("{player} took nothing: the supply is empty.", player=who))
        return sentences(taken, _gains(who, data))
    if kind == "exploited":
        return sentences(T("{player} exploited {building}.", player=who, building=card),
                         _gains(who, data))
    if kind == "hands_passed":
        return T("The hands were passed on; {player} is the first player.",
                 player=player(number(data, "first_player")))
    if kind == "deck_rebuilt":
        return TN("The deck was rebuilt: {n} card.", "The deck was rebuilt: {n} cards.",
                  number(data, "deck"))
    if kind == "tile_supply_exhausted":
        return T("The tile supply ran out: every player may put tiles back, for a VP each.")
    if kind == "tiles_return_committed":
        return T("{player} chose the tiles to put back.", player=who)
    if kind == "tiles_returned":
        returned = data.get("tiles") or []
        return sentences(T("The tiles put back were revealed."), *(
            TN("{player} put back {n} tile ({tiles}).", "{player} put back {n} tiles "
               "({tiles}).", len(tiles), player=player(seat), tiles=_names(list(tiles)))
            if tiles else T("{player} put back no tiles.", player=player(seat))
            for seat, tiles in enumerate(returned)
        ))
    if kind == "end_triggered":
        if data.get("reason") == "all_resources_placed":
            return T("A player has all their resources in the city: the game ends after this "
                     "turn.")
        return T("The tile supply ran out a second time: the game ends after this turn.")
    if kind == "game_over":
        return T("The game is over after turn {turn}.", turn=number(data, "turn"))
    return _hal(kind, data, card, tile)


def _choices(data: Mapping[str, Any], player: Namer) -> list[Text]:
    out: list[Text] = []
    for choice in data.get("choices") or []:
        who = player(number(choice, "seat") if isinstance(choice, Mapping) else 0)
        card = card_name(str(attribute(choice, "card", "")))
        tile = attribute(choice, "tile")
        out.append(
            T("{player} plays card {card} with tile {tile}.", player=who, card=card,
              tile=card_name(str(tile))) if tile is not None else
            T("{player} plays card {card} alone.", player=who, card=card)
        )
        discarded = attribute(choice, "discarded")
        if discarded:
            out.append(T("{player} discards {cards}.", player=who,
                         cards=_names([str(c) for c in discarded])))
    return out


def _hal(kind: str, data: Mapping[str, Any], card: Text | str, tile: Text | str
         ) -> Text | Sentences | None:
    if kind == "hal_card_revealed":
        return T("Hal reveals his card: {card}.", card=card)
    if kind == "hal_extra_card":
        if data.get("used"):
            return T("Hal drew {card} and plays it instead.", card=card)
        return T("Hal drew {card} but plays his first card.", card=card)
    if kind == "hal_urbanized":
        return T("Hal urbanized with card {card}: tile {tile} at {space}; he scored {vp}.",
                 card=card, tile=tile, space=_space(data.get("at")), vp=_vp(number(data, "vp")))
    if kind == "hal_built_up":
        paid = number(data, "vp_paid")
        return sentences(
            TN("Hal built up {building} with tile {tile}: {n} floor.",
               "Hal built up {building} with tile {tile}: {n} floors.",
               number(data, "height"), building=card, tile=tile),
            T("Hal paid {vp}.", vp=_vp(paid)) if paid else None,
        )
    if kind == "hal_cannot_play":
        if data.get("reason") == "no_tile":
            return T("Hal cannot play {card}: the tile supply is empty; the game ends after "
                     "this turn.", card=card)
        return T("Hal cannot play {card}: he cannot pay; the game ends after this turn.",
                 card=card)
    return None


def _height(view: Any, card: int) -> int | None:
    """The floors of the building a building card names, as the view shows the city."""
    if not 0 <= card < gk.N_TILES:
        return None
    colour, number_ = gk.COLOURS[gk.colour_of(card)], gk.number_of(card)
    for building in attribute(view, "city") or ():
        if attribute(building, "colour") == colour and attribute(building, "number") == number_:
            height = attribute(building, "height")
            return height if isinstance(height, int) else None
    return None


def move(action: Any, view: Any) -> Text | Sentences:
    """The sentence of one legal move (an imperative, no final stop)."""
    kind = attribute(action, "type", "")
    if kind == "choose_card":
        return _choose(action, view)
    if kind == "new_hand":
        return TN("Spend a New Hand token: discard your hand and draw {n} card",
                  "Spend a New Hand token: discard your hand and draw {n} cards",
                  gk.HAND_SIZE)
    if kind == "take_item":
        return (T("Take a tile") if attribute(action, "item") == "tile" else
                T("Take a resource"))
    if kind == "place_token":
        pending = attribute(view, "pending")
        letter = attribute(pending, "token", "") or ""
        to = space(attribute(action, "x", 0), attribute(action, "y", 0))
        others = [T("token {letter} to {space}", letter=attribute(o, "letter", ""),
                    space=space(attribute(o, "x", 0), attribute(o, "y", 0)))
                  for o in attribute(action, "others", ()) or ()]
        if others:
            return T("Move token {letter} to {space}; also move {others}", letter=letter,
                     space=to, others=others)
        return T("Move token {letter} to {space}", letter=letter, space=to)
    if kind == "draft_character":
        return T("Keep {character}", character=card_name(int(attribute(action, "character", 0))))
    if kind == "return_tiles":
        tiles = [int(t) for t in attribute(action, "tiles", ()) or ()]
        if not tiles:
            return T("Return no tiles")
        return TN("Return {n} tile ({tiles}) for {vp}", "Return {n} tiles ({tiles}) for {vp}",
                  len(tiles), tiles=[card_name(t) for t in tiles], vp=_vp(len(tiles)))
    return T("Move {move}", move=kind)


def _choose(action: Any, view: Any) -> Text:
    card = int(attribute(action, "card", -1))
    tile = attribute(action, "tile")
    hal = attribute(action, "hal_card")
    name = card_name(card)
    with_tile = card_name(int(tile)) if tile is not None else None
    if 0 <= card < gk.N_TILES:
        height = _height(view, card)
        if with_tile is None:
            main = (TN("Exploit {building} ({n} floor)", "Exploit {building} ({n} floors)",
                       height, building=name) if height is not None else
                    T("Exploit {building}", building=name))
        else:
            main = (TN("Build up on {building} ({n} floor) with tile {tile}",
                       "Build up on {building} ({n} floors) with tile {tile}", height,
                       building=name, tile=with_tile) if height is not None else
                    T("Build up on {building} with tile {tile}", building=name,
                      tile=with_tile))
    elif gk.URB_BASE <= card < gk.CHAR_BASE:
        letter = gk.LETTERS[card - gk.URB_BASE]
        main = (T("Exploit card {card}: take a resource or a tile", card=name)
                if with_tile is None else
                T("Urbanize at token {letter} with tile {tile}", letter=letter, tile=with_tile))
    else:
        main = (T("Play card {card}", card=name) if with_tile is None else
                T("Play card {card} with tile {tile}", card=name, tile=with_tile))
    if hal is None:
        return main
    return T("{move}; give Hal {card}", move=main, card=card_name(int(hal)))
