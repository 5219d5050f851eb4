"""Every committed recording replays exactly: a rules change that alters a match already
played fails here, naming the first version that differs (see ``corpus.py``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .corpus import RECORDINGS, record, replay

FILES = sorted(RECORDINGS.glob("v*/*.json"))


def test_the_corpus_holds_recordings_of_both_games() -> None:
    games_seen = {json.loads(path.read_text())["game"] for path in FILES}
    assert games_seen >= {"ny1901", "ginkgopolis"}


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.stem}" for p in FILES])
def test_a_recorded_match_replays_exactly(path: Path) -> None:
    replay(json.loads(path.read_text()))


def test_a_changed_outcome_is_found_and_named() -> None:
    recording: dict[str, Any] = record("ny1901", 2, {}, 7, max_moves=12)
    recording["digests"][5] = "0" * 16 + recording["digests"][5][16:]  # as if the state changed
    with pytest.raises(AssertionError, match="version 5 differs first"):
        replay(recording)
