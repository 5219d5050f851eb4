#!/usr/bin/env python3
"""A small third-party bot that plays Skyline over HTTP (REST + Server-Sent Events).

It depends on httpx only, and shows the loop a bot author needs:

1. create a match (``create``: it then holds every seat's token and plays **all** seats
   itself -- handy for trying a bot against itself) or join one (``join``: a match id and
   the token of one seat, handed out by whoever created the match);
2. wait for its turn on the SSE stream ``GET /v1/matches/{id}/events`` -- one ``state``
   event per version; if the connection drops it reconnects with ``Last-Event-ID`` and
   misses nothing;
3. when one of its seats is in ``activeSeats``: ``GET legal-moves`` with that seat's token,
   choose one move (here: uniformly at random from a seeded generator; put your own policy
   in ``choose``);
4. ``POST actions`` with ``expectedVersion`` = the version of those legal moves and an
   ``Idempotency-Key``; on a network error or a 5xx it retries **the same request with the
   same key** (the server then answers with the first result instead of moving twice); on
   409 (the match moved on) or 422 (the move is no longer legal) it re-reads and decides
   again;
5. at the end it prints the result.

Usage::

    skyline serve &                                   # http://127.0.0.1:8000
    python examples/bot_client.py create --game ny1901 --players 2
    python examples/bot_client.py join --match <matchId> --token <seat token>

Options: ``--base-url`` (default http://127.0.0.1:8000), ``--seed`` (the bot's random
choices), ``--quiet``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx

RETRIES = 6
"""Attempts of one request on network errors and 5xx answers (with backoff)."""


class ServerError(Exception):
    """The server answered with a problem we cannot recover from here."""


class BotClient:
    """Plays the seats whose tokens it holds until the match is finished."""

    def __init__(self, http: httpx.Client, match_id: str, tokens: dict[int, str],
                 seed: int = 0, log: bool = True) -> None:
        self.http = http
        self.match_id = match_id
        self.tokens = tokens
        self.rng = random.Random(seed)
        self.log = log
        self.moves = 0

    # ----------------------------------------------------------------- creating a match
    @classmethod
    def create(cls, http: httpx.Client, game: str, players: int, seed: int = 0,
               log: bool = True) -> BotClient:
        body = {"game": game, "players": players}
        response = _request(http, "POST", "/v1/matches", json=body)
        _raise_for_problem(response)
        created = response.json()
        tokens = {entry["seat"]: entry["token"] for entry in created["seats"]}
        if log:
            print(f"created match {created['matchId']} ({game}, {players} players); "
                  f"playing seats {sorted(tokens)}", flush=True)
        return cls(http, created["matchId"], tokens, seed, log)

    # ----------------------------------------------------------------- the main loop
    def play(self) -> dict[str, Any]:
        """Play until the match is finished; returns the final state (with ``result``)."""
        stream_token = next(iter(self.tokens.values()))
        for state in self.states(stream_token):
            if state["status"] == "finished":
                return self.final_state(stream_token)
            for seat in state["activeSeats"]:
                if seat in self.tokens:
                    self.take_turn(seat)
        return self.final_state(stream_token)

    def states(self, token: str) -> Iterator[dict[str, Any]]:
        """The match's states from the SSE stream, reconnecting with ``Last-Event-ID``."""
        last_id: str | None = None
        failures = 0
        while True:
            headers = {"Authorization": f"Bearer {token}", "Accept": "text/event-stream"}
            if last_id is not None:
                headers["Last-Event-ID"] = last_id
            url = f"/v1/matches/{self.match_id}/events"
            try:
                with self.http.stream("GET", url, headers=headers,
                                      timeout=httpx.Timeout(10.0, read=60.0)) as response:
                    if response.status_code == 204:
                        return  # finished, and we have seen everything
                    if response.status_code >= 500:
                        raise httpx.TransportError(f"stream answered {response.status_code}")
                    if response.status_code != 200:
                        response.read()
                        _raise_for_problem(response)
                    failures = 0
                    for event_id, event, data in _sse_events(response.iter_lines()):
                        if event_id is not None:
                            last_id = event_id
                        if event != "state" or data is None:
                            continue
                        state = json.loads(data)
                        yield state
                        if state["status"] == "finished":
                            return
            except httpx.TransportError as error:
                failures += 1
                if failures > RETRIES:
                    raise
                if self.log:
                    print(f"stream interrupted ({error!r}); resuming after {last_id}",
                          file=sys.stderr)
                time.sleep(min(2.0, 0.1 * 2 ** failures))

    def take_turn(self, seat: int) -> None:
        """Act for ``seat`` while it may: read legal moves, choose, post, handle conflicts."""
        token = self.tokens[seat]
        auth = {"Authorization": f"Bearer {token}"}
        while True:
            response = _request(self.http, "GET",
                                f"/v1/matches/{self.match_id}/legal-moves", headers=auth)
            _raise_for_problem(response)
            legal = response.json()
            if not legal["moves"]:
                return  # not (or no longer) this seat's turn
            action = self.choose(seat, legal["moves"])
            key = str(uuid.uuid4())  # one key per intended move, reused by every retry
            response = _request(
                self.http, "POST", f"/v1/matches/{self.match_id}/actions",
                headers={**auth, "Idempotency-Key": key},
                json={"action": action, "expectedVersion": legal["version"]},
            )
            if response.status_code in (409, 422):
                code = response.json().get("code")
                if code == "match_finished":
                    return
                continue  # the match moved on, or the move went stale: re-read, re-decide
            _raise_for_problem(response)
            self.moves += 1
            done = response.json()
            if self.log:
                print(f"seat {seat} v{done['version']}: {json.dumps(action)}", flush=True)
            state = done["state"]
            if state["status"] == "finished" or seat not in state["activeSeats"]:
                return

    def choose(self, seat: int, moves: list[dict[str, Any]]) -> dict[str, Any]:
        """The policy. Replace with your own: ``moves`` are posted back verbatim."""
        return self.rng.choice(moves)

    def final_state(self, token: str) -> dict[str, Any]:
        response = _request(self.http, "GET", f"/v1/matches/{self.match_id}",
                            headers={"Authorization": f"Bearer {token}"})
        _raise_for_problem(response)
        state: dict[str, Any] = response.json()
        return state


# --------------------------------------------------------------------- HTTP helpers
def _request(http: httpx.Client, method: str, url: str, **kwargs: Any) -> httpx.Response:
    """One request, retried with the same arguments (headers -- and so the Idempotency-Key
    -- included) on network errors and 5xx answers."""
    delay = 0.1
    for attempt in range(RETRIES):
        try:
            response = http.request(method, url, **kwargs)
        except httpx.TransportError:
            if attempt == RETRIES - 1:
                raise
        else:
            if response.status_code < 500 or attempt == RETRIES - 1:
                return response
            retry_after = response.headers.get("Retry-After")
            if retry_after and retry_after.isdigit():
                delay = max(delay, float(retry_after))
        time.sleep(delay)
        delay = min(delay * 2, 5.0)
    raise AssertionError("unreachable")


def _raise_for_problem(response: httpx.Response) -> None:
    if response.status_code < 400:
        return
    try:
        problem = response.json()
    except ValueError:
        problem = {"detail": response.text}
    raise ServerError(f"{response.status_code} {problem.get('code', '')}: "
                      f"{problem.get('detail', '')}")


def _sse_events(lines: Iterator[str]) -> Iterator[tuple[str | None, str, str | None]]:
    """(id, event, data) per Server-Sent Event; comments (``: ping``) are skipped."""
    event_id: str | None = None
    event = "message"
    data: list[str] = []
    for line in lines:
        if not line:
            if data or event_id is not None:
                yield event_id, event, "\n".join(data) if data else None
            event_id, event, data = None, "message", []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "id":
            event_id = value
        elif name == "event":
            event = value
        elif name == "data":
            data.append(value)


# --------------------------------------------------------------------- command line
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", default="http://127.0.0.1:8000")
    parser.add_argument("--seed", type=int, default=0, help="seed of the bot's choices")
    parser.add_argument("--quiet", action="store_true", help="print only the result")
    commands = parser.add_subparsers(dest="command", required=True)
    create = commands.add_parser("create", help="create a match and play all its seats")
    create.add_argument("--game", required=True)
    create.add_argument("--players", type=int, default=2)
    join = commands.add_parser("join", help="play one seat of an existing match")
    join.add_argument("--match", required=True, help="the match id")
    join.add_argument("--token", required=True, help="the seat's bearer token")
    join.add_argument("--seat", type=int, default=None,
                      help="the seat (default: read from the match with the token)")
    args = parser.parse_args(argv)
    log = not args.quiet
    with httpx.Client(base_url=args.base_url, timeout=30.0) as http:
        if args.command == "create":
            bot = BotClient.create(http, args.game, args.players, args.seed, log)
        else:
            seat = args.seat
            if seat is None:
                response = _request(http, "GET", f"/v1/matches/{args.match}",
                                    headers={"Authorization": f"Bearer {args.token}"})
                _raise_for_problem(response)
                seat = response.json()["seat"]
            bot = BotClient(http, args.match, {seat: args.token}, args.seed, log)
        final = bot.play()
    result = final.get("result") or {}
    scores = {s["seat"]: s["score"] for s in result.get("seats", [])}
    print(f"match {bot.match_id} finished at version {final['version']} after "
          f"{bot.moves} moves of ours: scores {scores}, winners {result.get('winners')}",
          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
