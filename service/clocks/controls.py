"""Time controls and timeout policies as a match's creator chooses them, checked.

- correspondence: ``{"correspondence": {"secondsPerMove": n}}`` -- a deadline per activation
  (it starts when a seat becomes active and is met by the seat's next move), from
  ``MIN_MOVE_SECONDS`` (the operator may raise it) to 14 days;
- live: ``{"live": {"baseSeconds": b, "incrementSeconds": i}}`` -- a clock per seat with a
  Fischer increment per completed turn, running only while the seat must act; base 60 s to
  3 h, increment 0 to 180 s.

Timeout policies: ``{"policy": "bot", "bot": kind}`` (a bot of that kind takes the seat; the
player may reclaim it) or ``{"policy": "forfeit"}`` (the seat is out, ranked last, played
on by a random bot; the match ends when fewer than two seats are still in).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from service.i18n import N_

MIN_MOVE_SECONDS = 10
"""The shortest correspondence deadline the API accepts unless the operator sets its own."""
MAX_MOVE_SECONDS = 14 * 86400
MIN_BASE_SECONDS, MAX_BASE_SECONDS = 60, 3 * 3600
MAX_INCREMENT_SECONDS = 180
BOT_KINDS = ("random", "greedy", "search")


@dataclass(frozen=True, slots=True)
class TimeControl:
    kind: Literal["correspondence", "live"]
    seconds_per_move: int = 0
    base_seconds: int = 0
    increment_seconds: int = 0

    def wire(self) -> dict[str, Any]:
        """The JSON a client sent (and views show)."""
        if self.kind == "correspondence":
            return {"correspondence": {"secondsPerMove": self.seconds_per_move}}
        return {"live": {"baseSeconds": self.base_seconds,
                         "incrementSeconds": self.increment_seconds}}

    def encode(self) -> list[Any]:
        if self.kind == "correspondence":
            return ["c", self.seconds_per_move]
        return ["l", self.base_seconds, self.increment_seconds]

    @classmethod
    def decode(cls, raw: list[Any]) -> TimeControl:
        if raw[0] == "c":
            return cls("correspondence", seconds_per_move=int(raw[1]))
        return cls("live", base_seconds=int(raw[1]), increment_seconds=int(raw[2]))

    @property
    def warn_before_ms(self) -> int:
        """How long before a deadline the player feed says ``timeout_soon``: a tenth of the
        time per move (or of the base time), at most an hour."""
        total = self.seconds_per_move if self.kind == "correspondence" else self.base_seconds
        return min(total * 100, 3_600_000)


@dataclass(frozen=True, slots=True)
class OnTimeout:
    policy: Literal["bot", "forfeit"]
    bot: str | None = None

    def wire(self) -> dict[str, Any]:
        return {"policy": "bot", "bot": self.bot} if self.policy == "bot" else {
            "policy": "forfeit"}

    def encode(self) -> list[Any]:
        return ["b", self.bot] if self.policy == "bot" else ["f"]

    @classmethod
    def decode(cls, raw: list[Any]) -> OnTimeout:
        return cls("bot", str(raw[1])) if raw[0] == "b" else cls("forfeit")


SHAPE = N_("timeControl has one field: correspondence (with secondsPerMove) or live (with "
            "baseSeconds and incrementSeconds).")

class BadClockInput(ValueError):
    """A time control or timeout policy a match cannot take: ``code`` is the problem code
    the API answers (``bad_time_control``, ``bad_timeout_policy``), ``message`` the English
    sentence and ``values`` its placeholders (the service layer words and translates the
    problem)."""

    def __init__(self, code: str, message: str, **values: Any) -> None:
        super().__init__(message.format(**values) if values else message)
        self.code = code
        self.message = message
        self.values = values


FORFEIT = OnTimeout("forfeit")
"""The policy of a timed match whose creator named none."""


def _int(raw: Any, name: str, low: int, high: int) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int) or not low <= raw <= high:
        raise BadClockInput(
            "bad_time_control", N_("{name} must be a whole number of seconds from {low} "
                                     "to {high}."), name=name, low=low, high=high)
    return raw


def parse_time_control(raw: Any, *, min_move_seconds: int = MIN_MOVE_SECONDS) -> TimeControl:
    """``raw`` (the request's ``timeControl``) checked (``BadClockInput``: 400
    ``bad_time_control``)."""
    if not isinstance(raw, dict) or len(raw) != 1:
        raise BadClockInput("bad_time_control", SHAPE)
    (kind, body), = raw.items()
    if kind == "correspondence" and isinstance(body, dict) and set(body) == {"secondsPerMove"}:
        return TimeControl("correspondence", seconds_per_move=_int(
            body["secondsPerMove"], "secondsPerMove", min_move_seconds, MAX_MOVE_SECONDS))
    if (kind == "live" and isinstance(body, dict) and "baseSeconds" in body
            and set(body) <= {"baseSeconds", "incrementSeconds"}):
        return TimeControl(
            "live",
            base_seconds=_int(body["baseSeconds"], "baseSeconds", MIN_BASE_SECONDS,
                              MAX_BASE_SECONDS),
            increment_seconds=_int(body.get("incrementSeconds", 0), "incrementSeconds", 0,
                                   MAX_INCREMENT_SECONDS),
        )
    raise BadClockInput("bad_time_control", SHAPE)


def parse_on_timeout(raw: Any, bots_for_game: tuple[str, ...]) -> OnTimeout:
    """``raw`` (the request's ``onTimeout``) checked against the bots the game has
    (``BadClockInput``: 400 ``bad_timeout_policy``)."""
    if isinstance(raw, dict) and raw.get("policy") == "forfeit" and set(raw) == {"policy"}:
        return FORFEIT
    if isinstance(raw, dict) and raw.get("policy") == "bot" and set(raw) <= {"policy", "bot"}:
        kind = raw.get("bot", "random")
        if kind not in BOT_KINDS:
            raise BadClockInput(
                "bad_timeout_policy", N_("No bot kind {kind}; known: {known}."),
                kind=repr(str(kind)[:32]), known=", ".join(BOT_KINDS))
        if kind not in bots_for_game:
            raise BadClockInput(
                "bad_timeout_policy", N_("No {kind} bot plays this game; use one of: "
                                           "{known}."), kind=kind, known=", ".join(bots_for_game))
        return OnTimeout("bot", str(kind))
    raise BadClockInput("bad_timeout_policy", N_(
        "onTimeout's policy is bot (with the kind of bot) or forfeit."))
