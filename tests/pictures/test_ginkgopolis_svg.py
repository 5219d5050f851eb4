"""Ginkgopolis SVG: parsed with xml.etree, checked against known positions."""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET
from typing import Any

from service.games import get
from service.games.base import dump_action
from service.pictures import render_view
from service.pictures.ginkgopolis_svg import SEAT_FILL, TILE_FILL, render

ENGINE: Any = get("ginkgopolis")
SVG = "{http://www.w3.org/2000/svg}"
NS = {"s": "http://www.w3.org/2000/svg"}


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    return root


def by_class(root: ET.Element, name: str) -> list[ET.Element]:
    return [e for e in root.iter() if name in (e.get("class") or "").split()]


def texts(root: ET.Element) -> list[str]:
    return ["".join(e.itertext()) for e in root.iter(f"{SVG}text")]


def played(turns: int, seed: int = 5, players: int = 2) -> Any:
    """A position after ``turns`` moves that prefer placing tiles (owned buildings, sites)."""
    state = ENGINE.setup(players, None, seed)
    rng = random.Random(seed)
    for _ in range(turns):
        active = ENGINE.active_seats(state)
        if not active:
            break
        seat = min(active)
        moves = ENGINE.legal_actions(state, seat)
        with_tile = [m for m in moves if getattr(m, "tile", None) is not None]
        state, _ = ENGINE.apply(state, seat, rng.choice(with_tile or moves))
    return state


def test_start_city_nine_buildings_and_twelve_tokens() -> None:
    state = ENGINE.setup(2, None, 1)
    view = ENGINE.view(state, 0)
    root = parse(render(view))
    assert root.get("role") == "img"
    assert root.find("s:title", NS) is not None and root.find("s:desc", NS) is not None
    buildings = by_class(root, "building")
    assert len(buildings) == 9
    assert {(b.get("data-colour"), b.get("data-number")) for b in buildings} == {
        (c, str(n)) for c in ("red", "blue", "yellow") for n in (1, 2, 3)}
    for b in buildings:
        tile = b.find("s:rect", NS)
        assert tile is not None and tile.get("fill") == TILE_FILL[b.get("data-colour", "")]
        assert b.get("data-number") in texts(b)
        assert "1 floor" in texts(b)
        assert not by_class(b, "owner")  # starting buildings belong to nobody
    tokens = by_class(root, "token")
    assert sorted(t.get("data-letter") for t in tokens) == list("ABCDEFGHIJKL")
    assert {t.get("data-letter") for t in tokens} <= set(texts(root))


def test_owned_buildings_heights_owners_and_construction_sites() -> None:
    state = played(40)
    view = ENGINE.view(state, 0)
    root = parse(render(view))
    drawn = {(b.get("data-x"), b.get("data-y")): b for b in by_class(root, "building")}
    assert len(drawn) == len(view.city)
    sites = 0
    owners = set()
    for building in view.city:
        element = drawn[(str(building.x), str(building.y))]
        assert element.get("data-height") == str(building.height)
        assert element.get("data-colour") == building.colour
        floors = "floor" if building.height == 1 else "floors"
        assert f"{building.height} {floors}" in texts(element)
        if building.owner is not None:
            owners.add(building.owner)
            disc = by_class(element, "owner")
            assert len(disc) == 1 and disc[0].get("data-owner") == str(building.owner)
            circle = disc[0].find("s:circle", NS)
            assert circle is not None and circle.get("fill") == SEAT_FILL[building.owner]
        markers = by_class(element, "construction-site")
        assert len(markers) == (1 if building.construction_site else 0)
        sites += building.construction_site
    assert owners == {0, 1}
    assert sites > 0
    assert len(by_class(root, "token")) == len(view.tokens)


def test_highlight_of_a_tile_placement_marks_its_target() -> None:
    state = ENGINE.setup(2, None, 1)
    view = ENGINE.view(state, 0)
    moves = ENGINE.legal_actions(state, 0)
    placing = [m for m in moves if getattr(m, "tile", None) is not None]
    assert placing
    plain = render(view)
    for move in placing:
        lit = render(view, highlight=move)
        assert lit != plain
        highlight = parse(lit).find(".//s:g[@id='gk-highlight']", NS)
        assert highlight is not None
        if move.card < 60:  # build up: the building named by the card
            colour, number = ("red", "blue", "yellow")[move.card // 20], move.card % 20 + 1
            target = next(b for b in view.city if b.colour == colour and b.number == number)
        else:  # urbanize: the token of the card's letter
            letter = "ABCDEFGHIJKL"[move.card - 60]
            target = next(t for t in view.tokens if t.letter == letter)
        assert highlight.get("data-squares") == f"{target.x},{target.y}"
        placed = by_class(highlight, "placed-tile")
        assert placed and str(move.tile % 20 + 1) in texts(placed[0])
        selected = {e.get("data-id") for e in by_class(parse(lit), "selected")}
        assert {str(move.card), str(move.tile)} <= selected
        assert render(view, highlight=dump_action(ENGINE, move)) == lit
    assert parse(plain).find(".//s:g[@id='gk-highlight']", NS) is None


def test_own_screen_only_in_own_view() -> None:
    state = ENGINE.setup(2, None, 1)
    mine = render(ENGINE.view(state, 0))
    assert "Behind your screen (seat 0)" in mine
    hand = ENGINE.view(state, 0).me.hand
    root = parse(mine)
    assert {e.get("data-id") for e in by_class(root, "hand-card")} == {str(c.id) for c in hand}
    spectator = render(ENGINE.view(state, None))
    assert "Behind your screen" not in spectator
    assert not by_class(parse(spectator), "hand-card")


def test_another_seats_hidden_information_never_changes_the_picture() -> None:
    state = played(7)
    other = ENGINE.loads(ENGINE.dumps(state))
    # seat 1's hand and screen change; everything public stays the same
    other.hands[1] = list(other.hands[1])
    other.deck = list(other.deck)
    other.hands[1][0], other.deck[0] = other.deck[0], other.hands[1][0]
    assert other.hands[1] != state.hands[1]
    assert ENGINE.view(other, 1) != ENGINE.view(state, 1)
    for seat in (None, 0):
        assert render(ENGINE.view(state, seat)) == render(ENGINE.view(other, seat))
    assert render(ENGINE.view(state, 1)) != render(ENGINE.view(other, 1))


def test_deterministic_and_render_view_dispatches() -> None:
    state = played(20)
    view = ENGINE.view(state, 1)
    assert render(view) == render(view)
    assert render_view(view) == render(view)
