"""The toy engine (random bots only: it has no bot model) next to the real games."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.toy_game import registered as toy_registered

TOY = "toy"


@pytest.fixture(autouse=True)
def toy_game() -> Iterator[None]:
    with toy_registered():
        yield
