"""Hal, the solo game's automaton (GK-H). Hal is not a seat: owner index ``state.hal``.

Hal's resources are the whole supply of his colour (``res_supply[hal]``); he has no screen,
no tiles and no hand. Every round he plays the card seat 0 gave him with a random tile (the
top of the shuffled supply), deterministically given the seed:

- urbanization card: he urbanizes and scores 1 VP per floor of each edge-adjacent building
  (the items they would produce; he gains no items). Where his token goes: under rules
  version 1 the first of the legal destinations in perimeter order (the withdrawn Skyline
  ruling); from version 2 seat 0 decides, as on its own turn, whenever more than one space
  is legal (a ``place_token`` decision of seat 0; from version 3 along the walk around the
  city, re-letterings of the other tokens included);
- building card: he builds up (returned resources score as usual), pays the VP difference
  down to 0 at most and the colour resource (into his own supply: it only has to be
  available), and keeps the card for the end-of-game scoring; no in-play bonuses;
- expert level (GK-H4): given an urbanization card, he draws one more card and uses it if it
  is a building card or an urbanization card that earns him strictly more VP;
- if he cannot pay (or no tile is left), the action is not performed and the game ends
  (GK-H3).
"""

from __future__ import annotations

from ..base import Event
from .city import neighbours, token_destinations
from .data import URB_BASE, card_label, tile_label
from .rules import (
    Events,
    build_up_costs,
    draw_card,
    draw_tile,
    key_xy,
    move_token_or_ask,
    place_token,
    return_resources,
)
from .state import NO_TILE, GkState, add_marker, place_building


def urbanize_vp(s: GkState, letter: int) -> int:
    """VP Hal would score urbanizing at token ``letter``: the adjacent buildings' floors."""
    key = s.tokens[letter]
    return sum(len(s.stacks[n]) for n in neighbours(key) if n in s.stacks)


def choose_card(s: GkState, card: int, events: Events) -> int:
    """GK-H4 at the expert level: maybe replace an urbanization card by one more card."""
    if card < URB_BASE or not s.expert:
        return card
    extra = draw_card(s, events)
    if extra is None:
        return card
    better = extra < URB_BASE or urbanize_vp(s, extra - URB_BASE) > urbanize_vp(s, card - URB_BASE)
    events.append(Event("hal_extra_card", {"card": card_label(extra), "used": better}))
    if better:
        s.discard.append(card)
        return extra
    s.discard.append(extra)
    return card


def play_turn(s: GkState, events: Events) -> None:
    """Reveal and perform Hal's card for this round (GK-H2, GK-H3, GK-H4)."""
    hal = s.hal
    card = s.hal_card
    s.hal_card = NO_TILE
    events.append(Event("hal_card_revealed", {"card": card_label(card)}))
    card = choose_card(s, card, events)
    if not s.supply_tiles:
        _not_performed(s, card, "no_tile", events)
        return
    tile = s.supply_tiles[-1]
    if card >= URB_BASE:
        if s.res_supply[hal] < 1:
            _not_performed(s, card, "no_resources", events)
            return
        draw_tile(s)
        letter = card - URB_BASE
        key = s.tokens[letter]
        s.res_supply[hal] -= 1
        place_building(s, key, (tile,), hal)
        add_marker(s, key)
        vp = sum(len(s.stacks[n]) for n in neighbours(key) if n in s.stacks)
        s.vp[hal] += vp
        s.discard.append(card)
        events.append(
            Event(
                "hal_urbanized",
                {"card": card_label(card), "tile": tile_label(tile), "at": key_xy(key), "vp": vp},
            )
        )
        if s.rules_version >= 2:  # GK-H2: the solo player moves Hal's token
            move_token_or_ask(s, 0, letter, key, events)
            return
        destinations, relabel = token_destinations(s.stacks, s.tokens, letter, key)
        place_token(s, letter, destinations[0], relabel, events)
        return
    key, need, vp_cost = build_up_costs(s, card, tile)
    height = len(s.stacks[key])
    have = s.res_supply[hal] + (height if s.owner[key] == hal else 0)
    if have < need:
        _not_performed(s, card, "no_resources", events)
        return
    draw_tile(s)
    covered = s.stacks[key][-1]
    return_resources(s, key, hal, events)
    paid = min(vp_cost, s.vp[hal])
    s.vp[hal] -= paid
    s.res_supply[hal] -= height + 1  # the colour fee goes into his own supply
    place_building(s, key, (*s.stacks[key], tile), hal)
    add_marker(s, key)
    s.front[hal].append(card)
    events.append(
        Event(
            "hal_built_up",
            {
                "card": card_label(card),
                "covered": tile_label(covered),
                "tile": tile_label(tile),
                "height": height + 1,
                "vp_paid": paid,
            },
        )
    )


def _not_performed(s: GkState, card: int, reason: str, events: Events) -> None:
    s.discard.append(card)
    s.end = True
    events.append(Event("hal_cannot_play", {"card": card_label(card), "reason": reason}))
