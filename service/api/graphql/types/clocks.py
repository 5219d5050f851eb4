"""Time controls, timeout policies and seat clocks in GraphQL, mirroring the REST models
(``service/matches/models.py``: ``TimeControlSpec``, ``OnTimeoutSpec``, ``MatchClock``). Times
are RFC 3339 strings, as REST writes them (the converters take REST's JSON form)."""

from enum import Enum
from typing import Any

import strawberry

from service.matches import models

from .match import BotKind
from .wire import MATCH_CLOCK

MatchClock: Any = MATCH_CLOCK.annotation
clock_of = MATCH_CLOCK.convert


def _doc(model: type[Any], field: str) -> str | None:
    described: str | None = model.model_fields[field].description
    return described


@strawberry.type(description="A deadline per move.")
class CorrespondenceTimeControl:
    seconds_per_move: int = strawberry.field(
        description=_doc(models.CorrespondenceSettings, "seconds_per_move"))


@strawberry.type(description="A chess-style clock per seat.")
class LiveTimeControl:
    base_seconds: int = strawberry.field(description=_doc(models.LiveSettings, "base_seconds"))
    increment_seconds: int = strawberry.field(
        description=_doc(models.LiveSettings, "increment_seconds"))


@strawberry.type(description="A match's time control: exactly one field is set.")
class TimeControl:
    correspondence: CorrespondenceTimeControl | None
    live: LiveTimeControl | None


@strawberry.input(description="A deadline per move.")
class CorrespondenceInput:
    seconds_per_move: int = strawberry.field(
        description=_doc(models.CorrespondenceSettings, "seconds_per_move"))


@strawberry.input(description="A chess-style clock per seat.")
class LiveInput:
    base_seconds: int = strawberry.field(description=_doc(models.LiveSettings, "base_seconds"))
    increment_seconds: int = strawberry.field(
        default=0, description=_doc(models.LiveSettings, "increment_seconds"))


@strawberry.input(one_of=True, description=models.TIME_CONTROL_DESCRIPTION)
class TimeControlInput:
    correspondence: CorrespondenceInput | None = strawberry.UNSET
    live: LiveInput | None = strawberry.UNSET


@strawberry.enum(description="What becomes of a seat whose time runs out: `bot` (a bot takes "
                 "it, its player may reclaim it) or `forfeit` (the seat is out, ranked last).")
class TimeoutPolicy(Enum):
    bot = "bot"
    forfeit = "forfeit"


@strawberry.type(description="What becomes of a seat whose time runs out.")
class OnTimeout:
    policy: TimeoutPolicy
    bot: BotKind | None = strawberry.field(description="The bot that takes the seat (policy "
                                           "`bot`).")


@strawberry.input(description=models.ON_TIMEOUT_DESCRIPTION)
class OnTimeoutInput:
    policy: TimeoutPolicy
    bot: BotKind | None = strawberry.field(
        default=strawberry.UNSET, description="Policy `bot`: the bot that takes the seat "
        "(omitted: random).")


def time_control_of(spec: models.TimeControlSpec | None) -> TimeControl | None:
    if spec is None:
        return None
    if isinstance(spec, models.CorrespondenceControl):
        return TimeControl(correspondence=CorrespondenceTimeControl(
            seconds_per_move=spec.correspondence.seconds_per_move), live=None)
    return TimeControl(correspondence=None, live=LiveTimeControl(
        base_seconds=spec.live.base_seconds, increment_seconds=spec.live.increment_seconds))


def on_timeout_of(spec: models.OnTimeoutSpec | None) -> OnTimeout | None:
    if spec is None:
        return None
    if isinstance(spec, models.BotOnTimeout):
        return OnTimeout(policy=TimeoutPolicy.bot, bot=BotKind(spec.bot))
    return OnTimeout(policy=TimeoutPolicy.forfeit, bot=None)


def time_control_input(value: TimeControlInput | None) -> dict[str, Any] | None:
    """``createMatch``'s ``timeControl`` as the REST request's JSON."""
    if value is None or value is strawberry.UNSET:
        return None
    if value.correspondence not in (None, strawberry.UNSET):
        assert value.correspondence is not None
        return {"correspondence": {"secondsPerMove": value.correspondence.seconds_per_move}}
    assert value.live is not None and value.live is not strawberry.UNSET
    return {"live": {"baseSeconds": value.live.base_seconds,
                     "incrementSeconds": value.live.increment_seconds}}


def on_timeout_input(value: OnTimeoutInput | None) -> dict[str, Any] | None:
    """``createMatch``'s ``onTimeout`` as the REST request's JSON."""
    if value is None or value is strawberry.UNSET:
        return None
    out: dict[str, Any] = {"policy": value.policy.value}
    if value.bot not in (None, strawberry.UNSET):
        assert value.bot is not None
        out["bot"] = value.bot.value
    return out
