"""Ginkgopolis determinizer.

Public in a seat's view: the city, the tokens, the discard pile, the cards in front of the
screens, every count (deck, tile supply, hands, New Hand tokens, resources in supply and in
the city) and the seat's own screen, hand and hidden choice. Hidden: the other hands,
screens, VP and hidden choices, the order of the deck and of the tile supply, the boxed
tiles, the RNG.

A determinization rebuilds the state from the view and samples the hidden parts:

- cards: the circulating cards nobody shows -- urbanization cards, the cards of the starting
  tiles 1-3 and the cards of city tiles that went through a deck rebuild (an unmarked top
  tile certainly did; a covered tile may have) -- are shuffled and dealt to the other hands
  (their public sizes), the rest forming the deck;
- tiles: the tiles not in the city nor behind this seat's screen are shuffled into the
  supply (its size), the box (6 with 2-3 players) and the other screens (the remainder, dealt
  one by one to random opponents: exact with two players);
- another seat's resources not in the city are split between the supply and its screen in
  an unknown way: the screen gets as many as this seat's own (at most what is left); its
  VP behind the screen is unknown and set to this seat's VP, so only differences from now
  on matter to a search;
- hidden choices already committed by others are sampled among their legal choices.

Turn-order bookkeeping the view leaves out (how many choices of this turn have been
resolved while tiles are being returned) is inferred from the hand sizes.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from service.games.ginkgopolis import data as gd
from service.games.ginkgopolis.city import pos
from service.games.ginkgopolis.data import COLOURS
from service.games.ginkgopolis.flow import RETURN_PARTS
from service.games.ginkgopolis.rules import token_placements
from service.games.ginkgopolis.state import (
    CHOOSE,
    DRAFT,
    FLAG_DRAFT,
    FLAG_EXPERT,
    NEW_HAND,
    NO_TILE,
    PHASE_NAMES,
    PLACE_TOKEN,
    RESOLVE,
    RETURN,
    TAKE_ITEM,
    GkState,
    empty_state,
    place_building,
)
from service.games.ginkgopolis.views import GkView


class InconsistentView(ValueError):
    """The view cannot come from a Ginkgopolis state."""


def _choice_of(view: GkView) -> tuple[int, int, int] | None:
    me = view.me
    if me is None or me.choice is None:
        return None
    c = me.choice
    card = NEW_HAND if c.new_hand else (c.card.id if c.card is not None else NO_TILE)
    tile = c.tile.id if c.tile is not None else NO_TILE
    hal_card = c.hal_card.id if c.hal_card is not None else NO_TILE
    return card, tile, hal_card


def determinize(
    engine: Any,
    view: GkView,
    seat: int,
    rng: random.Random,
    legal: Sequence[Any] | None = None,
) -> GkState:
    """A state consistent with ``view`` (seat ``seat``'s view), hidden parts sampled."""
    me = view.me
    if me is None or me.seat != seat:
        raise InconsistentView("a determinization needs the seat's own view")
    n = view.players
    s = empty_state(n)
    s.rules_version = view.rules_version
    phase = PHASE_NAMES.index(view.phase)
    s.phase = phase
    s.flags = (FLAG_DRAFT if phase == DRAFT else 0) | (
        FLAG_EXPERT if view.hal is not None and view.hal.expert else 0)
    s.rng = rng.getrandbits(64)
    s.turn = view.turn
    s.first = view.first_player
    s.runs = view.tile_supply_exhausted
    s.end = view.end_triggered
    s.e1_done = s.runs >= 1 and phase != RETURN
    hal_owner = s.hal if s.solo else -1

    # The city, its markers and the tokens.
    for b in view.city:
        key = pos(b.x, b.y)
        owner = hal_owner if b.hal else (b.owner if b.owner is not None else -1)
        place_building(s, key, tuple(t.id for t in b.tiles), owner)
        if b.construction_site:
            s.markers.add(key)
    tokens = [-1] * len(gd.LETTERS)
    for token in view.tokens:
        tokens[gd.LETTERS.index(token.letter)] = pos(token.x, token.y)
    s.tokens = tokens
    pending = view.pending
    if pending is not None and pending.kind == "place_token":
        assert pending.token is not None
        letter = gd.LETTERS.index(pending.token)
        wanted = [
            (pos(c.x, c.y), tuple((gd.LETTERS.index(t.letter), pos(t.x, t.y))
                                  for t in c.others))
            for c in pending.choices]
        s.pending = PLACE_TOKEN
        s.pending_arg = letter
        # The moving token stands on its new building, which has a construction site: one
        # that offers exactly the view's choices, in the same order.
        for key in s.markers:
            tokens[letter] = key
            if token_placements(s) == wanted:
                break
        else:
            raise InconsistentView("no building the moving token can come from")
    elif pending is not None:
        s.pending = TAKE_ITEM
        s.pending_arg = 0
    if -1 in tokens:
        raise InconsistentView("a token is missing")
    s.tokens = tokens
    if pending is not None:
        s.res_pos = 1 if s.solo else (pending.seat - s.first) % n + 1

    # Public piles and counters.
    s.discard = [c.id for c in view.discard]
    total = gd.RESOURCES_PER_PLAYER[n]
    for sv in view.seats:
        # Another seat's resources not in the city are split between the common supply and
        # its screen, in proportions nobody else knows: guess this seat's own screen count.
        free = total - s.in_city[sv.seat]
        s.res_screen[sv.seat] = min(free, me.resources)
        s.res_supply[sv.seat] = free - s.res_screen[sv.seat]
        s.front[sv.seat] = [c.id for c in sv.cards_in_front]
        s.nh[sv.seat] = sv.new_hand_tokens
        s.vp[sv.seat] = me.vp
    if view.hal is not None:
        s.res_supply[s.hal] = view.hal.resources_in_supply
        s.vp[s.hal] = view.hal.vp
        s.front[s.hal] = [c.id for c in view.hal.cards_in_front]

    # This seat's screen, hand and choices.
    s.res_screen[seat] = me.resources
    s.res_supply[seat] = me.resources_in_supply
    s.vp[seat] = me.vp
    s.tiles[seat] = [t.id for t in me.tiles]
    s.hands[seat] = [c.id for c in me.hand]
    mine = _choice_of(view)
    kept = [c.id for c in me.draft_kept]
    pack = [c.id for c in me.draft_pack]
    if phase == DRAFT and view.seats[seat].committed:
        mine = (kept[-1], NO_TILE, NO_TILE)
        pack.append(kept.pop())
    s.choice[seat] = mine
    s.draft_packs[seat] = sorted(pack)
    s.draft_kept[seat] = kept
    if phase == RETURN:
        s.returns[seat] = tuple(t.id for t in me.returning or ())
        part = me.return_part
        s.ret_part[seat] = len(RETURN_PARTS) if part is None else RETURN_PARTS.index(
            (COLOURS.index(part.colour), part.low, part.high))

    others = [o for o in range(n) if o != seat]
    _deal_cards(s, view, seat, others, rng)
    _deal_tiles(s, view, seat, others, rng)
    _deal_characters(s, view, seat, others, rng)
    _sample_choices(s, view, seat, others, rng)
    if s.solo and view.hal is not None and view.hal.has_card and phase != CHOOSE:
        pool = s.deck
        if pool:
            s.hal_card = pool.pop(rng.randrange(len(pool)))
    return s


def _deal_cards(s: GkState, view: GkView, seat: int, others: list[int],
                rng: random.Random) -> None:
    seen: set[int] = {c.id for c in view.discard}
    seen.update(s.hands[seat])
    for sv in view.seats:
        seen.update(c.id for c in sv.cards_in_front)
    if view.hal is not None:
        seen.update(c.id for c in view.hal.cards_in_front)
    certain = [c for c in (*gd.URBANIZATION_CARDS, *gd.START_TILES) if c not in seen]
    maybe: list[int] = []
    for key, stack in s.stacks.items():
        for depth, tile in enumerate(stack):
            if tile in seen or tile in gd.START_TILES:
                continue
            if depth == len(stack) - 1:
                if key not in s.markers:
                    certain.append(tile)
            else:
                maybe.append(tile)
    hidden_hal = 1 if (s.solo and view.hal is not None and view.hal.has_card
                       and s.phase != CHOOSE) else 0
    wanted = view.deck_count + hidden_hal + sum(view.seats[o].hand_count for o in others)
    rng.shuffle(certain)
    rng.shuffle(maybe)
    pool = (certain + maybe)[:wanted]
    rng.shuffle(pool)
    for other in others:
        count = view.seats[other].hand_count
        s.hands[other] = sorted(pool[:count])
        del pool[:count]
    s.deck = pool


def _deal_tiles(s: GkState, view: GkView, seat: int, others: list[int],
                rng: random.Random) -> None:
    placed = {t for stack in s.stacks.values() for t in stack}
    placed.update(s.tiles[seat])
    pool = [t for t in range(gd.N_TILES) if t not in placed]
    rng.shuffle(pool)
    supply = view.tile_supply_count
    s.supply_tiles = pool[:supply]
    del pool[:supply]
    boxed = gd.TILES_REMOVED_SMALL if s.players <= 3 else 0
    s.box = sorted(pool[:boxed])
    del pool[:boxed]
    if others:
        for tile in pool:
            s.tiles[rng.choice(others)].append(tile)
    for other in others:
        s.tiles[other].sort()


def _deal_characters(s: GkState, view: GkView, seat: int, others: list[int],
                     rng: random.Random) -> None:
    if s.phase != DRAFT:
        return
    known = set(s.draft_packs[seat]) | set(s.draft_kept[seat])
    pool = [c for c in range(gd.CHAR_BASE, gd.CHAR_BASE + gd.N_CHARS) if c not in known]
    rng.shuffle(pool)
    size = len(s.draft_packs[seat])
    kept = len(s.draft_kept[seat])
    for other in others:
        s.draft_packs[other] = sorted(pool[:size])
        del pool[:size]
        s.draft_kept[other] = pool[:kept]
        del pool[:kept]


def _sample_choices(s: GkState, view: GkView, seat: int, others: list[int],
                    rng: random.Random) -> None:
    """Hidden choices of the other seats: committed ones in a simultaneous step, and in the
    resolve / return steps the not yet resolved ones (inferred from the hand sizes)."""
    phase = s.phase
    unresolved: list[int] = []
    if phase == CHOOSE:
        unresolved = [o for o in others if view.seats[o].committed]
    elif phase in (RESOLVE, RETURN) and not s.solo:
        n = s.players
        if phase == RETURN:
            full = [view.seats[o].hand_count >= gd.HAND_SIZE for o in range(n)]
            order = [(s.first + i) % n for i in range(n)]
            done = 0
            for o in order:
                if full[o] and (o != seat or s.choice[seat] is not None):
                    break
                done += 1
            s.res_pos = done
        order = [(s.first + i) % n for i in range(s.res_pos, n)]
        unresolved = [o for o in order if o != seat]
    for other in unresolved:
        hand = s.hands[other]
        if not hand:
            continue
        card = rng.choice(sorted(hand))
        tiles = s.tiles[other]
        tile = rng.choice(tiles) if tiles and rng.random() < 0.5 else NO_TILE
        s.choice[other] = (card, tile, NO_TILE)
    if phase == DRAFT:
        for other in others:
            if view.seats[other].committed and s.draft_packs[other]:
                s.choice[other] = (rng.choice(s.draft_packs[other]), NO_TILE, NO_TILE)
    if phase == RETURN:
        for other in others:
            if view.seats[other].committed:
                s.ret_part[other] = len(RETURN_PARTS)
