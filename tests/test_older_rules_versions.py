"""Random games under every older rules version a build still serves (issue 13).

The full conformance runs (``tests/*/test_properties.py``) cover the newest rules version;
matches stored under an older version are still read, replayed and played on, so each older
version gets about 100 seeded random games with the same conformance checks (legal moves
agree with ``active_seats``, refusals leave the state alone, lossless ``dumps``/``loads``,
replay reproduces every state) and must keep the version it was set up with throughout.
The golden corpus (``tests/golden``) pins those versions' exact behaviour.
"""

from __future__ import annotations

from typing import Any

import pytest

from service import games
from tests.conformance import check_random_games

pytestmark = pytest.mark.slow  # long property runs: 100 random games a version

GAMES_PER_VERSION = 100


def _older_versions() -> list[Any]:
    params = []
    for game in ("ny1901", "ginkgopolis"):
        engine = games.get(game)
        for version in engine.rules_versions[:-1]:
            params.append(pytest.param(game, version, id=f"{game}-v{version}"))
    return params


@pytest.mark.parametrize(("game", "version"), _older_versions())
def test_random_games_under_an_older_rules_version(game: str, version: int) -> None:
    engine = games.get(game)
    counts = list(range(engine.min_players, engine.max_players + 1))
    per_count, extra = divmod(GAMES_PER_VERSION, len(counts))
    base = 7_000 + 1_000 * version
    played = 0
    for index, players in enumerate(counts):
        n = per_count + (1 if index < extra else 0)
        seeds = range(base + played, base + played + n)
        for playout in check_random_games(engine, players, seeds, refusal_probes=1,
                                          rules_version=version):
            assert playout.rules_version == version
            assert engine.rules_version(playout.final) == version
            assert engine.rules_version(engine.loads(playout.states[-1])) == version
        played += n
    assert played == GAMES_PER_VERSION
