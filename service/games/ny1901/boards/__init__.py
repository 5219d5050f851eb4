"""Shipped New York 1901 board files (package data, read by ``board.redrawn_board``).

``v3.json``: the redrawn board, played by rules version 3 and later (docs/ny1901-board.md).
The first drawing, of rules versions 1 and 2, stays in ``data.py``.
"""
