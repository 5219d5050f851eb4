"""The clock tests run the match service on every store (``tests/store/conftest.py``'s
backends) with the toy game registered."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from service import games
from tests.store.conftest import backend, backend_spec  # noqa: F401 (fixtures)

TOY = "toy"


@pytest.fixture(autouse=True)
def toy_game() -> Iterator[None]:
    games.register(TOY, "tests.toy_game:engine")
    yield
    games.unregister(TOY)
