"""The published events (docs/events.md, docs/decisions.md "Typed events"): an events array
item is ``EventOut`` = anyOf [each game's union, discriminated by kind; UnknownEvent].

Every event the engines emit (tests/test_event_models.py's random games, as every viewer
sees it) validates against the published schema, and the first alternative it matches is its
own game's union: a client that tries the alternatives in order -- openapi-python-client does
-- gets the right game's type although kinds repeat across games (game_over, end_triggered).
A kind the document does not list matches UnknownEvent only.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import jsonschema_rs
import pytest

from service import games
from service.api.openapi import build_openapi
from service.games.events import event_union_of, kinds
from tests.test_event_models import TYPED, emitted


@cache
def document() -> dict[str, Any]:
    return build_openapi()


def validator(name: str) -> Any:
    schemas = document()["components"]["schemas"]
    return jsonschema_rs.Draft202012Validator(
        {"$ref": f"#/components/schemas/{name}", "components": {"schemas": schemas}}
    )


def alternatives() -> list[str]:
    event_out = document()["components"]["schemas"]["EventOut"]
    return [ref["$ref"].rsplit("/", 1)[-1] for ref in event_out["anyOf"]]


def test_an_events_item_is_each_games_union_then_unknown_event() -> None:
    schemas = document()["components"]["schemas"]
    unions = sorted((g, event_union_of(games.get(g))) for g in TYPED)
    assert alternatives() == [u.__name__ for _, u in unions if u] + ["UnknownEvent"]
    listed = schemas["EventOut"]["x-event-kinds"]
    for game, union in unions:
        assert union is not None
        assert listed[game] == kinds(union) == schemas[union.__name__]["x-event-kinds"]
        assert sorted(schemas[union.__name__]["discriminator"]["mapping"]) == kinds(union)
    for name in ("ActResponse", "LogEntryOut"):
        assert schemas[name]["properties"]["events"]["items"] == {
            "$ref": "#/components/schemas/EventOut"
        }


def test_published_event_objects_admit_fields_added_later() -> None:
    schemas = document()["components"]["schemas"]
    for name, schema in schemas.items():
        if name.startswith(("Gk", "Ny1901")) and name.endswith(("Event", "Data")):
            assert "additionalProperties" not in schema, name


@pytest.mark.parametrize("game", TYPED)
def test_every_emitted_event_first_matches_its_own_games_union(game: str) -> None:
    names = alternatives()
    checks = {name: validator(name) for name in names}
    own = event_union_of(games.get(game))
    assert own is not None
    for _, wire in emitted(game):
        wire = {**wire, "text": "What happened, in words."}  # every answer says it (issue 14)
        first = next((name for name in names if checks[name].is_valid(wire)), None)
        assert first == own.__name__, (wire, first)
        assert not checks[own.__name__].is_valid({"kind": wire["kind"], "data": wire["data"]})


def test_an_unknown_kind_matches_unknown_event_only() -> None:
    names = alternatives()
    event = {"kind": "comet_struck", "data": {"seat": 0, "crater": [3, 4]},
             "text": "A comet struck."}
    assert [n for n in names if validator(n).is_valid(event)] == ["UnknownEvent"]
    assert validator("EventOut").is_valid(event)
