"""GraphQL events: typed per game and kind, UnknownEvent for anything no model describes
(docs/events.md). A stale model never fails an answer: the event falls back to UnknownEvent."""

from __future__ import annotations

import logging

import pytest

from service import games
from service.api.graphql.convert import Converter
from service.api.graphql.schema import RESERVED_NAMES
from service.api.graphql.types.events import UnknownEvent
from service.api.graphql.types.games import build_game_types
from service.matches.models import EventOut

BUILD = {"seat": 0, "tile": "B1", "rotation": 0, "x": 3, "y": 4, "points": 2}


def convert(event: EventOut) -> object:
    engines = [games.get("ny1901"), games.get("ginkgopolis")]
    types = build_game_types(Converter(reserved=RESERVED_NAMES), engines)
    return types.events.convert(event)


def test_a_known_kind_gets_its_games_type() -> None:
    event = convert(EventOut.of("build", BUILD, "ny1901"))
    assert type(event).__name__ == "Ny1901BuildEvent"
    assert event.data.tile.value == "B1" and event.data.gold_prestige is None  # type: ignore[attr-defined]
    over = convert(EventOut.of("game_over", {"turn": 9}, "ginkgopolis"))
    assert type(over).__name__ == "GkGameOverEvent"


def test_an_unknown_kind_is_an_unknown_event() -> None:
    event = convert(EventOut.of("comet_struck", {"crater": [1, 2]}, "ny1901"))
    assert isinstance(event, UnknownEvent) and event.json == {"crater": [1, 2]}


def test_data_the_model_refuses_falls_back_to_unknown_event(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING):
        event = convert(EventOut.of("build", {**BUILD, "height": 3}, "ny1901"))
    assert isinstance(event, UnknownEvent) and event.kind == "build"
    assert "does not match its model" in caplog.text


def test_without_the_game_the_kind_and_data_decide() -> None:
    assert type(convert(EventOut.of("game_over", {}, None))).__name__ == "Ny1901GameOverEvent"
    assert type(convert(EventOut.of("game_over", {"turn": 3}, None))).__name__ == (
        "GkGameOverEvent"
    )
