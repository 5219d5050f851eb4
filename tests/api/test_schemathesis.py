"""schemathesis against the ASGI app: every operation and phase of the OpenAPI document,
stateful sequences (create -> legal moves -> act) included, with every check enabled.

Seat tokens are a security scheme: ``st_seat_tokens`` gives each request the token of the
match it names (the one its sequence created). Event streams end after half a second
(``sse_max_seconds``), so schemathesis reads them whole and validates every event.

Settings live in ``schemathesis.toml`` next to this file (shared with the live `st run` in
``test_schemathesis_cli.py``). The schema is loaded at import time (``from_fixture`` does not
work with pytest 9), with the toy game registered just long enough to build the app's
document; the autouse ``toy_game`` fixture registers it again while the tests run.
"""

from __future__ import annotations

from pathlib import Path

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.config import SchemathesisConfig

from service import games
from tests.api import st_seat_tokens
from tests.api.conftest import TOY, make_app

CONFIG = Path(__file__).with_name("schemathesis.toml")

games.register(TOY, "tests.toy_game:engine")
try:
    app = make_app(sse_max_seconds=0.5)
finally:
    games.unregister(TOY)

schema = schemathesis.openapi.from_asgi(
    "/openapi.json", app, config=SchemathesisConfig.from_path(str(CONFIG))
)
st_seat_tokens.install(schema)


@schema.parametrize()
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
def test_every_operation(case: schemathesis.Case) -> None:
    case.call_and_validate()


def test_stateful_sequences(toy_game: None) -> None:
    """Create -> legal moves -> act (and reads) through the document's links; at least one
    generated sequence must get as far as a successful move."""
    # An app of its own: what test_every_operation did to the shared one (its streams, its
    # matches, the caps they hold) must not decide whether a sequence gets through.
    fresh = make_app(sse_max_seconds=0.5)
    machine_schema = schemathesis.openapi.from_asgi(
        "/openapi.json", fresh, config=SchemathesisConfig.from_path(str(CONFIG))
    )
    st_seat_tokens.install(machine_schema)
    metrics = fresh.state.match_service.metrics
    before = metrics.requests[("POST", "/v1/matches/{match_id}/actions", 200)]
    listed = metrics.requests[("GET", "/v1/me/matches", 200)]
    machine_schema.as_state_machine().run(
        settings=settings(
            # 240: since issue 16 half the generated creations are of seated variants, most
            # naming no player of ours (404): twice as many keep the anonymous sequences
            # that reach a move as likely as before.
            max_examples=240,
            stateful_step_count=8,
            deadline=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        )
    )
    assert metrics.requests[("POST", "/v1/matches/{match_id}/actions", 200)] > before
    # Issue 16: create player -> seat it in a match -> its matches (with its own token).
    assert metrics.requests[("GET", "/v1/me/matches", 200)] > listed
