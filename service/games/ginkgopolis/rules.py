"""Effects of the Ginkgopolis rules on a (cloned, mutable) state: gains, the three actions,
deck rebuilds. Turn sequencing lives in ``flow.py``; the solo automaton in ``hal.py``.

Every function here mutates the state it is given; callers clone first.
"""

from __future__ import annotations

from bisect import insort

from ..base import Event
from ..rng import shuffled
from .city import Placement, neighbours, restore_order, token_destinations, walk_placements, xy
from .data import (
    BLUE,
    BUILD_UP,
    BUILDING_BONUS,
    CARDS_DISCARDED_SMALL,
    CHAR_BASE,
    CHARACTERS,
    EXPLOIT,
    NUMBERS,
    RED,
    RESOURCES_PER_PLAYER,
    URB_BASE,
    URBANIZE,
    card_label,
    tile_label,
)
from .state import (
    NO_PENDING,
    PLACE_TOKEN,
    TAKE_ITEM,
    GkState,
    add_marker,
    clear_markers,
    place_building,
)

Events = list[Event]


def resources_total(s: GkState) -> int:
    """Resources of one colour in the game (GK-S components, GK-H1)."""
    return RESOURCES_PER_PLAYER[s.players]


def small_game(s: GkState) -> bool:
    """2-3 players, and the solo game, which is set up as for 2 (GK-S2, GK-S3, GK-H1)."""
    return s.players <= 3


# --------------------------------------------------------------------------- cards


def rebuild_deck(s: GkState, events: Events) -> None:
    """GK-T4: marker cards onto the discard pile, shuffle it into the deck, discard 7 again
    with 2-3 players, remove the markers."""
    added = sorted(s.stacks[key][-1] for key in s.markers)
    s.discard.extend(added)
    clear_markers(s)
    if not s.discard:
        return
    deck, s.rng = shuffled(s.rng, s.discard)
    s.discard = []
    discarded: list[int] = []
    if small_game(s):
        # Skyline ruling: never discard the whole new deck (keeps at least one card).
        for _ in range(min(CARDS_DISCARDED_SMALL, len(deck) - 1)):
            discarded.append(deck.pop())
        s.discard.extend(discarded)
    s.deck = deck
    events.append(
        Event(
            "deck_rebuilt",
            {
                "added": [card_label(c) for c in added],
                "discarded": [card_label(c) for c in discarded],
                "deck": len(deck),
            },
        )
    )


def draw_card(s: GkState, events: Events) -> int | None:
    """The top card of the deck (None: none left even after a rebuild).

    GK-T4: rules version 1 rebuilds lazily, at a draw from an empty deck. From version 2
    the deck is rebuilt immediately, at the draw that takes its last card; a draw still finds
    it empty only when that rebuild had nothing to shuffle, and then tries again."""
    if not s.deck:
        rebuild_deck(s, events)
        if not s.deck:
            return None
    card = s.deck.pop()
    if not s.deck and s.rules_version >= 2:
        rebuild_deck(s, events)
    return card


def draw_cards(s: GkState, seat: int, n: int, events: Events) -> None:
    drawn = []
    for _ in range(n):
        card = draw_card(s, events)
        if card is None:
            break
        s.hands[seat].append(card)
        drawn.append(card)
    events.append(
        Event(
            "cards_drawn",
            {"seat": seat, "count": len(drawn)},
            {seat: {"cards": [card_label(c) for c in drawn]}},
        )
    )


# --------------------------------------------------------------------------- items


def gain_resources(s: GkState, seat: int, n: int) -> int:
    """Take up to ``n`` resources of the seat's colour from the supply; returns how many."""
    take = min(n, s.res_supply[seat])
    s.res_supply[seat] -= take
    s.res_screen[seat] += take
    return take


def draw_tile(s: GkState) -> int | None:
    """Top tile of the supply; counts the supply running out (GK-E1, GK-E2)."""
    if not s.supply_tiles:
        return None
    tile = s.supply_tiles.pop()
    if not s.supply_tiles:
        s.runs += 1
    return tile


def gain_tiles(s: GkState, seat: int, n: int) -> int:
    got = 0
    for _ in range(n):
        tile = draw_tile(s)
        if tile is None:
            break
        insort(s.tiles[seat], tile)
        got += 1
    return got


class Gains:
    """Items one action brought a seat (reported privately)."""

    __slots__ = ("resources", "tiles", "vp")

    def __init__(self) -> None:
        self.resources = 0
        self.tiles = 0
        self.vp = 0

    def as_dict(self) -> dict[str, int]:
        return {"resources": self.resources, "tiles": self.tiles, "vp": self.vp}


def gain_kind(s: GkState, seat: int, colour: int, n: int, gains: Gains) -> None:
    """n items of a colour's kind: red resources, blue tiles, yellow VP (GK-T2)."""
    if colour == RED:
        gains.resources += gain_resources(s, seat, n)
    elif colour == BLUE:
        gains.tiles += gain_tiles(s, seat, n)
    else:
        s.vp[seat] += n
        gains.vp += n


def exploit_building(s: GkState, seat: int, key: int, gains: Gains) -> None:
    """1 item per floor of the building at ``key``, of its colour's kind."""
    stack = s.stacks[key]
    gain_kind(s, seat, stack[-1] // NUMBERS, len(stack), gains)


def apply_bonuses(s: GkState, seat: int, action: int, gains: Gains) -> None:
    """GK-B1: every card in front of the seat with a bonus for ``action``."""
    res = tiles = vp = 0
    for card in s.front[seat]:
        if card < 60:
            bonus = BUILDING_BONUS[card]
            if bonus is None:
                continue
        elif card >= CHAR_BASE:
            bonus = CHARACTERS[card - CHAR_BASE].bonus
        else:
            continue
        if bonus.action == action:
            res += bonus.resources
            tiles += bonus.tiles
            vp += bonus.vp
    if res:
        gains.resources += gain_resources(s, seat, res)
    if tiles:
        gains.tiles += gain_tiles(s, seat, tiles)
    if vp:
        s.vp[seat] += vp
        gains.vp += vp


# --------------------------------------------------------------------------- build up


def build_up_costs(s: GkState, card: int, tile: int) -> tuple[int, int, int]:
    """(key, resources needed on the new building + colour fee, VP to pay) (GK-T2)."""
    key = s.where[card]
    stack = s.stacks[key]
    top = stack[-1]
    colour_fee = 1 if top // NUMBERS != tile // NUMBERS else 0
    vp_cost = max(0, top % NUMBERS - tile % NUMBERS)
    return key, len(stack) + 1 + colour_fee, vp_cost


def can_build_up(s: GkState, seat: int, card: int, tile: int) -> bool:
    """Can the seat pay for placing ``tile`` on the building of ``card``?

    Its own resources on that building come back first, so they count (GK-T2).
    """
    if card not in s.where:
        return False
    key, need, vp_cost = build_up_costs(s, card, tile)
    have = s.res_screen[seat]
    if s.owner[key] == seat:
        have += len(s.stacks[key])
    return have >= need and s.vp[seat] >= vp_cost


def return_resources(s: GkState, key: int, builder: int, events: Events) -> None:
    """Resources on a building go back to its owner, who scores 1 VP each unless they are
    the builder (GK-T2). Hal's come back to his supply (GK-H2)."""
    owner = s.owner[key]
    if owner < 0:
        return
    n = len(s.stacks[key])
    if s.solo and owner == s.hal:
        s.res_supply[owner] += n
    else:
        s.res_screen[owner] += n
    if owner != builder:
        s.vp[owner] += n
        private = {owner: {"vp": n}} if owner < s.players else {}
        events.append(Event("resources_returned", {"owner": owner, "count": n}, private))
    s.in_city[owner] -= n
    s.owner[key] = -1


def build_up(s: GkState, seat: int, card: int, tile: int, events: Events) -> None:
    """GK-T2 build up by a seat that can pay (``can_build_up``)."""
    key, need, vp_cost = build_up_costs(s, card, tile)
    covered = s.stacks[key][-1]
    return_resources(s, key, seat, events)
    s.vp[seat] -= vp_cost
    floors = len(s.stacks[key]) + 1
    fee = need - floors
    s.res_screen[seat] -= need
    s.res_supply[seat] += fee
    s.tiles[seat].remove(tile)
    place_building(s, key, (*s.stacks[key], tile), seat)
    add_marker(s, key)
    gains = Gains()
    apply_bonuses(s, seat, BUILD_UP, gains)
    s.front[seat].append(card)
    events.append(
        Event(
            "built_up",
            {
                "seat": seat,
                "card": card_label(card),
                "covered": tile_label(covered),
                "tile": tile_label(tile),
                "height": floors,
                "vp_paid": vp_cost,
                "colour_fee": fee,
            },
            {seat: {"gained": gains.as_dict()}},
        )
    )


# --------------------------------------------------------------------------- urbanize


def urbanize(s: GkState, seat: int, card: int, tile: int, events: Events) -> None:
    """GK-T2 urbanize by a seat with at least one resource; the token move may wait for a
    decision (``PLACE_TOKEN``)."""
    letter = card - URB_BASE
    key = s.tokens[letter]
    s.tiles[seat].remove(tile)
    s.res_screen[seat] -= 1
    place_building(s, key, (tile,), seat)
    add_marker(s, key)
    gains = Gains()
    for n in neighbours(key):
        if n in s.stacks and n != key:
            exploit_building(s, seat, n, gains)
    apply_bonuses(s, seat, URBANIZE, gains)
    s.discard.append(card)
    events.append(
        Event(
            "urbanized",
            {"seat": seat, "card": card_label(card), "tile": tile_label(tile), "at": key_xy(key)},
            {seat: {"gained": gains.as_dict()}},
        )
    )
    move_token_or_ask(s, seat, letter, key, events)


def key_xy(key: int) -> list[int]:
    x, y = xy(key)
    return [x, y]


def along_walk(s: GkState, letter: int, new_tile: int) -> list[Placement]:
    """GK-T2 from rules version 3 (``city.walk_placements``); from version 4 every layout
    that moves the fewest other tokens when some must move (``city.fewest_moves``)."""
    every_layout = s.rules_version >= 4
    return walk_placements(s.stacks, s.tokens, letter, new_tile, every_layout)


def move_token_or_ask(s: GkState, seat: int, letter: int, new_tile: int, events: Events) -> None:
    if s.rules_version >= 3:  # GK-T2 along the walk around the city (city.walk_placements)
        placements = along_walk(s, letter, new_tile)
        if len(placements) == 1:
            place_along_walk(s, letter, placements[0], events)
            return
    else:
        destinations, relabel = token_destinations(s.stacks, s.tokens, letter, new_tile)
        if len(destinations) == 1:
            place_token(s, letter, destinations[0], relabel, events)
            return
    s.pending = PLACE_TOKEN
    s.pending_arg = letter


def token_placements(s: GkState) -> list[Placement]:
    """The pending ``place_token`` decision's choices, in the order listed to the player:
    where the token ``pending_arg`` (still on its new building) may go, with the other tokens
    that move with it. Rules versions 1 and 2 move no other token in a choice (when they must
    move, ``place_token`` re-letters them by itself); version 4 offers more re-letterings
    than version 3 (``along_walk``)."""
    letter = s.pending_arg
    new_tile = s.tokens[letter]
    if s.rules_version >= 3:
        return along_walk(s, letter, new_tile)
    destinations, _ = token_destinations(s.stacks, s.tokens, letter, new_tile)
    return [(space, ()) for space in destinations]


def place_token(s: GkState, letter: int, space: int, relabel: bool, events: Events) -> None:
    """Rules versions 1 and 2: the token to ``space``; with ``relabel`` the tokens are then
    re-lettered in the angle order (``city.restore_order``)."""
    s.tokens[letter] = space
    if relabel:
        s.tokens = restore_order(s.tokens)
    events.append(Event("token_moved", {"token": "ABCDEFGHIJKL"[letter], "at": key_xy(space)}))


def place_along_walk(s: GkState, letter: int, placement: Placement, events: Events) -> None:
    """Rules version 3: the token and the other tokens that move with it (GK-T2)."""
    space, others = placement
    s.tokens[letter] = space
    public: dict[str, object] = {"token": "ABCDEFGHIJKL"[letter], "at": key_xy(space)}
    if others:
        for who, where in others:
            s.tokens[who] = where
        public["others"] = [{"token": "ABCDEFGHIJKL"[who], "at": key_xy(where)}
                            for who, where in others]
    events.append(Event("token_moved", public))


# --------------------------------------------------------------------------- exploit


def item_options(s: GkState, seat: int) -> list[str]:
    """What an urbanization card played alone may still bring (GK-T2 exploit)."""
    options = []
    if s.res_supply[seat] > 0:
        options.append("resource")
    if s.supply_tiles:
        options.append("tile")
    return options


def take_item(s: GkState, seat: int, item: str, events: Events) -> None:
    """The urbanization card alone: the chosen item, then the exploit bonuses."""
    gains = Gains()
    if item == "resource":
        gains.resources += gain_resources(s, seat, 1)
    elif item == "tile":
        gains.tiles += gain_tiles(s, seat, 1)
    apply_bonuses(s, seat, EXPLOIT, gains)
    s.pending = NO_PENDING
    events.append(
        Event("item_taken", {"seat": seat, "item": item}, {seat: {"gained": gains.as_dict()}})
    )


def exploit_card(s: GkState, seat: int, card: int, events: Events) -> None:
    """GK-T2 exploit: a card played alone (or whose tile could not be placed)."""
    s.discard.append(card)
    if card >= URB_BASE:
        options = item_options(s, seat)
        if len(options) > 1:
            s.pending = TAKE_ITEM
            s.pending_arg = 0
            events.append(Event("exploit_started", {"seat": seat, "card": card_label(card)}))
            return
        take_item(s, seat, options[0] if options else "", events)
        return
    gains = Gains()
    key = s.where.get(card)
    if key is not None:
        exploit_building(s, seat, key, gains)
    apply_bonuses(s, seat, EXPLOIT, gains)
    events.append(
        Event(
            "exploited",
            {"seat": seat, "card": card_label(card)},
            {seat: {"gained": gains.as_dict()}},
        )
    )


def perform_choice(s: GkState, seat: int, card: int, tile: int, events: Events) -> None:
    """Resolve one revealed choice (GK-T2), falling back to exploit if the tile cannot be
    placed (the tile stays behind the screen)."""
    if tile >= 0:
        if card >= URB_BASE:
            if s.res_screen[seat] >= 1:
                urbanize(s, seat, card, tile, events)
                return
        elif can_build_up(s, seat, card, tile):
            build_up(s, seat, card, tile, events)
            return
        events.append(Event("tile_taken_back", {"seat": seat}))
    exploit_card(s, seat, card, events)
