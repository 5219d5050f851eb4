"""Wire models of the service layer: what REST and GraphQL send and receive.

JSON field names are camelCase (``matchId``); Python attributes stay snake_case. Input models
forbid unknown fields. The per-game parts -- a seat's ``view`` and the ``moves``/``action``
values -- hold the engine's own objects (``engine.View`` instances, ``engine.Action`` values);
``service.api.openapi`` replaces those ``Any`` fields with the union of the registered engines'
types, so the published schema is typed although these classes are game-agnostic.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, TypeAdapter
from pydantic.alias_generators import to_camel

from service.clocks.controls import (
    MAX_BASE_SECONDS,
    MAX_INCREMENT_SECONDS,
    MAX_MOVE_SECONDS,
    MIN_BASE_SECONDS,
    MIN_MOVE_SECONDS,
)
from service.games.base import JSON, WireInt

from .outcome import MatchOutcome

MAX_SEED = 2**53 - 1
"""Seeds stay within the integers a JavaScript client represents exactly."""


SEED_DESCRIPTION = (
    "Seed of the match's randomness: it fixes every draw, so its creator knows every hand "
    "(views say `seedChosen`). Refused (400 seed_not_allowed) when players other than the "
    "creator are seated, unless the server allows it. Omitted: the server draws one and "
    "publishes a commitment to it (`seedCommitment`), revealed at the end."
)

_REFUSE_BOOL = get_args(WireInt)[1]
# ``Annotated[WireInt, Field(ge=...)]`` validates but renders a non-standard ``ge`` key in
# JSON Schema (the bool-refusing validator runs before the integer schema); putting the
# bounds first gives standard ``minimum``/``maximum``.
PlayerCount = Annotated[int, Field(ge=1, le=16), _REFUSE_BOOL]
Seed = Annotated[int, Field(ge=0, le=MAX_SEED), _REFUSE_BOOL]
SeatNumber = Annotated[int, Field(ge=0, le=15), _REFUSE_BOOL]
Version = Annotated[int, Field(ge=0), _REFUSE_BOOL]
BotKind = Literal["random", "greedy", "search"]


class WireModel(BaseModel):
    """Output models: camelCase on the wire, every field present in responses."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        json_schema_serialization_defaults_required=True,
    )

    def to_json(self) -> dict[str, JSON]:
        """The JSON form sent to clients (camelCase, engine values included)."""
        dumped: dict[str, JSON] = self.model_dump(mode="json", by_alias=True)
        return dumped


class InputModel(BaseModel):
    """Input models: camelCase on the wire, unknown fields refused."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class GameInfo(WireModel):
    id: str
    title: str
    min_players: int
    max_players: int
    options_schema: dict[str, Any] = Field(
        description="JSON Schema of the game's options (every option has a default)."
    )
    rules_versions: list[int] = Field(
        description="The rules versions this server plays, oldest first. A match keeps the "
        "version it was created under for its whole life."
    )
    current_rules_version: int = Field(description="The rules version new matches get.")
    catalogue_url: str | None = Field(
        default=None,
        description="The game's component catalogue (GET /v1/games/{id}: board, tiles, cards "
        "and their texts) for the current rules version; add ?rulesVersion=N for a match's "
        "version (immutable). Null for a game without one.",
    )


class PlayerSeat(InputModel):
    """A seat for a player of the caller's app."""

    player: str = Field(
        min_length=1, max_length=64,
        description="A player id (POST /v1/players, or an app's user's player), or `me`: "
        "the calling player. That player's credential (player token or JWT) acts for the "
        "seat.",
    )


class OpenSeat(InputModel):
    """A seat left open for a player to join (`POST /v1/matches/{matchId}/join`): the
    match waits (`status: waiting`) until every open seat is taken or its creator starts
    it."""

    open: Literal[True] = Field(description="Always true.")


class UserSeat(InputModel):
    """A seat for one of the app's own users, by its user id."""

    user: str = Field(
        min_length=1, max_length=255,
        description="The app's own user id (a JWT's `sub`): the player that user signs in "
        "as (created now if the user never signed in). Only an app key may seat users other "
        "than the caller.",
    )


class BotSeat(InputModel):
    """A seat played by a built-in bot."""

    bot: BotKind = Field(description="The built-in player that takes the seat.")


SeatRequest = PlayerSeat | UserSeat | BotSeat | OpenSeat
"""One seat of a new match: a player, an app's user, a bot or an open seat."""

Visibility = Literal["public", "unlisted", "private"]
VISIBILITY_DESCRIPTION = (
    "`public`: listed in the lobby (waiting) and in the live matches (active), open to "
    "spectators; `unlisted` (the default): reachable by its id, open to spectators with the "
    "id; `private`: only its players and its app may read it -- everyone else gets the same "
    "404 `match_not_found` as for a match that does not exist."
)
LabelKey = Annotated[str, Field(min_length=1, max_length=32)]
LabelValue = Annotated[str, Field(max_length=128)]
MatchName = Annotated[str, Field(min_length=1, max_length=64)]


class CorrespondenceSettings(InputModel):
    seconds_per_move: int = Field(
        description="Seconds a seat has for each move: a deadline per activation, starting "
        "when the seat becomes active and met by its next move. 10 s (or the server's own "
        "minimum) to 14 days.",
        json_schema_extra={"minimum": MIN_MOVE_SECONDS, "maximum": MAX_MOVE_SECONDS},
    )


class CorrespondenceControl(InputModel):
    """A deadline per move (correspondence play)."""

    correspondence: CorrespondenceSettings


class LiveSettings(InputModel):
    base_seconds: int = Field(
        description="Each seat's time for the whole match: 60 s to 3 h.",
        json_schema_extra={"minimum": MIN_BASE_SECONDS, "maximum": MAX_BASE_SECONDS},
    )
    increment_seconds: int = Field(
        default=0, description="Added to a seat's clock for each turn it completes "
        "(Fischer): 0 to 180 s.",
        json_schema_extra={"minimum": 0, "maximum": MAX_INCREMENT_SECONDS},
    )


class LiveControl(InputModel):
    """A chess-style clock per seat, running only while that seat must act."""

    live: LiveSettings


TimeControlSpec = CorrespondenceControl | LiveControl
"""A match's time control: exactly one of ``correspondence`` and ``live``."""


class BotOnTimeout(InputModel):
    """A bot of this kind takes a seat whose time ran out; its player may reclaim it."""

    policy: Literal["bot"]
    bot: BotKind = Field(default="random", description="The bot that takes the seat.")


class ForfeitOnTimeout(InputModel):
    """A seat whose time ran out is out: ranked last, played on by a random bot; with
    fewer than two seats still in, the match ends."""

    policy: Literal["forfeit"]


OnTimeoutSpec = BotOnTimeout | ForfeitOnTimeout
"""What becomes of a seat whose time runs out."""

TIME_CONTROL_DESCRIPTION = (
    "The match's time control: `{\"correspondence\": {\"secondsPerMove\": n}}` (a deadline "
    "per move) or `{\"live\": {\"baseSeconds\": b, \"incrementSeconds\": i}}` (a chess "
    "clock per seat). Omitted: untimed. Out of range: 422 bad_time_control "
    "(docs/clocks-and-notifications.md)."
)
ON_TIMEOUT_DESCRIPTION = (
    "What becomes of a seat whose time runs out: `{\"policy\": \"bot\", \"bot\": kind}` or "
    "`{\"policy\": \"forfeit\"}` (the default). Only with `timeControl`; a bot that does not "
    "play the game: 422 bad_timeout_policy."
)


class CreateMatchBase(InputModel):
    game: str = Field(description="A game id from GET /v1/games.")
    players: PlayerCount | None = Field(
        default=None,
        description="Number of seats, within the game's minPlayers..maxPlayers. Required "
        "unless `seats` is given (then it must equal the number of seats if present).",
    )
    options: dict[str, Any] | None = Field(
        default=None, description="The game's options (see optionsSchema); omitted: defaults."
    )
    seed: Seed | None = Field(default=None, description=SEED_DESCRIPTION)
    bots: dict[str, str] | None = Field(
        default=None,
        description="Bot seats: seat number (as a string) -> built-in player "
        "(random, greedy or search). Bot seats get no token; a worker plays them. "
        "At least one seat stays human. Not together with `seats`.",
        max_length=15,
    )


class CreateMatchRequest(CreateMatchBase):
    seats: list[SeatRequest] | None = Field(
        default=None, min_length=1, max_length=16,
        description="The seats in order, each a player (`me`: the caller), an app's user, a "
        "bot or an open seat (instead of `players` + `bots`). Player seats are acted for "
        "with the player's own credential: they get no seat token here. Needs an app key "
        "(any of its players) or a player credential (the caller itself and bots). With an "
        "open seat the match waits for players (`status: waiting`, docs/lobby.md).",
    )
    visibility: Visibility = Field(default="unlisted", description=VISIBILITY_DESCRIPTION)
    name: MatchName | None = Field(
        default=None, description="A name for the match (at most 64 characters), shown in "
        "lists and states; not game data.",
    )
    labels: dict[LabelKey, LabelValue] | None = Field(
        default=None, max_length=16,
        description="App-defined labels (at most 16; keys 1-32 characters, values at most "
        "128), shown in lists and states; not game data.",
    )
    time_control: TimeControlSpec | None = Field(default=None,
                                                 description=TIME_CONTROL_DESCRIPTION)
    on_timeout: OnTimeoutSpec | None = Field(default=None, description=ON_TIMEOUT_DESCRIPTION)


class SeatToken(WireModel):
    seat: int
    token: str = Field(description="Secret bearer token of this seat. Shown only once.")


class CreateMatchResponse(WireModel):
    match_id: str
    game: str
    version: int
    seats: list[SeatToken] = Field(
        description="One token per anonymous human seat (seats bound to players get none: "
        "their player's credential acts for them)."
    )


class StreamTicket(WireModel):
    """A short-lived credential for one seat's event stream."""

    ticket: str = Field(
        description="Open the match's event stream with `?ticket=<ticket>` (for clients that "
        "cannot send `Authorization`, such as a browser's EventSource). It names this seat "
        "of this match only, is accepted nowhere else, and stops working at `expiresAt` or "
        "when the seat's token does (a seat handed to a bot). Fetch a new one for each "
        "(re)connection."
    )
    expires_at: datetime = Field(
        description="RFC 3339, UTC: the ticket is refused from this moment on (a stream "
        "opened before goes on)."
    )


class SeatHolder(WireModel):
    """Who sits in a seat, as everyone may see it."""

    seat: int
    name: str | None = Field(
        description="The player's display name; null for an anonymous seat and for a bot."
    )
    bot: BotKind | None = Field(default=None, description="The bot playing the seat, if any.")
    open: bool = Field(
        default=False,
        description="True for an open seat nobody has taken yet (a waiting match): join it "
        "with POST /v1/matches/{matchId}/join.",
    )


class SeatClockState(WireModel):
    """One seat's clock at `serverTime`."""

    seat: int
    remaining_ms: int | None = Field(
        description="Time left on the seat's clock at `serverTime` in milliseconds (a "
        "running clock keeps draining: count down from `deadline`); null for an untimed "
        "match."
    )
    deadline: datetime | None = Field(
        description="When the running clock runs out (RFC 3339, UTC; the server's clock); "
        "null when the clock is stopped, for an untimed match and for a bot's seat."
    )
    running: bool = Field(description="True while the seat must act (its turn).")
    turn_started_at: datetime | None = Field(
        description="When the seat's current turn began (RFC 3339, UTC); null while it is "
        "not the seat's turn."
    )


class MatchClock(WireModel):
    """The seats' clocks as the server read them at `serverTime`."""

    server_time: datetime = Field(
        description="The server's time when this state was made (RFC 3339, UTC): compare "
        "it with your own clock to count down `deadline`s without drift."
    )
    seats: list[SeatClockState] = Field(description="Every seat's clock, in seat order.")


class MatchState(WireModel):
    match_id: str
    game: str
    version: int
    rules_version: int = Field(
        description="The game's rules version this match is played under (see the "
        "catalogue's rulesVersions); fixed for the match's whole life."
    )
    status: Literal["waiting", "active", "finished", "cancelled"] = Field(
        description="`waiting`: open seats, no game yet (`view` is null); `active`: being "
        "played; `finished`; `cancelled`: it never started (see `cancelReason`). More may "
        "be added: treat an unknown one as not playable.",
    )
    seat: int | None = Field(description="The caller's seat; null for a spectator.")
    active_seats: list[int] = Field(description="Seats that may act now.")
    bots: dict[str, BotKind] = Field(
        default_factory=dict,
        description="Bot seats: seat number (as a string) -> bot kind; a worker plays them.",
    )
    view: Any = Field(
        description="What the caller may see (the game's View); null while the match waits "
        "for players and once it is cancelled."
    )
    result: MatchOutcome | None = Field(
        description="Final scores once the match is finished, and how it ended.")
    players: list[SeatHolder] = Field(
        default_factory=list,
        description="Who sits in each seat, in seat order: a player's display name or a bot.",
    )
    options: dict[str, Any] | None = Field(
        default=None,
        description="The game's options the match was created with (see the game's "
        "optionsSchema); null: every default.",
    )
    seed_chosen: bool = Field(
        default=True,
        description="True when the match's creator chose the seed (it then knows every draw "
        "and every hand: trust the match as far as you trust its creator), or when the match "
        "predates this record; false when the server drew the seed (see `seedCommitment`).",
    )
    seed_commitment: str | None = Field(
        default=None,
        description="For a seed the server drew: hex SHA-256 of (`seedSalt`, 16 bytes, then "
        "`seed` as 8 bytes big-endian), published from version 0 on; the finished match "
        "reveals `seed` and `seedSalt` to check it against (docs/security.md). Null for a "
        "chosen seed and for a match stored before commitments.",
    )
    seed: int | None = Field(
        default=None,
        description="The match's seed, revealed once the match is finished (null before): "
        "with the number of seats, `options` and `rulesVersion` it sets the match up again, "
        "and the log (every move is shown once the match is finished) replays it.",
    )
    seed_salt: str | None = Field(
        default=None,
        description="The commitment's 16-byte salt in hex, revealed once the match is "
        "finished (null before, and for a match without a commitment).",
    )
    visibility: Visibility = Field(default="unlisted", description=VISIBILITY_DESCRIPTION)
    name: str | None = Field(default=None, description="The match's name, if it has one.")
    labels: dict[str, str] = Field(default_factory=dict,
                                   description="The app-defined labels given at creation.")
    open_seats: list[int] = Field(
        default_factory=list,
        description="Seats still open for a player to join (a waiting match).",
    )
    start_version: int = Field(
        default=0,
        description="The version at which the game was set up (0 unless the match waited "
        "for players): versions before it are the lobby's (joins, leaves).",
    )
    cancel_reason: str | None = Field(
        default=None,
        description="Why a cancelled match was cancelled: `creator` (its creator cancelled "
        "it), `creator_left`, `expired` (nobody touched it for the waiting time). More may "
        "be added.",
    )
    creator_seat: int | None = Field(
        default=None, description="The seat of the player that created the match (who may "
        "start or cancel it while it waits); null when an app's key created it or that "
        "player left.")
    rematch_of: str | None = Field(
        default=None, description="The match this one is a rematch of (POST "
        "/v1/matches/{matchId}/rematch).")
    rematch: str | None = Field(
        default=None, description="This match's rematch, once one was asked for.")
    created_at: datetime | None = Field(
        default=None, description="When the match was created (RFC 3339, UTC).")
    updated_at: datetime | None = Field(
        default=None, description="When this version was written (RFC 3339, UTC); null in "
        "a stream's catch-up states, as `clock`.")
    time_control: TimeControlSpec | None = Field(
        default=None, description="The time control chosen at creation; null: untimed.")
    on_timeout: OnTimeoutSpec | None = Field(
        default=None, description="What becomes of a seat whose time runs out; null for "
        "an untimed match.")
    clock: MatchClock | None = Field(
        default=None, description="Each seat's clock and when its turn began (untimed "
        "matches too); null while the match waits for players, once it is cancelled, and in "
        "a stream's catch-up states (versions older than the newest, rebuilt from the log, "
        "which holds no times).")


_ADAPTERS: dict[type, TypeAdapter[Any]] = {}


def wire_action(action: Any) -> Any:
    """An engine action as its wire JSON, by its own type (an ``Any`` field would serialize a
    dataclass field by field and ignore its fields' settings, e.g. omitting empty extras)."""
    if action is None or isinstance(action, dict):
        return action
    kind = type(action)
    adapter = _ADAPTERS.get(kind)
    if adapter is None:
        adapter = _ADAPTERS[kind] = TypeAdapter(kind)
    return adapter.dump_python(action, mode="json")


class LegalMoves(WireModel):
    match_id: str
    version: int
    seat: int | None = Field(description="The caller's seat; null for a spectator (no moves).")
    moves: list[Any] = Field(description="Every legal move, postable verbatim as `action`.")
    texts: list[str] = Field(
        default_factory=list,
        description="One sentence per move, in the order of `moves` and in the response's "
        "language (Content-Language): what to show the player. Post the move, not its text.",
    )

    def to_json(self) -> dict[str, JSON]:
        dumped = super().to_json()
        dumped["moves"] = [wire_action(move) for move in self.moves]
        return dumped


class ActRequest(InputModel):
    action: dict[str, Any] = Field(description="One of the moves from legal-moves.")
    expected_version: Version | None = Field(
        default=None, description="Act only if the match is still at this version (else 409)."
    )


class HandSeatRequest(InputModel):
    kind: str = Field(description="The built-in player that takes the seat over.")


class ReclaimSeatResponse(WireModel):
    """A seat taken back from the bot that played it (`reclaimSeat`)."""

    seat: int
    token: str | None = Field(
        description="The seat's new secret token, shown only once (taken back with the old "
        "token or the app's key); null when the seat's player took it back (its credential "
        "acts for it)."
    )
    state: MatchState = Field(description="The match as the seat sees it.")


class EventOut(WireModel):
    """An event as the caller may see it: ``{kind, data, text}``, typed per game in the
    published documents (``engine.Events``, docs/events.md)."""

    kind: str
    data: dict[str, Any] = Field(description="The event's fields as the caller may see them.")
    text: str = Field(
        default="",
        description="The event in one or a few sentences, in the response's language, said "
        "from what the caller may see (the same data as `data`).",
    )
    _game: str | None = PrivateAttr(default=None)
    """The game that emitted it (not on the wire: GraphQL picks the event's type with it)."""

    @classmethod
    def of(cls, kind: str, data: dict[str, Any], game: str | None, text: str = "") -> EventOut:
        event = cls(kind=kind, data=data, text=text)
        event._game = game
        return event

    @property
    def game(self) -> str | None:
        return self._game


class ActResponse(WireModel):
    match_id: str
    version: int = Field(description="The version the caller's action created.")
    events: list[EventOut]
    state: MatchState = Field(
        description="The caller's view right after the caller's move, before any bot moves "
        "it lets come (those follow as new versions)."
    )


class LogEntryOut(WireModel):
    version: int
    seat: int | None = Field(description="The seat that acted (null: none, e.g. setup).")
    action: Any | None = Field(
        description="The action: the caller's own moves while the match is played; every "
        "seat's move once it is finished (null for a service entry, such as a seat handed "
        "to a bot)."
    )
    events: list[EventOut]


LOG_PAGE_MAX = 200
"""The most log entries one page holds (``limit``'s maximum and default)."""


class LogPage(WireModel):
    match_id: str
    entries: list[LogEntryOut]
    latest_version: int
    players: list[SeatHolder] = Field(
        default_factory=list,
        description="Who sits in each seat now (the entries' `seat` numbers name them): a "
        "player's display name or a bot.",
    )
    next_after: int | None = Field(
        description=f"The version of the last entry here when more follow (at most "
        f"{LOG_PAGE_MAX} entries a page): ask again with `after` = this; null when this page "
        "reaches `latestVersion`."
    )

    def to_json(self) -> dict[str, JSON]:
        dumped = super().to_json()
        entries = dumped["entries"]
        assert isinstance(entries, list)
        for entry, out in zip(self.entries, entries, strict=True):
            assert isinstance(out, dict)
            out["action"] = wire_action(entry.action)
        return dumped


class PatchOperation(WireModel):
    """One RFC 6902 operation (`value` only for add, replace and test; `from` only for move
    and copy)."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True,
        json_schema_serialization_defaults_required=False,
    )

    op: Literal["add", "remove", "replace", "move", "copy", "test"]
    path: str = Field(description="A JSON Pointer (RFC 6901) into the previous state.")
    value: Any = Field(default=None, description="The new value (add, replace, test).")
    from_: str = Field(default="", alias="from",
                       description="The source pointer (move, copy).")


class StreamPatch(WireModel):
    """The data of a `patch` event: how the caller's state at `baseVersion` (the previous
    event's) becomes its state at `version`."""

    version: int
    base_version: int = Field(description="The version the operations apply to: always "
                              "`version - 1`, the previous event's.")
    operations: list[PatchOperation] = Field(
        description="RFC 6902 JSON Patch operations on the previous `MatchState` JSON."
    )
