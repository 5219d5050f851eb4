"""schemathesis against the GraphQL endpoint of the ASGI app, every check enabled.

One exception, configured in ``schemathesis.toml`` next to this file (shared with the live
``st run`` in ``test_schemathesis_cli.py``): for the operations that take an ``@oneOf`` input
(``act``, ``createMatch``, ``enqueue``), schemathesis's generator does not know ``@oneOf`` and sends
several keys or nulls, which GraphQL itself rejects before any resolver runs, so
``positive_data_acceptance`` is meaningless there. Every other check still runs on them.

The schema is loaded at import time (by introspection), from an app built with the toy game
registered just long enough to build it; the package's ``toy_game`` fixture registers it
again while the tests run. Issue 20's fuzzing gate: every operation gets ``EXAMPLES``
generated cases, positive and negative, on a fresh embedded store and again on Redis (a
fresh key prefix per operation, deleted afterwards), through a ``Switchboard`` the
``on_embedded`` / ``on_redis`` fixtures point at the app of the test.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.config import SchemathesisConfig

from service import games
from service.store import SqliteStore
from service.store.redis import RedisStore
from tests.graphql.conftest import TOY, graphql_app
from tests.support.asgi_switch import Switchboard

pytestmark = pytest.mark.slow  # the fuzzing gate: long property runs

known = TOY in games.ids()
games.register(TOY, "tests.toy_game:engine")
try:
    app, _ = graphql_app(SqliteStore(":memory:"))
finally:
    if not known:
        games.unregister(TOY)

CONFIG = Path(__file__).with_name("schemathesis.toml")
EXAMPLES = 50  # generated cases per operation and store (issue 20: at least 50)
switchboard = Switchboard(app)
schema = schemathesis.graphql.from_asgi(
    "/graphql", switchboard, config=SchemathesisConfig.from_path(str(CONFIG))
)
# One app (one store) per operation, shared by its examples: a function-scoped fixture
# under hypothesis, on purpose.
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                           HealthCheck.function_scoped_fixture],
)


@pytest.fixture
def on_embedded(toy_game: None) -> Iterator[None]:
    switchboard.target, _ = graphql_app(SqliteStore(":memory:"))
    yield
    switchboard.target = app


@pytest.fixture
def on_redis(toy_game: None, redis_url: str, redis_prefix: str) -> Iterator[None]:
    switchboard.target, _ = graphql_app(RedisStore.from_url(redis_url, prefix=redis_prefix))
    yield
    switchboard.target = app


@schema.parametrize()
@FUZZ
def test_every_operation(case: schemathesis.Case, on_embedded: None) -> None:
    case.call_and_validate()


@schema.parametrize()
@FUZZ
def test_every_operation_on_redis(case: schemathesis.Case, on_redis: None) -> None:
    case.call_and_validate()
