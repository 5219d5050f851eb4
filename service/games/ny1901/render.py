"""Plain-text rendering of a position, for debugging and docs.

Each square is two characters: ``..`` street, ``**`` park, ``##`` blocked, an unowned lot
shows its name (``rA``), an owned empty lot shows the owner's seat and ``w`` (a worker stands
on it) or ``-``, a building shows its owner's seat and its level: ``s`` starting property,
``B``/``S``/``G`` bronze/silver/gold, ``L`` legendary.
"""

from __future__ import annotations

from . import data
from .rules import Rules, kind_name
from .shapes import SUPPLY, TILES
from .state import PHASE_NAMES, State


def render(state: State, rules: Rules) -> str:
    board = rules.board
    cells = [row.split() for row in board.rows]
    for seat in range(state.n):
        for index, lot in enumerate(board.lots):
            if state.lots[seat] >> index & 1:
                mark = "w" if state.staffed[seat] >> index & 1 else "-"
                for square in lot.squares:
                    x, y = board.xy(square)
                    cells[y][x] = f"{seat}{mark}"
        for tile_index, _, mask in state.buildings[seat]:
            tile = TILES[tile_index]
            char = "L" if tile.legendary >= 0 else "sBSG"[tile.level]
            rest = mask
            while rest:
                low = rest & -rest
                rest ^= low
                x, y = board.xy(low.bit_length() - 1)
                cells[y][x] = f"{seat}{char}"
    lines = ["    " + " ".join(f"{x:2d}" for x in range(board.width))]
    lines += [f"{y:2d}  " + " ".join(row) for y, row in enumerate(cells)]
    market = ", ".join(
        f"{c['district']} {c['size']}" for c in (kind_name(k) for k in state.market))
    lines.append("")
    lines.append(f"open market: {market or '-'}   future market: {len(state.future)} cards")
    lines.append(
        "streets: " + ", ".join(data.STREET_CARDS[s] for s in state.streets)
        + "   challenge: "
        + (data.CHALLENGES[state.challenge] if state.challenge >= 0 else "none"))
    for seat in range(state.n):
        left = SUPPLY - state.used[seat].bit_count()
        lines.append(
            f"seat {seat}: score {state.score(seat)}, free workers {state.free_workers(seat)}, "
            f"unbuilt tiles {left}, action cards used {state.cards[seat]:03b}")
    if state.phase == 6:
        lines.append("game over")
    else:
        lines.append(f"to move: seat {state.seat} ({PHASE_NAMES[state.phase]})")
    return "\n".join(lines)
