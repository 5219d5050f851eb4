"""Build New York 1901 positions directly through the state module (scenario tests).

The scenario tests name lots and squares of the first drawing of the board, so ``blank``
defaults to ``FIRST_DRAWING`` (rules version 2, the newest version on that board; version 3
plays the same rules on the redrawn board, and its tests pass ``rules_version=3``).
``give`` and ``put`` use the board of the state's own rules version."""

from __future__ import annotations

from typing import Any

from service.games.ny1901 import ENGINE, Ny1901Options
from service.games.ny1901 import state as st
from service.games.ny1901.data import DISTRICTS
from service.games.ny1901.shapes import SUPPLY, TILE_INDEX, TILES
from service.games.ny1901.state import State

E = ENGINE
FIRST_DRAWING = 2
"""The newest rules version played on the first drawing of the board (``data.py``)."""
BOARD = ENGINE.board_for(FIRST_DRAWING)
GEO = ENGINE.geometry_for(FIRST_DRAWING)
REDRAWN = 3
"""The first rules version played on the redrawn board (``boards/v3.json``)."""
BOARD_V3 = ENGINE.board_for(REDRAWN)
GEO_V3 = ENGINE.geometry_for(REDRAWN)


def kind(district: str, size: int) -> int:
    return DISTRICTS.index(district) * 2 + size - 2


def blank(players: int = 4, challenge: str = "none", expert: bool = False,
          streets: tuple[str, str, str] = ("broadway", "wall_street", "pine_thames"),
          seed: int = 1, rules_version: int | None = FIRST_DRAWING) -> State:
    """A start where nobody owns anything (as in the expert game) with the given cards in
    play; ``expert`` picks the technology thresholds (NY-S6). ``rules_version``: None for
    the newest; by default the newest on the first drawing (the lot names the scenario
    tests use)."""
    options = Ny1901Options(expert=True, challenge=challenge,
                            streets=list(streets))
    state = E.setup(players, options, seed, rules_version)
    state.expert = expert
    return state


def give(state: State, seat: int, *lots: str) -> State:
    """The seat owns these lots (their cards leave the markets)."""
    board = E.board_for(state.rules_version)
    for name in lots:
        index = board.lot_index[name]
        state.lots[seat] |= 1 << index
        lot_kind = board.lots[index].kind
        if lot_kind in state.future:
            state.future.remove(lot_kind)
        elif lot_kind in state.market:
            state.market.remove(lot_kind)
    st.refresh(state, E.geometry_for(state.rules_version))
    return state


def put(state: State, seat: int, tile: str, rotation: int, x: int, y: int) -> State:
    """A building of ``seat`` (its lots must be given first); marks the tile used."""
    index = TILE_INDEX[tile]
    shape = TILES[index].shape
    geometry = E.geometry_for(state.rules_version)
    placement = geometry.find(shape, rotation, x, y)
    assert placement is not None, (tile, rotation, x, y)
    state.buildings[seat] = [*state.buildings[seat], (index, placement.id, placement.mask)]
    if TILES[index].legendary >= 0:
        state.legend[TILES[index].legendary] = seat
    elif index < SUPPLY:
        state.used[seat] |= 1 << index
    st.refresh(state, geometry)
    return state


def use_tiles(state: State, seat: int, *tiles: str) -> State:
    """Mark supply tiles as spent (demolished earlier) without a building on the board."""
    for tile in tiles:
        state.used[seat] |= 1 << TILE_INDEX[tile]
    return state


def legal(state: State) -> list[Any]:
    return E.legal_actions(state, state.seat)


def of_type(actions: list[Any], type_: str) -> list[Any]:
    return [a for a in actions if a.type == type_]


def square(x: int, y: int) -> int:
    return 1 << (y * BOARD.width + x)
