"""Board pictures: SVG drawings of a seat's view (never of the state).

``render_view(view, highlight=None)`` picks the game's drawer from ``view.game``; each game
module offers ``render(view, *, highlight=None) -> str``. The output is deterministic (same view,
same bytes), accessible (``<title>``, ``<desc>``, text labels) and self-contained.

Depends only on ``service.games``.
"""

from __future__ import annotations

from typing import Any

SVG_MEDIA_TYPE = "image/svg+xml"


def render_view(view: Any, *, highlight: Any = None) -> str:
    """The SVG of ``view`` (an engine View model) with an optional legal move highlighted."""
    game = getattr(view, "game", None)
    if game == "ny1901":
        from . import ny1901_svg

        return ny1901_svg.render(view, highlight=highlight)
    if game == "ginkgopolis":
        from . import ginkgopolis_svg

        return ginkgopolis_svg.render(view, highlight=highlight)
    raise ValueError(f"no picture for game {game!r}")


def supported(game: str) -> bool:
    return game in {"ny1901", "ginkgopolis"}
