"""The Ginkgopolis game state and its compact, lossless serialization.

The state is a plain mutable object that the engine never mutates in place once returned:
``apply`` clones it first (``clone``). Owners are indexed ``0..players-1`` (the seats) and,
in the solo game, ``players`` (= 1) for Hal, who is not a seat.

``dumps`` writes a flat sequence of unsigned 16-bit words (little-endian) with a version
byte: a typical 5-player state is well under 2 KB. ``loads`` rebuilds exactly what
``dumps`` wrote, and ``dumps`` is canonical (dicts and sets written in key order), so
``dumps(loads(b)) == b``.
"""

from __future__ import annotations

import sys
from array import array
from typing import Final

from .data import colour_of

# Phases
DRAFT: Final = 0
CHOOSE: Final = 1
RESOLVE: Final = 2
RETURN: Final = 3
OVER: Final = 4
PHASE_NAMES: Final = ("draft", "choose", "resolve", "return_tiles", "over")

# Pending follow-up decisions in the resolve phase (sequential, one seat).
NO_PENDING: Final = 0
TAKE_ITEM: Final = 1
PLACE_TOKEN: Final = 2

NO_TILE: Final = -1
NEW_HAND: Final = -2  # a choice slot holding a sealed New Hand (rules version 1 only)

FLAG_DRAFT: Final = 1
FLAG_EXPERT: Final = 2

FORMAT_VERSION: Final = 1
FORMAT_RULES: Final = 2
"""Format 2: format 1 followed by one word, the rules version (2 and later)."""


class GkState:
    """Everything about one match. Hidden parts never leave through ``views``."""

    __slots__ = (
        "box",
        "choice",
        "city_words",
        "deck",
        "discard",
        "draft_kept",
        "draft_packs",
        "e1_done",
        "end",
        "first",
        "flags",
        "front",
        "hal_card",
        "hands",
        "in_city",
        "markers",
        "nh",
        "owner",
        "pending",
        "pending_arg",
        "phase",
        "players",
        "res_pos",
        "res_screen",
        "res_supply",
        "ret_part",
        "returns",
        "rng",
        "rules_version",
        "runs",
        "stacks",
        "supply_tiles",
        "tiles",
        "tokens",
        "turn",
        "vp",
        "where",
    )

    players: int
    rules_version: int
    """The rules version the match is played under (``GinkgopolisEngine.rules_versions``)."""
    flags: int
    rng: int
    phase: int
    turn: int
    first: int
    res_pos: int
    pending: int
    pending_arg: int
    runs: int
    e1_done: bool
    end: bool
    hal_card: int
    city_words: list[int] | None
    """Cache of the city's serialized words; reset by every change of the city."""
    stacks: dict[int, tuple[int, ...]]
    owner: dict[int, int]
    markers: set[int]
    where: dict[int, int]
    tokens: list[int]
    supply_tiles: list[int]
    box: list[int]
    deck: list[int]
    discard: list[int]
    res_supply: list[int]
    vp: list[int]
    front: list[list[int]]
    in_city: list[int]
    res_screen: list[int]
    nh: list[int]
    tiles: list[list[int]]
    hands: list[list[int]]
    choice: list[tuple[int, int, int] | None]
    draft_packs: list[list[int]]
    draft_kept: list[list[int]]
    returns: list[tuple[int, ...]]
    ret_part: list[int]

    @property
    def solo(self) -> bool:
        return self.players == 1

    @property
    def owners(self) -> int:
        """Seats, plus Hal in the solo game."""
        return 2 if self.players == 1 else self.players

    @property
    def hal(self) -> int:
        """Hal's owner index (solo only)."""
        return 1

    @property
    def draft(self) -> bool:
        return bool(self.flags & FLAG_DRAFT)

    @property
    def expert(self) -> bool:
        return bool(self.flags & FLAG_EXPERT)

    def clone(self) -> GkState:
        new = GkState.__new__(GkState)
        new.players = self.players
        new.rules_version = self.rules_version
        new.flags = self.flags
        new.rng = self.rng
        new.phase = self.phase
        new.turn = self.turn
        new.first = self.first
        new.res_pos = self.res_pos
        new.pending = self.pending
        new.pending_arg = self.pending_arg
        new.runs = self.runs
        new.e1_done = self.e1_done
        new.end = self.end
        new.hal_card = self.hal_card
        new.city_words = self.city_words
        new.stacks = self.stacks.copy()
        new.owner = self.owner.copy()
        new.markers = self.markers.copy()
        new.where = self.where.copy()
        new.tokens = self.tokens.copy()
        new.supply_tiles = self.supply_tiles.copy()
        new.box = self.box.copy()
        new.deck = self.deck.copy()
        new.discard = self.discard.copy()
        new.res_supply = self.res_supply.copy()
        new.vp = self.vp.copy()
        new.front = [f.copy() for f in self.front]
        new.in_city = self.in_city.copy()
        new.res_screen = self.res_screen.copy()
        new.nh = self.nh.copy()
        new.tiles = [t.copy() for t in self.tiles]
        new.hands = [h.copy() for h in self.hands]
        new.choice = self.choice.copy()
        new.draft_packs = [p.copy() for p in self.draft_packs]
        new.draft_kept = [k.copy() for k in self.draft_kept]
        new.returns = self.returns.copy()
        new.ret_part = self.ret_part.copy()
        return new

    def height(self, key: int) -> int:
        return len(self.stacks[key])

    def top(self, key: int) -> int:
        return self.stacks[key][-1]

    def building_colour(self, key: int) -> int:
        return colour_of(self.stacks[key][-1])


def empty_state(players: int) -> GkState:
    """A blank state with containers sized for ``players`` (1: solo with Hal)."""
    s = GkState.__new__(GkState)
    owners = 2 if players == 1 else players
    s.players = players
    s.rules_version = 1
    s.flags = 0
    s.rng = 0
    s.phase = CHOOSE
    s.turn = 1
    s.first = 0
    s.res_pos = 0
    s.pending = NO_PENDING
    s.pending_arg = 0
    s.runs = 0
    s.e1_done = False
    s.end = False
    s.hal_card = NO_TILE
    s.city_words = None
    s.stacks = {}
    s.owner = {}
    s.markers = set()
    s.where = {}
    s.tokens = []
    s.supply_tiles = []
    s.box = []
    s.deck = []
    s.discard = []
    s.res_supply = [0] * owners
    s.vp = [0] * owners
    s.front = [[] for _ in range(owners)]
    s.in_city = [0] * owners
    s.res_screen = [0] * players
    s.nh = [0] * players
    s.tiles = [[] for _ in range(players)]
    s.hands = [[] for _ in range(players)]
    s.choice = [None] * players
    s.draft_packs = [[] for _ in range(players)]
    s.draft_kept = [[] for _ in range(players)]
    s.returns = [()] * players
    s.ret_part = [0] * players
    return s


def place_building(s: GkState, key: int, stack: tuple[int, ...], owner: int) -> None:
    """Put (or replace) a building; keeps the derived ``where`` / ``in_city`` in step.

    The city changes only through ``place_building``, ``add_marker`` and ``clear_markers``.
    """
    s.city_words = None
    old = s.stacks.get(key)
    if old is not None:
        del s.where[old[-1]]
        old_owner = s.owner[key]
        if old_owner >= 0:
            s.in_city[old_owner] -= len(old)
    s.stacks[key] = stack
    s.owner[key] = owner
    s.where[stack[-1]] = key
    if owner >= 0:
        s.in_city[owner] += len(stack)


def add_marker(s: GkState, key: int) -> None:
    """A construction-site marker on the building at ``key``."""
    s.city_words = None
    s.markers.add(key)


def clear_markers(s: GkState) -> None:
    s.city_words = None
    s.markers.clear()


def _city_words(s: GkState) -> list[int]:
    words = s.city_words
    if words is None:
        stacks, owner, markers = s.stacks, s.owner, s.markers
        words = [len(stacks)]
        for key in sorted(stacks):
            stack = stacks[key]
            # owner + 1 (0..6), the construction-site marker, the height: one word
            words += (key, owner[key] + 1 + (key in markers) * 8 + len(stack) * 16)
            words += stack
        s.city_words = words
    return words


# --------------------------------------------------------------------------- serialization


def dumps(s: GkState) -> bytes:
    rng = s.rng
    out: list[int] = [
        s.players,
        s.flags,
        s.phase,
        s.turn,
        s.first,
        s.res_pos,
        s.pending,
        s.pending_arg,
        s.runs,
        int(s.e1_done),
        int(s.end),
        s.hal_card + 1,
        rng & 0xFFFF,
        (rng >> 16) & 0xFFFF,
        (rng >> 32) & 0xFFFF,
        (rng >> 48) & 0xFFFF,
    ]
    out += _city_words(s)
    out += s.tokens
    for pile in (s.supply_tiles, s.box, s.deck, s.discard):
        out.append(len(pile))
        out += pile
    for o in range(s.owners):
        front = s.front[o]
        out += (s.res_supply[o], s.vp[o], len(front))
        out += front
    for seat in range(s.players):
        tiles, hand = s.tiles[seat], s.hands[seat]
        out += (s.res_screen[seat], s.nh[seat], len(tiles))
        out += tiles
        out.append(len(hand))
        out += hand
        choice = s.choice[seat]
        if choice is None:
            out.append(0)
        else:
            out += (1, choice[0] + 2, choice[1] + 2, choice[2] + 2)
        pack, kept, returned = s.draft_packs[seat], s.draft_kept[seat], s.returns[seat]
        out.append(len(pack))
        out += pack
        out.append(len(kept))
        out += kept
        out += (s.ret_part[seat], len(returned))
        out += returned
    if s.rules_version != 1:  # version 1 keeps the format it was stored in, byte for byte
        out.append(s.rules_version)
    words = array("H", out)
    if _BIG_ENDIAN:
        words.byteswap()
    return (_VERSION_BYTE if s.rules_version == 1 else _RULES_BYTE) + words.tobytes()


_BIG_ENDIAN: Final = sys.byteorder != "little"
_VERSION_BYTE: Final = bytes([FORMAT_VERSION])
_RULES_BYTE: Final = bytes([FORMAT_RULES])


class _Reader:
    __slots__ = ("i", "words")

    def __init__(self, words: list[int]) -> None:
        self.words = words
        self.i = 0

    def one(self) -> int:
        value = self.words[self.i]
        self.i += 1
        return value

    def many(self, n: int) -> list[int]:
        values = self.words[self.i : self.i + n]
        if len(values) != n:
            raise ValueError("truncated Ginkgopolis state")
        self.i += n
        return values

    def list(self) -> list[int]:
        return self.many(self.one())


def loads(data: bytes) -> GkState:
    """The state ``dumps`` wrote; ``ValueError`` for anything else."""
    if not data or data[0] not in (FORMAT_VERSION, FORMAT_RULES) or len(data) % 2 != 1:
        raise ValueError("not a Ginkgopolis state (unknown format version)")
    try:
        return _loads(data)
    except (IndexError, KeyError) as error:
        raise ValueError("truncated or corrupt Ginkgopolis state") from error


def _loads(data: bytes) -> GkState:
    words = array("H")
    words.frombytes(data[1:])
    if sys.byteorder != "little":
        words.byteswap()
    values = words.tolist()
    rules_version = values.pop() if data[0] == FORMAT_RULES else 1
    if rules_version < 1:
        raise ValueError("not a Ginkgopolis state (bad rules version)")
    r = _Reader(values)
    players = r.one()
    s = empty_state(players)
    s.rules_version = rules_version
    s.flags = r.one()
    s.phase = r.one()
    s.turn = r.one()
    s.first = r.one()
    s.res_pos = r.one()
    s.pending = r.one()
    s.pending_arg = r.one()
    s.runs = r.one()
    s.e1_done = bool(r.one())
    s.end = bool(r.one())
    s.hal_card = r.one() - 1
    parts = r.many(4)
    s.rng = parts[0] | parts[1] << 16 | parts[2] << 32 | parts[3] << 48
    for _ in range(r.one()):
        key, packed = r.many(2)
        if packed & 8:
            add_marker(s, key)
        place_building(s, key, tuple(r.many(packed >> 4)), (packed & 7) - 1)
    s.tokens = r.many(12)
    s.supply_tiles = r.list()
    s.box = r.list()
    s.deck = r.list()
    s.discard = r.list()
    for o in range(s.owners):
        s.res_supply[o] = r.one()
        s.vp[o] = r.one()
        s.front[o] = r.list()
    for seat in range(players):
        s.res_screen[seat] = r.one()
        s.nh[seat] = r.one()
        s.tiles[seat] = r.list()
        s.hands[seat] = r.list()
        if r.one():
            a, b, c = r.many(3)
            s.choice[seat] = (a - 2, b - 2, c - 2)
        s.draft_packs[seat] = r.list()
        s.draft_kept[seat] = r.list()
        s.ret_part[seat] = r.one()
        s.returns[seat] = tuple(r.list())
    if r.i != len(values):
        raise ValueError("trailing data after a Ginkgopolis state")
    return s
