"""New York 1901 in sentences: one per event (from the event's data as the caller sees it)
and one per legal move. Everything New York 1901 reports is public; players are named by
their characters (the view's seats). Czech terms are the Czech rulebook's, German ones the
German review's (the action and challenge cards keep their English names there).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from service.catalogue import ny1901_text as names
from service.games.ny1901 import data
from service.games.ny1901.shapes import TILES
from service.i18n import NN_, TN, Sentences, T, Text, plural, sentences

from .common import attribute, number, space, strings

GAME = "ny1901"
Namer = Callable[[int], Text | str]

_TILES = {tile.id: tile for tile in TILES}
_LEGENDARY = {lid: name for lid, name, *_ in data.LEGENDARY}

# A lot card of the open or future market, by district (the colour agrees with "card").
CARDS: dict[str, tuple[str, str]] = {
    "red": NN_("red card for {n} square", "red card for {n} squares"),
    "blue": NN_("blue card for {n} square", "blue card for {n} squares"),
    "yellow": NN_("yellow card for {n} square", "yellow card for {n} squares"),
    "green": NN_("green card for {n} square", "green card for {n} squares"),
    "pink": NN_("pink card for {n} square", "pink card for {n} squares"),
}


def seat_names(view: Any) -> Namer:
    """Seat -> its character's name (public: every seat and spectator sees the same)."""
    characters = [str(attribute(seat, "character", "")) for seat in attribute(view, "seats") or ()]

    def name(seat: int) -> Text | str:
        if 0 <= seat < len(characters) and characters[seat]:
            return characters[seat]
        return T("Seat {seat}", seat=seat)

    return name


def tile_name(tile: str) -> str:
    """A tile as sentences name it: a supply tile by its id (S3), a legendary skyscraper by
    its name (Singer), a start property in words."""
    return _LEGENDARY.get(tile, tile)


def _demolished(tile: str) -> Text | str:
    return T("the starting property") if tile == "start" else tile_name(tile)


def _points(tile: str, fallback: int = 0) -> Text:
    known = _TILES.get(tile)
    return plural(names.POINTS, known.points if known is not None else fallback)


def _cards(data: Mapping[str, Any], name: str) -> list[Text]:
    out = []
    for card in data.get(name) or ():
        district, size = attribute(card, "district", ""), attribute(card, "size", 0)
        forms = CARDS.get(str(district))
        if forms is not None and isinstance(size, int):
            out.append(plural(forms, size))
    return out


def _workers(data: Mapping[str, Any]) -> list[Text]:
    out = []
    released = strings(data, "workers_released")
    if released:
        out.append(TN("{n} worker went back from lot {lots}.",
                      "{n} workers went back from lots {lots}.", len(released), lots=released))
    placed = strings(data, "workers_placed")
    if placed:
        out.append(TN("{n} worker was placed on lot {lots}.",
                      "{n} workers were placed on lots {lots}.", len(placed), lots=placed))
    return out


def event(kind: str, data: Mapping[str, Any], player: Namer) -> Text | Sentences | None:
    """The sentence of one event (None: a kind without one)."""
    who = player(number(data, "seat"))
    if kind == "acquire":
        return T("{player} acquired lot {lot}.", player=who, lot=data.get("lot", ""))
    if kind in ("build", "rebuild"):
        tile = str(data.get("tile", ""))
        points = plural(names.POINTS, number(data, "points"))
        prestige = number(data, "gold_prestige")
        values: dict[str, Any] = {"player": who, "tile": tile_name(tile), "points": points}
        if kind == "build":
            main = (T("{player} built {tile} ({points}; Gold Prestige: {bonus}).",
                      bonus=plural(names.POINTS, prestige), **values) if prestige else
                    T("{player} built {tile} ({points}).", **values))
        else:
            values["demolished"] = [_demolished(t) for t in strings(data, "demolished")]
            main = (T("{player} demolished {demolished} and rebuilt with {tile} ({points}; "
                      "Gold Prestige: {bonus}).", bonus=plural(names.POINTS, prestige),
                      **values) if prestige else
                    T("{player} demolished {demolished} and rebuilt with {tile} ({points}).",
                      **values))
        return sentences(main, *_workers(data))
    if kind == "end_turn":
        return T("{player} ended the turn.", player=who)
    if kind in names.ACTION_CARDS:
        played = T("{player} played {card}.", player=who, card=T(names.ACTION_CARDS[kind]))
        if kind == "market_shift":
            return sentences(played, T("The new open market: {cards}.",
                                       cards=_cards(data, "revealed")))
        return played
    if kind == "return_lot":
        return T("{player} returned lot {lot}; its card went under the future market.",
                 player=who, lot=data.get("lot", ""))
    if kind == "market_refill":
        return T("The open market was refilled: {cards}.", cards=_cards(data, "revealed"))
    if kind == "end_triggered":
        if data.get("reason") == "market":
            return T("{player} could not refill the open market: the end of the game is "
                     "triggered, the other players play one last turn.", player=who)
        return T("{player} has few unbuilt skyscrapers left: the end of the game is "
                 "triggered, the other players play one last turn.", player=who)
    if kind == "game_over":
        return T("The game is over.")
    return None


def move(action: Any, view: Any) -> Text | Sentences:
    """The sentence of one legal move (an imperative, no final stop)."""
    kind = attribute(action, "type", "")
    if kind == "acquire":
        return T("Acquire lot {lot}", lot=attribute(action, "lot", ""))
    if kind in ("build", "rebuild"):
        tile = str(attribute(action, "tile", ""))
        values = {
            "tile": tile_name(tile), "points": _points(tile),
            "space": space(attribute(action, "x", 0), attribute(action, "y", 0)),
            "degrees": 90 * int(attribute(action, "rotation", 0) or 0),
        }
        if kind == "build":
            return T("Build {tile} ({points}) at {space}, turned {degrees}°", **values)
        return T("Demolish and rebuild with {tile} ({points}) at {space}, turned {degrees}°",
                 **values)
    if kind == "return_lot":
        return T("Return lot {lot} (its card goes under the future market)",
                 lot=attribute(action, "lot", ""))
    if kind in names.ACTION_CARDS:
        return T("Play {card}", card=T(names.ACTION_CARDS[kind]))
    if kind == "end_turn":
        return T("End the turn")
    return T("Move {move}", move=kind)
