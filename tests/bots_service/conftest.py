"""The toy engine (random bots only: it has no bot model) next to the real games."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from service import games

TOY = "toy"


@pytest.fixture(autouse=True)
def toy_game() -> Iterator[None]:
    known = TOY in games.ids()
    games.register(TOY, "tests.toy_game:engine")
    yield
    if not known:
        games.unregister(TOY)
