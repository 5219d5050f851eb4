"""What one seat (or a spectator) may see of a Ginkgopolis match.

Public: the city (tiles, heights, owners, construction sites, tokens), cards in front of the
screens, the discard pile, the counts of the deck, the tile supply and each hand, New Hand
tokens, resources placed in the city, who has already committed in a simultaneous step, and
everything about Hal (he has no screen). Private (``me``): the seat's own hand, tiles,
resources and VP behind the screen, its resources left in the supply and its pending hidden
choice. Never: other screens, hands, choices, the deck order, the RNG.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from .city import xy
from .data import (
    CHAR_BASE,
    CHARACTERS,
    COLOURS,
    LETTERS,
    N_CARDS,
    N_TILES,
    NUMBERS,
    URB_BASE,
    card_label,
)
from .flow import RETURN_PARTS, return_group_tiles
from .render import render_city
from .rules import item_options, token_placements
from .state import (
    CHOOSE,
    DRAFT,
    NEW_HAND,
    OVER,
    PHASE_NAMES,
    PLACE_TOKEN,
    RESOLVE,
    RETURN,
    TAKE_ITEM,
    GkState,
)

Colour = Literal["red", "blue", "yellow"]
_FROZEN = ConfigDict(frozen=True)


class GkCard(BaseModel):
    model_config = _FROZEN
    id: int
    label: str
    kind: Literal["building", "urbanization", "character"]
    colour: Colour | None = None
    number: int | None = None
    letter: str | None = None
    character_set: int | None = None


class GkTile(BaseModel):
    model_config = _FROZEN
    id: int
    label: str
    colour: Colour
    number: int


class GkBuilding(BaseModel):
    model_config = _FROZEN
    x: int
    y: int
    colour: Colour
    number: int
    height: int
    tiles: list[GkTile]
    """Bottom to top; the top tile names the building."""
    owner: int | None
    """The owning seat; None if unowned (a starting building) or Hal's."""
    hal: bool
    construction_site: bool


class GkToken(BaseModel):
    model_config = _FROZEN
    letter: str
    x: int
    y: int


class GkSeatView(BaseModel):
    model_config = _FROZEN
    seat: int
    first_player: bool
    hand_count: int
    new_hand_tokens: int
    cards_in_front: list[GkCard]
    resources_in_city: int
    committed: bool
    """In a simultaneous step: this seat has already committed its (hidden) choice."""


class GkChoiceView(BaseModel):
    model_config = _FROZEN
    new_hand: bool
    card: GkCard | None
    tile: GkTile | None
    hal_card: GkCard | None


class GkPrivateView(BaseModel):
    model_config = _FROZEN
    seat: int
    hand: list[GkCard]
    tiles: list[GkTile]
    resources: int
    resources_in_supply: int
    """Resources of this seat's colour left in the common supply (with the count behind the
    screen and in the city it would reveal the screen, so it is shown to the seat only)."""
    vp: int
    choice: GkChoiceView | None
    draft_pack: list[GkCard]
    draft_kept: list[GkCard]
    returning: list[GkTile] | None
    """GK-E1: tiles committed so far to go back into the supply (this seat only)."""
    return_part: GkReturnPart | None
    """GK-E1: the part of the commitment to decide now (colour and number range)."""


class GkReturnPart(BaseModel):
    model_config = _FROZEN
    colour: Colour
    low: int
    high: int
    tiles: list[GkTile]


class GkTokenChoice(BaseModel):
    model_config = _FROZEN
    x: int
    y: int
    """Where the moved token goes."""
    others: list[GkToken]
    """The other tokens that move with it, to these spaces (rules version 3, when no free
    space keeps the alphabetical order; otherwise empty)."""


class GkPendingView(BaseModel):
    model_config = _FROZEN
    seat: int
    kind: Literal["take_item", "place_token"]
    token: str | None
    items: list[str]
    """For ``take_item``, to the deciding seat only: what is still available."""
    spaces: list[GkToken]
    """For ``place_token``: where the token may go (letter = the moved token), each once."""
    choices: list[GkTokenChoice]
    """For ``place_token``: every legal ``place_token`` move, in the order of the legal
    moves (several may send the token to one space with different other tokens moving)."""


class GkHalView(BaseModel):
    model_config = _FROZEN
    vp: int
    resources_in_supply: int
    resources_in_city: int
    cards_in_front: list[GkCard]
    has_card: bool
    expert: bool


class GkView(BaseModel):
    model_config = _FROZEN
    game: Literal["ginkgopolis"] = "ginkgopolis"
    rules_version: int
    players: int
    phase: Literal["draft", "choose", "resolve", "return_tiles", "over"]
    turn: int
    first_player: int
    active_seats: list[int]
    city: list[GkBuilding]
    tokens: list[GkToken]
    deck_count: int
    tile_supply_count: int
    discard: list[GkCard]
    seats: list[GkSeatView]
    me: GkPrivateView | None
    pending: GkPendingView | None
    tile_supply_exhausted: int
    end_triggered: bool
    hal: GkHalView | None
    text: str
    """The city as text (``render.render_city``)."""


def card_view(card: int) -> GkCard:
    return _CARD_VIEWS[card]


def tile_view(tile: int) -> GkTile:
    return _TILE_VIEWS[tile]


def _card_view(card: int) -> GkCard:
    if card < URB_BASE:
        return GkCard(
            id=card,
            label=card_label(card),
            kind="building",
            colour=COLOURS[card // NUMBERS],
            number=card % NUMBERS + 1,
        )
    if card < CHAR_BASE:
        return GkCard(
            id=card, label=card_label(card), kind="urbanization", letter=LETTERS[card - URB_BASE]
        )
    char = CHARACTERS[card - CHAR_BASE]
    return GkCard(
        id=card,
        label=card_label(card),
        kind="character",
        colour=COLOURS[char.colour],
        character_set=char.set,
    )


def _tile_view(tile: int) -> GkTile:
    return GkTile(
        id=tile, label=card_label(tile), colour=COLOURS[tile // NUMBERS], number=tile % NUMBERS + 1
    )


_CARD_VIEWS: tuple[GkCard, ...] = tuple(_card_view(c) for c in range(N_CARDS))
_TILE_VIEWS: tuple[GkTile, ...] = tuple(_tile_view(t) for t in range(N_TILES))


def resolving_seat(s: GkState) -> int:
    """The seat whose follow-up decision is pending in the resolve phase."""
    return 0 if s.solo else (s.first + s.res_pos - 1) % s.players


def active_seats(s: GkState) -> frozenset[int]:
    phase = s.phase
    if phase in (CHOOSE, DRAFT):
        return frozenset(i for i, c in enumerate(s.choice) if c is None)
    if phase == RETURN:
        return frozenset(i for i, p in enumerate(s.ret_part) if p < len(RETURN_PARTS))
    if phase == RESOLVE and s.pending:
        return frozenset((resolving_seat(s),))
    return frozenset()


def _committed(s: GkState, seat: int) -> bool:
    if s.phase in (CHOOSE, DRAFT):
        return s.choice[seat] is not None
    if s.phase == RETURN:
        return s.ret_part[seat] == len(RETURN_PARTS)
    return False


def _private(s: GkState, seat: int) -> GkPrivateView:
    choice = s.choice[seat]
    choice_view = None
    if choice is not None and s.phase != DRAFT:
        card, tile, hal_card = choice
        choice_view = GkChoiceView(
            new_hand=card == NEW_HAND,
            card=card_view(card) if card >= 0 else None,
            tile=tile_view(tile) if tile >= 0 else None,
            hal_card=card_view(hal_card) if hal_card >= 0 else None,
        )
    kept = list(s.draft_kept[seat])
    if s.phase == DRAFT and choice is not None:
        kept.append(choice[0])
    returning = s.returns[seat] if s.phase == RETURN else None
    part = None
    if s.phase == RETURN and s.ret_part[seat] < len(RETURN_PARTS):
        colour, low, high = RETURN_PARTS[s.ret_part[seat]]
        part = GkReturnPart(
            colour=COLOURS[colour],
            low=low,
            high=high,
            tiles=[tile_view(t) for t in return_group_tiles(s, seat)],
        )
    return GkPrivateView(
        seat=seat,
        hand=[card_view(c) for c in sorted(s.hands[seat])],
        tiles=[tile_view(t) for t in s.tiles[seat]],
        resources=s.res_screen[seat],
        resources_in_supply=s.res_supply[seat],
        vp=s.vp[seat],
        choice=choice_view,
        draft_pack=[card_view(c) for c in s.draft_packs[seat] if choice is None or c != choice[0]]
        if s.phase == DRAFT
        else [],
        draft_kept=[card_view(c) for c in kept],
        returning=[tile_view(t) for t in returning] if returning is not None else None,
        return_part=part,
    )


def _pending(s: GkState, viewer: int | None) -> GkPendingView | None:
    if s.phase != RESOLVE or not s.pending:
        return None
    seat = resolving_seat(s)
    if s.pending == TAKE_ITEM:
        # The options depend on the seat's own resource supply: shown to that seat only.
        items = item_options(s, seat) if viewer == seat else []
        return GkPendingView(seat=seat, kind="take_item", token=None, items=items, spaces=[],
                             choices=[])
    assert s.pending == PLACE_TOKEN
    letter = s.pending_arg
    spaces: list[GkToken] = []
    choices: list[GkTokenChoice] = []
    seen: set[int] = set()
    for key, others in token_placements(s):
        x, y = xy(key)
        if key not in seen:
            seen.add(key)
            spaces.append(GkToken(letter=LETTERS[letter], x=x, y=y))
        choices.append(GkTokenChoice(x=x, y=y, others=[
            GkToken(letter=LETTERS[who], x=xy(where)[0], y=xy(where)[1])
            for who, where in others]))
    return GkPendingView(
        seat=seat, kind="place_token", token=LETTERS[letter], items=[], spaces=spaces,
        choices=choices,
    )


def make_view(s: GkState, seat: int | None) -> GkView:
    city = []
    for key in sorted(s.stacks, key=lambda k: (xy(k)[1], xy(k)[0])):
        stack = s.stacks[key]
        x, y = xy(key)
        owner = s.owner[key]
        top = stack[-1]
        city.append(
            GkBuilding(
                x=x,
                y=y,
                colour=COLOURS[top // NUMBERS],
                number=top % NUMBERS + 1,
                height=len(stack),
                tiles=[tile_view(t) for t in stack],
                owner=owner if 0 <= owner < s.players else None,
                hal=s.solo and owner == s.hal,
                construction_site=key in s.markers,
            )
        )
    tokens = []
    for letter, key in enumerate(s.tokens):
        if key in s.stacks:
            continue  # being moved (a pending place_token decision)
        x, y = xy(key)
        tokens.append(GkToken(letter=LETTERS[letter], x=x, y=y))
    seats = [
        GkSeatView(
            seat=i,
            first_player=i == s.first,
            hand_count=len(s.hands[i]),
            new_hand_tokens=s.nh[i],
            cards_in_front=[card_view(c) for c in s.front[i]],
            resources_in_city=s.in_city[i],
            committed=_committed(s, i),
        )
        for i in range(s.players)
    ]
    hal = None
    if s.solo:
        hal = GkHalView(
            vp=s.vp[s.hal],
            resources_in_supply=s.res_supply[s.hal],
            resources_in_city=s.in_city[s.hal],
            cards_in_front=[card_view(c) for c in s.front[s.hal]],
            has_card=s.hal_card >= 0 or (s.phase == CHOOSE and s.choice[0] is not None),
            expert=s.expert,
        )
    me = _private(s, seat) if seat is not None and 0 <= seat < s.players else None
    phase_name = PHASE_NAMES[s.phase]
    return GkView(
        rules_version=s.rules_version,
        players=s.players,
        phase=phase_name,
        turn=s.turn,
        first_player=s.first,
        active_seats=sorted(active_seats(s)) if s.phase != OVER else [],
        city=city,
        tokens=tokens,
        deck_count=len(s.deck),
        tile_supply_count=len(s.supply_tiles),
        discard=[card_view(c) for c in s.discard],
        seats=seats,
        me=me,
        pending=_pending(s, seat),
        tile_supply_exhausted=s.runs,
        end_triggered=s.end,
        hal=hal,
        text=render_city(s),
    )
