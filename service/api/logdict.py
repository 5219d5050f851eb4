"""Preset compression dictionaries for log entries, one per game (``logdicts.json``).

A log entry is a few hundred bytes of JSON whose keys and values repeat from entry to entry
and from match to match. Deflate with a preset dictionary taken from typical entries of the
same game shrinks a whole match's log about tenfold (to ~3 KiB), which keeps a match within
a few KiB in Redis. Dictionaries are data: once committed, an id's bytes never change (stored
entries name the id they were compressed with); a better dictionary gets a new id.

Rebuild (adds ids for games without one): ``python -m service.api.logdict``.
"""

from __future__ import annotations

import base64
import json
import zlib
from functools import cache
from pathlib import Path

PATH = Path(__file__).with_name("logdicts.json")
DICT_BYTES = 16_000
_MARK = b"\x01"


@cache
def dictionaries() -> dict[str, bytes]:
    if not PATH.exists():
        return {}
    raw: dict[str, str] = json.loads(PATH.read_text())
    return {key: base64.b64decode(value) for key, value in raw.items()}


@cache
def current_id(game: str) -> str | None:
    """The newest dictionary id of ``game`` (``"<game>.<n>"``), if any."""
    ids = [key for key in dictionaries() if key.rpartition(".")[0] == game]
    return max(ids, key=lambda key: int(key.rpartition(".")[2]), default=None)


def compress(game: str, data: bytes) -> bytes:
    """``data`` compressed with the game's dictionary (or none), if that is smaller."""
    dict_id = current_id(game) or ""
    preset = dictionaries().get(dict_id, b"")
    packer = (
        zlib.compressobj(9, zlib.DEFLATED, -15, 9, zlib.Z_DEFAULT_STRATEGY, preset)
        if preset else zlib.compressobj(9, zlib.DEFLATED, -15)
    )
    packed = _MARK + bytes([len(dict_id)]) + dict_id.encode() + packer.compress(data)
    packed += packer.flush()
    return packed if len(packed) < len(data) else data


def decompress(data: bytes) -> bytes:
    if not data.startswith(_MARK):
        return data
    size = data[1]
    dict_id = data[2 : 2 + size].decode()
    preset = dictionaries()[dict_id] if dict_id else b""
    unpacker = (
        zlib.decompressobj(-15, preset) if preset else zlib.decompressobj(-15)
    )
    return unpacker.decompress(data[2 + size :]) + unpacker.flush()


def _sample_entries(game: str) -> bytes:
    """Plain log entries of a few seeded random matches of ``game``."""
    import asyncio
    import random

    from service import games
    from service.api.models import CreateMatchRequest
    from service.api.service import MatchService
    from service.games.base import dump_action
    from service.store.memory import MemoryStore

    engine = games.get(game)

    async def play(players: int, seed: int) -> list[bytes]:
        service = MatchService(MemoryStore(), ttl_finished=None, ttl_idle=None)
        created = await service.create_match(
            CreateMatchRequest(game=game, players=players, seed=seed)
        )
        tokens = {s.seat: s.token for s in created.seats}
        chooser = random.Random(seed)
        while True:
            state = await service.get_state(created.match_id, None)
            if state.status == "finished":
                break
            seat = chooser.choice(state.active_seats)
            moves = await service.legal_moves(created.match_id, tokens[seat])
            move = dump_action(engine, chooser.choice(moves.moves))
            await service.act(created.match_id, tokens[seat], move, None, None)
        entries = await service.store.log(created.match_id, 0)
        return [decompress(e.data) for e in entries]

    counts = sorted({max(engine.min_players, 2), engine.max_players})
    sample = b""
    for seed, players in enumerate(counts, start=1):
        sample += b"".join(asyncio.run(play(players, seed)))
    return sample[-DICT_BYTES:]


def main() -> None:
    from service import games

    raw: dict[str, str] = json.loads(PATH.read_text()) if PATH.exists() else {}
    for game in games.ids():
        if current_id(game) is None:
            raw[f"{game}.1"] = base64.b64encode(_sample_entries(game)).decode()
            print(f"added {game}.1")
    PATH.write_text(json.dumps(raw, indent=0, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
