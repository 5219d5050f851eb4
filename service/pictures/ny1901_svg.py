"""New York 1901 as SVG, drawn from one seat's view (``Ny1901View``) only.

The board: Lower Manhattan's grid with streets (named, the bonus streets of the match starred),
parks, blocked squares, lots filled in their district's colour and outlined, owned lots edged
in the owner's colour, buildings in the owner's colour with their level (bronze, silver, gold
rim), tile and points, workers, and the legendary skyscrapers with their owner's King token.
Below the board: the open market, the cards in play and every seat's score and supply.

The static geometry (street and park names) comes from the engine's board description; every
position-dependent fact comes from the view, so a seat's picture can never show more than its
view does.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from service.games.ny1901 import data
from service.games.ny1901.board import Board, shipped_boards
from service.games.ny1901.shapes import SHAPE_NAMES, TILE_INDEX, TILES, rotate

from ._svg import action_dict, document, fit, group, num, outline, tag, text, title

CELL = 40
OX = 30  # left margin (row numbers)
OY = 74  # header, preview line, column numbers
RIGHT = 14
PANEL_LINE = 22

DISTRICT_FILL = {
    "red": "#f6b2a6", "blue": "#a8c8ee", "yellow": "#f5df86", "green": "#b3dd9c",
    "pink": "#f4bddb",
}
DISTRICT_EDGE = {
    "red": "#b8352a", "blue": "#2a64ad", "yellow": "#b08d00", "green": "#357a30",
    "pink": "#b8498f",
}
SEAT_FILL = ("#222222", "#6f2dbd", "#d9530f", "#0e7068")
SEAT_NAME = ("black", "purple", "orange", "teal")
LEVEL_EDGE = {"start": "#6b6b6b", "bronze": "#b0672a", "silver": "#b9bcc2", "gold": "#e0b325"}
WATER = "#cfe2ee"
STREET = "#dcd6c8"
BONUS_STREET = "#f1dd9e"
PARK = "#79b865"
BLOCKED = "#8f8a84"
HIGHLIGHT = "#e4007c"

LEGENDARY_NAMES = {lid: (name, height) for lid, name, _shape, _points, height in data.LEGENDARY}
LEVEL_WORD = {"start": "starting property", "bronze": "bronze", "silver": "silver",
              "gold": "gold"}

STYLE = (
    ".lot-name{font-size:8px;fill:#333;fill-opacity:.75}"
    ".street-name{font-size:10px;fill:#4a4438;font-style:italic}"
    ".bonus .street-name{font-weight:700;fill:#6b4d00}"
    ".park-name{font-size:8px;fill:#123d0c}"
    ".axis{font-size:9px;fill:#555}"
    ".bld-label{font-size:11px;font-weight:700}"
    ".bld-points{font-size:9px}"
    ".panel{font-size:13px;fill:#222}"
    ".panel-small{font-size:11px;fill:#333}"
    ".heading{font-size:16px;font-weight:700;fill:#1a1a1a}"
)


def seat_colour(seat: int) -> str:
    return SEAT_FILL[seat % len(SEAT_FILL)]


def _cells_of(mask: int, width: int) -> list[tuple[int, int]]:
    out = []
    while mask:
        low = mask & -mask
        mask ^= low
        square = low.bit_length() - 1
        out.append((square % width, square // width))
    return out


def _board_for(view: Any) -> Board | None:
    """The shipped board whose map the view shows (each rules version's own: the first
    drawing or the redrawn one); None for a custom board (no street or park names then)."""
    rows = tuple(view.board_rows)
    for board in shipped_boards():
        if rows == board.rows:
            return board
    return None


def _cx(x: float) -> float:
    return OX + x * CELL


def _cy(y: float) -> float:
    return OY + y * CELL


def footprint(tile: str, rotation: int, x: int, y: int) -> list[tuple[int, int]]:
    """The squares a tile covers at ``(x, y)`` (top-left of its rotated bounding box)."""
    shape = SHAPE_NAMES[TILES[TILE_INDEX[tile]].shape]
    return [(x + cx, y + cy) for cx, cy in rotate(data.SHAPES[shape], rotation)]


def _tile_words(tile: str) -> str:
    if tile in LEGENDARY_NAMES:
        name, height = LEGENDARY_NAMES[tile]
        return f"legendary {name} ({height} ft, {TILES[TILE_INDEX[tile]].points} points)"
    info = TILES[TILE_INDEX[tile]]
    return f"{tile} ({data.LEVEL_NAMES[info.level]}, {info.points} points)"


def describe_move(move: dict[str, Any]) -> str:
    """A move in words (the web client has the same describer in JavaScript)."""
    kind = move.get("type")
    if kind == "acquire":
        return f"Acquire lot {move['lot']}"
    if kind in ("build", "rebuild"):
        verb = "Build" if kind == "build" else "Demolish and rebuild with"
        return (f"{verb} {_tile_words(move['tile'])} at column {move['x']}, row {move['y']}"
                f", rotation {move['rotation'] * 90}°")
    if kind == "return_lot":
        return f"Return lot {move['lot']} (stuck)"
    return {
        "market_shift": "Play Market Shift",
        "land_grab": "Play Land Grab",
        "construction_boom": "Play Construction Boom",
        "end_turn": "End the turn",
    }.get(str(kind), str(kind))


# ----------------------------------------------------------------------------------- layers
def _terrain(rows: Sequence[Sequence[str]], bonus_cells: set[tuple[int, int]]) -> str:
    streets: list[str] = []
    bonus: list[str] = []
    parks: list[str] = []
    blocked: list[str] = []
    for y, row in enumerate(rows):
        for x, token in enumerate(row):
            rect = {"x": _cx(x), "y": _cy(y), "width": CELL, "height": CELL}
            if token == "..":
                (bonus if (x, y) in bonus_cells else streets).append(tag("rect", **rect))
            elif token == "**":
                parks.append(tag("rect", **rect))
            elif token == "##":
                blocked.append(tag("rect", **rect))
    return "".join([
        group(streets, id="ny-street-squares", fill=STREET),
        group(bonus, id="ny-bonus-street-squares", fill=BONUS_STREET),
        group(parks, id="ny-park-squares", fill=PARK),
        group(blocked, id="ny-blocked", fill="url(#ny-hatch)"),
    ])


def _street_labels(board: Board | None, bonus_ids: set[str]) -> str:
    if board is None:
        return ""
    width = board.width
    owner: dict[tuple[int, int], int] = {}
    for street in board.streets:
        for cell in _cells_of(street.mask, width):
            owner[cell] = owner.get(cell, 0) + 1
    labels = []
    for street in board.streets:
        cells = _cells_of(street.mask, width)
        xs = {x for x, _ in cells}
        vertical = len(xs) == 1 and len(cells) > 1
        free = [c for c in cells if owner[c] == 1]
        run = _longest_run(free, vertical)
        if not run:
            run = cells
        is_bonus = street.id in bonus_ids
        label = ("★ " if is_bonus else "") + street.name + (" +5" if is_bonus else "")
        if vertical:
            x = run[0][0]
            y0, y1 = min(y for _, y in run), max(y for _, y in run)
            cx, cy = _cx(x) + CELL / 2, (_cy(y0) + _cy(y1 + 1)) / 2
            room = (y1 - y0 + 1) * CELL - 6
            node = text(cx, cy, label, class_="street-name", text_anchor="middle",
                        dominant_baseline="central",
                        transform=f"rotate(-90 {num(cx)} {num(cy)})", **fit(label, 10, room))
        else:
            y = run[0][1]
            x0, x1 = min(x for x, _ in run), max(x for x, _ in run)
            cx, cy = (_cx(x0) + _cx(x1 + 1)) / 2, _cy(y) + CELL / 2
            room = (x1 - x0 + 1) * CELL - 6
            node = text(cx, cy, label, class_="street-name", text_anchor="middle",
                        dominant_baseline="central", **fit(label, 10, room))
        labels.append(group(
            [title(street.name + (" (bonus street: 5 points for the most buildings along it)"
                                  if is_bonus else "")), node],
            class_="street bonus" if is_bonus else "street", data_street=street.id))
    return group(labels, id="ny-streets")


def _longest_run(cells: Iterable[tuple[int, int]], vertical: bool) -> list[tuple[int, int]]:
    ordered = sorted(cells, key=lambda c: (c[0], c[1]) if vertical else (c[1], c[0]))
    best: list[tuple[int, int]] = []
    current: list[tuple[int, int]] = []
    for cell in ordered:
        if current:
            px, py = current[-1]
            adjacent = (cell == (px, py + 1)) if vertical else (cell == (px + 1, py))
            if not adjacent:
                current = []
        current.append(cell)
        if len(current) > len(best):
            best = list(current)
    return best


def _parks(board: Board | None) -> str:
    if board is None:
        return ""
    out = []
    for park in board.parks:
        cells = _cells_of(park.mask, board.width)
        x0, x1 = min(x for x, _ in cells), max(x for x, _ in cells)
        y0, y1 = min(y for _, y in cells), max(y for _, y in cells)
        trees = [
            tag("circle", cx=_cx(x) + CELL * fx, cy=_cy(y) + CELL * fy, r=5, fill="#4f9440")
            for x, y in sorted(cells) for fx, fy in ((0.25, 0.3), (0.75, 0.7))
        ]
        cx, cy = (_cx(x0) + _cx(x1 + 1)) / 2, (_cy(y0) + _cy(y1 + 1)) / 2
        room = (x1 - x0 + 1) * CELL - 4
        out.append(group(
            [title(park.name), *trees,
             text(cx, cy, park.name, class_="park-name", text_anchor="middle",
                  dominant_baseline="central", **fit(park.name, 8, room))],
            class_="park", data_park=park.name))
    return group(out, id="ny-parks")


def _lots(view: Any, out_of_play: set[str]) -> str:
    fills, edges, owned, names = [], [], [], []
    for lot in view.lots:
        cells = [(s.x, s.y) for s in lot.squares]
        district = lot.district
        absent = district in out_of_play
        rects = [tag("rect", x=_cx(x), y=_cy(y), width=CELL, height=CELL) for x, y in cells]
        owner_words = "" if lot.owner is None else f", owned by seat {lot.owner}"
        worker_words = ", a worker stands on it" if lot.worker else ""
        absent_words = ", out of play" if absent else ""
        fills.append(group(
            [title(f"Lot {lot.name}: {district} district, {lot.size} squares"
                   f"{owner_words}{worker_words}{absent_words}"), *rects],
            class_=f"lot district-{district}" + (" out-of-play" if absent else ""),
            data_lot=lot.name, data_district=district,
            data_owner=None if lot.owner is None else lot.owner,
            fill=DISTRICT_FILL.get(district, "#ddd"),
            fill_opacity=0.35 if absent else None))
        edges.append(tag("path", d=outline(cells, CELL, OX, OY),
                         stroke=DISTRICT_EDGE.get(district, "#555")))
        if lot.owner is not None:
            inner = outline(cells, CELL, OX, OY)
            owned.append(tag("path", d=inner, stroke=seat_colour(lot.owner),
                             data_lot=lot.name, data_owner=lot.owner))
        x, y = min(cells, key=lambda c: (c[1], c[0]))
        names.append(text(_cx(x) + 3, _cy(y) + 9, lot.name, class_="lot-name"))
    return "".join([
        group(fills, id="ny-lots"),
        group(edges, id="ny-lot-edges", fill="none", stroke_width=1.5),
        group(owned, id="ny-owned-lots", fill="none", stroke_width=3.5,
              stroke_dasharray="7 4"),
        group(names, id="ny-lot-names"),
    ])


def _label_cell(cells: Sequence[tuple[int, int]]) -> tuple[int, int]:
    mx = sum(x for x, _ in cells) / len(cells)
    my = sum(y for _, y in cells) / len(cells)
    return min(cells, key=lambda c: ((c[0] - mx) ** 2 + (c[1] - my) ** 2, c[1], c[0]))


def _king(cx: float, cy: float, colour: str, seat: int) -> str:
    """A King token: a crown in the owner's colour on a gold disc."""
    d = (f"M{num(cx - 9)} {num(cy + 5)}L{num(cx - 10)} {num(cy - 5)}L{num(cx - 4.5)} "
         f"{num(cy)}L{num(cx)} {num(cy - 7)}L{num(cx + 4.5)} {num(cy)}L{num(cx + 10)} "
         f"{num(cy - 5)}L{num(cx + 9)} {num(cy + 5)}Z")
    return group([
        title(f"King token of seat {seat}"),
        tag("circle", cx=cx, cy=cy, r=13, fill="#f4d35e", stroke="#7a5c00", stroke_width=1.5),
        tag("path", d=d, fill=colour, stroke="#fff", stroke_width=1),
    ], class_="king", data_owner=seat)


def _buildings(view: Any) -> str:
    out = []
    for b in view.buildings:
        cells = [(s.x, s.y) for s in b.squares]
        colour = seat_colour(b.owner)
        level = "legendary" if b.legendary else b.level
        rects = [tag("rect", x=_cx(x) + 2, y=_cy(y) + 2, width=CELL - 4, height=CELL - 4,
                     rx=2) for x, y in cells]
        # fill the gaps between squares of one building so it reads as one block
        joins = []
        cellset = set(cells)
        for x, y in cells:
            if (x + 1, y) in cellset:
                joins.append(tag("rect", x=_cx(x + 1) - 2, y=_cy(y) + 2, width=4,
                                 height=CELL - 4))
            if (x, y + 1) in cellset:
                joins.append(tag("rect", x=_cx(x) + 2, y=_cy(y + 1) - 2, width=CELL - 4,
                                 height=4))
        edge = tag("path", d=outline(cells, CELL, OX, OY), fill="none",
                   stroke=LEVEL_EDGE[b.level], stroke_width=4 if b.level != "start" else 2.5,
                   stroke_dasharray="5 3" if b.level == "start" else None,
                   transform=None)
        lx, ly = _label_cell(cells)
        cx, cy = _cx(lx) + CELL / 2, _cy(ly) + CELL / 2
        if b.legendary:
            name, height = LEGENDARY_NAMES[b.tile]
            words = f"Legendary {name} ({height} ft), {b.points} points, built by seat {b.owner}"
            label = name.split()[0]
            labels = [_king(cx, cy - 4, colour, b.owner),
                      text(cx, cy + 16, label, class_="bld-points", text_anchor="middle",
                           fill="#fff", font_weight="700", **fit(label, 9, CELL - 4))]
        else:
            label = "Start" if b.level == "start" else b.tile
            words = (f"{LEVEL_WORD[b.level].capitalize()} {'' if b.level == 'start' else b.tile}"
                     f" of seat {b.owner}, {b.points} points").replace("  ", " ")
            labels = [
                text(cx, cy - 2, label, class_="bld-label", text_anchor="middle", fill="#fff"),
                text(cx, cy + 12, f"{b.points} pt" if b.points == 1 else f"{b.points} pts",
                     class_="bld-points", text_anchor="middle", fill="#fff"),
            ]
        out.append(group(
            [title(words), group(rects + joins, fill=colour), edge, *labels],
            class_=f"building level-{level}", data_owner=b.owner, data_tile=b.tile,
            data_level=b.level, data_points=b.points))
    return group(out, id="ny-buildings")


def _worker(cx: float, cy: float, colour: str, seat: int, lot: str) -> str:
    body = (f"M{num(cx - 8)} {num(cy + 11)}Q{num(cx - 8)} {num(cy - 1)} {num(cx)} {num(cy - 1)}"
            f"Q{num(cx + 8)} {num(cy - 1)} {num(cx + 8)} {num(cy + 11)}Z")
    return group([
        title(f"Worker of seat {seat} on lot {lot}"),
        tag("circle", cx=cx, cy=cy - 7, r=5.5),
        tag("path", d=body),
    ], class_="worker", data_owner=seat, data_lot=lot, fill=colour, stroke="#fff",
        stroke_width=1.5)


def _workers(view: Any) -> str:
    out = []
    for lot in view.lots:
        if not lot.worker or lot.owner is None:
            continue
        cells = [(s.x, s.y) for s in lot.squares]
        x, y = _label_cell(cells)
        out.append(_worker(_cx(x) + CELL / 2, _cy(y) + CELL / 2 + 2, seat_colour(lot.owner),
                           lot.owner, lot.name))
    return group(out, id="ny-workers")


def _axes(width: int, height: int) -> str:
    out = []
    for x in range(width):
        out.append(text(_cx(x) + CELL / 2, OY - 6, str(x), class_="axis", text_anchor="middle"))
    for y in range(height):
        out.append(text(OX - 6, _cy(y) + CELL / 2 + 3, str(y), class_="axis",
                        text_anchor="end"))
    return group(out, id="ny-axes", aria_hidden="true")


def _highlight(view: Any, move: dict[str, Any] | None) -> tuple[str, str]:
    if move is None:
        return "", ""
    words = describe_move(move)
    kind = move.get("type")
    cells: list[tuple[int, int]] = []
    if kind in ("build", "rebuild"):
        try:
            cells = footprint(str(move["tile"]), int(move["rotation"]), int(move["x"]),
                              int(move["y"]))
        except (KeyError, ValueError, TypeError, IndexError):
            cells = []
    elif kind in ("acquire", "return_lot"):
        for lot in view.lots:
            if lot.name == move.get("lot"):
                cells = [(s.x, s.y) for s in lot.squares]
    parts = [title(f"Preview: {words}")]
    if cells:
        parts.append(group(
            [tag("rect", x=_cx(x) + 1, y=_cy(y) + 1, width=CELL - 2, height=CELL - 2)
             for x, y in cells], fill=HIGHLIGHT, fill_opacity=0.38))
        parts.append(tag("path", d=outline(cells, CELL, OX, OY), fill="none", stroke=HIGHLIGHT,
                         stroke_width=4, stroke_dasharray="8 4"))
        if kind in ("build", "rebuild"):
            info = TILES[TILE_INDEX[str(move["tile"])]]
            lx, ly = _label_cell(cells)
            parts.append(text(_cx(lx) + CELL / 2, _cy(ly) + CELL / 2 + 4,
                              str(move["tile"]) if info.legendary < 0 else "★",
                              text_anchor="middle", font_size=13, font_weight="700",
                              fill="#fff", stroke=HIGHLIGHT, stroke_width=0.6))
    squares = " ".join(f"{x},{y}" for x, y in cells)
    return group(parts, id="ny-highlight", class_="highlight", data_move=str(kind),
                 data_squares=squares or None), words


def _panel(view: Any, top: float, width: float) -> tuple[str, float]:
    out = []
    y = top + 18
    x = OX
    out.append(text(x, y, "Open market:", class_="panel", font_weight="700"))
    cx = x + 112
    for i, card in enumerate(view.open_market):
        out.append(group([
            title(f"Open market card {i + 1}: {card.district} lot of {card.size} squares"),
            tag("rect", x=cx, y=y - 14, width=58, height=20, rx=3,
                fill=DISTRICT_FILL.get(card.district, "#ddd"),
                stroke=DISTRICT_EDGE.get(card.district, "#555")),
            text(cx + 29, y, f"{card.district} {card.size}", class_="panel-small",
                 text_anchor="middle"),
        ], class_="market-card", data_district=card.district, data_size=card.size))
        cx += 64
    out.append(text(cx + 8, y, f"future market: {view.future_market_size} cards",
                    class_="panel-small"))
    y += PANEL_LINE
    streets = ", ".join(s.name for s in view.streets) or "none"
    challenge = (view.challenge or "none").replace("_", " ")
    out.append(text(x, y, f"Bonus streets: {streets} · Challenge: {challenge}"
                    + (" · Expert game" if view.expert else ""), class_="panel-small"))
    y += PANEL_LINE
    legends = []
    for lid, (name, height) in LEGENDARY_NAMES.items():
        if lid in view.legendary_available:
            legends.append(f"{name} ({height} ft) available")
        else:
            holder = next((s.seat for s in view.seats if s.legendary == lid), None)
            legends.append(f"{name} built by seat {holder}")
    out.append(text(x, y, "Legendary: " + "; ".join(legends), class_="panel-small",
                    **fit("Legendary: " + "; ".join(legends), 11, width - 2 * OX)))
    y += PANEL_LINE + 4
    for s in view.seats:
        colour = seat_colour(s.seat)
        marks = []
        if view.current_seat == s.seat and not view.game_over:
            marks.append("to move")
        if view.viewer == s.seat:
            marks.append("you")
        cards = ", ".join(c.replace("_", " ") for c in s.unused_action_cards) or "none"
        line = (f"Seat {s.seat} ({SEAT_NAME[s.seat % 4]}) · {s.character} ({s.character_district})"
                f" · {s.score} points · {s.technology} · {s.free_workers} free workers"
                f" · {s.unbuilt_tiles} tiles left · cards: {cards}")
        if s.legendary:
            line += f" · King on {LEGENDARY_NAMES[s.legendary][0]}"
        row = [
            tag("circle", cx=x + 7, cy=y - 4, r=7, fill=colour, stroke="#000",
                stroke_width=0.5),
            text(x + 20, y, line, class_="panel-small",
                 font_weight="700" if view.current_seat == s.seat else None,
                 **fit(line, 11, width - 2 * OX - 20 - 90)),
        ]
        if marks:
            row.append(text(width - RIGHT, y, " · ".join(marks), class_="panel-small",
                            text_anchor="end", font_weight="700", fill=colour))
        out.append(group(row, class_="seat", data_seat=s.seat))
        y += PANEL_LINE
    return group(out, id="ny-panel"), y


def render(view: Any, *, highlight: Any = None) -> str:
    """The SVG picture of ``view`` (``Ny1901View``); ``highlight``: one legal move (engine
    value or wire JSON) drawn distinctly on the board."""
    rows = [row.split() for row in view.board_rows]
    height_cells = len(rows)
    width_cells = len(rows[0]) if rows else 0
    board = _board_for(view)
    bonus_ids = {s.id for s in view.streets}
    bonus_cells = {(sq.x, sq.y) for s in view.streets for sq in s.squares}
    out_of_play = {"pink"} if view.players == 2 else set()
    width = OX + width_cells * CELL + RIGHT
    board_bottom = OY + height_cells * CELL
    move = action_dict(highlight)
    highlight_svg, move_words = _highlight(view, move)
    panel, bottom = _panel(view, board_bottom + 6, width)
    height = bottom + 4

    if view.game_over:
        status = "game over"
    elif view.current_seat is not None:
        status = f"seat {view.current_seat} to move ({view.step.replace('_', ' ')})"
    else:
        status = ""
    who = "spectator" if view.viewer is None else f"seat {view.viewer}"
    heading = f"New York 1901 — {status}" if status else "New York 1901"
    defs = tag("defs", tag(
        "pattern",
        tag("rect", width=8, height=8, fill=BLOCKED)
        + tag("path", d="M0 8L8 0", stroke="#6d6862", stroke_width=2),
        id="ny-hatch", width=8, height=8, patternUnits="userSpaceOnUse"))
    body = [
        defs,
        tag("rect", x=0, y=0, width=width, height=height, fill="#fbfaf6"),
        tag("rect", x=OX, y=OY, width=width_cells * CELL, height=height_cells * CELL,
            fill=WATER),
        text(OX, 22, heading, class_="heading"),
        text(width - RIGHT, 22, f"view of {who}", class_="panel-small", text_anchor="end"),
        _axes(width_cells, height_cells),
        _terrain(rows, bonus_cells),
        _parks(board),
        _lots(view, out_of_play),
        _street_labels(board, bonus_ids),
        _buildings(view),
        _workers(view),
        highlight_svg,
        panel,
    ]
    if move_words:
        body.insert(4, text(OX, 44, f"Preview: {move_words}", class_="panel-small",
                            fill=HIGHLIGHT, font_weight="700",
                            **fit(f"Preview: {move_words}", 11, width - OX - RIGHT)))
    summary = [f"{who.capitalize()}'s view. {status.capitalize()}." if status else ""]
    for s in view.seats:
        summary.append(
            f"Seat {s.seat} ({s.character}, {s.character_district}): {s.score} points, "
            f"{sum(1 for b in view.buildings if b.owner == s.seat)} buildings, "
            f"{s.workers_on_board} workers on the board.")
    summary.append(
        "Open market: " + (", ".join(f"{c.district} {c.size}" for c in view.open_market)
                           or "empty") + ".")
    if move_words:
        summary.append(f"Highlighted move: {move_words}.")
    return document(width, height, f"New York 1901 board ({who})", " ".join(p for p in summary
                    if p), "".join(body), prefix="ny", style=STYLE)
