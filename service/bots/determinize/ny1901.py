"""New York 1901 determinizer.

Everything in New York 1901 is public except the order of the future market and the engine's
RNG state. The future market's *contents* follow from what is visible: every lot card of the
districts in play that is neither on a character card (owned lot) nor in the open market is
in the future market. So a determinization rebuilds the state from the view field by field
and shuffles those unseen cards into a future market of the right size.

Per-turn flags that the view does not show are inferred: the end was triggered this turn
exactly when the triggering seat is the seat to move (it gets no later turn); the land grab
was used this turn in the ``land_grab`` / ``build`` steps; and in the ``acquired`` step the
first lot had 3 squares when land grab is not among the legal moves (harmless otherwise: the
flag only matters for that one decision).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

from service.games.ny1901 import data
from service.games.ny1901 import state as st
from service.games.ny1901.actions import Ny1901LandGrab
from service.games.ny1901.engine import Ny1901Engine
from service.games.ny1901.shapes import LEGENDARY_TILES, SUPPLY, TILE_INDEX, TILES
from service.games.ny1901.state import State
from service.games.ny1901.views import Ny1901View

_LEGEND_SLOT = {TILES[t].id: k for k, t in enumerate(LEGENDARY_TILES)}


class InconsistentView(ValueError):
    """The view cannot come from a New York 1901 state on this engine's board."""


def unseen_cards(engine: Ny1901Engine, view: Ny1901View) -> list[int]:
    """The lot-card kinds in the future market (as a sorted multiset), from the view alone."""
    board = engine.board_for(view.rules_version)
    in_play = {d for d in range(len(data.DISTRICTS)) if view.players > 2 or d != data.PINK}
    cards = Counter(lot.kind for lot in board.lots if lot.district in in_play)
    for index, lot_view in enumerate(view.lots):
        if lot_view.owner is not None:
            cards[board.lots[index].kind] -= 1
    for card in view.open_market:
        cards[_kind(card.district, card.size)] -= 1
    out: list[int] = []
    for kind in sorted(cards):
        if cards[kind] < 0:
            raise InconsistentView("more visible lot cards than exist")
        out.extend([kind] * cards[kind])
    return out


def _kind(district: str, size: int) -> int:
    return data.DISTRICTS.index(district) * 2 + (size - 2)


def determinize(
    engine: Ny1901Engine,
    view: Ny1901View,
    seat: int,
    rng: random.Random,
    legal: Sequence[Any] | None = None,
) -> State:
    """A state consistent with ``view`` (seat ``seat``'s view) with a sampled future market."""
    geometry = engine.geometry_for(view.rules_version)  # the match's own board
    n = view.players
    s = State.__new__(State)
    s.n = n
    s.rules_version = view.rules_version
    s.expert = view.expert
    s.challenge = data.CHALLENGES.index(view.challenge) if view.challenge else -1
    s.streets = tuple(data.STREET_CARDS.index(street.id) for street in view.streets)
    s.rng = rng.getrandbits(64)
    s.characters = tuple(data.DISTRICTS.index(sv.character_district) for sv in view.seats)
    s.seat = view.current_seat if view.current_seat is not None else 0
    s.phase = st.PHASE_NAMES.index(view.step)
    s.trigger = view.end_triggered_by if view.end_triggered_by is not None else -1
    s.left = view.last_turns_left if view.last_turns_left is not None else 0
    s.legend = [-1] * len(LEGENDARY_TILES)
    s.lots = [0] * n
    s.used = [0] * n
    s.cards = [0] * n
    s.points = [0] * n
    s.prestige = [0] * n
    s.buildings = [[] for _ in range(n)]
    for sv in view.seats:
        left = set(sv.tiles_left)
        used = 0
        points = 0
        for index in range(SUPPLY):
            if TILES[index].id not in left:
                used |= 1 << index
                points += TILES[index].points
        if sv.legendary is not None:
            s.legend[_LEGEND_SLOT[sv.legendary]] = sv.seat
            points += TILES[TILE_INDEX[sv.legendary]].points
        s.used[sv.seat] = used
        s.cards[sv.seat] = sum(1 << data.ACTION_CARDS.index(c) for c in sv.used_action_cards)
        s.points[sv.seat] = points
        s.prestige[sv.seat] = sv.score - points
    for index, lot_view in enumerate(view.lots):
        if lot_view.owner is not None:
            s.lots[lot_view.owner] |= 1 << index
    for b in view.buildings:
        tile = TILES[TILE_INDEX[b.tile]]
        placement = geometry.find(tile.shape, b.rotation, b.x, b.y)
        if placement is None:
            raise InconsistentView(f"building {b.tile} at {b.x},{b.y} is not a placement")
        s.buildings[b.owner].append((tile.index, placement.id, placement.mask))
    s.market = [_kind(c.district, c.size) for c in view.open_market]
    future = unseen_cards(engine, view)
    if len(future) != view.future_market_size:
        raise InconsistentView(
            f"{len(future)} unseen lot cards for a future market of {view.future_market_size}")
    rng.shuffle(future)
    s.future = future
    flags = 0
    if s.trigger >= 0 and s.trigger == s.seat and s.phase != st.OVER:
        flags |= st.TRIGGERED_NOW
    if s.phase in (st.GRAB, st.BUILD):
        flags |= st.GRAB_USED
    if s.phase == st.ACQUIRED and legal is not None and not any(
            isinstance(a, Ny1901LandGrab) for a in legal):
        flags |= st.FIRST_SIZE3
    s.flags = flags
    st.refresh(s, geometry)
    return s
