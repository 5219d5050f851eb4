#!/usr/bin/env python3
"""Check a finished Skyline match from its public API only: no token, no access to the store.

The recipe of docs/security.md ("Verifiable seeds (item 8)"), as a script:

1. ``GET /v1/matches/{id}`` (as a spectator) once the match is finished: it reveals ``seed``
   and ``seedSalt`` beside the ``seedCommitment`` it published from version 0 on, and the
   setup (``game``, the seats in ``players``, ``options``, ``rulesVersion``);
2. check ``sha256(bytes.fromhex(seedSalt) + seed.to_bytes(8, "big")).hexdigest()`` against the
   commitment -- the one you noted at the start (``--commitment``), not only the one shown now;
3. ``GET /v1/matches/{id}/log`` page by page (``after`` = ``nextAfter``): once the match is
   finished every entry holds its move (``action``; null for a service entry such as a seat
   handed to a bot, which changes nothing in the game);
4. set the match up again from the seed with the game's engine (the rules engines of this
   repository: ``service/games``, pure functions) and apply every move in order: each must
   be legal, each must produce exactly the events the log shows to a spectator (every public
   draw included), and the end must give the published result and spectator view.

Usage::

    python tools/verify_match.py MATCH_ID [--base-url http://127.0.0.1:8000]
                                          [--commitment HEX]

Exit status: 0 when the match checks out, 1 on a mismatch, 2 when it cannot be checked (not
finished, not found, no commitment). It needs this repository on ``PYTHONPATH`` (for the
engines) and nothing but the standard library besides.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any

Get = Callable[[str], Any]
"""GET a path of the API (``/v1/...``) and return its JSON."""


class Unverifiable(Exception):
    """The match cannot be checked (yet): not finished, or no commitment."""


def http_get(base_url: str) -> Get:
    def get(path: str) -> Any:
        request = urllib.request.Request(base_url.rstrip("/") + path,
                                         headers={"Accept": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.load(response)
    return get


def commitment(seed: int, salt_hex: str) -> str:
    """hex(SHA-256(salt ‖ seed as 8 bytes big-endian))."""
    return hashlib.sha256(bytes.fromhex(salt_hex) + seed.to_bytes(8, "big")).hexdigest()


def whole_log(get: Get, match_id: str) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    after = 0
    while True:
        page = get(f"/v1/matches/{urllib.parse.quote(match_id)}/log?after={after}")
        entries += page["entries"]
        if page["nextAfter"] is None:
            return entries
        after = page["nextAfter"]


def verify(get: Get, match_id: str, noted: str | None = None) -> list[str]:
    """The mismatches found (empty: the match checks out). Raises ``Unverifiable``."""
    from service import games
    from service.games.base import IllegalAction, parse_action

    state_json = get(f"/v1/matches/{urllib.parse.quote(match_id)}")
    if state_json["status"] != "finished":
        raise Unverifiable("the match is not finished: its seed is revealed at the end")
    published = state_json["seedCommitment"]
    if published is None:
        raise Unverifiable("no commitment: "
                           + ("the creator chose the seed" if state_json["seedChosen"]
                              else "the server published none"))
    seed, salt = state_json["seed"], state_json["seedSalt"]
    problems = []
    if commitment(seed, salt) != published:
        problems.append("sha256(seedSalt ‖ seed) is not the published seedCommitment")
    if noted is not None and noted.strip().lower() != published:
        problems.append("the commitment published now is not the one noted at the start")

    engine: Any = games.get(state_json["game"])
    options = state_json["options"]
    state = engine.setup(
        len(state_json["players"]),
        engine.Options.model_validate(options) if options else None,
        seed, state_json["rulesVersion"],
    )
    for entry in whole_log(get, match_id):
        if entry["seat"] is None:
            continue  # a service entry (a seat handed to a bot, a name): no move
        try:
            state, events = engine.apply(state, entry["seat"],
                                         parse_action(engine, entry["action"]))
        except (IllegalAction, ValueError) as refused:
            problems.append(f"version {entry['version']}: the logged move is not legal in "
                            f"the state set up from the seed ({refused})")
            return problems
        replayed = [{"kind": e.kind, **e.for_seat(None)} for e in events]
        shown = [{"kind": e["kind"], **e["data"]} for e in entry["events"]]
        if _plain(replayed) != _plain(shown):
            problems.append(f"version {entry['version']}: the events the log shows are not "
                            "those the move makes from the seed")
    if _expected_result(engine.result(state), state_json) != state_json["result"]:
        problems.append("the published result is not the replayed one")
    if _plain(engine.view(state, None)) != _plain(state_json["view"]):
        problems.append("the published final view is not the replayed one")
    return problems


def _expected_result(result: Any, state_json: dict[str, Any]) -> Any:
    """The result the server must publish for the replayed ``result``: the rules' own, with
    the seats the published one says left (resigned, timed out under ``forfeit``) ranked
    last -- the last to leave first -- and its termination (docs/clocks-and-notifications.md).
    The replay checks every score and the order of the seats still in."""
    from service.matches.outcome import outcome_of

    published = state_json["result"]
    if published is None:
        return None if result is None else "a result"
    reason = published.get("termination", {}).get("reason", "normal")
    if result is None and reason == "normal":
        return "no result"  # the rules did not end the match, and neither did the service
    left = sorted((s for s in published["seats"] if s.get("forfeited")),
                  key=lambda s: -s["rank"])
    expected = outcome_of(result, len(state_json["players"]), tuple(s["seat"] for s in left),
                          None if reason == "normal" else reason)
    return expected.model_dump(mode="json")


def _plain(value: Any) -> Any:
    """A value as JSON would carry it (models and dataclasses via pydantic)."""
    from pydantic import TypeAdapter

    return json.loads(TypeAdapter(type(value)).dump_json(value, by_alias=True))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("match", help="the match id")
    parser.add_argument("--base-url", default="http://127.0.0.1:8000")
    parser.add_argument("--commitment", default=None, metavar="HEX",
                        help="the seedCommitment you noted when the match started")
    args = parser.parse_args(argv)
    try:
        problems = verify(http_get(args.base_url), args.match, args.commitment)
    except Unverifiable as why:
        print(f"cannot verify: {why}")
        return 2
    for problem in problems:
        print(f"MISMATCH: {problem}")
    print("verdict: " + ("OK" if not problems else "FAILED"))
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
