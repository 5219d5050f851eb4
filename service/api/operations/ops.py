"""Operating the service: liveness (``healthz``), readiness (``readyz``) and Prometheus
metrics (``metrics``), served by their own handlers (``service.api.rest.ops``)."""

from __future__ import annotations

from ..rest.ops import healthz, metrics, readyz
from .base import PUBLIC, Operation, Reply, rest_only

PROBE = rest_only("an operator's probe, not a client's operation")
READY_SCHEMA = {
    "type": "object",
    "properties": {
        "status": {"type": "string", "enum": ["ready", "degraded"]},
        "checks": {"type": "object", "additionalProperties": {
            "type": "object",
            "properties": {
                "status": {"type": "string", "enum": ["ok", "degraded"]},
                "reason": {"type": "string"},
                "workers": {"type": ["integer", "null"]},
                "lastBeatSecondsAgo": {"type": ["number", "null"]},
            },
            "required": ["status"]}},
    },
    "required": ["status", "checks"],
}

OPERATIONS = (
    Operation(
        id="healthz", method="GET", path="/healthz", tag="ops", summary="Liveness.",
        codes=(), budget="read", security=PUBLIC, graphql=PROBE,
        reply=Reply(None, "Alive.", content={"application/json": {"schema": {
            "type": "object", "properties": {"status": {"type": "string"}},
            "required": ["status"]}}}),
        handler=healthz,
    ),
    Operation(
        id="readyz", method="GET", path="/readyz", tag="ops",
        summary="Readiness: the store answers; a worker beats (else degraded).",
        codes=("store_unavailable",), budget="read", security=PUBLIC, graphql=PROBE,
        reply=Reply(None, "Serving: `ready`, or `degraded` (still in rotation) when a check "
                    "failed (`checks`: each with its `status` and `reason`), e.g. no worker "
                    "has written a heartbeat for `--worker-stale-seconds`.",
                    content={"application/json": {"schema": READY_SCHEMA}}),
        handler=readyz,
    ),
    Operation(
        id="metrics", method="GET", path="/metrics", tag="ops", summary="Prometheus metrics.",
        codes=(), budget="read", security=PUBLIC, graphql=PROBE,
        reply=Reply(None, "Prometheus text format.", content={
            "text/plain": {"schema": {"type": "string"}}}),
        handler=metrics,
    ),
)
