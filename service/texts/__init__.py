"""Human sentences for events and legal moves (issue 14), in the caller's language.

One module per game (``ny1901.py``, ``ginkgopolis.py``) turns an event's data -- as the
caller may see it, nothing more -- or a legal move into a message (``service.i18n``), which
this face renders in a language. Engines stay pure: they report data; the service layer
says it in words. A kind or a move type without a sentence gets a neutral one (its name), so
a new kind never breaks an answer; ``tests/i18n`` holds every kind of both games to a
sentence of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from service.i18n import Lang, Sentences, T, Text

from . import ginkgopolis, ny1901

Namer = Callable[[int], Text | str]
EventSentence = Callable[[str, Mapping[str, Any], Namer], Text | Sentences | None]
MoveSentence = Callable[[Any, Any], Text | Sentences]

GAMES: dict[str, tuple[Callable[[Any], Namer], EventSentence, MoveSentence]] = {
    ny1901.GAME: (ny1901.seat_names, ny1901.event, ny1901.move),
    ginkgopolis.GAME: (ginkgopolis.seat_names, ginkgopolis.event, ginkgopolis.move),
}


def _default_names(view: Any) -> Namer:
    return lambda seat: T("Seat {seat}", seat=seat)


def seat_names(game: str | None, view: Any) -> Namer:
    """Seat -> its name in sentences, from what ``view`` shows (a character, "Seat 2")."""
    entry = GAMES.get(game or "")
    return entry[0](view) if entry is not None else _default_names(view)


def event_message(
    game: str | None, kind: str, data: Mapping[str, Any], names: Namer
) -> Text | Sentences:
    """The sentence of an event of ``game`` from its ``data`` as the caller sees it."""
    entry = GAMES.get(game or "")
    said = entry[1](kind, data, names) if entry is not None else None
    return said if said is not None else T("Event: {kind}", kind=kind.replace("_", " "))


def event_text(
    game: str | None, kind: str, data: Mapping[str, Any], names: Namer, lang: Lang
) -> str:
    return event_message(game, kind, data, names).render(lang)


def move_texts(game: str | None, moves: Sequence[Any], view: Any, lang: Lang) -> list[str]:
    """One sentence per legal move, in ``moves``' order."""
    entry = GAMES.get(game or "")
    if entry is None:
        return [T("Move {move}", move=str(getattr(m, "type", m))).render(lang) for m in moves]
    say = entry[2]
    return [say(move, view).render(lang) for move in moves]


__all__ = ["event_message", "event_text", "move_texts", "seat_names"]
