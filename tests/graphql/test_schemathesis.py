"""schemathesis against the GraphQL endpoint of the ASGI app, every check enabled.

One exception, configured in ``schemathesis.toml`` next to this file (shared with the live
``st run`` in ``test_schemathesis_cli.py``): for the operations that take an ``@oneOf`` input
(``act``, ``createMatch``), schemathesis's generator does not know ``@oneOf`` and sends
several keys or nulls, which GraphQL itself rejects before any resolver runs, so
``positive_data_acceptance`` is meaningless there. Every other check still runs on them.

The app is built at import time (schemathesis loads the schema by introspection then), with
the toy game registered just long enough to build the schema; the package's ``toy_game``
fixture registers it again while the tests run.
"""

from __future__ import annotations

from pathlib import Path

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.config import SchemathesisConfig

from service import games
from service.store import SqliteStore
from tests.graphql.conftest import TOY, graphql_app

known = TOY in games.ids()
games.register(TOY, "tests.toy_game:engine")
try:
    app, _ = graphql_app(SqliteStore(":memory:"))
finally:
    if not known:
        games.unregister(TOY)

CONFIG = Path(__file__).with_name("schemathesis.toml")
schema = schemathesis.graphql.from_asgi(
    "/graphql", app, config=SchemathesisConfig.from_path(str(CONFIG))
)


@schema.parametrize()
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
def test_every_operation(case: schemathesis.Case) -> None:
    case.call_and_validate()
