"""Legal move generation and move effects (NY-S, NY-T, NY-A, NY-C, NY-E, NY-X3).

``Rules`` is bound to one board's ``Geometry``. ``legal(state)`` lists every legal next step
of the seat to move; ``apply(state, action)`` validates the step directly (with a stable
refusal code) and returns a new state plus events. Both share the predicates below, and the
property tests check that they agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import rng as rng_draws
from ..base import NOT_LEGAL, Event, IllegalAction
from . import data
from .actions import (
    CONSTRUCTION_BOOM,
    END_TURN,
    LAND_GRAB,
    MARKET_SHIFT,
    Ny1901Acquire,
    Ny1901Build,
    Ny1901ConstructionBoom,
    Ny1901EndTurn,
    Ny1901LandGrab,
    Ny1901MarketShift,
    Ny1901Rebuild,
    Ny1901ReturnLot,
)
from .board import spread
from .shapes import (
    CANONICAL_ROTATIONS,
    LEGENDARY_TILES,
    START_TILE,
    SUPPLY,
    TILE_INDEX,
    TILES,
    TWIN_OF,
    Geometry,
)
from .state import (
    ACQUIRED,
    BOOM,
    BUILD,
    BUILT,
    BUILT_BOTH,
    BUILT_GRAB,
    CARD_BOOM,
    CARD_GRAB,
    CARD_SHIFT,
    FIRST_BUILD_ENDED,
    FIRST_SIZE3,
    GRAB,
    GRAB_USED,
    LATE_GRAB,
    OPTION1_BUILT,
    OVER,
    START,
    TRIGGERED_NOW,
    State,
)

# Stable refusal codes (besides base.NOT_YOUR_TURN, GAME_OVER, NOT_LEGAL).
WRONG_STEP = "wrong_step"
"""The action type is not allowed at this step of the turn."""
CARD_USED = "action_card_used"
NO_FREE_WORKER = "no_free_worker"
UNKNOWN_LOT = "unknown_lot"
LOT_TAKEN = "lot_taken"
CARD_NOT_IN_MARKET = "card_not_in_market"
LAND_GRAB_NO_THREE = "land_grab_three_square_lot"
LAND_GRAB_UNAVAILABLE = "land_grab_unavailable"
MARKET_SHIFT_UNAVAILABLE = "market_shift_unavailable"
TILE_UNAVAILABLE = "tile_unavailable"
TILE_NOT_CANONICAL = "tile_not_canonical"
TECHNOLOGY_TOO_LOW = "technology_too_low"
LEGENDARY_UNAVAILABLE = "legendary_unavailable"
BAD_PLACEMENT = "illegal_placement"
NOT_ON_OWN_LAND = "not_on_own_free_land"
NO_DEMOLITION = "nothing_to_demolish"
CANNOT_DEMOLISH = "cannot_demolish"
NOT_ENOUGH_WORKERS = "not_enough_workers"
MUST_ACQUIRE = "must_acquire"
MUST_BUILD = "must_build"
NOT_STUCK = "not_stuck"
STUCK = "stuck_must_return_lot"
NOTHING_TO_BUILD = "nothing_to_build"
BOOM_AFTER_END = "construction_boom_after_end_trigger"
NOT_STAFFED = "lot_not_staffed"

PLAIN = 0
REBUILD = 1
_MEMO_SIZE = 4096


def kind_name(kind: int) -> dict[str, Any]:
    return {"district": data.DISTRICTS[kind >> 1], "size": 2 + (kind & 1)}


class Rules:
    def __init__(self, geometry: Geometry) -> None:
        self.geometry = geometry
        self.board = geometry.board
        board = geometry.board
        count = len(geometry.placements)
        self._count = count
        self._actions: list[Any] = [None] * (2 * len(TILES) * count)
        self._acquire = tuple(Ny1901Acquire(lot.name) for lot in board.lots)
        self._return = tuple(Ny1901ReturnLot(lot.name) for lot in board.lots)
        self._lot_kind = tuple(lot.kind for lot in board.lots)
        self._lot_masks = tuple(lot.mask for lot in board.lots)
        self._kind_bits = tuple(sum(1 << i for i in lots) for lots in board.kind_lots)
        self._memo: dict[int, dict[int, list[int]]] = {}
        self._tiles_memo: dict[tuple[int, int, int, bool], list[int]] = {}

    def clear_memo(self) -> None:
        """Forget the memoised placement fits and tile lists (benchmarks, memory)."""
        self._memo.clear()
        self._tiles_memo.clear()

    # -----------------------------------------------------------------------------------
    # Small predicates
    def thresholds(self, state: State) -> tuple[int, int]:
        return data.EXPERT_THRESHOLDS if state.expert else data.THRESHOLDS

    def tech(self, state: State, seat: int) -> int:
        """NY-T1: the highest level the seat may build."""
        score = state.points[seat] + state.prestige[seat]
        silver, gold = self.thresholds(state)
        return data.GOLD if score >= gold else data.SILVER if score >= silver else data.BRONZE

    def owned_lots(self, state: State) -> int:
        owned = 0
        for lots in state.lots:
            owned |= lots
        return owned

    def available_tiles(self, state: State, seat: int, levels: int) -> list[int]:
        """Tiles the seat may place now whose level bit is in ``levels`` (bit L for level L):
        canonical supply tiles (one per group of identical tiles) and legendary ones."""
        used = state.used[seat]
        top = self.tech(state, seat)
        legend_ok = top >= data.GOLD and seat not in state.legend
        key = (used, top, levels, legend_ok)
        out = self._tiles_memo.get(key)
        if out is None:
            out = []
            for index in range(SUPPLY):
                if used >> index & 1:
                    continue
                tile = TILES[index]
                if tile.level > top or not levels >> tile.level & 1:
                    continue
                twin = TWIN_OF[index]
                if twin != index and not used >> twin & 1:
                    continue  # the identical first twin is still unused: it is the move
                out.append(index)
            if len(self._tiles_memo) >= _MEMO_SIZE:
                self._tiles_memo.clear()
            self._tiles_memo[key] = out
        if legend_ok and levels >> data.GOLD & 1:
            out = out + [t for k, t in enumerate(LEGENDARY_TILES) if state.legend[k] < 0]
        return out

    def tile_refusal(self, state: State, seat: int, tile_index: int) -> str | None:
        """Why the seat may not place this tile now (None: it may)."""
        tile = TILES[tile_index]
        if tile.legendary >= 0:
            if self.tech(state, seat) < data.GOLD:
                return TECHNOLOGY_TOO_LOW
            if state.legend[tile.legendary] >= 0 or seat in state.legend:
                return LEGENDARY_UNAVAILABLE
            return None
        if state.used[seat] >> tile_index & 1:
            return TILE_UNAVAILABLE
        if tile.level > self.tech(state, seat):
            return TECHNOLOGY_TOO_LOW
        twin = TWIN_OF[tile_index]
        if twin != tile_index and not state.used[seat] >> twin & 1:
            return TILE_NOT_CANONICAL
        return None

    def can_acquire(self, state: State, seat: int) -> bool:
        return bool(state.market) and state.free_workers(seat) > 0

    # -----------------------------------------------------------------------------------
    # Placement generation
    def _fits(self, free: int) -> dict[int, list[int]]:
        """Placements (by shape) lying entirely inside ``free``, memoised: a seat's free land
        changes rarely compared with how often its moves are listed."""
        found = self._memo.get(free)
        if found is not None:
            return found
        by_low = self.geometry.by_low
        found = {}
        rest = free
        while rest:
            low = rest & -rest
            rest ^= low
            for shape, mask, pid in by_low[low.bit_length() - 1]:
                if mask & free == mask:
                    pids = found.get(shape)
                    if pids is None:
                        found[shape] = [pid]
                    else:
                        pids.append(pid)
        if len(self._memo) >= _MEMO_SIZE:
            self._memo.clear()
        self._memo[free] = found
        return found

    def plain_builds(self, state: State, seat: int, first_only: bool = False) -> list[Any]:
        """NY-A2/A3/A6: every placement of an available tile on empty own land."""
        free = state.land[seat] & ~state.built[seat]
        if not free:
            return []
        tiles = self.available_tiles(state, seat, 0b1110)
        if not tiles:
            return []
        fits = self._fits(free)
        out: list[Any] = []
        actions = self._actions
        count = self._count
        placements = self.geometry.placements
        for tile in tiles:
            pids = fits.get(TILES[tile].shape)
            if not pids:
                continue
            if first_only:
                return [True]
            base = tile * count
            for pid in pids:
                action = actions[base + pid]
                if action is None:
                    p = placements[pid]
                    action = actions[base + pid] = Ny1901Build(
                        TILES[tile].id, p.rotation, p.x, p.y)  # type: ignore[arg-type]
                out.append(action)
        return out

    def _demolition(self, state: State, seat: int, level: int) -> tuple[int, int]:
        """(squares usable by a new building of ``level``, squares it may demolish)."""
        keep = demolish = 0
        for tile, _, mask in state.buildings[seat]:
            if TILES[tile].level >= level:
                keep |= mask
            else:
                demolish |= mask
        return state.land[seat] & ~keep, demolish

    def rebuild_staffing_ok(self, state: State, seat: int, mask: int) -> bool:
        """NY-A5: after the rebuild every owned lot left entirely empty needs a worker; the
        seat's workers (including those the new building releases) must suffice."""
        gone = 0
        for _, _, placed in state.buildings[seat]:
            if placed & mask:
                gone |= placed
        after = (state.built[seat] & ~gone) | mask
        empty = 0
        owned = state.lots[seat]
        masks = self._lot_masks
        while owned:
            low = owned & -owned
            owned ^= low
            if not masks[low.bit_length() - 1] & after:
                empty += 1
        return empty <= data.WORKERS

    def rebuilds(self, state: State, seat: int, first_only: bool = False) -> list[Any]:
        """NY-A4/A5/T2: every demolish-and-rebuild placement."""
        if not state.built[seat]:
            return []
        out: list[Any] = []
        top = self.tech(state, seat)
        actions = self._actions
        offset = len(TILES) * self._count
        count = self._count
        placements = self.geometry.placements
        fits: dict[int, list[int]] | None = None
        for level in range(data.BRONZE, top + 1):
            usable, demolish = self._demolition(state, seat, level)
            if not demolish:
                continue
            tiles = self.available_tiles(state, seat, 1 << level)
            if not tiles:
                continue
            if fits is None:
                fits = self._fits(self._demolition(state, seat, data.GOLD)[0])
            good: dict[int, list[int]] = {}
            for shape in {TILES[t].shape for t in tiles}:
                for pid in fits.get(shape, ()):
                    mask = placements[pid].mask
                    if (mask & demolish and not mask & ~usable
                            and self.rebuild_staffing_ok(state, seat, mask)):
                        good.setdefault(shape, []).append(pid)
            for tile in tiles:
                good_pids = good.get(TILES[tile].shape)
                if not good_pids:
                    continue
                if first_only:
                    return [True]
                base = offset + tile * count
                for pid in good_pids:
                    action = actions[base + pid]
                    if action is None:
                        p = placements[pid]
                        action = actions[base + pid] = Ny1901Rebuild(
                            TILES[tile].id, p.rotation, p.x, p.y)  # type: ignore[arg-type]
                    out.append(action)
        return out

    def acquisitions(self, state: State, two_only: bool) -> list[Any]:
        """NY-A1 (and NY-C3 with ``two_only``): every free lot matching an open-market card."""
        taken = self.owned_lots(state)
        ranked: list[tuple[int, int, Any]] = []
        seat = state.seat
        free = state.land[seat] & ~state.built[seat]
        near: int | None = None  # squares next to the seat's land, when first needed
        tiles = self.available_tiles(state, seat, 0b1110)
        kinds = sorted(set(state.market))
        for kind in kinds:
            if two_only and kind & 1:
                continue
            for index in self.board.kind_lots[kind]:
                if not taken >> index & 1:
                    # Listed first: lots on which a tile can then be built, then lots next
                    # to the seat's land (room for a bigger tile later), then the rest.
                    mask = self.board.lots[index].mask
                    fits = self._fits(free | mask) if free else self._fits(mask)
                    if any(TILES[tile].shape in fits for tile in tiles):
                        rank = 0
                    else:
                        if near is None:
                            near = spread(state.land[seat], self.board.neighbors)
                        rank = 1 if mask & near else 2
                    ranked.append((rank, len(ranked), self._acquire[index]))
        return [action for _, _, action in sorted(ranked, key=lambda r: (r[0], r[1]))]

    def is_stuck(self, state: State, seat: int) -> bool:
        """NY-A8: no free worker and neither a build nor a rebuild is possible."""
        return (
            state.free_workers(seat) == 0
            and not self.plain_builds(state, seat, True)
            and not self.rebuilds(state, seat, True)
        )

    def can_market_shift(self, state: State, seat: int) -> bool:
        """NY-C2 (ruling: the future market must hold at least 4 cards)."""
        return not state.cards[seat] & CARD_SHIFT and len(state.future) >= data.MARKET_SIZE

    def can_land_grab(self, state: State, seat: int) -> bool:
        """NY-C3: after a 2-square first acquisition, with a free worker, a non-empty future
        market and a 2-square card in the open market. Rules version 2 (revised ruling: any
        time in the turn) also after an option-1 build, in the steps that offer it."""
        if state.phase != ACQUIRED and (
                state.rules_version < 2 or state.phase not in (BUILT_BOTH, BUILT_GRAB)):
            return False
        return self._grab_open(state, seat)

    def _grab_open(self, state: State, seat: int) -> bool:
        """NY-C3 whatever the step: card unused, no 3-square lot this turn, a free worker (one
        a build released counts at once), a future market and a 2-square card to take."""
        return (
            not state.cards[seat] & CARD_GRAB
            and not state.flags & FIRST_SIZE3
            and state.free_workers(seat) > 0
            and bool(state.future)
            and self._two_square_lot_free(state)
        )

    def _two_square_lot_free(self, state: State) -> bool:
        """``bool(self.acquisitions(state, True))`` without ranking the lots."""
        taken = self.owned_lots(state)
        kind_bits = self._kind_bits
        return any(not kind & 1 and kind_bits[kind] & ~taken for kind in state.market)

    def can_boom(self, state: State, seat: int) -> bool:
        """NY-C1: unused card, the first build did not trigger the end, a build exists."""
        return (
            not state.cards[seat] & CARD_BOOM
            and not state.flags & FIRST_BUILD_ENDED
            and bool(self.plain_builds(state, seat, True))
        )

    # -----------------------------------------------------------------------------------
    # Legal steps
    def legal(self, state: State) -> list[Any]:
        """Every legal step, the ones that end or pass the turn last (NY-A9): a client that
        always posts the first listed move plays the game to its end."""
        seat = state.seat
        phase = state.phase
        if phase == START:
            acquire = self.can_acquire(state, seat)
            rebuilds = self.rebuilds(state, seat)
            if acquire:
                out = self.acquisitions(state, False)
            else:
                out = self.plain_builds(state, seat)
                if not out and not rebuilds and state.free_workers(seat) == 0:
                    return [self._return[i] for i in _bit_indices(state.staffed[seat])]
            out.extend(rebuilds)
            if self.can_market_shift(state, seat):
                out.append(MARKET_SHIFT)
            if not acquire:
                out.append(END_TURN)
            return out
        if phase in (ACQUIRED, BUILD):
            out = self.plain_builds(state, seat)
            if phase == ACQUIRED and self.can_land_grab(state, seat):
                out.append(LAND_GRAB)
            out.append(END_TURN)
            return out
        if phase == GRAB:
            return self.acquisitions(state, True)
        if phase == BUILT:
            return [CONSTRUCTION_BOOM, END_TURN]
        if phase == BOOM:
            return self.plain_builds(state, seat)
        # Rules version 2 only (NY-C3 revised): the steps after an option-1 build.
        if phase == BUILT_BOTH:
            return [CONSTRUCTION_BOOM, LAND_GRAB, END_TURN]
        if phase == BUILT_GRAB:
            return [LAND_GRAB, END_TURN]
        if phase == LATE_GRAB:
            return self.acquisitions(state, True)
        return []

    # -----------------------------------------------------------------------------------
    # Effects
    def apply(self, state: State, action: Any) -> tuple[State, list[Event]]:
        seat = state.seat
        phase = state.phase
        kind = type(action)
        if kind is Ny1901Build:
            return self._apply_build(state, seat, action, PLAIN)
        if kind is Ny1901Acquire:
            return self._apply_acquire(state, seat, action)
        if kind is Ny1901EndTurn:
            if phase == START and self.can_acquire(state, seat):
                raise IllegalAction(MUST_ACQUIRE, "acquire a lot or demolish and rebuild")
            if phase == START and self.is_stuck(state, seat):
                raise IllegalAction(STUCK, "no free worker and nothing to build: return a lot")
            if phase not in (START, ACQUIRED, BUILD, BUILT, BUILT_BOTH, BUILT_GRAB):
                raise IllegalAction(WRONG_STEP, "the turn cannot end at this step")
            new = state.copy()
            events: list[Event] = [Event("end_turn", {"seat": seat})]
            self.end_turn(new, events)
            return new, events
        if kind is Ny1901Rebuild:
            return self._apply_build(state, seat, action, REBUILD)
        if kind is Ny1901LandGrab:
            if phase != ACQUIRED:
                if state.rules_version < 2:
                    raise IllegalAction(WRONG_STEP, "land grab follows a first acquisition")
                if phase not in (BUILT, BUILT_BOTH, BUILT_GRAB) or (
                        phase == BUILT and not state.flags & OPTION1_BUILT):
                    raise IllegalAction(WRONG_STEP, "land grab follows an acquisition or the "
                                        "build of an acquire-and-build turn")
            if state.cards[seat] & CARD_GRAB:
                raise IllegalAction(CARD_USED, "land grab was already used")
            if state.flags & FIRST_SIZE3:
                raise IllegalAction(LAND_GRAB_NO_THREE,
                                    "no land grab in a turn with a 3-square lot")
            if not self.can_land_grab(state, seat):
                raise IllegalAction(LAND_GRAB_UNAVAILABLE,
                                    "land grab needs a free worker, a future market and a "
                                    "2-square card in the open market")
            new = state.copy()
            new.cards[seat] |= CARD_GRAB
            new.flags |= GRAB_USED
            new.phase = GRAB if phase == ACQUIRED else LATE_GRAB
            return new, [Event("land_grab", {"seat": seat})]
        if kind is Ny1901MarketShift:
            return self._apply_market_shift(state, seat)
        if kind is Ny1901ConstructionBoom:
            if phase != BUILT and (state.rules_version < 2
                                   or phase not in (BUILT_BOTH, BUILT_GRAB)):
                raise IllegalAction(WRONG_STEP, "construction boom follows the first build")
            if state.cards[seat] & CARD_BOOM:
                raise IllegalAction(CARD_USED, "construction boom was already used")
            if state.flags & FIRST_BUILD_ENDED:
                raise IllegalAction(BOOM_AFTER_END, "the first build triggered the end")
            if phase == BUILT_GRAB:
                raise IllegalAction(NOTHING_TO_BUILD, "no second build is possible")
            new = state.copy()
            new.cards[seat] |= CARD_BOOM
            new.phase = BOOM
            return new, [Event("construction_boom", {"seat": seat})]
        if kind is Ny1901ReturnLot:
            return self._apply_return(state, seat, action)
        raise IllegalAction(NOT_LEGAL, f"not a New York 1901 action: {action!r}")

    def _apply_acquire(self, state: State, seat: int, action: Ny1901Acquire) -> tuple[
            State, list[Event]]:
        phase = state.phase
        if phase not in (START, GRAB, LATE_GRAB):
            raise IllegalAction(WRONG_STEP, "no acquisition at this step of the turn")
        index = self.board.lot_index.get(action.lot) if isinstance(action.lot, str) else None
        if index is None:
            raise IllegalAction(UNKNOWN_LOT, f"no lot {action.lot!r} on this board")
        if state.free_workers(seat) == 0:
            raise IllegalAction(NO_FREE_WORKER, "all your workers are on the board")
        if self.owned_lots(state) >> index & 1:
            raise IllegalAction(LOT_TAKEN, f"lot {action.lot} is already owned")
        lot = self.board.lots[index]
        kind = lot.kind
        if kind not in state.market:
            raise IllegalAction(CARD_NOT_IN_MARKET, f"no {lot.size}-square "
                                f"{data.DISTRICTS[lot.district]} card in the open market")
        if phase != START and lot.size == 3:
            raise IllegalAction(LAND_GRAB_NO_THREE, "no 3-square lot in a land grab turn")
        new = state.copy()
        new.market.remove(kind)
        bit = 1 << index
        new.lots[seat] |= bit
        new.land[seat] |= lot.mask
        new.staffed[seat] |= bit
        events = [Event("acquire", {"seat": seat, "lot": lot.name, "card": kind_name(kind)})]
        if phase == START:
            new.phase = ACQUIRED
            if lot.size == 3:
                new.flags |= FIRST_SIZE3
        elif phase == GRAB:
            new.phase = BUILD
        elif self.can_boom(new, seat):  # LATE_GRAB (v2): no build follows the land grab
            new.phase = BUILT
        else:
            self.end_turn(new, events)
        return new, events

    def _apply_market_shift(self, state: State, seat: int) -> tuple[State, list[Event]]:
        if state.phase != START:
            raise IllegalAction(WRONG_STEP, "market shift is played at the start of a turn")
        if state.cards[seat] & CARD_SHIFT:
            raise IllegalAction(CARD_USED, "market shift was already used")
        if not self.can_market_shift(state, seat):
            raise IllegalAction(MARKET_SHIFT_UNAVAILABLE, "the future market holds < 4 cards")
        if self.is_stuck(state, seat):
            raise IllegalAction(STUCK, "no free worker and nothing to build: return a lot")
        new = state.copy()
        new.cards[seat] |= CARD_SHIFT
        removed = new.market
        size = data.MARKET_SIZE
        new.market = [new.future.pop() for _ in range(size)]
        under, new.rng = rng_draws.shuffled(new.rng, removed)
        new.future = under + new.future  # the top of the future market is its end
        return new, [Event("market_shift", {
            "seat": seat,
            "removed": [kind_name(k) for k in removed],
            "revealed": [kind_name(k) for k in new.market],
        })]

    def _apply_return(self, state: State, seat: int, action: Ny1901ReturnLot) -> tuple[
            State, list[Event]]:
        if state.phase != START:
            raise IllegalAction(WRONG_STEP, "a lot is returned at the start of a turn")
        index = self.board.lot_index.get(action.lot) if isinstance(action.lot, str) else None
        if index is None:
            raise IllegalAction(UNKNOWN_LOT, f"no lot {action.lot!r} on this board")
        if not self.is_stuck(state, seat):
            raise IllegalAction(NOT_STUCK, "you may return a lot only when stuck (NY-A8)")
        if not state.staffed[seat] >> index & 1:
            raise IllegalAction(NOT_STAFFED, f"lot {action.lot} holds none of your workers")
        lot = self.board.lots[index]
        new = state.copy()
        bit = 1 << index
        new.lots[seat] &= ~bit
        new.staffed[seat] &= ~bit
        new.land[seat] &= ~lot.mask
        new.future.insert(0, lot.kind)
        events = [Event("return_lot", {"seat": seat, "lot": lot.name,
                                       "card": kind_name(lot.kind)})]
        self.end_turn(new, events)
        return new, events

    def _apply_build(self, state: State, seat: int, action: Any, how: int) -> tuple[
            State, list[Event]]:
        phase = state.phase
        if how == PLAIN:
            if phase == START:
                if self.can_acquire(state, seat):
                    raise IllegalAction(MUST_ACQUIRE, "acquire a lot before building")
            elif phase not in (ACQUIRED, BUILD, BOOM):
                raise IllegalAction(WRONG_STEP, "no build at this step of the turn")
        elif phase != START:
            raise IllegalAction(WRONG_STEP, "demolish and rebuild is a whole turn's option")
        tile_index = TILE_INDEX.get(action.tile, START_TILE)
        if tile_index == START_TILE:
            raise IllegalAction(TILE_UNAVAILABLE, f"{action.tile!r} is not a tile you can place")
        refusal = self.tile_refusal(state, seat, tile_index)
        if refusal:
            raise IllegalAction(refusal, f"you may not place {action.tile} now")
        tile = TILES[tile_index]
        rotation = action.rotation
        if rotation not in CANONICAL_ROTATIONS[tile.shape]:
            raise IllegalAction(BAD_PLACEMENT, f"rotation {rotation} of {action.tile} repeats "
                                f"another rotation or is out of range")
        placement = self.geometry.find(tile.shape, rotation, action.x, action.y)
        if placement is None:
            footprint = self.geometry.footprint(tile.shape, rotation, action.x, action.y)
            if footprint is not None and not footprint & ~self.board.lot_mask:
                raise IllegalAction(BAD_PLACEMENT, "the tile lies on lots but no side of it "
                                    "is along a street or park (NY-A6)")
            raise IllegalAction(BAD_PLACEMENT, "the tile must lie on lots and touch a street "
                                "or park (NY-A6)")
        mask = placement.mask
        if how == PLAIN:
            if mask & ~(state.land[seat] & ~state.built[seat]):
                raise IllegalAction(NOT_ON_OWN_LAND, "a build needs empty squares of your land")
            gone: list[tuple[int, int, int]] = []
        else:
            usable, demolish = self._demolition(state, seat, tile.level)
            if mask & ~state.land[seat]:
                raise IllegalAction(NOT_ON_OWN_LAND, "a rebuild stays on your own land")
            if not mask & state.built[seat]:
                raise IllegalAction(NO_DEMOLITION, "a rebuild must replace a building")
            if mask & ~usable or not mask & demolish:
                raise IllegalAction(CANNOT_DEMOLISH, "a new building must be of a higher level "
                                    "than every building it replaces; gold stays (NY-T2)")
            if not self.rebuild_staffing_ok(state, seat, mask):
                raise IllegalAction(NOT_ENOUGH_WORKERS, "not enough workers for the lots "
                                    "the rebuild leaves empty (NY-A5)")
            gone = [b for b in state.buildings[seat] if b[2] & mask]
        new = state.copy()
        buildings = [b for b in new.buildings[seat] if not b[2] & mask]
        buildings.append((tile_index, placement.id, mask))
        new.buildings[seat] = buildings
        built = 0
        for b in buildings:
            built |= b[2]
        new.built[seat] = built
        # Workers: a lot holds one exactly when it holds none of the owner's buildings.
        staffed = 0
        owned = new.lots[seat]
        masks = self._lot_masks
        while owned:
            low = owned & -owned
            owned ^= low
            if not masks[low.bit_length() - 1] & built:
                staffed |= low
        released = state.staffed[seat] & ~staffed
        placed = staffed & ~state.staffed[seat]
        new.staffed[seat] = staffed
        if tile.legendary >= 0:
            new.legend[tile.legendary] = seat
        else:
            new.used[seat] |= 1 << tile_index
        new.points[seat] += tile.points
        prestige = self.gold_prestige(new, seat, tile_index, mask)
        new.prestige[seat] += prestige
        public: dict[str, Any] = {
            "seat": seat, "tile": tile.id, "rotation": placement.rotation,
            "x": placement.x, "y": placement.y, "points": tile.points,
        }
        if prestige:
            public["gold_prestige"] = prestige
        if released:
            public["workers_released"] = [self.board.lots[i].name for i in _bit_indices(released)]
        if how == REBUILD:
            public["demolished"] = [TILES[b[0]].id for b in gone]
            public["workers_placed"] = [self.board.lots[i].name for i in _bit_indices(placed)]
        events = [Event("rebuild" if how == REBUILD else "build", public)]
        first = phase != BOOM
        if (new.trigger < 0 and tile.legendary < 0
                and SUPPLY - new.used[seat].bit_count() <= data.END_UNBUILT):
            new.trigger = seat
            new.left = new.n - 1
            new.flags |= TRIGGERED_NOW
            if first:
                new.flags |= FIRST_BUILD_ENDED
            events.append(Event("end_triggered", {"seat": seat, "reason": "tiles"}))
        if new.rules_version >= 2:
            self._after_build(new, seat, first and how == PLAIN, first, events)
        elif first and self.can_boom(new, seat):
            new.phase = BUILT
        else:
            self.end_turn(new, events)
        return new, events

    def _after_build(self, state: State, seat: int, option1: bool, first: bool,
                     events: list[Event]) -> None:
        """Rules version 2 (NY-C3 revised): after a build of an acquire-and-build turn (the
        first or the construction boom's), Land Grab may be played with a free worker -- one
        the build released counts at once. The step fixes the moves on offer."""
        if option1:
            state.flags |= OPTION1_BUILT
        boom = first and self.can_boom(state, seat)
        grab = bool(state.flags & OPTION1_BUILT) and self._grab_open(state, seat)
        if boom:
            state.phase = BUILT_BOTH if grab else BUILT
        elif grab:
            state.phase = BUILT_GRAB
        else:
            self.end_turn(state, events)

    def gold_prestige(self, state: State, seat: int, tile_index: int, mask: int) -> int:
        """NY-X3: 1 point per opponent bronze, silver or starting-property building sharing
        a side with a newly built gold building."""
        if state.challenge != data.CHALLENGES.index("gold_prestige"):
            return 0
        if TILES[tile_index].level != data.GOLD:
            return 0
        around = spread(mask, self.board.neighbors)
        points = 0
        for other in range(state.n):
            if other == seat:
                continue
            for tile, _, placed in state.buildings[other]:
                if placed & around and TILES[tile].level < data.GOLD:
                    points += data.GOLD_PRESTIGE_POINTS
        return points

    def end_turn(self, state: State, events: list[Event]) -> None:
        """NY-A9 refill, NY-E1 market trigger, NY-E2 last round, next seat (NY-S5)."""
        revealed = []
        while len(state.market) < data.MARKET_SIZE and state.future:
            kind = state.future.pop()
            state.market.append(kind)
            revealed.append(kind_name(kind))
        if revealed:
            events.append(Event("market_refill", {"revealed": revealed}))
        if len(state.market) < data.MARKET_SIZE and state.trigger < 0:
            state.trigger = state.seat
            state.left = state.n - 1
            state.flags |= TRIGGERED_NOW
            events.append(Event("end_triggered", {"seat": state.seat, "reason": "market"}))
        if state.trigger >= 0 and not state.flags & TRIGGERED_NOW:
            state.left -= 1
        state.flags = 0
        if state.trigger >= 0 and state.left == 0:
            state.phase = OVER
            events.append(Event("game_over", {}))
            return
        state.seat = (state.seat + 1) % state.n
        state.phase = START


def _bit_indices(mask: int) -> Sequence[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out
