"""Ginkgopolis as SVG, drawn from one seat's view (``GkView``) only.

The city: every building as a tile in its colour with its number, its height (floors, drawn
as stacked bars and written out) and its owner's disc (seat number, H for Hal), construction-
site markers, and the urbanization tokens on the empty spaces around the city. Below the
city: the supply counts and every seat's public information; the viewer's own hand, tiles,
resources and VP (their private part of the view) when the view has them. Nothing else of
another seat can appear: the drawer sees only the view.
"""

from __future__ import annotations

from typing import Any
from xml.sax.saxutils import escape

from ._svg import action_dict, document, fit, group, num, tag, text, title

CELL = 66
GAP = 4
MARGIN = 30
TOP = 74
MIN_WIDTH = 720
LINE = 22

TILE_FILL = {"red": "#cf3b36", "blue": "#2f6db5", "yellow": "#efc02b"}
TILE_INK = {"red": "#ffffff", "blue": "#ffffff", "yellow": "#2b2100"}
TILE_EDGE = {"red": "#8c1f1b", "blue": "#1b4578", "yellow": "#a07e00"}
SEAT_FILL = ("#222222", "#6f2dbd", "#d9530f", "#0e7068", "#7a5230")
SEAT_NAME = ("black", "purple", "orange", "teal", "brown")
HAL_FILL = "#5b5b5b"
HIGHLIGHT = "#e4007c"
LETTERS = "ABCDEFGHIJKL"
COLOURS = ("red", "blue", "yellow")

STYLE = (
    ".heading{font-size:16px;font-weight:700;fill:#1a1a1a}"
    ".panel{font-size:13px;fill:#222}"
    ".panel-small{font-size:11px;fill:#333}"
    ".axis{font-size:9px;fill:#777}"
    ".number{font-size:22px;font-weight:800}"
    ".floors{font-size:9px;font-weight:600}"
    ".token-letter{font-size:18px;font-weight:800;fill:#4a3b12}"
)


def seat_colour(seat: int) -> str:
    return SEAT_FILL[seat % len(SEAT_FILL)]


def tile_words(tile_id: int) -> str:
    return f"{COLOURS[tile_id // 20].capitalize()} {tile_id % 20 + 1}"


def card_words(card_id: int) -> str:
    if card_id < 60:
        return f"building card {tile_words(card_id)}"
    if card_id < 72:
        return f"urbanization card {LETTERS[card_id - 60]}"
    return f"character card {card_id}"


def describe_move(move: dict[str, Any], token: str | None = None) -> str:
    """A move in words (the web client has the same describer in JavaScript)."""
    kind = move.get("type")
    if kind == "choose_card":
        card, tile, hal = move.get("card"), move.get("tile"), move.get("hal_card")
        if not isinstance(card, int):
            return "Choose a card"
        if card < 60:
            words = (f"Exploit building {tile_words(card)}" if tile is None
                     else f"Build up on {tile_words(card)} with tile {tile_words(tile)}")
        elif card < 72:
            letter = LETTERS[card - 60]
            words = (f"Exploit urbanization card {letter}" if tile is None
                     else f"Urbanize at token {letter} with tile {tile_words(tile)}")
        else:
            words = f"Play {card_words(card)}"
        if isinstance(hal, int):
            words += f"; give Hal {card_words(hal)}"
        return words
    if kind == "new_hand":
        return "Spend a New Hand token"
    if kind == "take_item":
        return f"Take a {move.get('item')}"
    if kind == "place_token":
        which = f"token {token}" if token else "the urbanization token"
        return f"Move {which} to column {move.get('x')}, row {move.get('y')}"
    if kind == "draft_character":
        return f"Keep {card_words(int(move.get('character', 0)))}"
    if kind == "return_tiles":
        tiles = list(move.get("tiles") or ())
        if not tiles:
            return "Return no tiles"
        return "Return tiles " + ", ".join(tile_words(t) for t in tiles)
    return str(kind)


def _bounds(view: Any, extra: list[tuple[int, int]]) -> tuple[int, int, int, int]:
    spaces = [(b.x, b.y) for b in view.city] + [(t.x, t.y) for t in view.tokens] + extra
    if view.pending is not None:
        spaces += [(s.x, s.y) for s in view.pending.spaces]
    if not spaces:
        spaces = [(0, 0), (2, 2)]
    xs = [x for x, _ in spaces]
    ys = [y for _, y in spaces]
    return min(xs), min(ys), max(xs), max(ys)


def _pending_letter(view: Any) -> str | None:
    return view.pending.token if view.pending is not None else None


class _Grid:
    def __init__(self, min_x: int, min_y: int, ox: float, oy: float) -> None:
        self.min_x, self.min_y, self.ox, self.oy = min_x, min_y, ox, oy

    def px(self, x: int) -> float:
        return self.ox + (x - self.min_x) * CELL

    def py(self, y: int) -> float:
        return self.oy + (y - self.min_y) * CELL


def _is_hal(view: Any, building: Any) -> bool:
    """Hal owns it: only in a solo game (view.hal set) and never a starting building."""
    return bool(building.hal) and view.hal is not None and building.owner is None


def _owner_disc(cx: float, cy: float, building: Any, hal: bool) -> str:
    if hal:
        colour, label, words = HAL_FILL, "H", "Hal"
    elif building.owner is not None:
        colour, label, words = seat_colour(building.owner), str(building.owner), \
            f"seat {building.owner}"
    else:
        return ""
    return group([
        title(f"Owner: {words}"),
        tag("circle", cx=cx, cy=cy, r=10, fill=colour, stroke="#fff", stroke_width=2),
        text(cx, cy + 4, label, text_anchor="middle", font_size=11, font_weight="700",
             fill="#fff"),
    ], class_="owner", data_owner="hal" if hal else building.owner)


def _construction_marker(x: float, y: float) -> str:
    """A construction-site marker: a striped traffic cone."""
    return group([
        title("Construction site"),
        tag("path", d=f"M{num(x)} {num(y + 18)}L{num(x + 7)} {num(y)}L{num(x + 14)} "
                      f"{num(y + 18)}Z", fill="#f28c28", stroke="#5a2d00", stroke_width=1),
        tag("rect", x=x + 3.5, y=y + 8, width=7, height=3, fill="#fff"),
        tag("rect", x=x - 2, y=y + 17, width=18, height=3, rx=1, fill="#5a2d00"),
    ], class_="construction-site")


def _building(grid: _Grid, view: Any, b: Any) -> str:
    hal = _is_hal(view, b)
    x, y = grid.px(b.x) + GAP / 2, grid.py(b.y) + GAP / 2
    size = CELL - GAP
    fill, ink = TILE_FILL[b.colour], TILE_INK[b.colour]
    owner_words = ("Hal" if hal else f"seat {b.owner}" if b.owner is not None
                   else "nobody (a starting building)")
    floors = "floor" if b.height == 1 else "floors"
    parts = [
        title(f"{b.colour.capitalize()} {b.number}: {b.height} {floors}, owned by {owner_words}"
              + (", construction site" if b.construction_site else "")
              + f" (column {b.x}, row {b.y})"),
        tag("rect", x=x, y=y, width=size, height=size, rx=6, fill=fill,
            stroke=TILE_EDGE[b.colour], stroke_width=2),
        text(x + size / 2, y + size / 2 + 5, str(b.number), class_="number",
             text_anchor="middle", fill=ink),
    ]
    # floors: one bar per floor along the left edge, and the count written at the bottom
    for level in range(min(b.height, 8)):
        parts.append(tag("rect", x=x + 4, y=y + size - 8 - level * 6, width=9, height=4,
                         rx=1, fill=ink, fill_opacity=0.9))
    parts.append(text(x + size - 5, y + size - 5, f"{b.height} {floors}", class_="floors",
                      text_anchor="end", fill=ink))
    disc = _owner_disc(x + size - 12, y + 12, b, hal)
    if disc:
        parts.append(disc)
    if b.construction_site:
        parts.append(_construction_marker(x + 5, y + 4))
    return group(parts, class_=f"building colour-{b.colour}", data_colour=b.colour,
                 data_number=b.number, data_height=b.height,
                 data_owner="hal" if hal else ("" if b.owner is None else b.owner),
                 data_construction_site="true" if b.construction_site else None,
                 data_x=b.x, data_y=b.y)


def _token(grid: _Grid, t: Any) -> str:
    cx, cy = grid.px(t.x) + CELL / 2, grid.py(t.y) + CELL / 2
    return group([
        title(f"Urbanization token {t.letter} (column {t.x}, row {t.y})"),
        tag("rect", x=grid.px(t.x) + GAP / 2, y=grid.py(t.y) + GAP / 2, width=CELL - GAP,
            height=CELL - GAP, rx=6, fill="none", stroke="#b9ab86", stroke_dasharray="4 3"),
        tag("circle", cx=cx, cy=cy, r=17, fill="#e9dcb5", stroke="#8a7640", stroke_width=2),
        text(cx, cy + 6, t.letter, class_="token-letter", text_anchor="middle"),
    ], class_="token", data_letter=t.letter, data_x=t.x, data_y=t.y)


def _targets(view: Any, move: dict[str, Any] | None) -> tuple[list[tuple[int, int]], int | None]:
    """Spaces a move acts on, and the tile it would place there (if any)."""
    if move is None:
        return [], None
    kind = move.get("type")
    if kind == "place_token":
        try:
            return [(int(move["x"]), int(move["y"]))], None
        except (KeyError, TypeError, ValueError):
            return [], None
    if kind != "choose_card" or not isinstance(move.get("card"), int):
        return [], None
    card, tile = move["card"], move.get("tile")
    tile = tile if isinstance(tile, int) else None
    if card < 60:
        colour, number = COLOURS[card // 20], card % 20 + 1
        for b in view.city:
            if b.colour == colour and b.number == number:
                return [(b.x, b.y)], tile
        return [], tile
    if card < 72:
        letter = LETTERS[card - 60]
        for t in view.tokens:
            if t.letter == letter:
                return [(t.x, t.y)], tile
    return [], tile


def _highlight(grid: _Grid, view: Any, move: dict[str, Any] | None) -> str:
    if move is None:
        return ""
    spaces, tile = _targets(view, move)
    words = describe_move(move, _pending_letter(view))
    parts = [title(f"Preview: {words}")]
    letter = view.pending.token if view.pending is not None else None
    for x, y in spaces:
        px, py = grid.px(x), grid.py(y)
        if move.get("type") == "place_token" and letter:
            parts.append(group([
                tag("circle", cx=px + CELL / 2, cy=py + CELL / 2, r=17, fill="#e9dcb5",
                    stroke=HIGHLIGHT, stroke_width=2),
                text(px + CELL / 2, py + CELL / 2 + 6, letter, class_="token-letter",
                     text_anchor="middle"),
            ], class_="moved-token"))
        parts.append(tag("rect", x=px, y=py, width=CELL, height=CELL, rx=8,
                         fill=HIGHLIGHT, fill_opacity=0.22, stroke=HIGHLIGHT, stroke_width=4,
                         stroke_dasharray="8 4"))
        if tile is not None:
            colour = COLOURS[tile // 20]
            parts.append(group([
                tag("rect", x=px + 12, y=py + 12, width=CELL - 24, height=CELL - 24, rx=5,
                    fill=TILE_FILL[colour], stroke="#fff", stroke_width=2),
                text(px + CELL / 2, py + CELL / 2 + 6, str(tile % 20 + 1),
                     text_anchor="middle", font_size=17, font_weight="800",
                     fill=TILE_INK[colour]),
            ], class_="placed-tile"))
    return group(parts, id="gk-highlight", class_="highlight", data_move=str(move.get("type")),
                 data_squares=" ".join(f"{x},{y}" for x, y in spaces) or None)


def _chip(x: float, y: float, label: str, colour: str | None, *, selected: bool,
          kind: str, words: str, card_id: int) -> tuple[str, float]:
    width = max(44, len(label) * 7 + 14)
    fill = TILE_FILL.get(colour or "", "#efe6cc")
    ink = TILE_INK.get(colour or "", "#2b2100")
    parts = [
        title(words + (" (in the previewed move)" if selected else "")),
        tag("rect", x=x, y=y - 15, width=width, height=22, rx=4, fill=fill,
            stroke=HIGHLIGHT if selected else "#6d6553",
            stroke_width=3.5 if selected else 1),
        text(x + width / 2, y + 1, label, text_anchor="middle", font_size=12,
             font_weight="700", fill=ink),
    ]
    return group(parts, class_=f"{kind}" + (" selected" if selected else ""),
                 data_id=card_id), width + 6


def _card_label(card: Any) -> str:
    if card.kind == "building":
        return f"{card.colour.capitalize()} {card.number}"
    if card.kind == "urbanization":
        return f"Urb. {card.letter}"
    return f"Char. {card.colour} {card.character_set}"


def _private(view: Any, y: float, width: float,
             move: dict[str, Any] | None) -> tuple[list[str], float]:
    me = view.me
    if me is None:
        return [], y
    chosen: set[int] = set()
    chosen_tiles: set[int] = set()
    if move is not None:
        for key in ("card", "hal_card", "character"):
            if isinstance(move.get(key), int):
                chosen.add(move[key])
        if isinstance(move.get("tile"), int):
            chosen_tiles.add(move["tile"])
        chosen_tiles.update(t for t in (move.get("tiles") or ()) if isinstance(t, int))
        if move.get("type") == "new_hand":
            chosen.update(c.id for c in me.hand)
    tiles = f"{len(me.tiles)} tile{'' if len(me.tiles) == 1 else 's'}"
    resources = f"{me.resources} resource{'' if me.resources == 1 else 's'}"
    out = [text(MARGIN, y, f"Behind your screen (seat {me.seat}): {resources}, "
                          f"{me.vp} VP, {tiles}", class_="panel", font_weight="700")]
    y += LINE + 4
    rows: list[tuple[str, list[Any], str]] = [("Your hand:", me.hand, "hand-card")]
    if me.draft_pack:
        rows.append(("Draft pack:", me.draft_pack, "draft-card"))
    rows.append(("Your tiles:", me.tiles, "screen-tile"))
    for heading, items, kind in rows:
        chips = [text(MARGIN, y, heading, class_="panel-small", font_weight="700")]
        x: float = MARGIN + 78
        for item in items:
            is_tile = kind == "screen-tile"
            label = f"{item.colour.capitalize()} {item.number}" if is_tile else _card_label(item)
            selected = item.id in (chosen_tiles if is_tile else chosen)
            words = (f"Tile {label}" if is_tile else f"Card {label}")
            chip, chip_width = _chip(x, y, label, item.colour, selected=selected, kind=kind,
                                     words=words, card_id=item.id)
            if x + chip_width > width - MARGIN and x > MARGIN + 78:
                x, y = MARGIN + 78, y + LINE + 6  # wrap onto the next line
                chip, chip_width = _chip(x, y, label, item.colour, selected=selected,
                                         kind=kind, words=words, card_id=item.id)
            chips.append(chip)
            x += chip_width
        if not items:
            chips.append(text(x, y, "none", class_="panel-small"))
        out.append(group(chips, class_=f"{kind}s"))
        y += LINE + 8
    if me.choice is not None:
        chosen_words = []
        if me.choice.new_hand:
            chosen_words.append("New Hand announced")
        if me.choice.card is not None:
            chosen_words.append(f"card {_card_label(me.choice.card)}")
        if me.choice.tile is not None:
            chosen_words.append(f"tile {me.choice.tile.colour} {me.choice.tile.number}")
        out.append(text(MARGIN, y, "Your committed choice: " + ", ".join(chosen_words),
                        class_="panel-small"))
        y += LINE
    return out, y


def _panel(view: Any, top: float, width: float, move: dict[str, Any] | None) -> tuple[str, float]:
    out = []
    y = top + 16
    exhausted = (" · supply ran out " + str(view.tile_supply_exhausted) + "×"
                 if view.tile_supply_exhausted else "")
    out.append(text(MARGIN, y, f"Turn {view.turn} · deck {view.deck_count} cards · tile supply "
                               f"{view.tile_supply_count}{exhausted}"
                    + (" · the end has been triggered" if view.end_triggered else ""),
                    class_="panel-small"))
    y += LINE
    for s in view.seats:
        marks = []
        if s.first_player:
            marks.append("first player")
        if s.seat in view.active_seats:
            marks.append("committed" if s.committed else "to act")
        elif s.committed:
            marks.append("committed")
        fronts = len(s.cards_in_front)
        if view.me is not None and view.me.seat == s.seat:
            marks.append("you")
        name = f"Seat {s.seat} ({SEAT_NAME[s.seat % len(SEAT_NAME)]})"
        if marks:
            name += " [" + ", ".join(marks) + "]"
        line = (f": {s.resources_in_city} resources in the city · {s.hand_count} cards in "
                f"hand · {fronts} cards in front · {s.new_hand_tokens} New Hand tokens")
        row = [
            tag("circle", cx=MARGIN + 7, cy=y - 4, r=7, fill=seat_colour(s.seat)),
            text(MARGIN + 20, y, "", class_="panel-small",
                 **fit(name + line, 11, width - 2 * MARGIN - 20)).replace(
                "></text>",
                f'><tspan font-weight="700">{escape(name)}</tspan>{escape(line)}</text>'),
        ]
        out.append(group(row, class_="seat", data_seat=s.seat))
        y += LINE
    if view.hal is not None:
        hal = view.hal
        out.append(group([
            tag("circle", cx=MARGIN + 7, cy=y - 4, r=7, fill=HAL_FILL),
            text(MARGIN + 20, y, f"Hal · {hal.vp} VP · {hal.resources_in_city} resources in the "
                                 f"city, {hal.resources_in_supply} in supply · "
                                 f"{len(hal.cards_in_front)} cards in front"
                 + (" · expert" if hal.expert else ""), class_="panel-small"),
        ], class_="seat hal"))
        y += LINE
    y += 6
    private, y = _private(view, y, width, move)
    out.extend(private)
    return group(out, id="gk-panel"), y


def render(view: Any, *, highlight: Any = None) -> str:
    """The SVG picture of ``view`` (``GkView``); ``highlight``: one legal move (engine value
    or wire JSON) drawn distinctly."""
    move = action_dict(highlight)
    targets, _ = _targets(view, move)
    min_x, min_y, max_x, max_y = _bounds(view, targets)
    cols, rows = max_x - min_x + 1, max_y - min_y + 1
    city_width = cols * CELL
    width = max(MIN_WIDTH, city_width + 2 * MARGIN)
    ox = (width - city_width) / 2
    grid = _Grid(min_x, min_y, ox, TOP)
    city_bottom = TOP + rows * CELL

    axes = [text(grid.px(x) + CELL / 2, TOP - 6, str(x), class_="axis", text_anchor="middle")
            for x in range(min_x, max_x + 1)]
    axes += [text(ox - 6, grid.py(y) + CELL / 2 + 3, str(y), class_="axis", text_anchor="end")
             for y in range(min_y, max_y + 1)]
    pending = []
    if view.pending is not None and view.pending.kind == "place_token":
        for space in view.pending.spaces:
            pending.append(tag(
                "rect", x=grid.px(space.x) + 6, y=grid.py(space.y) + 6, width=CELL - 12,
                height=CELL - 12, rx=6, fill="#fff8e0", stroke="#b08d00", stroke_dasharray="3 3",
            ))
    panel, bottom = _panel(view, city_bottom + 8, width, move)
    height = bottom + 6
    phase = view.phase.replace("_", " ")
    if view.phase == "over":
        status = "game over"
    else:
        acting = ", ".join(f"seat {s}" for s in view.active_seats) or "nobody"
        status = f"{phase} · to act: {acting}"
    who = "spectator" if view.me is None else f"seat {view.me.seat}"
    words = describe_move(move, _pending_letter(view)) if move is not None else ""
    body = [
        tag("rect", x=0, y=0, width=width, height=height, fill="#f6f3ea"),
        text(MARGIN, 22, f"Ginkgopolis — {status}", class_="heading"),
        text(width - MARGIN, 22, f"view of {who}", class_="panel-small", text_anchor="end"),
    ]
    if words:
        body.append(text(MARGIN, 44, f"Preview: {words}", class_="panel-small", fill=HIGHLIGHT,
                         font_weight="700"))
    body += [
        tag("rect", x=ox - 4, y=TOP - 4, width=city_width + 8, height=rows * CELL + 8, rx=10,
            fill="#e3ead5"),
        group(axes, id="gk-axes", aria_hidden="true"),
        group(pending, id="gk-pending-spaces"),
        group([_token(grid, t) for t in view.tokens], id="gk-tokens"),
        group([_building(grid, view, b) for b in view.city], id="gk-city"),
        _highlight(grid, view, move),
        panel,
    ]
    summary = [f"{who.capitalize()}'s view. Ginkgopolis, {status}.",
               f"The city has {len(view.city)} buildings and {len(view.tokens)} urbanization "
               f"tokens."]
    for s in view.seats:
        owned = sum(1 for b in view.city if b.owner == s.seat)
        summary.append(f"Seat {s.seat}: {owned} buildings, {s.resources_in_city} resources in "
                       f"the city.")
    if words:
        summary.append(f"Highlighted move: {words}.")
    return document(width, height, f"Ginkgopolis city ({who})", " ".join(summary),
                    "".join(body), prefix="gk", style=STYLE)
