"""Comparing two readings of one match version: everything but what is read anew each time.

A state's ``clock.serverTime`` is when it was made, and a running seat's ``remainingMs`` is
what was left then (issue 18); every other field of one version is the same in every
reading (GET, a stream, GraphQL, after a restart). ``timeless`` drops the two, in REST's
camelCase JSON and in a ``model_dump()``'s snake_case alike.
"""

from __future__ import annotations

from typing import Any


def timeless(state: dict[str, Any]) -> dict[str, Any]:
    out = dict(state)
    clock = out.get("clock")
    if isinstance(clock, dict):
        seats = [
            {k: v for k, v in seat.items()
             if not (k in ("remainingMs", "remaining_ms") and seat.get("running"))}
            for seat in clock.get("seats", [])
        ]
        out["clock"] = {**{k: v for k, v in clock.items()
                           if k not in ("serverTime", "server_time")}, "seats": seats}
    return out
