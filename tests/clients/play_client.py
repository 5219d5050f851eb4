"""A client program written against the Python client that openapi-python-client generates
from the checked-in openapi/openapi.json (package ``skyline_client``, generated into a scratch
folder by tests/clients/test_python_client.py; ``mypy --strict`` checks this file against it).

It creates a guest player (``createPlayer``, no credential), then with the guest's token (the
generated ``AuthenticatedClient``: ``createMatch`` declares its credentials as optional
alternatives) a 2-player New York 1901 match with a time control, and plays it to its end:
for the seat to move, post the first listed legal move. The server (here, a proxy in front of
it) may send event kinds and problem codes the client was not generated with: unknown kinds
are counted and skipped; an unknown problem code means "re-read the legal moves and try
again".

Usage: python play_client.py BASE_URL  -- prints one JSON summary line on stdout.
"""

from __future__ import annotations

import json
import sys
from collections import Counter

from skyline_client import AuthenticatedClient, Client
from skyline_client.api.matches import act, create_match, get_legal_moves, get_log, get_match
from skyline_client.api.players import create_player
from skyline_client.models import (
    ActRequest,
    ActResponse,
    CorrespondenceControl,
    CorrespondenceSettings,
    CreateMatchResponse,
    CreateNy1901Match2,
    CreatePlayerRequest,
    LegalMoves,
    LogPage,
    MatchState,
    MatchStateStatus,
    PlayerCreated,
    Problem,
)

SECONDS_PER_MOVE = 3600
MAX_REQUESTS = 2000  # a 2-player match takes a few hundred; a loop is a bug
MAX_FAILURES_IN_A_ROW = 5
KNOWN_KINDS = frozenset({
    "acquire", "build", "rebuild", "construction_boom", "end_triggered", "end_turn",
    "game_over", "land_grab", "market_refill", "market_shift", "return_lot",
})
RETRY_CODES = frozenset({
    "version_conflict", "precondition_failed", "not_your_turn", "busy", "store_unavailable",
})


class Player:
    """Counts what the server sent, and plays."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.event_kinds: dict[str, Counter[str]] = {"act": Counter(), "log": Counter()}
        self.unknown_kinds: set[str] = set()
        self.problem_codes: Counter[str] = Counter()
        self.game_over_seen = False

    def handle_event(self, where: str, kind: str) -> None:
        """Every event model has its ``kind`` (typed events, and the catch-all for kinds the
        document does not describe), so this reads nothing else."""
        self.event_kinds[where][kind] += 1
        if kind == "game_over":
            self.game_over_seen = True
        elif kind not in KNOWN_KINDS:
            self.unknown_kinds.add(kind)  # a kind from a newer server: skip it

    def handle_problem(self, status: int, problem: Problem) -> bool:
        """True when the match is over; False: re-read and retry."""
        self.problem_codes[problem.code] += 1
        if problem.code == "match_finished":
            return True
        if problem.code in RETRY_CODES:
            return False
        # A code this client does not know (a newer server, or an engine's refusal code):
        # nothing was written (docs/api.md, Errors), so re-read the legal moves and retry.
        if status >= 500 and status != 503:
            raise RuntimeError(f"server error {status}: {problem.code}: {problem.detail}")
        return False

    def read_state(self, client: AuthenticatedClient, match_id: str) -> MatchState:
        answer = get_match.sync_detailed(match_id, client=client)
        if not isinstance(answer.parsed, MatchState):
            raise RuntimeError(f"getMatch: {answer.status_code} {answer.content!r}")
        return answer.parsed

    def play(self) -> dict[str, object]:
        anonymous = Client(base_url=self.base_url)
        guest = create_player.sync_detailed(client=anonymous,
                                            body=CreatePlayerRequest(name="Py Client"))
        if not isinstance(guest.parsed, PlayerCreated):
            raise RuntimeError(f"createPlayer: {guest.status_code} {guest.content!r}")
        creator = AuthenticatedClient(base_url=self.base_url, token=guest.parsed.token)
        timed = CorrespondenceControl(
            correspondence=CorrespondenceSettings(seconds_per_move=SECONDS_PER_MOVE))
        created = create_match.sync_detailed(
            client=creator, body=CreateNy1901Match2(game="ny1901", players=2, seed=42,
                                                    time_control=timed)
        )
        if not isinstance(created.parsed, CreateMatchResponse):
            raise RuntimeError(f"createMatch: {created.status_code} {created.content!r}")
        match_id = created.parsed.match_id
        seats = {
            seat.seat: AuthenticatedClient(base_url=self.base_url, token=seat.token)
            for seat in created.parsed.seats
        }
        first = seats[min(seats)]

        state = self.read_state(first, match_id)
        moves = failures_in_a_row = 0
        for request in range(MAX_REQUESTS + 1):
            if state.status == MatchStateStatus.FINISHED:
                break
            if request == MAX_REQUESTS:
                raise RuntimeError(f"no end after {MAX_REQUESTS} moves (at {state.version})")
            client = seats[state.active_seats[0]]
            legal = get_legal_moves.sync_detailed(match_id, client=client)
            if not isinstance(legal.parsed, LegalMoves):
                raise RuntimeError(f"getLegalMoves: {legal.status_code} {legal.content!r}")
            if not legal.parsed.moves:
                raise RuntimeError(f"an active seat has no legal move at {legal.parsed.version}")
            acted = act.sync_detailed(
                match_id,
                client=client,
                body=ActRequest(
                    action=legal.parsed.moves[0], expected_version=legal.parsed.version
                ),
                idempotency_key=f"play-py-{legal.parsed.version}-{request}",
            )
            if isinstance(acted.parsed, ActResponse):
                moves += 1
                failures_in_a_row = 0
                for event in acted.parsed.events:
                    self.handle_event("act", event.kind)
                state = acted.parsed.state
                continue
            if not isinstance(acted.parsed, Problem):
                raise RuntimeError(f"act: {acted.status_code} {acted.content!r}")
            failures_in_a_row += 1
            if failures_in_a_row > MAX_FAILURES_IN_A_ROW:
                raise RuntimeError(f"act refused {failures_in_a_row} times in a row")
            if self.handle_problem(int(acted.status_code), acted.parsed):
                break
            state = self.read_state(first, match_id)

        log_entries = 0
        for client in seats.values():
            after = 0
            while True:
                page = get_log.sync_detailed(match_id, client=client, after=after)
                if not isinstance(page.parsed, LogPage):
                    raise RuntimeError(f"getLog: {page.status_code} {page.content!r}")
                if not page.parsed.entries:
                    break
                for entry in page.parsed.entries:
                    log_entries += 1
                    for event in entry.events:
                        self.handle_event("log", event.kind)
                after = page.parsed.entries[-1].version
                if after >= page.parsed.latest_version:
                    break

        final = self.read_state(first, match_id)
        return {
            "baseUrl": self.base_url,
            "matchId": match_id,
            "status": final.status.value,
            "version": final.version,
            "moves": moves,
            "logEntries": log_entries,
            "winners": None if final.result is None else list(final.result.winners),
            "timeControl": None if final.time_control is None else final.time_control.to_dict(),
            "eventKinds": {where: dict(kinds) for where, kinds in self.event_kinds.items()},
            "gameOverSeen": self.game_over_seen,
            "unknownKinds": sorted(self.unknown_kinds),
            "problemCodes": dict(self.problem_codes),
        }


def main(argv: list[str]) -> None:
    if len(argv) != 2:
        raise SystemExit("usage: python play_client.py BASE_URL")
    print(json.dumps(Player(argv[1]).play()))


if __name__ == "__main__":
    main(sys.argv)
