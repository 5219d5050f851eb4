"""The component catalogue equals the engines' data: every id a view, a move or a result
uses is in it, with the numbers the rules use (issue 14)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from service import games
from service.catalogue import catalogue_of
from service.games.base import Engine
from service.games.ginkgopolis import data as gk_data
from service.games.ginkgopolis import scoring as gk_scoring
from service.games.ny1901 import data as ny_data
from service.games.ny1901.shapes import TILES

NY = games.get("ny1901")
GK = games.get("ginkgopolis")


def doc(game: str, version: int | None = None) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(catalogue_of(game, version).body)
    return body


def playout(engine: Engine[Any], players: int, seed: int, version: int,
            visit: Any, max_moves: int = 4000) -> Any:
    """A seeded random game; ``visit(state, seat, move, new_state)`` sees every move."""
    chooser = random.Random(seed)
    state = engine.setup(players, None, seed, rules_version=version)
    for _ in range(max_moves):
        if engine.result(state) is not None:
            return state
        seat = chooser.choice(sorted(engine.active_seats(state)))
        move = chooser.choice(engine.legal_actions(state, seat))
        new, _ = engine.apply(state, seat, move)
        visit(state, seat, move, new)
        state = new
    raise AssertionError("the game did not end")


# -- New York 1901 ---------------------------------------------------------------------------


@pytest.mark.parametrize("version", NY.rules_versions)
def test_ny1901_every_lot_of_the_board_appears_once_with_its_squares(version: int) -> None:
    board = NY.board_for(version)
    catalogue = doc("ny1901", version)
    cat_board = catalogue["board"]
    assert (cat_board["width"], cat_board["height"]) == (board.width, board.height)
    assert cat_board["rows"] == list(board.rows)
    names = [lot["name"] for lot in cat_board["lots"]]
    assert names == [lot.name for lot in board.lots]
    assert len(set(names)) == len(names)
    tokens = [row.split() for row in cat_board["rows"]]
    seen: set[tuple[int, int]] = set()
    for lot, engine_lot in zip(cat_board["lots"], board.lots, strict=True):
        squares = {(s["x"], s["y"]) for s in lot["squares"]}
        assert len(squares) == lot["size"] == engine_lot.size
        assert squares == {board.xy(q) for q in engine_lot.squares}
        assert all(tokens[y][x] == lot["name"] for x, y in squares)
        assert {(s["x"], s["y"]) for s in lot["accessSquares"]} <= squares
        assert lot["district"] == ny_data.DISTRICTS[engine_lot.district]
        assert not squares & seen
        seen |= squares
    for street in cat_board["streets"]:
        assert all(tokens[s["y"]][s["x"]] == ".." for s in street["squares"])
    for park in cat_board["parks"]:
        assert all(tokens[s["y"]][s["x"]] == "**" for s in park["squares"])
    assert all(tokens[s["y"]][s["x"]] == "##" for s in cat_board["blocked"])
    assert {s["id"] for s in cat_board["streets"] if s["bonus"]} == set(ny_data.STREET_CARDS)
    assert sum(c["count"] for c in catalogue["lotCards"]) == len(board.lots)
    for start in cat_board["startLots"]:
        assert start["lot"] in names


def test_ny1901_tiles_and_legendary_are_the_engines() -> None:
    catalogue = doc("ny1901")
    listed = {t["id"]: t for t in [*catalogue["tiles"], catalogue["startingProperty"]]}
    legendary = {t["id"]: t for t in catalogue["legendary"]}
    for tile in TILES:
        entry = legendary.get(tile.id) or listed[tile.id]
        assert entry["points"] == tile.points
        assert entry["level"] == ny_data.LEVEL_NAMES[tile.level]
        assert entry["irregular"] == tile.irregular
        assert entry["size"] == len(entry["squares"])
    for lid, name, _, points, height in ny_data.LEGENDARY:
        assert (legendary[lid]["name"], legendary[lid]["points"],
                legendary[lid]["heightFeet"]) == (name, points, height)
    assert len(listed) + len(legendary) == len(TILES)
    thresholds = {lvl["id"]: lvl["unlockScore"] for lvl in catalogue["levels"]}
    assert (thresholds["silver"], thresholds["gold"]) == ny_data.THRESHOLDS


@pytest.mark.parametrize(("version", "seed"), [(v, s) for v in NY.rules_versions
                                               for s in (1, 2)])
def test_ny1901_a_random_match_uses_only_catalogue_ids_and_points(version: int, seed: int
                                                                   ) -> None:
    catalogue = doc("ny1901", version)
    points = {t["id"]: t["points"] for t in [*catalogue["tiles"], *catalogue["legendary"]]}
    lots = {lot["name"] for lot in catalogue["board"]["lots"]}
    cards = {c["id"] for c in catalogue["actionCards"]}
    built: list[int] = []

    def visit(state: Any, seat: int, move: Any, new: Any) -> None:
        if move.type in ("build", "rebuild"):
            gained = new.points[seat] - state.points[seat]
            assert gained == points[move.tile], move
            built.append(gained)
        elif move.type in ("acquire", "return_lot"):
            assert move.lot in lots
        elif move.type in cards:
            pass
        else:
            assert move.type == "end_turn", move

    final = playout(NY, 3, seed, version, visit)
    view = NY.view(final, None)
    characters = {(c["name"], c["district"]) for c in catalogue["characters"]}
    assert {(s.character, s.character_district) for s in view.seats} <= characters
    assert {s.id for s in view.streets} <= {c["id"] for c in catalogue["streetCards"]}
    assert view.challenge is None or view.challenge in {c["id"] for c in catalogue["challenges"]}
    for building in view.buildings:
        if building.tile != "start":
            assert building.points == points[building.tile]
    assert view.board_rows == catalogue["board"]["rows"]
    assert [lot.name for lot in view.lots] == [lot["name"] for lot in catalogue["board"]["lots"]]
    result = NY.result(final)
    assert result is not None
    rules = {r["id"] for r in catalogue["scoringRules"]}
    for seat in result.seats:
        assert {line.rule for line in seat.breakdown} <= rules
    assert built, "no building was built"


def test_ny1901_texts_carry_the_engines_numbers() -> None:
    catalogue = doc("ny1901")
    challenges = {c["id"]: c for c in catalogue["challenges"]}
    assert str(ny_data.GOLD_TYCOON_POINTS) in challenges["gold_tycoon"]["text"]
    tiers = [(t["atLeast"], t["points"]) for t in challenges["bronze_baron"]["tiers"]]
    assert tiers == sorted(ny_data.BRONZE_BARON_POINTS)
    assert all(str(ny_data.STREET_POINTS) in c["text"] for c in catalogue["streetCards"])
    assert {c["id"] for c in catalogue["actionCards"]} == set(ny_data.ACTION_CARDS)


def test_ny1901_land_grab_reads_per_rules_version() -> None:
    first, second = doc("ny1901", 1), doc("ny1901", 2)
    grab = [next(c["text"] for c in d["actionCards"] if c["id"] == "land_grab")
            for d in (first, second)]
    assert "after the turn's build" in grab[1] and "after the turn's build" not in grab[0]


# -- Ginkgopolis -----------------------------------------------------------------------------


def test_ginkgopolis_cards_are_the_engines() -> None:
    catalogue = doc("ginkgopolis")
    building = {c["id"]: c for c in catalogue["buildingCards"]}
    assert sorted(building) == list(range(gk_data.N_TILES))
    for card, entry in building.items():
        bonus = gk_data.bonus_of(card)
        assert entry["label"] == gk_data.card_label(card)
        assert entry["endGame"] == (bonus is None)
        assert entry["endGame"] == (gk_data.number_of(card) >= gk_data.FIRST_END_CARD)
        if bonus is not None:
            assert (entry["bonus"]["action"], entry["bonus"]["resources"],
                    entry["bonus"]["tiles"], entry["bonus"]["vp"]) == (
                gk_data.ACTION_NAMES[bonus.action], bonus.resources, bonus.tiles, bonus.vp)
    characters = {c["id"]: c for c in catalogue["characters"]}
    assert sorted(characters) == list(range(gk_data.CHAR_BASE, gk_data.N_CARDS))
    for char in gk_data.CHARACTERS:
        entry = characters[char.id]
        assert (entry["startResources"], entry["startVp"], entry["startTiles"]) == (
            char.start_resources, char.start_vp, char.start_tiles)
        assert entry["bonus"]["action"] == gk_data.ACTION_NAMES[char.bonus.action]
    letters = [c["letter"] for c in catalogue["urbanizationCards"]]
    assert letters == list(gk_data.LETTERS)
    assert [t["letter"] for t in catalogue["urbanizationTokens"]] == letters
    ends = {c["id"] for c in catalogue["endGameCards"]}
    assert ends == {c for c, e in building.items() if e["endGame"]}
    assert f"{gk_scoring.NEW_HAND_VP} VP" in next(
        r["text"] for r in catalogue["scoringRules"] if r["id"] == "new_hand_tokens")


@pytest.mark.parametrize(("version", "players", "seed"),
                         [(v, p, s) for v in GK.rules_versions for p, s in ((1, 3), (3, 4))])
def test_ginkgopolis_a_random_match_uses_only_catalogue_ids(version: int, players: int,
                                                           seed: int) -> None:
    catalogue = doc("ginkgopolis", version)
    cards = {c["id"]: c["label"] for key in ("buildingCards", "urbanizationCards", "characters")
             for c in catalogue[key]}
    tiles = {t["id"]: t for t in catalogue["tiles"]}
    letters = {c["letter"] for c in catalogue["urbanizationCards"]}

    def visit(state: Any, seat: int, move: Any, new: Any) -> None:
        for name in ("card", "hal_card", "character"):
            value = getattr(move, name, None)
            if value is not None:
                assert value in cards, move
        for tile in [getattr(move, "tile", None), *getattr(move, "tiles", ())]:
            if tile is not None:
                assert tile in tiles, move
        view = GK.view(new, seat)
        for token in view.tokens:
            assert token.letter in letters
        for building in view.city:
            for tile in building.tiles:
                assert (tiles[tile.id]["colour"], tiles[tile.id]["number"]) == (
                    tile.colour, tile.number)
        for front in view.seats:
            for card in front.cards_in_front:
                assert cards[card.id] == card.label

    final = playout(GK, players, seed, version, visit)
    start = GK.view(GK.setup(players, None, seed, rules_version=version), None)
    assert sorted((b.x, b.y) for b in start.city) == sorted(
        (s["x"], s["y"]) for s in catalogue["startSpaces"])
    result = GK.result(final)
    assert result is not None
    rules = catalogue["scoringRules"]
    exact = {r["id"] for r in rules if not r["prefix"]}
    prefixes = [r["id"] for r in rules if r["prefix"]]
    for line in [line for s in [*result.seats, *result.opponents] for line in s.breakdown]:
        assert line.rule in exact or any(line.rule.startswith(p) for p in prefixes), line.rule


# -- every game, every version -----------------------------------------------------------------


@pytest.mark.parametrize("game", ["ny1901", "ginkgopolis"])
def test_each_version_has_its_own_document(game: str) -> None:
    engine = games.get(game)
    documents = [catalogue_of(game, v) for v in engine.rules_versions]
    assert [d.rules_version for d in documents] == list(engine.rules_versions)
    assert len({d.digest for d in documents}) == len(documents)
    assert catalogue_of(game).digest == documents[-1].digest
    assert catalogue_of(game) is catalogue_of(game)  # built once


def test_every_field_is_described_in_plain_text() -> None:
    """The models feed OpenAPI and GraphQL: every model and field has a description, and
    none uses reStructuredText markup."""
    from pydantic import BaseModel

    from service.catalogue import catalogue_models

    seen: set[type[BaseModel]] = set()

    def inner_models(annotation: Any) -> list[type[BaseModel]]:
        found = []
        for arg in [annotation, *getattr(annotation, "__args__", ())]:
            for leaf in [arg, *getattr(arg, "__args__", ())]:
                if isinstance(leaf, type) and issubclass(leaf, BaseModel):
                    found.append(leaf)
        return found

    def walk(model: type[BaseModel]) -> None:
        if model in seen:
            return
        seen.add(model)
        assert model.__doc__ and "``" not in model.__doc__, model.__name__
        for name, field in model.model_fields.items():
            assert field.description, f"{model.__name__}.{name}"
            assert "``" not in field.description, f"{model.__name__}.{name}"
            for nested in inner_models(field.annotation):
                walk(nested)

    for model in catalogue_models():
        walk(model)
    assert len(seen) > 20
