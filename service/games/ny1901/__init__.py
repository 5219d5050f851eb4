"""New York 1901: a pure, deterministic rules engine (``ENGINE``).

``ENGINE`` plays each rules version on its shipped board: the first drawing (``data.py``) for
versions 1 and 2, the redrawn board (``boards/v3.json``) from version 3
(``ENGINE.board_for(version)``). ``Ny1901Engine(board=load_board_file(path))`` plays a custom
board under every version. ``ENGINE.render(state)`` draws a position as text.
"""

from __future__ import annotations

from .board import (
    Board,
    BoardError,
    default_board,
    load_board,
    load_board_file,
    redrawn_board,
    shipped_board,
)
from .engine import Ny1901Engine, Ny1901Options

ENGINE = Ny1901Engine()

__all__ = [
    "ENGINE",
    "Board",
    "BoardError",
    "Ny1901Engine",
    "Ny1901Options",
    "default_board",
    "load_board",
    "load_board_file",
    "redrawn_board",
    "shipped_board",
]
