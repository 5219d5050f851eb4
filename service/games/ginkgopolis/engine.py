"""The Ginkgopolis engine behind the contract of ``service/games/base.py``."""

from __future__ import annotations

import itertools
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..base import (
    GAME_OVER,
    NOT_LEGAL,
    NOT_YOUR_TURN,
    Event,
    IllegalAction,
    OpponentResult,
    Result,
    ScoreLine,
    SeatResult,
    check_rules_version,
)
from . import codes, flow, rules, scoring, state
from .actions import (
    TOKEN_LETTERS,
    GkAction,
    GkChooseCard,
    GkDraftCharacter,
    GkNewHand,
    GkPlaceToken,
    GkReturnTiles,
    GkTakeItem,
    GkTokenAt,
)
from .city import OFFSET, Placement, pos, token_destinations, xy
from .events import GkEvent
from .flow import RETURN_PARTS
from .state import (
    CHOOSE,
    DRAFT,
    NEW_HAND,
    NO_TILE,
    OVER,
    PLACE_TOKEN,
    RESOLVE,
    RETURN,
    TAKE_ITEM,
    GkState,
)
from .views import GkView, active_seats, make_view, resolving_seat

# Engine-specific refusal codes (stable).
WRONG_STEP: Final = "wrong_step"
"""The action's type is not accepted in the current step."""
UNKNOWN_ACTION: Final = "unknown_action"

_NEW_HAND: Final = GkNewHand()
_TAKE = {"resource": GkTakeItem("resource"), "tile": GkTakeItem("tile")}


class GkOptions(BaseModel):
    """Variants of a Ginkgopolis match; every one has a default."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    characters: Literal["intro", "draft"] = Field(
        default="intro",
        description="The characters: the intro game's fixed sets, dealt at random, or the "
        "draft (GK-S4, 2-5 players).",
    )
    hal_expert: bool = Field(
        default=False, description="Hal's expert level (GK-H4, the solo game only)."
    )


def _is_int(value: object) -> bool:
    return type(value) is int


def choose_actions(s: GkState, seat: int) -> list[Any]:
    hand = sorted(s.hands[seat])
    tiles = s.tiles[seat]
    out: list[Any] = []
    if s.solo:
        for card in hand:
            for hal_card in hand:
                if hal_card == card:
                    continue
                out.append(GkChooseCard(card, None, hal_card))
                out.extend(GkChooseCard(card, tile, hal_card) for tile in tiles)
        return out
    for card in hand:
        out.append(GkChooseCard(card))
        out.extend(GkChooseCard(card, tile) for tile in tiles)
    if s.nh[seat] > 0:
        out.append(_NEW_HAND)
    return out


def return_actions(s: GkState, seat: int) -> list[Any]:
    """Every subset of the returnable tiles (sorted ids), smallest bitmask first."""
    tiles = flow.return_group_tiles(s, seat)
    n = len(tiles)
    return [
        GkReturnTiles(tuple(tiles[i] for i in range(n) if mask >> i & 1)) for mask in range(1 << n)
    ]


def place_token_action(placement: Placement) -> GkPlaceToken:
    space, others = placement
    x, y = xy(space)
    return GkPlaceToken(x, y, tuple(GkTokenAt(TOKEN_LETTERS[who], *xy(where))
                                    for who, where in others))


class GinkgopolisEngine:
    id = "ginkgopolis"
    title = "Ginkgopolis"
    min_players = 1
    max_players = 5
    Options = GkOptions
    Action = GkAction
    View = GkView
    Events = GkEvent
    refusal_codes = codes.REFUSALS  # every IllegalAction code, with its rule ids
    rules_versions: tuple[int, ...] = (1, 2, 3, 4)
    """1: the rules as first shipped (until 2026-12-01).
    2: the deck is rebuilt at the draw that empties it (GK-T4); the solo player moves Hal's
    urbanization token (GK-H2); a New Hand is public and carried out at once (GK-T1).
    3: version 2, and the urbanization tokens keep their alphabetical order along the walk
    around the city's real edge (GK-T2, ``city.walk_placements``): only spaces that keep it
    are offered, and when other tokens must move the fewest do, the player choosing among
    equally small re-letterings (``GkPlaceToken.others``).
    4: version 3, and when other tokens must move, every order-keeping layout that moves the
    fewest of them is offered (GK-T2, ``city.fewest_moves``; for Hal's token too, GK-H2):
    the moved tokens may take free spaces of the walk, not only the spaces already held
    plus one."""

    # ------------------------------------------------------------------ lifecycle

    def setup(self, players: int, options: BaseModel | None, seed: int,
              rules_version: int | None = None) -> GkState:
        version = check_rules_version(self.id, self.rules_versions, rules_version)
        if not self.min_players <= players <= self.max_players:
            raise ValueError(f"Ginkgopolis is for 1 to 5 players, not {players}")
        opts = (
            options
            if isinstance(options, GkOptions)
            else GkOptions.model_validate(options.model_dump() if options is not None else {})
        )
        return flow.setup(players, seed, opts.characters == "draft", opts.hal_expert, version)

    def rules_version(self, s: GkState) -> int:
        return s.rules_version

    def active_seats(self, s: GkState) -> frozenset[int]:
        return active_seats(s)

    # ------------------------------------------------------------------ moves

    def legal_actions(self, s: GkState, seat: int) -> list[Any]:
        phase = s.phase
        if phase == CHOOSE:
            if 0 <= seat < s.players and s.choice[seat] is None:
                return choose_actions(s, seat)
            return []
        if phase == RESOLVE:
            if not s.pending or seat != resolving_seat(s):
                return []
            if s.pending == TAKE_ITEM:
                return [_TAKE[item] for item in rules.item_options(s, seat)]
            return [place_token_action(p) for p in rules.token_placements(s)]
        if phase == DRAFT:
            if 0 <= seat < s.players and s.choice[seat] is None:
                return [GkDraftCharacter(c) for c in s.draft_packs[seat]]
            return []
        if phase == RETURN and 0 <= seat < s.players and s.ret_part[seat] < len(RETURN_PARTS):
            return return_actions(s, seat)
        return []

    def apply(self, s: GkState, seat: int, action: Any) -> tuple[GkState, list[Event]]:
        if s.phase == OVER:
            raise IllegalAction(GAME_OVER, "the game is over")
        if not _is_int(seat) or seat not in active_seats(s):
            raise IllegalAction(NOT_YOUR_TURN, "this seat may not act now")
        events: list[Event] = []
        kind = type(action)
        if kind is GkChooseCard:
            self._check_choice(s, seat, action)
            new = s.clone()
            tile = NO_TILE if action.tile is None else action.tile
            hal_card = NO_TILE if action.hal_card is None else action.hal_card
            flow.commit_choice(new, seat, action.card, tile, hal_card, events)
        elif kind is GkNewHand:
            if s.phase != CHOOSE:
                raise IllegalAction(WRONG_STEP, "no card choice now")
            if s.solo or s.nh[seat] <= 0:
                raise IllegalAction(NOT_LEGAL, "no New Hand token left")
            new = s.clone()
            if s.rules_version >= 2:  # GK-T1: announced and carried out at once, in public
                flow.new_hand(new, seat, events)
            else:
                flow.commit_choice(new, seat, NEW_HAND, NO_TILE, NO_TILE, events)
        elif kind is GkTakeItem:
            if s.phase != RESOLVE or s.pending != TAKE_ITEM:
                raise IllegalAction(WRONG_STEP, "no item to take now")
            if action.item not in rules.item_options(s, seat):
                raise IllegalAction(NOT_LEGAL, "that item is not available")
            new = s.clone()
            rules.take_item(new, seat, action.item, events)
            flow.finish_follow_up(new, events)
        elif kind is GkPlaceToken:
            if s.phase != RESOLVE or s.pending != PLACE_TOKEN:
                raise IllegalAction(WRONG_STEP, "no token to place now")
            if not (_is_int(action.x) and _is_int(action.y)):
                raise IllegalAction(NOT_LEGAL, "coordinates must be integers")
            if not (-OFFSET < action.x < OFFSET and -OFFSET < action.y < OFFSET):
                raise IllegalAction(NOT_LEGAL, "the token may not go there")
            key = pos(action.x, action.y)
            letter = s.pending_arg
            if s.rules_version >= 3:
                placement = self._placement(s, action)
                new = s.clone()
                new.pending = state.NO_PENDING
                rules.place_along_walk(new, letter, placement, events)
            else:
                destinations, relabel = token_destinations(s.stacks, s.tokens, letter,
                                                           s.tokens[letter])
                if key not in destinations or action.others != ():
                    raise IllegalAction(NOT_LEGAL, "the token may not go there")
                new = s.clone()
                new.pending = state.NO_PENDING
                rules.place_token(new, letter, key, relabel, events)
            flow.finish_follow_up(new, events)
        elif kind is GkDraftCharacter:
            if s.phase != DRAFT:
                raise IllegalAction(WRONG_STEP, "no draft now")
            if not _is_int(action.character) or action.character not in s.draft_packs[seat]:
                raise IllegalAction(NOT_LEGAL, "that character is not in your pack")
            new = s.clone()
            flow.commit_draft(new, seat, action.character, events)
        elif kind is GkReturnTiles:
            if s.phase != RETURN:
                raise IllegalAction(WRONG_STEP, "no tiles to return now")
            tiles = action.tiles
            if not isinstance(tiles, tuple) or not all(_is_int(t) for t in tiles):
                raise IllegalAction(NOT_LEGAL, "tiles must be a list of tile ids")
            if any(a >= b for a, b in itertools.pairwise(tiles)):
                raise IllegalAction(NOT_LEGAL, "list the tiles once each, in increasing order")
            returnable = set(flow.return_group_tiles(s, seat))
            if not returnable.issuperset(tiles):
                raise IllegalAction(
                    NOT_LEGAL, "return tiles from behind your screen, of the current part"
                )
            new = s.clone()
            flow.commit_returns(new, seat, tiles, events)
        else:
            raise IllegalAction(UNKNOWN_ACTION, "not a Ginkgopolis action")
        return new, events

    @staticmethod
    def _placement(s: GkState, action: GkPlaceToken) -> Placement:
        """The placement ``action`` names (rules version 3 and later); NOT_LEGAL if none."""
        for placement in rules.token_placements(s):
            if place_token_action(placement) == action:
                return placement
        raise IllegalAction(NOT_LEGAL, "the token may not go there, or not with those moves")

    @staticmethod
    def _check_choice(s: GkState, seat: int, action: GkChooseCard) -> None:
        if s.phase != CHOOSE:
            raise IllegalAction(WRONG_STEP, "no card choice now")
        hand = s.hands[seat]
        card, tile, hal_card = action.card, action.tile, action.hal_card
        if not _is_int(card) or card not in hand:
            raise IllegalAction(NOT_LEGAL, "that card is not in your hand")
        if tile is not None and (not _is_int(tile) or tile not in s.tiles[seat]):
            raise IllegalAction(NOT_LEGAL, "that tile is not behind your screen")
        if s.solo:
            if hal_card is None or not _is_int(hal_card) or hal_card not in hand:
                raise IllegalAction(NOT_LEGAL, "give Hal another card of your hand")
            if hal_card == card:
                raise IllegalAction(NOT_LEGAL, "give Hal another card of your hand")
        elif hal_card is not None:
            raise IllegalAction(NOT_LEGAL, "there is no Hal in this game")

    # ------------------------------------------------------------------ views, results

    def view(self, s: GkState, seat: int | None) -> GkView:
        return make_view(s, seat)

    def result(self, s: GkState) -> Result | None:
        if s.phase != OVER:
            return None
        totals = []
        lines_per_seat = []
        for seat in range(s.players):
            lines = [ScoreLine(rule=rule, points=p) for rule, p in scoring.breakdown(s, seat)]
            lines_per_seat.append(lines)
            totals.append(sum(line.points for line in lines))
        opponents: list[OpponentResult] = []
        if s.solo:  # GK-H3: Hal scores like a player and is ranked with seat 0
            hal_lines = self.hal_breakdown(s)
            hal_total = sum(line.points for line in hal_lines)
            opponents.append(
                OpponentResult(
                    name="Hal",
                    score=hal_total,
                    breakdown=hal_lines,
                    rank=1 + (totals[0] > hal_total),
                )
            )
        everyone = [*totals, *(o.score for o in opponents)]
        seats = [
            SeatResult(
                seat=seat,
                score=totals[seat],
                breakdown=lines_per_seat[seat],
                rank=1 + sum(1 for t in everyone if t > totals[seat]),
            )
            for seat in range(s.players)
        ]
        return Result(
            seats=seats,
            winners=[r.seat for r in seats if r.rank == 1],  # GK-F3: equal totals share
            opponents=opponents,
        )

    def hal_breakdown(self, s: GkState) -> list[ScoreLine]:
        """Hal's final score lines (solo only): VP, end-of-game cards, districts."""
        if not s.solo:
            return []
        return [ScoreLine(rule=rule, points=p) for rule, p in scoring.breakdown(s, s.hal)]

    # ------------------------------------------------------------------ serialization

    def dumps(self, s: GkState) -> bytes:
        return state.dumps(s)

    def loads(self, data: bytes) -> GkState:
        return state.loads(data)


ENGINE: Final = GinkgopolisEngine()
