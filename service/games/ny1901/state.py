"""The game state and its compact, lossless serialization.

The state is a plain record of small ints and lists; everything derived from it (each seat's
land and built squares, which lots hold a worker) is recomputed by ``refresh`` and kept beside
it only for speed. Workers are not stored: a worker stands on exactly the owned lots that hold
none of the owner's buildings (NY-A1, A2, A5 and A8 all preserve that), so a seat's free
workers are ``WORKERS - len(staffed lots)``.

Rule engines treat a state as immutable: ``apply`` copies (``State.copy``) and edits the copy.
"""

from __future__ import annotations

import struct

from . import data
from .shapes import TILES, Geometry

# Phases of a turn.
START = 0       # start of turn: market shift, acquire, rebuild, (build), pass, stuck return
ACQUIRED = 1    # one lot acquired: build, land grab, end turn
GRAB = 2        # land grab played: second (2-square) acquisition
BUILD = 3       # two lots acquired: build or end turn
BUILT = 4       # first build done: construction boom or end turn
BOOM = 5        # construction boom played: the second build
OVER = 6
# Rules version 2 only (NY-C3 revised: Land Grab may also follow the turn's build). Each step
# offers a fixed list of moves, so a state rebuilt from the view offers the same ones.
BUILT_BOTH = 7  # an option-1 build done: construction boom, land grab or end turn
BUILT_GRAB = 8  # an option-1 build done: land grab or end turn
LATE_GRAB = 9   # land grab played after the build: the (2-square) acquisition, no build after
PHASE_NAMES = ("start", "acquired", "land_grab", "build", "built", "construction_boom", "over",
               "built_boom_or_land_grab", "built_land_grab", "late_land_grab")

# Turn flags.
GRAB_USED = 1           # land grab played this turn: no 3-square lot (NY-C3)
TRIGGERED_NOW = 2       # the end was triggered during this turn (NY-E2)
FIRST_BUILD_ENDED = 4   # the first build triggered the end: no construction boom (NY-C1)
FIRST_SIZE3 = 8         # the first acquisition was a 3-square lot (no land grab after it)
OPTION1_BUILT = 16      # v2: the turn's first build was a plain one (a land grab may follow)

# Action-card bits.
CARD_BOOM = 1
CARD_SHIFT = 2
CARD_GRAB = 4

Building = tuple[int, int, int]
"""(tile index, placement id, square mask)."""


class State:
    __slots__ = (
        "buildings", "built", "cards", "challenge", "characters", "expert", "flags", "future",
        "land", "left", "legend", "lots", "market", "n", "phase", "points", "prestige", "rng",
        "rules_version", "seat", "staffed", "streets", "trigger", "used",
    )

    n: int
    rules_version: int
    """The rules version the match is played under (``Ny1901Engine.rules_versions``)."""
    expert: bool
    challenge: int
    streets: tuple[int, ...]
    rng: int
    characters: tuple[int, ...]
    seat: int
    phase: int
    flags: int
    trigger: int
    left: int
    legend: list[int]
    lots: list[int]
    used: list[int]
    cards: list[int]
    points: list[int]
    prestige: list[int]
    buildings: list[list[Building]]
    market: list[int]
    future: list[int]
    land: list[int]
    built: list[int]
    staffed: list[int]

    def copy(self) -> State:
        new = State.__new__(State)
        new.n = self.n
        new.rules_version = self.rules_version
        new.expert = self.expert
        new.challenge = self.challenge
        new.streets = self.streets
        new.rng = self.rng
        new.characters = self.characters
        new.seat = self.seat
        new.phase = self.phase
        new.flags = self.flags
        new.trigger = self.trigger
        new.left = self.left
        new.legend = self.legend[:]
        new.lots = self.lots[:]
        new.used = self.used[:]
        new.cards = self.cards[:]
        new.points = self.points[:]
        new.prestige = self.prestige[:]
        new.buildings = self.buildings[:]  # inner lists are replaced, never edited
        new.market = self.market[:]
        new.future = self.future[:]
        new.land = self.land[:]
        new.built = self.built[:]
        new.staffed = self.staffed[:]
        return new

    def score(self, seat: int) -> int:
        """The score track during play: building points plus Gold Prestige (NY-F1)."""
        return self.points[seat] + self.prestige[seat]

    def free_workers(self, seat: int) -> int:
        return data.WORKERS - self.staffed[seat].bit_count()


def refresh(state: State, geometry: Geometry) -> None:
    """Recompute the derived fields (land, built squares, staffed lots) of every seat."""
    lots = geometry.board.lots
    state.land = []
    state.built = []
    state.staffed = []
    for seat in range(state.n):
        land = built = staffed = 0
        for _, _, mask in state.buildings[seat]:
            built |= mask
        owned = state.lots[seat]
        while owned:
            low = owned & -owned
            index = low.bit_length() - 1
            owned ^= low
            land |= lots[index].mask
            if not lots[index].mask & built:
                staffed |= low
        state.land.append(land)
        state.built.append(built)
        state.staffed.append(staffed)


# ---------------------------------------------------------------------------------------
# Serialization: a version byte, then fixed fields, then per seat its lots, tiles and
# buildings (tile + placement id: the mask follows from the board), then the markets.
VERSION = 1
VERSION_RULES = 2
"""Format 2: format 1 followed by one byte, the rules version (2 and later)."""


def dumps(state: State, geometry: Geometry) -> bytes:
    lot_bytes = (len(geometry.board.lots) + 7) // 8
    s0, s1, s2 = state.streets
    parts = [
        _HEAD.pack(VERSION, state.n | state.expert << 3 | (state.challenge + 1) << 4,
                   s0 | s1 << 3 | s2 << 6, state.rng),
        bytes(state.characters),
        bytes((state.seat | state.phase << 3, state.flags, state.trigger + 1 | state.left << 4)),
        bytes([owner + 1 for owner in state.legend]),
    ]
    for seat in range(state.n):
        buildings = state.buildings[seat]
        parts.append(state.lots[seat].to_bytes(lot_bytes, "little"))
        parts.append((state.used[seat] | state.cards[seat] << 18
                      | state.points[seat] << 24 | state.prestige[seat] << 32
                      | len(buildings) << 40).to_bytes(6, "little"))
        codes = geometry.codes
        parts.append(b"".join([codes[tile][pid] for tile, pid, _ in buildings]))
    parts.append(bytes((len(state.market), *state.market, len(state.future))))
    parts.append(bytes(state.future))
    if state.rules_version != 1:  # version 1 keeps the format it was stored in, byte for byte
        parts[0] = bytes((VERSION_RULES,)) + parts[0][1:]
        parts.append(bytes((state.rules_version,)))
    return b"".join(parts)


_HEAD = struct.Struct("<BBHQ")


class DecodeError(ValueError):
    """Bytes that are not a serialized New York 1901 state."""


def rules_version_of(blob: bytes) -> int:
    """The rules version a serialized state was played under, read before anything else:
    it picks the board (and so the geometry) the rest is decoded with."""
    if not blob:
        raise DecodeError("not a New York 1901 state: empty")
    if blob[0] == VERSION:
        return 1
    if blob[0] == VERSION_RULES and blob[-1] >= 2:
        return blob[-1]
    raise DecodeError(f"not a New York 1901 state: unknown version {blob[0]}")


def loads(blob: bytes, geometry: Geometry) -> State:
    """Decode with the geometry of the state's own board (``rules_version_of`` tells which)."""
    try:
        return _loads(blob, geometry)
    except (IndexError, ValueError) as error:
        raise DecodeError(f"not a New York 1901 state: {error}") from error


def _loads(blob: bytes, geometry: Geometry) -> State:
    lot_bytes = (len(geometry.board.lots) + 7) // 8
    state = State.__new__(State)
    if blob[0] == VERSION:
        state.rules_version = 1
    elif blob[0] == VERSION_RULES and blob[-1] >= 2:
        state.rules_version = blob[-1]
        blob = blob[:-1]
    else:
        raise ValueError(f"unknown version {blob[0]}")
    pos = 1
    head = blob[pos]
    pos += 1
    state.n = head & 7
    state.expert = bool(head >> 3 & 1)
    state.challenge = (head >> 4) - 1
    packed = int.from_bytes(blob[pos:pos + 2], "little")
    pos += 2
    state.streets = (packed & 7, packed >> 3 & 7, packed >> 6 & 7)
    state.rng = int.from_bytes(blob[pos:pos + 8], "little")
    pos += 8
    state.characters = tuple(blob[pos:pos + state.n])
    pos += state.n
    state.seat = blob[pos] & 7
    state.phase = blob[pos] >> 3
    state.flags = blob[pos + 1]
    state.trigger = (blob[pos + 2] & 15) - 1
    state.left = blob[pos + 2] >> 4
    pos += 3
    state.legend = [b - 1 for b in blob[pos:pos + 4]]
    pos += 4
    state.lots, state.used, state.cards = [], [], []
    state.points, state.prestige, state.buildings = [], [], []
    placements = geometry.placements
    for _ in range(state.n):
        state.lots.append(int.from_bytes(blob[pos:pos + lot_bytes], "little"))
        pos += lot_bytes
        packed = int.from_bytes(blob[pos:pos + 3], "little")
        pos += 3
        state.used.append(packed & (1 << 18) - 1)
        state.cards.append(packed >> 18)
        state.points.append(blob[pos])
        state.prestige.append(blob[pos + 1])
        count = blob[pos + 2]
        pos += 3
        buildings: list[Building] = []
        for _ in range(count):
            tile = blob[pos]
            pid = int.from_bytes(blob[pos + 1:pos + 3], "little")
            pos += 3
            if tile >= len(TILES) or pid >= len(placements):
                raise ValueError("bad building")
            buildings.append((tile, pid, placements[pid].mask))
        state.buildings.append(buildings)
    count = blob[pos]
    state.market = list(blob[pos + 1:pos + 1 + count])
    pos += 1 + count
    count = blob[pos]
    state.future = list(blob[pos + 1:pos + 1 + count])
    pos += 1 + count
    if pos != len(blob) or len(state.future) != count:
        raise ValueError("trailing or missing bytes")
    refresh(state, geometry)
    return state
