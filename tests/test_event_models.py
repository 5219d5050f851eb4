"""The typed events cannot go stale (service/games/events.py, docs/events.md).

Over seeded random games of every engine with event models -- every player count, every rules
version, the options that unlock rarer events -- every event, as every seat and a spectator
sees it on the wire, validates strictly (extra fields forbidden) against its game's union;
every kind of the models is emitted in some game, and every field of every model is present
in some emitted event.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any, get_args

import pytest
from pydantic import BaseModel, RootModel, TypeAdapter
from pydantic.fields import FieldInfo

from service import games
from service.games.base import Engine, Event
from service.games.events import data_model, event_union_of, kinds, members
from service.games.ginkgopolis import data as gk_data
from service.games.ginkgopolis.events import GkCardName, GkTileName
from service.games.ny1901 import data as ny_data
from service.games.ny1901.events import District

# Options that unlock events random play under the defaults never sees.
OPTIONS: dict[str, list[dict[str, Any]]] = {
    "ny1901": [{}, {"challenge": "gold_prestige"}, {"expert": True}],
    "ginkgopolis": [{}, {"characters": "draft"}, {"hal_expert": True}],
}
SEEDS = (7,)

RARE: dict[tuple[str, str], str] = {}
"""(game, kind) -> the scenario test that emits it, for kinds random play does not reach."""

TYPED = sorted(g for g in games.ids() if event_union_of(games.get(g)) is not None)


def _playable(game: str, players: int, options: dict[str, Any]) -> bool:
    if options.get("characters") == "draft":
        return players >= 2
    if options.get("hal_expert"):
        return players == 1
    return True


def _random_game(
    engine: Engine[Any], players: int, seed: int, options: BaseModel | None, version: int
) -> Iterator[Event]:
    chooser = random.Random(seed)
    state = engine.setup(players, options, seed, version)
    while engine.result(state) is None:
        seat = chooser.choice(sorted(engine.active_seats(state)))
        state, events = engine.apply(state, seat, chooser.choice(engine.legal_actions(state, seat)))
        yield from events


@cache
def emitted(game: str) -> tuple[tuple[int, dict[str, Any]], ...]:
    """(players, wire JSON) of every event of the game's random games, as each viewer sees it
    (the same event seen alike by several viewers is kept once)."""
    engine = games.get(game)
    out: dict[str, tuple[int, dict[str, Any]]] = {}
    for version in engine.rules_versions:
        for players in range(engine.min_players, engine.max_players + 1):
            for raw in OPTIONS.get(game, [{}]):
                if not _playable(game, players, raw):
                    continue
                options = engine.Options.model_validate(raw) if raw else None
                for seed in SEEDS:
                    seed = seed * 100 + players * 10 + version
                    for event in _random_game(engine, players, seed, options, version):
                        for viewer in [*range(players), None]:
                            seen = event.for_seat(viewer)
                            kind = seen.pop("kind")
                            wire = json.dumps({"kind": kind, "data": seen}, sort_keys=True)
                            out.setdefault(wire, (players, json.loads(wire)))
    return tuple(out.values())


def union(game: str) -> type[RootModel[Any]]:
    found = event_union_of(games.get(game))
    assert found is not None
    return found


def test_both_games_have_event_models() -> None:
    assert {"ny1901", "ginkgopolis"} <= set(TYPED)


@pytest.mark.parametrize("game", TYPED)
def test_every_emitted_event_validates_strictly_for_every_viewer(game: str) -> None:
    adapter = TypeAdapter(union(game))
    for _, wire in emitted(game):
        adapter.validate_python(wire, strict=True)


@pytest.mark.parametrize("game", TYPED)
def test_every_kind_of_the_models_is_emitted(game: str) -> None:
    seen = {wire["kind"] for _, wire in emitted(game)}
    rare = {kind for g, kind in RARE if g == game}
    assert set(kinds(union(game))) - rare <= seen, "kinds no random game emitted (add options, "
    "seeds, or a scenario test listed in RARE)"
    assert seen <= set(kinds(union(game))), "kinds the engine emits but the models lack"


def _fields(model: type[BaseModel]) -> Iterator[tuple[type[BaseModel], str, FieldInfo]]:
    """(model, field name, field) of ``model`` and of every model its fields nest."""
    stack, done = [model], set()
    while stack:
        current = stack.pop()
        if current in done:
            continue
        done.add(current)
        for name, info in current.model_fields.items():
            yield current, name, info
            stack.extend(_nested(info.annotation))


def _nested(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in get_args(annotation) for m in _nested(arg)]


def _used(value: Any, out: set[tuple[str, str]]) -> None:
    if isinstance(value, BaseModel):
        for name in value.model_fields_set:
            out.add((type(value).__name__, name))
            _used(getattr(value, name), out)
    elif isinstance(value, list):
        for item in value:
            _used(item, out)


@pytest.mark.parametrize("game", TYPED)
def test_no_model_field_is_unused(game: str) -> None:
    adapter = TypeAdapter(union(game))
    used: set[tuple[str, str]] = set()
    for _, wire in emitted(game):
        _used(adapter.validate_python(wire, strict=True).root, used)
    rare = {kind for g, kind in RARE if g == game}
    declared = {
        (model.__name__, name)
        for envelope in members(union(game))
        if data_model(envelope).kind not in rare
        for model, name, _ in _fields(envelope)
        if not (model is envelope and name == "text")  # the service's sentence (service/texts)
    }
    assert sorted(declared - used) == [], "fields no emitted event carries"


def test_closed_value_sets_follow_the_game_data() -> None:
    assert get_args(District) == ny_data.DISTRICTS
    cards = [gk_data.card_label(c) for c in range(gk_data.N_CARDS)]
    literal = lambda alias: list(get_args(get_args(alias.__value__)[0]))  # noqa: E731
    assert literal(GkCardName) == cards
    assert literal(GkTileName) == cards[: gk_data.N_TILES]


@pytest.mark.parametrize("game", TYPED)
def test_every_model_and_field_is_described_in_plain_text(game: str) -> None:
    for envelope in members(union(game)):
        for model, name, info in _fields(envelope):
            assert model.__doc__ and info.description, f"{model.__name__}.{name}"
            for text in (model.__doc__, info.description):
                assert "``" not in text and ":ref:" not in text, f"{model.__name__}: plain text"


@pytest.mark.parametrize("game", TYPED)
def test_docs_list_every_kind_and_field(game: str) -> None:
    text = (Path(__file__).resolve().parents[1] / "docs" / "events.md").read_text("utf-8")
    section = text.split(f"(`{game}`): `{union(game).__name__}`", 1)[1].split("\n## ", 1)[0]
    for envelope in members(union(game)):
        data = data_model(envelope)
        assert f"### `{data.kind}`\n" in section, f"docs/events.md lacks {game} {data.kind}"
        entry = section.split(f"### `{data.kind}`\n", 1)[1].split("\n### ", 1)[0]
        for name in data.model_fields:
            assert f"| `{name}` |" in entry, f"docs/events.md: {game} {data.kind} lacks {name}"
