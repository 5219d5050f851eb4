"""The schema follows the registered engines, deterministically, and ``schema.graphql`` is
what the code exports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from graphql import (
    GraphQLInterfaceType,
    GraphQLUnionType,
    OverlappingFieldsCanBeMergedRule,
    parse,
    validate,
)

from service import games
from service.api.graphql import build_schema, sdl
from service.api.graphql.types.games import type_prefix
from tests.graphql.client import _select, game_type_names

ROOT = Path(__file__).resolve().parents[2]


def test_same_engines_same_sdl_whatever_the_registration_order() -> None:
    first = sdl()
    assert sdl() == first
    order = games.ids()
    targets = {game_id: games._REGISTRY[game_id] for game_id in order}
    try:
        for game_id in order:
            games.unregister(game_id)
        for game_id in reversed(order):
            games.register(game_id, targets[game_id])
        assert sdl() == first
    finally:
        for game_id in list(games.ids()):
            games.unregister(game_id)
        for game_id in order:
            games.register(game_id, targets[game_id])


def test_every_engine_has_its_view_moves_and_action_input() -> None:
    schema = build_schema()._schema
    view_members = {t.name for t in schema.type_map["MatchView"].types}
    move_members = {t.name for t in schema.type_map["Move"].types}
    action_fields = set(schema.type_map["ActionInput"].fields)
    for engine in games.all():
        assert engine.View.__name__ in view_members
        assert engine.id in action_fields
    assert {"ToyDraw", "ToyPass", "ToyPlay"} <= move_members
    assert "input ToyActionInput @oneOf {" in sdl()


def test_no_state_or_move_is_an_opaque_json_scalar() -> None:
    schema = build_schema()._schema
    json_fields = sorted(
        f"{type_name}.{field_name}"
        for type_name, gql_type in schema.type_map.items()
        if not type_name.startswith("__") and hasattr(gql_type, "fields")
        for field_name, field in gql_type.fields.items()
        if "JSON" in str(field.type)
    )
    assert json_fields == ["Game.optionsSchema", "UnknownEvent.json"]


def test_exported_schema_matches_the_code() -> None:
    # A fresh interpreter: only the games the build registers (not this suite's toy game).
    exported = subprocess.run(
        [sys.executable, "-c", "import sys; from service.api.graphql import sdl; "
         "sys.stdout.write(sdl())"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout
    committed = (ROOT / "schema.graphql").read_text(encoding="utf-8")
    assert committed == exported, "schema.graphql drifted: run `skyline export-schema`"


def test_one_games_fragments_never_conflict() -> None:
    """A client selecting every field of every member of its own game in one query needs no
    aliases: GraphQL's own rule (OverlappingFieldsCanBeMerged) over such a selection of every
    union and interface (the Event interface: the game's events and UnknownEvent)."""
    schema = build_schema()._schema
    abstract = [
        t for t in schema.type_map.values()
        if isinstance(t, (GraphQLUnionType, GraphQLInterfaceType)) and not t.name.startswith("__")
    ]
    for game in games.ids():
        prefix = type_prefix(games.get(game), sorted(game_type_names(game) - {"UnknownEvent"}))
        assert prefix in ("Gk", "Ny1901", "Toy"), prefix
        for gql_type in abstract:
            members = [
                m for m in schema.get_possible_types(gql_type)
                if m.name.startswith(prefix) or m.name == "UnknownEvent"
            ]
            if not members:
                continue
            fragments = " ".join(f"... on {m.name} {{ {_select(m, 8)} }}" for m in members)
            document = parse(f"fragment Everything on {gql_type.name} {{ {fragments} }}")
            errors = validate(schema, document, [OverlappingFieldsCanBeMergedRule])
            assert errors == [], (game, gql_type.name, [e.message for e in errors])
