"""The bytes the service layer keeps in the store: one match record and one log entry per
version. The store treats both as opaque; this module is their only reader and writer.

Record: a compact JSON header, a newline, then the engine's own ``dumps`` bytes. Keeping the
idempotency keys in the header means they are written by the same compare-and-set as the move
they belong to, so a retried request can never act twice. The header keeps the last
``MAX_IDEMPOTENCY_KEYS``; older keyed moves are found by the write tag their key gives their
log entry (``act.key_write_id``), from version ``w`` (``keys_from``) on.

Log entry: compact JSON ``{"s": seat, "a": action}`` (seat null for a seat handed to a bot),
deflated with the game's preset dictionary named in the record (``logdict.py``): 4-10 bytes
a move; every ``CHECKPOINT_EVERY``-th version's entry also carries the state after it (a
checkpoint, written by the same compare-and-set as the move), so that no read replays more
than ``CHECKPOINT_EVERY - 1`` moves to reach a past version. Events are
not stored: the engines are deterministic, so the service re-derives them by replaying the
logged actions from the seed (``MatchService`` filters them per seat with
``Event.for_seat``). See docs/decisions.md, "Events are re-derived, not stored".
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from service.clocks import OnTimeout, SeatClock, TimeControl, deadline_of
from service.games.base import JSON

from . import logdict

SeatStatus = Literal["playing", "away", "resigned", "forfeited"]
"""How a player holds a seat it held once the game began (``MatchRecord.seat_history``)."""

MAX_IDEMPOTENCY_KEYS = 16
"""Recent Idempotency-Keys remembered per match (oldest forgotten first)."""


def _compact(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True).encode()


class OutdatedRecord(ValueError):
    """A record written by an older Skyline whose stored format this one does not read (the
    log of events-per-entry in a stream beside the match, before 2026-11-30's one-key
    layout): such a match is treated as gone rather than misread or damaged by a write."""


@dataclass(frozen=True, slots=True)
class IdempotentResult:
    key: str
    """Digest of (seat, Idempotency-Key)."""
    version: int
    action: str
    """Digest of the action first posted with that key."""


@dataclass(frozen=True, slots=True)
class SeatPlayer:
    """The player bound to a seat: its id and the display name it had when it sat down (a
    player who leaves for good is renamed by a logged ``seat_renamed`` entry)."""

    player: str
    name: str


@dataclass(frozen=True, slots=True)
class Invitation:
    """An invitation to take a seat of a waiting match, kept in its record so that using one
    and taking the seat are one compare-and-set: to a player (``player``; accepted through
    ``/v1/me/invitations``) or a code (``digest`` of its secret; used through ``join``)."""

    id: str
    """Public id: ``<match id>.<random>`` for a player's invitation, the code's own id for a
    code (``invites.py``)."""
    created: int
    expires: int | None
    uses: int = 1
    used: int = 0
    seat: int | None = None
    player: str | None = None
    digest: str | None = None
    by: str | None = None
    """The inviting player (None: the app's key)."""
    revoked: bool = False
    declined: bool = False

    def encode(self) -> list[Any]:
        return [self.id, self.created, self.expires, self.uses, self.used, self.seat,
                self.player, self.digest, self.by, self.revoked, self.declined]

    @classmethod
    def decode(cls, raw: list[Any]) -> Invitation:
        return cls(*raw)


@dataclass(frozen=True, slots=True)
class Away:
    """Who held a seat a bot took over (a hand-over, a timeout, a resignation): the player
    bound to it and the digest of its token, so that the old token is told why it no longer
    works (401 ``seat_handed_to_bot``) and its player may take the seat back."""

    player: SeatPlayer | None
    digest: str | None
    reason: str
    """``hand_over``, ``timeout`` or ``resign``."""
    version: int
    """The version at which the bot took the seat."""

    def encode(self) -> list[Any]:
        held = None if self.player is None else [self.player.player, self.player.name]
        return [held, self.digest, self.reason, self.version]

    @classmethod
    def decode(cls, raw: list[Any]) -> Away:
        held = None if raw[0] is None else SeatPlayer(raw[0][0], raw[0][1])
        return cls(held, raw[1], str(raw[2]), int(raw[3]))


@dataclass(frozen=True, slots=True)
class MatchRecord:
    game: str
    players: int
    options: dict[str, JSON] | None
    seed: int
    tokens: tuple[str | None, ...]
    """Token digest per seat; None for a bot seat."""
    state: bytes
    finished: bool = False
    bots: dict[int, str] = field(default_factory=dict)
    """Bot seats: seat -> bot kind (``random``, ``greedy``, ``search``); no token."""
    idempotency: tuple[IdempotentResult, ...] = ()
    created: int = 0
    updated: int = 0
    log_dict: int = 0
    """The preset dictionary number the log entries are deflated with (``logdict``; 0:
    plain JSON), fixed when the match is created."""
    rules_version: int = 1
    """The game's rules version the match is played under, fixed when it is set up (records
    stored before rules versions existed are version 1)."""
    app: str | None = None
    """The app whose players sit in the match (None: a match of anonymous seats)."""
    seat_players: tuple[SeatPlayer | None, ...] = ()
    """Per seat, the player bound to it (None: an anonymous seat token or a bot); empty for
    matches without players."""
    keys_from: int | None = 1
    """Every keyed move (one posted with an Idempotency-Key) at this version or later was
    written with its key's write id (``act.key_write_id``), so the log's write tags find it
    however long ago it was played. 1 for matches created since (issue 20, item 12); None
    for a record written by an older build (which drops the field when it writes: its keyed
    moves carry random write ids), set by the next move this build writes."""
    seed_salt: bytes | None = None
    """The 16 random bytes the seed's published commitment hides it with (``seeds.py``):
    set when the service drew the seed; None for a chosen seed and for a match stored before
    commitments (2026-12)."""
    seed_chosen: bool | None = None
    """Whether the creator chose the seed (True) or the service drew it (False); None for a
    match stored before this was recorded (nothing shows the seed was drawn)."""
    phase: str = "active"
    """``waiting`` (open seats: no game set up yet, ``state`` empty), ``active`` (set up:
    playing or finished, see ``finished``) or ``cancelled`` (it never started)."""
    visibility: str = "unlisted"
    """``public`` (listed in the lobby), ``unlisted`` (reachable by id) or ``private`` (its
    players and its app only)."""
    name: str | None = None
    """The creator's name for the match (not game data)."""
    labels: dict[str, str] = field(default_factory=dict)
    """App-defined labels (not game data)."""
    creator: str | None = None
    """The player that created the match (None: an app key or an anonymous creator)."""
    start_version: int = 0
    """The version at which the game was set up (0: at creation; a match that waited for
    players starts at the version of the join or start that filled it)."""
    open_seats: tuple[int, ...] = ()
    """Seats created open, for a player to join (the waiting phase); the ones still free are
    ``free_seats()``."""
    chosen_seed: int | None = None
    """A creator's seed for a waiting match (taken only where the deployment allows it),
    used when the match starts."""
    cancel_reason: str | None = None
    """Why a cancelled match was cancelled (``creator``, ``creator_left``, ``expired``)."""
    invites: tuple[Invitation, ...] = ()
    """Invitations to seats of a waiting match (``invites.py``)."""
    view_key: bytes | None = None
    """The match's key for spectator tokens (``sks_…``, ``invites.py``)."""
    revoked_views: tuple[str, ...] = ()
    """The tags of revoked spectator codes: the tokens redeemed with them read nothing more
    (``invites.reads``); the newest ``invites.MAX_REVOKED_VIEWS`` are kept."""
    reserved: dict[int, str] = field(default_factory=dict)
    """Open seats kept for one player (a rematch offers each seat to its former player)."""
    rematch_of: str | None = None
    rematch: str | None = None
    """The match this one is a rematch of, and the rematch of this one."""
    time_control: TimeControl | None = None
    """The match's time control (None: untimed), chosen at creation."""
    on_timeout: OnTimeout | None = None
    """What a seat whose time runs out becomes (timed matches)."""
    clocks: tuple[SeatClock, ...] = ()
    """Each seat's clock (``service.clocks``): when its turn began, what is left; empty for
    a match without a game yet and for records stored before clocks (2026-12)."""
    termination: str | None = None
    """How a finished match ended when not by the rules alone (``timeout``, ``resign``)."""
    forfeited: tuple[int, ...] = ()
    """Seats that are out (timed out under ``forfeit``, resigned), in the order they left."""
    away: dict[int, Away] = field(default_factory=dict)
    """Seats a bot took over, and who held them."""
    written_ms: int | None = None
    """When the write that stored this version happened (ms, the store's clock: the time
    its seat clocks moved by); None for a record stored before versioned log headers
    (2026-12, ``headers.py``)."""

    @property
    def waiting(self) -> bool:
        return self.phase == "waiting"

    @property
    def cancelled(self) -> bool:
        return self.phase == "cancelled"

    @property
    def started(self) -> bool:
        return self.phase == "active"

    def free_seats(self) -> list[int]:
        """Open seats nobody has taken yet (waiting matches), reserved ones included."""
        return [seat for seat in self.open_seats
                if seat not in self.bots and self.holder(seat) is None]

    def free_for(self, player: str | None) -> list[int]:
        """The free seats ``player`` may take: those not reserved for someone else."""
        return [seat for seat in self.free_seats()
                if self.reserved.get(seat) in (None, player)]

    def holder(self, seat: int) -> SeatPlayer | None:
        return self.seat_players[seat] if seat < len(self.seat_players) else None

    def player_seat(self, app: str, player: str) -> int | None:
        """The seat ``player`` of ``app`` holds, or None."""
        if app != self.app:
            return None
        for seat, bound in enumerate(self.seat_players):
            if bound is not None and bound.player == player:
                return seat
        return None

    def seat_history(self, app: str, player: str) -> tuple[int, SeatStatus] | None:
        """The seat ``player`` of ``app`` holds or held once the game began, and how it left
        it: ``playing`` (bound to it now), ``away`` (a bot holds it for the player, who may
        take it back), ``resigned`` or ``forfeited`` (out: resigned, timed out under the
        ``forfeit`` policy); None when the player never held a seat here (or left it while
        the match waited for players)."""
        seat = self.player_seat(app, player)
        if seat is not None:
            return seat, "playing"
        if app != self.app:
            return None
        for seat, gone in sorted(self.away.items()):
            if gone.player is None or gone.player.player != player:
                continue
            if seat not in self.forfeited:
                return seat, "away"
            return seat, "resigned" if gone.reason == "resign" else "forfeited"
        return None

    def seats_held(self) -> dict[str, int]:
        """player -> seat for every player who holds a seat or held one a bot took over
        (``seat_history``)."""
        found: dict[str, int] = {}
        for seat, bound in enumerate(self.seat_players):
            if bound is not None:
                found.setdefault(bound.player, seat)
        for seat, gone in sorted(self.away.items()):
            if gone.player is not None:
                found.setdefault(gone.player.player, seat)
        return found

    def deadlines(self) -> dict[int, int]:
        """seat -> when its running clock runs out (ms, the store's clock), for each seat a
        player must act in; empty for an untimed or finished match (bots have no deadline)."""
        if self.time_control is None or self.finished or not self.started:
            return {}
        out: dict[int, int] = {}
        for seat, clock in enumerate(self.clocks):
            deadline = deadline_of(self.time_control, clock)
            if deadline is not None and seat not in self.bots:
                out[seat] = deadline
        return out

    def remember(self, result: IdempotentResult) -> MatchRecord:
        kept = (*self.idempotency, result)[-MAX_IDEMPOTENCY_KEYS:]
        return replace(self, idempotency=kept)

    def recall(self, key: str) -> IdempotentResult | None:
        for result in self.idempotency:
            if result.key == key:
                return result
        return None

    def forgotten_before(self) -> int:
        """Keyed moves no longer remembered all have versions below this (0: none was ever
        forgotten: fewer than ``MAX_IDEMPOTENCY_KEYS`` keyed moves were played). The keys
        are remembered in the order their moves landed, so the forgotten ones are older than
        the oldest remembered."""
        if len(self.idempotency) < MAX_IDEMPOTENCY_KEYS:
            return 0
        return self.idempotency[0].version

    def untagged_keys_forgotten(self) -> bool:
        """Whether a keyed move whose log entry carries no key tag (played before
        ``keys_from``) may have been forgotten: then a key neither remembered nor found in
        the log may still be an old move's (conservatively: the record cannot count them)."""
        return self.keys_from != 1 and self.forgotten_before() > 0

    def encode(self) -> bytes:
        return _compact(self.header()) + b"\n" + self.state

    def header(self) -> dict[str, Any]:
        """The stored header as a dict (``encode`` without the state; ``from_header`` reads
        it back)."""
        header: dict[str, Any] = {
            "g": self.game,
            "n": self.players,
            "o": self.options,
            "s": self.seed,
            "t": list(self.tokens),
            "f": self.finished,
            "b": {str(seat): kind for seat, kind in sorted(self.bots.items())},
            "i": [[r.key, r.version, r.action] for r in self.idempotency],
            "c": self.created,
            "u": self.updated,
            "d": self.log_dict,
        }
        if self.rules_version != 1:
            header["r"] = self.rules_version
        if self.app is not None:
            header["a"] = self.app
            header["p"] = [None if p is None else [p.player, p.name] for p in self.seat_players]
        if self.keys_from is not None:
            header["w"] = self.keys_from
        if self.seed_salt is not None:
            header["ss"] = self.seed_salt.hex()
        if self.seed_chosen is not None:
            header["sc"] = self.seed_chosen
        if self.phase != "active":
            header["ph"] = self.phase
        if self.visibility != "unlisted":
            header["v"] = self.visibility
        if self.name is not None:
            header["nm"] = self.name
        if self.labels:
            header["lb"] = self.labels
        if self.creator is not None:
            header["cr"] = self.creator
        if self.start_version:
            header["sv"] = self.start_version
        if self.open_seats:
            header["so"] = list(self.open_seats)
        if self.chosen_seed is not None:
            header["cs"] = self.chosen_seed
        if self.cancel_reason is not None:
            header["cx"] = self.cancel_reason
        if self.invites:
            header["iv"] = [i.encode() for i in self.invites]
        if self.view_key is not None:
            header["vk"] = self.view_key.hex()
        if self.revoked_views:
            header["rv"] = list(self.revoked_views)
        if self.reserved:
            header["rs"] = {str(seat): p for seat, p in sorted(self.reserved.items())}
        if self.rematch_of is not None:
            header["ro"] = self.rematch_of
        if self.rematch is not None:
            header["rn"] = self.rematch
        if self.time_control is not None:
            header["tc"] = self.time_control.encode()
        if self.on_timeout is not None:
            header["ot"] = self.on_timeout.encode()
        if self.clocks:
            header["ck"] = [c.encode() for c in self.clocks]
        if self.termination is not None:
            header["tm"] = self.termination
        if self.forfeited:
            header["ff"] = list(self.forfeited)
        if self.away:
            header["aw"] = {str(seat): a.encode() for seat, a in sorted(self.away.items())}
        if self.written_ms is not None:
            header["tw"] = self.written_ms
        return header

    @classmethod
    def decode(cls, data: bytes) -> MatchRecord:
        raw_header, _, state = data.partition(b"\n")
        return cls.from_header(json.loads(raw_header), state)

    @classmethod
    def from_header(cls, header: dict[str, Any], state: bytes) -> MatchRecord:
        """The record of a stored ``header`` (``header()``) and state bytes."""
        if "d" not in header:
            raise OutdatedRecord("the match was stored in an older format")
        return cls(
            game=header["g"],
            players=header["n"],
            options=header["o"],
            seed=header["s"],
            tokens=tuple(header["t"]),
            state=state,
            finished=header["f"],
            bots=_bots(header.get("b"), header.get("k", "random")),
            idempotency=tuple(IdempotentResult(k, v, a) for k, v, a in header["i"]),
            created=header["c"],
            updated=header["u"],
            log_dict=header["d"],
            rules_version=header.get("r", 1),
            app=header.get("a"),
            seat_players=tuple(
                None if p is None else SeatPlayer(p[0], p[1]) for p in header.get("p", ())
            ),
            keys_from=header.get("w"),
            seed_salt=bytes.fromhex(header["ss"]) if "ss" in header else None,
            seed_chosen=header.get("sc"),
            phase=header.get("ph", "active"),
            visibility=header.get("v", "unlisted"),
            name=header.get("nm"),
            labels=dict(header.get("lb") or {}),
            creator=header.get("cr"),
            start_version=header.get("sv", 0),
            open_seats=tuple(header.get("so") or ()),
            chosen_seed=header.get("cs"),
            cancel_reason=header.get("cx"),
            invites=tuple(Invitation.decode(i) for i in header.get("iv", ())),
            view_key=bytes.fromhex(header["vk"]) if "vk" in header else None,
            revoked_views=tuple(header.get("rv") or ()),
            reserved={int(seat): p for seat, p in (header.get("rs") or {}).items()},
            rematch_of=header.get("ro"),
            rematch=header.get("rn"),
            time_control=TimeControl.decode(header["tc"]) if "tc" in header else None,
            on_timeout=OnTimeout.decode(header["ot"]) if "ot" in header else None,
            clocks=tuple(SeatClock.decode(c) for c in header.get("ck", ())),
            termination=header.get("tm"),
            forfeited=tuple(header.get("ff") or ()),
            away={int(seat): Away.decode(a) for seat, a in (header.get("aw") or {}).items()},
            written_ms=header.get("tw"),
        )


def _bots(raw: Any, kind: str) -> dict[int, str]:
    """Bot seats from a header: ``{"seat": kind}``; records written before bot seats had a
    kind each hold a list of seats and one kind ``k``."""
    if isinstance(raw, dict):
        return {int(seat): str(k) for seat, k in raw.items()}
    return {int(seat): kind for seat in raw or ()}


CHECKPOINT_EVERY = 100
"""Every version that is a multiple of this carries a state checkpoint in its log entry, so a
read replays at most ``CHECKPOINT_EVERY - 1`` moves to reach any past version (``replay.py``).
Chosen by measurement (docs/performance.md, "Checkpoints"): a checkpoint costs the engine's
state (New York 1901: 120-200 bytes, Ginkgopolis: 350-560) and replaying 99 moves about as
long as one log page's own replay. Changing it is safe: readers look for a checkpoint where
this build puts them and replay from the seed where they find none."""


def checkpointed(version: int) -> bool:
    """Whether the log entry of ``version`` carries the state after it."""
    return version > 0 and version % CHECKPOINT_EVERY == 0


@dataclass(frozen=True, slots=True)
class LogRecord:
    seat: int | None
    action: JSON
    checkpoint: bytes | None = None
    """The engine's ``dumps`` of the state after this version (``checkpointed`` versions;
    None elsewhere and in entries written before checkpoints existed)."""
    header: dict[str, Any] | None = None
    """The record's header at this version, as far as a view reads it (``headers.py``):
    whole, or as a change from the entry before; None in entries written before
    versioned headers (2026-12)."""

    def encode(self, game: str, log_dict: int) -> bytes:
        """Compact JSON, deflated with dictionary ``log_dict`` of ``game``, then the
        checkpoint's bytes as they are (deflate marks the end of its stream). Dictionary 0:
        plain JSON, the checkpoint in base64 under ``"c"``.

        The header (``headers.py``): under ``"h"``, but for the time since the entry before
        (``"@"``, in nearly every entry the only thing it holds): from dictionary
        ``logdict.TIMED`` on, a zigzag LEB128 varint plus one right after the deflate stream
        (before the checkpoint; 0: the entry has no header), in an older match's entries
        ``"t"`` in the
        JSON (readers that predate headers ignore both keys)."""
        entry: dict[str, JSON] = {"s": self.seat, "a": self.action}
        since: int | None = None
        if self.header is not None:
            header = dict(self.header)
            since = header.pop("@", None)
            if header:
                entry["h"] = header
        binary = log_dict >= logdict.TIMED
        if self.header is not None and not binary:
            if since is not None:
                entry["t"] = since
            elif "h" not in entry:
                entry["h"] = {}
        if log_dict == 0:
            if self.checkpoint:
                entry["c"] = base64.b64encode(self.checkpoint).decode()
            return _compact(entry)
        packed = logdict.compress(game, log_dict, _compact(entry))
        if binary:  # 0: no header; else the time's zigzag + 1
            packed += b"\0" if self.header is None else _zigzag(since or 0, 1)
        return packed + (self.checkpoint or b"")

    @classmethod
    def decode(cls, game: str, log_dict: int, data: bytes) -> LogRecord:
        text, checkpoint = logdict.split(game, log_dict, data)
        raw = json.loads(text)
        if log_dict == 0 and "c" in raw:
            checkpoint = base64.b64decode(raw["c"], validate=True)
        header = raw.get("h")
        header = dict(header) if isinstance(header, dict) else None
        since: int | None = raw.get("t")
        if log_dict >= logdict.TIMED:
            since, checkpoint = _unzigzag(checkpoint, 1)
            if since is not None:
                header = header or {}
                since = since or None  # no time since the entry before: no "@"
        if since is not None:
            header = {**(header or {}), "@": since}
        return cls(seat=raw["s"], action=raw["a"], checkpoint=checkpoint or None,
                   header=header)


def _zigzag(n: int, shift: int = 0) -> bytes:
    """``n`` as a zigzag LEB128 varint (small numbers of either sign in few bytes), plus
    ``shift`` (the values below it left for other meanings)."""
    z = (n * 2 if n >= 0 else -n * 2 - 1) + shift
    out = bytearray()
    while True:
        low, z = z & 0x7F, z >> 7
        out.append(low | (0x80 if z else 0))
        if not z:
            return bytes(out)


def _unzigzag(data: bytes, shift: int = 0) -> tuple[int | None, bytes]:
    """The number ``_zigzag`` wrote at the start of ``data`` (None: a value below
    ``shift``), and the bytes after it."""
    z, bits, pos = 0, 0, 0
    while True:
        if pos >= len(data):
            raise ValueError("a log entry's time is cut short")
        byte = data[pos]
        pos += 1
        z |= (byte & 0x7F) << bits
        bits += 7
        if not byte & 0x80:
            break
    if z < shift:
        return None, data[pos:]
    z -= shift
    return (z >> 1 if not z & 1 else -(z >> 1) - 1), data[pos:]
