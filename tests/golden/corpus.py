"""The golden corpus: recorded matches that every engine change must replay exactly.

A recording holds a match's game, players, options, seed and rules version, every action
(seat and wire JSON) and, per version, a digest of the state (``dumps``) and of what each
seat -- and a spectator -- saw of the events. ``replay`` plays the actions again and names
the first version that differs. Recordings are made by ``python -m tests.golden.corpus``
(see ``record``) and committed under ``tests/golden/recordings/``: they are the memory of
how matches already stored were played, so a rules fix must come with a new rules version,
never by changing what an old recording replays to.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

from service import games
from service.games.base import Engine, Event, dump_action, parse_action

RECORDINGS = Path(__file__).resolve().parent / "recordings"


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=8).hexdigest()


def _events_digest(events: list[Event], players: int) -> str:
    seen = [[e.for_seat(seat) for e in events] for seat in [None, *range(players)]]
    return _digest(json.dumps(seen, sort_keys=True, separators=(",", ":")).encode())


def _setup(engine: Engine[Any], recording: dict[str, Any]) -> Any:
    options = engine.Options.model_validate(recording["options"])
    return engine.setup(recording["players"], options, recording["seed"],
                        recording.get("rules_version", 1))


def record(game: str, players: int, options: dict[str, Any], seed: int, *,
           rules_version: int = 1, policy: str = "random", max_moves: int = 3000
           ) -> dict[str, Any]:
    """Play a match (``policy``: ``random`` legal moves from a seeded generator, or
    ``first``: always the first legal move of the lowest active seat) and record it."""
    engine = games.get(game)
    recording: dict[str, Any] = {
        "game": game, "players": players, "options": options, "seed": seed,
        "rules_version": rules_version, "policy": policy,
    }
    state = _setup(engine, recording)
    chooser = random.Random(seed)
    actions: list[list[Any]] = []
    digests = [_digest(engine.dumps(state))]
    for _ in range(max_moves):
        if engine.result(state) is not None:
            break
        active = sorted(engine.active_seats(state))
        seat = active[0] if policy == "first" else chooser.choice(active)
        legal = engine.legal_actions(state, seat)
        action = legal[0] if policy == "first" else chooser.choice(legal)
        state, events = engine.apply(state, seat, action)
        actions.append([seat, dump_action(engine, action)])
        digests.append(f"{_digest(engine.dumps(state))}:{_events_digest(events, players)}")
    recording["actions"] = actions
    recording["digests"] = digests
    recording["finished"] = engine.result(state) is not None
    return recording


def replay(recording: dict[str, Any]) -> None:
    """Play the recording's actions again; AssertionError names the first version whose
    state or events differ (or whose action the engine now refuses)."""
    engine = games.get(recording["game"])
    players = recording["players"]
    name = (f"{recording['game']} {players}p seed {recording['seed']} "
            f"rules v{recording.get('rules_version', 1)}")
    state = _setup(engine, recording)
    digests = recording["digests"]
    assert _digest(engine.dumps(state)) == digests[0], f"{name}: the setup (version 0) differs"
    for version, (seat, wire) in enumerate(recording["actions"], start=1):
        try:
            state, events = engine.apply(state, seat, parse_action(engine, wire))
        except Exception as error:
            raise AssertionError(f"{name}: version {version}: the recorded move of seat "
                                 f"{seat} is refused now: {error}") from None
        got = f"{_digest(engine.dumps(state))}:{_events_digest(events, players)}"
        if got != digests[version]:
            which = "state" if got[:16] != digests[version][:16] else "events"
            raise AssertionError(f"{name}: version {version} differs first ({which})")
    assert (engine.result(state) is not None) == recording["finished"], f"{name}: the end"


SPECS: list[tuple[str, int, dict[str, Any], int, str]] = [
    # New York 1901: every player count, the learning game, expert, named challenges.
    *[("ny1901", n, {}, 100 + n, "random") for n in (2, 3, 4)],
    ("ny1901", 2, {"challenge": "none"}, 111, "random"),
    ("ny1901", 3, {"expert": True, "challenge": "gold_prestige"}, 112, "random"),
    ("ny1901", 4, {"challenge": "gold_tycoon"}, 113, "random"),
    ("ny1901", 2, {"challenge": "master_architect"}, 114, "random"),
    ("ny1901", 3, {"challenge": "bronze_baron"}, 115, "random"),
    ("ny1901", 2, {}, 116, "first"),  # the first-listed-move policy (NY end_turn first today)
    # Ginkgopolis: solo (Hal, expert Hal), every player count, the draft.
    ("ginkgopolis", 1, {}, 201, "random"),
    ("ginkgopolis", 1, {"hal_expert": True}, 202, "random"),
    *[("ginkgopolis", n, {}, 200 + n, "random") for n in (2, 3, 4, 5)],
    ("ginkgopolis", 3, {"characters": "draft"}, 213, "random"),
    ("ginkgopolis", 2, {"characters": "draft"}, 214, "random"),
    ("ginkgopolis", 4, {}, 215, "random"),
    ("ginkgopolis", 2, {}, 216, "first"),
    *[("ginkgopolis", 1, {}, seed, "random") for seed in (221, 222, 223)],
    *[("ginkgopolis", n, {}, 230 + n, "random") for n in (3, 4, 5)],
    # Ginkgopolis matches whose version 4 recordings choose a token layout that version 3
    # withholds (GK-T2 v4): a seat's own token (solo, 2p) and Hal's (GK-H2, seed 287).
    *[("ginkgopolis", 1, {}, seed, "random") for seed in (242, 287)],
    *[("ginkgopolis", 2, {}, seed, "random") for seed in (261, 396)],
    # Ginkgopolis matches (from version 3) in which the token is placed by itself where the
    # walk allows one space only and the angle order (versions 1-2) would differ: they pin
    # the version branch of the automatic placement (rules.move_token_or_ask).
    ("ginkgopolis", 1, {}, 241, "random"),
    ("ginkgopolis", 3, {}, 298, "random"),
]


def main(argv: list[str]) -> int:
    """``python -m tests.golden.corpus --rules-version N [--game ID] [--overwrite]``: write the
    recordings of ``SPECS`` (of one game) for rules version N -- only ever for a version being
    introduced, never for one already shipped (existing files are kept unless
    ``--overwrite``)."""
    parser = argparse.ArgumentParser(
        prog="python -m tests.golden.corpus",
        description="Record the golden matches of a rules version being introduced.")
    parser.add_argument("--rules-version", type=int, required=True,
                        help="the rules version to record (a new one: shipped recordings "
                        "are the memory of stored matches)")
    parser.add_argument("--game", help="record this game only")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace recordings that already exist")
    args = parser.parse_args(argv)
    folder = RECORDINGS / f"v{args.rules_version}"
    folder.mkdir(parents=True, exist_ok=True)
    for game, players, options, seed, policy in SPECS:
        if args.game is not None and game != args.game:
            continue
        path = folder / f"{game}-{players}p-{seed}-{policy}.json"
        if path.exists() and not args.overwrite:
            print(f"{path.name}: exists, kept (--overwrite to replace)", flush=True)
            continue
        recording = record(game, players, options, seed, rules_version=args.rules_version,
                           policy=policy, max_moves=400 if policy == "first" else 3000)
        path.write_text(json.dumps(recording, separators=(",", ":")) + "\n")
        print(f"{path.name}: {len(recording['actions'])} moves, "
              f"{'finished' if recording['finished'] else 'NOT finished'}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
