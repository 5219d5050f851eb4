"""New York 1901 SVG: parsed with xml.etree, checked against known positions."""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from service.games.base import dump_action
from service.games.ny1901 import ENGINE, data
from service.games.ny1901.actions import Ny1901Acquire, Ny1901Build
from service.games.ny1901.views import Ny1901BuildingView, Ny1901Square
from service.pictures import render_view
from service.pictures.ny1901_svg import (
    DISTRICT_FILL,
    SEAT_FILL,
    footprint,
    render,
)

NS = {"s": "http://www.w3.org/2000/svg"}
SVG = "{http://www.w3.org/2000/svg}"


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    return root


def by_class(root: ET.Element, name: str) -> list[ET.Element]:
    return [e for e in root.iter() if name in (e.get("class") or "").split()]


def texts(root: ET.Element) -> list[str]:
    return ["".join(e.itertext()) for e in root.iter(f"{SVG}text")]


def first_build_position(seed: int = 4) -> tuple[Any, int, Any]:
    """A 3-player game in which seat 0 acquired a lot and may build: (state, seat, build)."""
    state = ENGINE.setup(3, None, seed)
    acquire = next(m for m in ENGINE.legal_actions(state, 0) if isinstance(m, Ny1901Acquire))
    state, _ = ENGINE.apply(state, 0, acquire)
    build = next(m for m in ENGINE.legal_actions(state, 0) if isinstance(m, Ny1901Build))
    return state, 0, build


def test_accessible_document_with_title_and_desc() -> None:
    state = ENGINE.setup(3, None, 1)
    root = parse(render(ENGINE.view(state, 0)))
    assert root.get("role") == "img"
    labelled = (root.get("aria-labelledby") or "").split()
    ids = {e.get("id"): e for e in root.iter() if e.get("id")}
    assert labelled and all(i in ids for i in labelled)
    assert ids["ny-title"].tag == f"{SVG}title"
    assert "seat 0" in (ids["ny-title"].text or "")
    desc = ids["ny-desc"].text or ""
    assert "Seat 0" in desc and "Open market" in desc
    assert root.get("viewBox")


def test_districts_in_their_colours_and_every_lot_outlined() -> None:
    state = ENGINE.setup(3, None, 1)
    view = ENGINE.view(state, 0)
    root = parse(render(view))
    lots = by_class(root, "lot")
    assert len(lots) == 65
    for district in data.DISTRICTS:
        mine = [g for g in lots if g.get("data-district") == district]
        assert len(mine) == 13
        assert {g.get("fill") for g in mine} == {DISTRICT_FILL[district]}
        assert all(f"district-{district}" in g.get("class", "") for g in mine)
    edges = root.find(".//s:g[@id='ny-lot-edges']", NS)
    assert edges is not None and len(list(edges)) == 65
    names = set(texts(root.find(".//s:g[@id='ny-lot-names']", NS)))  # type: ignore[arg-type]
    assert {"rA", "bJ", "pM"} <= names


def test_two_players_draw_pink_out_of_play() -> None:
    root = parse(render(ENGINE.view(ENGINE.setup(2, None, 1), 0)))
    pink = [g for g in by_class(root, "lot") if g.get("data-district") == "pink"]
    assert pink and all("out-of-play" in g.get("class", "") for g in pink)
    red = [g for g in by_class(root, "lot") if g.get("data-district") == "red"]
    assert not any("out-of-play" in g.get("class", "") for g in red)


def test_named_streets_labelled_and_bonus_streets_marked() -> None:
    state = ENGINE.setup(2, ENGINE.Options(streets=["broadway", "wall_street", "cedar_street"]),
                         1)
    view = ENGINE.view(state, None)
    root = parse(render(view))
    streets = {g.get("data-street"): g for g in by_class(root, "street")}
    assert set(streets) == {s[0] for s in data.STREETS}
    for street_id, name, _bonus, _rects in data.STREETS:
        label = "".join(streets[street_id].find("s:text", NS).itertext())  # type: ignore[union-attr]
        assert name in label
    bonus = {g.get("data-street") for g in by_class(root, "bonus")}
    assert bonus == {"broadway", "wall_street", "cedar_street"}


def test_parks_drawn_and_named() -> None:
    root = parse(render(ENGINE.view(ENGINE.setup(2, None, 1), 0)))
    parks = {g.get("data-park") for g in by_class(root, "park")}
    assert parks == {name for name, _ in data.PARKS}
    assert "Battery Park" in texts(root)


@pytest.mark.parametrize("version", [1, 2, 3], ids=lambda v: f"v{v}")
def test_each_rules_version_draws_its_own_board_with_its_names(version: int) -> None:
    """Versions 1 and 2 are played on the first drawing, version 3 on the redrawn board: the
    picture follows the match's view, streets and parks named on both."""
    board = ENGINE.board_for(version)
    view = ENGINE.view(ENGINE.setup(3, None, 1, version), None)
    assert view.board_rows == list(board.rows)
    root = parse(render(view))
    blocked = root.find(".//s:g[@id='ny-blocked']", NS)
    assert blocked is not None and len(list(blocked)) == board.blocked_mask.bit_count()
    assert {g.get("data-street") for g in by_class(root, "street")} == {
        s.id for s in board.streets}
    assert {g.get("data-park") for g in by_class(root, "park")} == {p.name for p in board.parks}
    start = {tuple(sorted((q.x, q.y) for q in b.squares)) for b in view.buildings}
    assert start == {tuple(sorted(board.xy(s) for s in board.lots[board.start_lots[d]].squares))
                     for d in ENGINE.setup(3, None, 1, version).characters}


def test_start_properties_in_owner_colours() -> None:
    state = ENGINE.setup(3, None, 2)
    view = ENGINE.view(state, 1)
    root = parse(render(view))
    buildings = by_class(root, "building")
    assert len(buildings) == 3
    for b in buildings:
        seat = int(b.get("data-owner", "-1"))
        assert b.get("data-level") == "start"
        fills = {g.get("fill") for g in b.iter(f"{SVG}g") if g.get("fill")}
        assert SEAT_FILL[seat] in fills
        assert "Start" in texts(b)


def test_building_level_points_and_worker_after_moves() -> None:
    state, seat, build = first_build_position()
    view = ENGINE.view(state, seat)
    staffed = [lot for lot in view.lots if lot.worker]
    root = parse(render(view))
    workers = by_class(root, "worker")
    assert {(w.get("data-owner"), w.get("data-lot")) for w in workers} == {
        (str(lot.owner), lot.name) for lot in staffed}
    owned = [p for p in root.find(".//s:g[@id='ny-owned-lots']", NS)]  # type: ignore[union-attr]
    assert {p.get("data-lot") for p in owned} == {
        lot.name for lot in view.lots if lot.owner is not None}

    state, _ = ENGINE.apply(state, seat, build)
    view = ENGINE.view(state, seat)
    root = parse(render(view))
    built = [b for b in by_class(root, "building") if b.get("data-tile") == build.tile]
    assert len(built) == 1
    element = built[0]
    tile_view = next(b for b in view.buildings if b.tile == build.tile)
    assert element.get("data-level") == tile_view.level == "bronze"
    assert element.get("data-points") == str(tile_view.points)
    assert build.tile in texts(element)
    assert f"{tile_view.points} pts" in texts(element)
    assert "level-bronze" in element.get("class", "")


def test_legendary_skyscraper_with_king_token_of_its_owner() -> None:
    view = ENGINE.view(ENGINE.setup(2, None, 1), 0)
    squares = [Ny1901Square(x=x, y=y) for x, y in footprint("woolworth", 0, 6, 1)]
    woolworth = Ny1901BuildingView(owner=1, tile="woolworth", level="gold", legendary=True,
                                   points=8, rotation=0, x=6, y=1, squares=squares)
    seats = [s.model_copy(update={"legendary": "woolworth"}) if s.seat == 1 else s
             for s in view.seats]
    view = view.model_copy(update={
        "buildings": [*view.buildings, woolworth], "seats": seats,
        "legendary_available": ["park_row", "singer", "metropolitan_life"]})
    root = parse(render(view))
    legendary = by_class(root, "level-legendary")
    assert len(legendary) == 1
    kings = by_class(legendary[0], "king")
    assert [k.get("data-owner") for k in kings] == ["1"]
    crown = kings[0].find("s:path", NS)
    assert crown is not None and crown.get("fill") == SEAT_FILL[1]
    assert "Woolworth" in "".join(texts(legendary[0])) + "".join(
        e.text or "" for e in legendary[0].iter(f"{SVG}title"))
    assert any("Woolworth built by seat 1" in t for t in texts(root))


def test_highlight_draws_the_moves_footprint() -> None:
    state, seat, build = first_build_position()
    view = ENGINE.view(state, seat)
    plain = render(view)
    lit = render(view, highlight=build)
    assert plain != lit
    assert parse(plain).find(".//s:g[@id='ny-highlight']", NS) is None
    highlight = parse(lit).find(".//s:g[@id='ny-highlight']", NS)
    assert highlight is not None
    expected = footprint(build.tile, build.rotation, build.x, build.y)
    assert highlight.get("data-squares") == " ".join(f"{x},{y}" for x, y in expected)
    assert highlight.get("data-move") == "build"
    # the wire form of the same move draws the same picture
    assert render(view, highlight=dump_action(ENGINE, build)) == lit


def test_highlight_of_an_acquisition_outlines_the_lot() -> None:
    state = ENGINE.setup(2, None, 6)
    view = ENGINE.view(state, 0)
    acquire = next(m for m in ENGINE.legal_actions(state, 0) if isinstance(m, Ny1901Acquire))
    root = parse(render(view, highlight=acquire))
    highlight = root.find(".//s:g[@id='ny-highlight']", NS)
    assert highlight is not None
    lot = next(lot for lot in view.lots if lot.name == acquire.lot)
    assert highlight.get("data-squares") == " ".join(f"{s.x},{s.y}" for s in lot.squares)
    assert any(t.startswith("Preview: Acquire lot") for t in texts(root))


def test_deterministic_and_render_view_dispatches() -> None:
    state, seat, build = first_build_position()
    view = ENGINE.view(state, seat)
    assert render(view, highlight=build) == render(view, highlight=build)
    assert render_view(view, highlight=build) == render(view, highlight=build)


def test_hidden_future_market_order_never_changes_the_picture() -> None:
    state = ENGINE.setup(3, None, 3)
    rng = random.Random(0)
    for _ in range(12):  # some play, so that the board is not empty
        seat = next(iter(ENGINE.active_seats(state)))
        state, _ = ENGINE.apply(state, seat, rng.choice(ENGINE.legal_actions(state, seat)))
    shuffled = state.copy()
    shuffled.future = list(reversed(state.future))
    assert shuffled.future != state.future
    for seat in (None, 0, 1, 2):
        assert render(ENGINE.view(state, seat)) == render(ENGINE.view(shuffled, seat))
