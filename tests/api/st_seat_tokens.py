"""Seat tokens for schemathesis: the credential of the match a request names.

The OpenAPI document declares the seat token as a bearer security scheme (``seatToken``), so
no link can carry it; instead an ``after_call`` hook remembers the first token of every
match ``createMatch`` answers, and an auth provider puts that match's token on every later
request naming the match (``path.matchId``). Stateful sequences (create -> legal moves ->
act, reads, the event stream) thus act and read as seat 0 of the match they created;
requests for other matches carry no token (a spectator, or the generated credential a
write's security requires).

Used two ways: ``install(schema)`` for the pytest integration (``test_schemathesis.py``),
and as the CLI's hooks file (``SCHEMATHESIS_HOOKS=<this file>``, ``test_schemathesis_cli.py``),
loaded under schemathesis' own module name, where it registers itself globally. It imports
nothing of the project, so the CLI can load it from any working directory.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import schemathesis

CREATE_OPERATION = "createMatch"
CREATE_PLAYER = "createPlayer"


def _seated_players(case: Any) -> list[str]:
    """The player ids a createMatch body seats (``seats[].player``)."""
    body = case.body if isinstance(getattr(case, "body", None), dict) else {}
    seats = body.get("seats")
    if not isinstance(seats, list):
        return []
    return [str(s["player"]) for s in seats if isinstance(s, dict) and "player" in s]


class SeatTokens:
    """matchId -> the credential acting for its seat 0: the first seat token ``createMatch``
    returned, or (a match seating a player ``createPlayer`` made) that player's token; and
    the newest player token, for the player's own operations (``/v1/me...``)."""

    def __init__(self) -> None:
        self._tokens: dict[str, str] = {}
        self._players: dict[str, str] = {}
        self._newest_player: str | None = None
        self.app_key: str | None = None
        """An app key of the target app, for ``/v1/apps/me/...`` (set by the test)."""
        self._lock = threading.Lock()

    def remember(self, case: Any, response: Any) -> None:
        operation = getattr(case.operation.definition, "raw", {}).get("operationId")
        if response.status_code != 201 or operation not in (CREATE_OPERATION, CREATE_PLAYER):
            return
        try:
            body = json.loads(response.content)
        except ValueError:
            return
        if not isinstance(body, dict):
            return
        with self._lock:
            if operation == CREATE_PLAYER:
                if isinstance(body.get("id"), str) and isinstance(body.get("token"), str):
                    self._players[body["id"]] = body["token"]
                    self._newest_player = body["token"]
                return
            seats = body.get("seats")
            if isinstance(seats, list) and seats and isinstance(seats[0], dict):
                self._tokens[str(body.get("matchId"))] = str(seats[0].get("token"))
                return
            for player in _seated_players(case):
                if player in self._players:
                    self._tokens[str(body.get("matchId"))] = self._players[player]
                    return

    def token_for(self, case: Any) -> str | None:
        match_id = (case.path_parameters or {}).get("matchId")
        with self._lock:
            if match_id is not None:
                return self._tokens.get(str(match_id))
            path = getattr(case.operation, "path", "")
            if path.startswith("/v1/apps/me/") and self.app_key is not None:
                return self.app_key
            if path.startswith("/v1/me"):
                return self._newest_player
            for player in _seated_players(case):
                if player in self._players:
                    return self._players[player]
            return None


TOKENS = SeatTokens()


class SeatTokenAuth:
    """schemathesis auth provider: the seat token of the match in the path, if we made it."""

    def get(self, case: Any, ctx: Any) -> str | None:
        return TOKENS.token_for(case)

    def set(self, case: Any, data: str, ctx: Any) -> None:
        case.headers = case.headers or {}
        case.headers["Authorization"] = f"Bearer {data}"


def remember_tokens(context: Any, case: Any, response: Any) -> None:
    TOKENS.remember(case, response)


# The provider is asked on every request (no caching: each match has its own token) and is
# not retried on 401 (a refused token is an answer under test, not an expired login).
AUTH_OPTIONS: dict[str, Any] = {"refresh_interval": None, "retry_on": []}


def install(schema: Any) -> None:
    """Attach the provider and the hook to one loaded schema (pytest)."""
    schema.auth(**AUTH_OPTIONS)(SeatTokenAuth)
    schema.hook("after_call")(remember_tokens)


if __name__ == "_schemathesis_hooks":  # loaded by the CLI as its hooks file
    schemathesis.auth(**AUTH_OPTIONS)(SeatTokenAuth)
    schemathesis.hook("after_call")(remember_tokens)
