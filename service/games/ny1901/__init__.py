"""New York 1901: a pure, deterministic rules engine (``ENGINE``).

``Ny1901Engine(board=load_board_file(path))`` plays on a custom board; ``ENGINE`` uses the
shipped reconstruction (``data.py``). ``ENGINE.render(state)`` draws a position as text.
"""

from __future__ import annotations

from .board import Board, BoardError, default_board, load_board, load_board_file
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
]
