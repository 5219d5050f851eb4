"""Preset compression dictionaries for log entries, one per game (``logdicts.json``).

A log entry is ~40-60 bytes of JSON (``{"a":{...},"s":seat}``) whose keys and values repeat
from entry to entry and from match to match. Raw deflate with a preset dictionary taken from
typical entries of the same game shrinks one to 4-10 bytes, which keeps a finished match
(record and log) at 1.3-7.6 KiB in Redis.

Stored form: the raw deflate stream -- the match record names its game and dictionary
number once (``MatchRecord.log_dict``, fixed when the match is created), so an entry carries
no header; number 0 means plain JSON (a game without a dictionary). Deflate marks its own
end, so bytes may follow the stream (``split``): an entry holding a state checkpoint
(``records.LogRecord``) carries the engine's state there; readers that predate checkpoints
ignore them.
Dictionary ``n`` of game ``g`` has the id ``"g.n"``. Dictionaries are data: once committed,
an id's bytes never change; a better dictionary gets a new number and only new matches use
it. (Numbers 1, trained on entries that still held events, and 2, a 16 KB sample, were
retired before any match outside tests used them; 3 is 32 KB of entries ranked by frequency:
about 5 bytes a New York move, 6.5 a Ginkgopolis one.)

Rebuild (adds a dictionary for games without one): ``python -m service.matches.logdict``.
"""

from __future__ import annotations

import base64
import json
import zlib
from functools import cache
from pathlib import Path

PATH = Path(__file__).with_name("logdicts.json")
DICT_BYTES = 32_000
"""Deflate's window is 32 KiB; zlib uses up to its last 32 506 bytes of a dictionary."""


@cache
def dictionaries() -> dict[str, bytes]:
    if not PATH.exists():
        return {}
    raw: dict[str, str] = json.loads(PATH.read_text())
    return {key: base64.b64decode(value) for key, value in raw.items()}


@cache
def current_number(game: str) -> int | None:
    """The newest dictionary number of ``game``, if it has one."""
    numbers = [int(key.rpartition(".")[2]) for key in dictionaries()
               if key.rpartition(".")[0] == game]
    return max(numbers, default=None)


def known(game: str, number: int) -> bool:
    """Whether this build has dictionary ``number`` of ``game`` (0, plain JSON, always)."""
    return number == 0 or f"{game}.{number}" in dictionaries()


def compress(game: str, number: int, data: bytes) -> bytes:
    """``data`` deflated with dictionary ``number`` of ``game`` (0: ``data`` itself)."""
    if number == 0:
        return data
    preset = dictionaries()[f"{game}.{number}"]
    packer = zlib.compressobj(9, zlib.DEFLATED, -15, 9, zlib.Z_DEFAULT_STRATEGY, preset)
    return packer.compress(data) + packer.flush()


def decompress(game: str, number: int, data: bytes) -> bytes:
    """The entry ``compress`` made (any bytes after the deflate stream are left out)."""
    return split(game, number, data)[0]


def split(game: str, number: int, data: bytes) -> tuple[bytes, bytes]:
    """The inflated deflate stream at the start of ``data`` and the bytes after its end (a
    state checkpoint: ``records.LogRecord``); number 0: ``data`` and nothing."""
    if number == 0:
        return data, b""
    unpacker = zlib.decompressobj(-15, dictionaries()[f"{game}.{number}"])
    inflated = unpacker.decompress(data) + unpacker.flush()
    if not unpacker.eof:
        raise ValueError("a log entry's deflate stream is cut short")
    return inflated, unpacker.unused_data


TIMED = 4
"""The first dictionary number whose entries carry each version's header (``headers.py``)
in their own layout: the time since the entry before as a varint after the deflate stream
(``records.LogRecord.encode``). Readers that predate it refuse such matches (``known``) as
they refuse any newer dictionary."""


def _sample_entries(game: str, number: int = TIMED) -> bytes:
    """A dictionary for ``game``: the distinct log entries of seeded random games at every
    player count, least frequent first (deflate codes near matches shorter, so the commonest
    entries go last), cut to ``DICT_BYTES`` from the end. From ``TIMED`` on, a few whole
    headers (a first entry's, ``headers.py``) come first."""
    import random
    from collections import Counter

    from service import games
    from service.games.base import dump_action

    engine = games.get(game)
    counts: Counter[bytes] = Counter()
    firsts: list[bytes] = []
    for seed in range(120):
        players = engine.min_players + seed % (engine.max_players - engine.min_players + 1)
        chooser = random.Random(1000 + seed)
        state = engine.setup(players, None, 1000 + seed)
        while engine.result(state) is None:
            seat = chooser.choice(sorted(engine.active_seats(state)))
            action = chooser.choice(engine.legal_actions(state, seat))
            state, _ = engine.apply(state, seat, action)
            entry = json.dumps({"s": seat, "a": dump_action(engine, action)},
                               separators=(",", ":"), sort_keys=True).encode()
            counts[entry] += 1
        if number >= TIMED and seed < 1:
            now = 1_796_000_000_000 + chooser.randint(0, 10**9)
            clocks = [[now if s == 0 else None, None, 0] for s in range(players)]
            whole = {"=": 1, "b": {}, "ck": clocks, "f": False, "tw": now, "u": now // 1000}
            firsts.append(json.dumps({"h": whole}, separators=(",", ":"),
                                     sort_keys=True).encode())
    ranked = sorted(counts.items(), key=lambda item: (item[1], item[0]))
    sample = b"".join(entry for entry, _ in ranked)
    head = b"".join(firsts)
    return head + sample[-(DICT_BYTES - len(head)):]


def main() -> None:
    from service import games

    raw: dict[str, str] = json.loads(PATH.read_text()) if PATH.exists() else {}
    for game in games.ids():
        if (current_number(game) or 0) < TIMED:
            raw[f"{game}.{TIMED}"] = base64.b64encode(_sample_entries(game)).decode()
            print(f"added {game}.{TIMED}")
    PATH.write_text(json.dumps(raw, indent=0, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
