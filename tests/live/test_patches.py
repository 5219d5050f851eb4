"""The patch mode's diff: applied with an RFC 6902 library (``jsonpatch``), it rebuilds the
next state exactly -- on real states of both games, per seat and for spectators."""

from __future__ import annotations

import json
import random
from typing import Any

import jsonpatch
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.games import get
from service.matches.patches import diff
from service.matches.views import state_of


def _exact(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


@pytest.mark.parametrize(("game", "players"), [("ny1901", 4), ("ginkgopolis", 3)])
def test_patches_rebuild_every_state_of_a_game_exactly(game: str, players: int) -> None:
    engine = get(game)
    state = engine.setup(players, None, 1901, max(engine.rules_versions))
    rng = random.Random(players)
    for seat in (None, *range(players)):
        current, previous = state, None
        for version in range(60):
            wire = state_of("m", version, engine, current, seat).to_json()
            if previous is not None:
                patched = jsonpatch.apply_patch(previous, diff(previous, wire))
                assert _exact(patched) == _exact(wire)
            if engine.result(current) is not None:
                break
            mover = min(engine.active_seats(current))
            current, _ = engine.apply(current, mover,
                                      rng.choice(engine.legal_actions(current, mover)))
            previous = wire


def test_a_list_that_changes_length_and_keys_with_pointer_characters() -> None:
    before = {"a/b": [1, 2, 3], "c~d": {"x": 1}, "gone": 0, "list": [{"k": 1}, {"k": 2}]}
    after = {"a/b": [1, 3], "c~d": {"x": 2, "y": [None]}, "list": [{"k": 1}, {"k": 3}]}
    operations = diff(before, after)
    assert jsonpatch.apply_patch(before, operations) == after
    assert {"op": "remove", "path": "/gone"} in operations
    assert {"op": "replace", "path": "/list/1/k", "value": 3} in operations
    assert {"op": "add", "path": "/c~0d/y", "value": [None]} in operations
    assert diff(after, after) == []


_json = st.recursive(
    st.none() | st.integers(-5, 5) | st.text(max_size=3),  # no booleans: see below
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=2), inner,
                                                                max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(_json, _json)
def test_any_two_documents(before: Any, after: Any) -> None:
    """(Booleans are left out: Python's ``1 == True`` would hide a change from an int to a
    boolean in one field; the wire models never change a field's type between versions.)"""
    assert _exact(jsonpatch.apply_patch(before, diff(before, after))) == _exact(after)
