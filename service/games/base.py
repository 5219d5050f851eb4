"""The engine contract every game implements, and the few things engines share.

An engine is a pure, deterministic rules module: it imports nothing of the web, the store,
the clock or the global random generator (``tests/test_boundaries.py`` enforces it). A match
is reproducible from ``setup(players, options, seed)`` plus its action log, because every
random draw comes from a generator whose state lives inside the game state (``rng.py``).

Wire formats are pydantic-compatible types so that one definition feeds validation, the
OpenAPI document and the GraphQL types:

- ``Options``: a pydantic model, every field optional with a default, ``extra="forbid"``.
- ``Action``: an ``Annotated[Union[...], Field(discriminator="type")]`` of frozen, hashable
  value types (stdlib dataclasses with ``__pydantic_config__ = ConfigDict(extra="forbid")``
  or frozen pydantic models), each with a ``type: Literal[...]`` tag. Equal moves compare
  equal, so ``action in legal_actions(state, seat)`` is a meaningful legality test.
- ``View``: a pydantic model (what one seat, or a spectator, may see).
- ``Result``: the shared model below.
- ``Events`` (optional): the wire shape of every ``Event`` the engine emits, a union of
  ``{kind, data}`` models discriminated by ``kind`` (``events.py``; without it a game's events
  are published untyped).

Type names must be unique across games (prefix them: ``Ny1901…``, ``Gk…``) and use only
GraphQL-friendly shapes: ints, strs, bools, ``Literal`` strings, optionals, lists and nested
models -- no dicts, no untagged unions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Protocol, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, TypeAdapter

JSON = Any
"""A JSON-compatible value (dict, list, str, int, float, bool or None)."""

S = TypeVar("S")


class IllegalAction(Exception):
    """A move that the rules refuse. ``code`` is stable and machine-readable.

    The message may be shown to the seat that tried the move; it must not reveal hidden
    information that seat cannot see.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


# Codes shared by every engine; engines add their own (lower_snake_case, stable).
NOT_YOUR_TURN = "not_your_turn"
GAME_OVER = "game_over"
NOT_LEGAL = "not_legal"


def _reject_bool(value: object) -> object:
    # JSON true/false are not integers on our wire, even though Python says bool is an int.
    if isinstance(value, bool):
        raise ValueError("expected an integer, got a boolean")
    return value


WireInt = Annotated[int, BeforeValidator(_reject_bool)]
"""An integer field of a wire model: accepts 3 and 3.0, refuses true/false and "3x"."""


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened, with per-seat visibility.

    ``public`` is what everyone (spectators included) sees; ``private[seat]`` adds fields
    that only that seat sees (for example the card it drew). Never put hidden information
    in ``public``.
    """

    kind: str
    public: Mapping[str, JSON] = field(default_factory=dict)
    private: Mapping[int, Mapping[str, JSON]] = field(default_factory=dict)

    def for_seat(self, seat: int | None) -> dict[str, JSON]:
        """The event as ``seat`` (``None``: a spectator) may see it."""
        seen: dict[str, JSON] = {"kind": self.kind, **self.public}
        if seat is not None and seat in self.private:
            seen.update(self.private[seat])
        return seen


class UnknownRulesVersion(ValueError):
    """``setup`` was asked for a rules version the engine does not have."""


def check_rules_version(game: str, versions: tuple[int, ...], version: int | None) -> int:
    """``version`` (None: the newest of ``versions``) if the game plays it; else
    ``UnknownRulesVersion``."""
    chosen = versions[-1] if version is None else version
    if chosen not in versions:
        raise UnknownRulesVersion(
            f"{game} plays rules versions {', '.join(map(str, versions))}, not {chosen}"
        )
    return chosen


class ScoreLine(BaseModel):
    """Points from one scoring rule: `rule` is an id of the catalogue's `scoringRules` (for
    example `buildings` or `street:broadway`)."""

    model_config = ConfigDict(frozen=True)
    rule: str
    points: int


class SeatResult(BaseModel):
    model_config = ConfigDict(frozen=True)
    seat: int
    score: int
    breakdown: list[ScoreLine]
    rank: int
    """1 for the winner(s); tied seats share a rank after the rulebook's tie-breaks."""


class OpponentResult(BaseModel):
    """A player that is not a seat: an automaton the rules themselves play (Ginkgopolis'
    Hal in the solo game). Ranked together with the seats."""

    model_config = ConfigDict(frozen=True)
    name: str
    score: int
    breakdown: list[ScoreLine]
    rank: int


class Result(BaseModel):
    """Final scores. `score` equals the sum of `breakdown` for every seat and opponent.

    Ranks are shared by seats and `opponents` (1 = best; equal results share a rank), so a
    solo player beaten by an automaton has rank 2 and `winners` (seats only) is empty.
    """

    model_config = ConfigDict(frozen=True)
    seats: list[SeatResult]
    winners: list[int]
    opponents: list[OpponentResult] = Field(default_factory=list)


class Engine(Protocol[S]):
    """The contract in docs/architecture.md ("The engine contract"). ``S`` is the engine's
    own (opaque) state type.

    ``apply`` never mutates its input state: on success it returns a new state, on
    failure it raises ``IllegalAction`` and the input is unchanged.
    """

    id: str
    title: str
    min_players: int
    max_players: int
    Options: type[BaseModel]
    Action: Any
    View: type[BaseModel]

    rules_versions: tuple[int, ...]
    """The rules versions this build plays, oldest first; new matches get the last one. A
    match keeps the version it was set up with for its whole life (``rules_version``)."""

    def setup(
        self, players: int, options: BaseModel | None, seed: int,
        rules_version: int | None = None,
    ) -> S:
        """``rules_version``: one of ``rules_versions`` (None: the newest); any other raises
        ``UnknownRulesVersion``."""
        ...

    def rules_version(self, state: S) -> int:
        """The rules version the state is played under."""
        ...

    def active_seats(self, state: S) -> frozenset[int]: ...

    def legal_actions(self, state: S, seat: int) -> list[Any]: ...

    def apply(self, state: S, seat: int, action: Any) -> tuple[S, list[Event]]: ...

    def view(self, state: S, seat: int | None) -> BaseModel: ...

    def result(self, state: S) -> Result | None: ...

    def dumps(self, state: S) -> bytes: ...

    def loads(self, data: bytes) -> S: ...


_ADAPTERS: dict[int, TypeAdapter[Any]] = {}


def action_adapter(engine: Engine[Any]) -> TypeAdapter[Any]:
    """The (cached) pydantic adapter for an engine's ``Action`` union."""
    key = id(engine.Action)
    adapter = _ADAPTERS.get(key)
    if adapter is None:
        adapter = _ADAPTERS[key] = TypeAdapter(engine.Action)
    return adapter


def parse_action(engine: Engine[Any], data: JSON) -> Any:
    """Wire JSON -> action value. Raises ``pydantic.ValidationError`` when malformed."""
    return action_adapter(engine).validate_python(data)


def dump_action(engine: Engine[Any], action: Any) -> dict[str, JSON]:
    """Action value -> wire JSON (the exact form a client may post back)."""
    dumped: dict[str, JSON] = action_adapter(engine).dump_python(action, mode="json")
    return dumped
