"""Time controls and timeout policies in GraphQL (``service/matches/models.py``:
``TimeControlSpec``, ``OnTimeoutSpec``); the seats' clocks are generated in ``wire.py``.

The settings of each control (``CorrespondenceSettings``, ``LiveSettings``) are generated, as
outputs and as inputs. Hand-written: the wrappers, whose GraphQL shape is not the model's --
``TimeControl`` is one object with a field per control where the model is an untagged union
of one-key objects, and ``OnTimeout`` one object with ``policy`` and an optional ``bot``
where the model is a union tagged by ``policy`` (published so before the types were
generated).
"""

from enum import Enum
from typing import Any

import strawberry

from service.matches import models

from ..convert import Codec, Optional
from .wire import BOT_KIND, CORRESPONDENCE, CORRESPONDENCE_INPUT, LIVE, LIVE_INPUT

BotKind: Any = BOT_KIND.annotation
CorrespondenceTimeControl: Any = CORRESPONDENCE.annotation
LiveTimeControl: Any = LIVE.annotation
CorrespondenceInput: Any = CORRESPONDENCE_INPUT.annotation
LiveInput: Any = LIVE_INPUT.annotation


@strawberry.type(description="A match's time control: exactly one field is set.")
class TimeControl:
    correspondence: CorrespondenceTimeControl | None
    live: LiveTimeControl | None


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
        return TimeControl(correspondence=CORRESPONDENCE.convert(spec.correspondence),
                           live=None)
    return TimeControl(correspondence=None, live=LIVE.convert(spec.live))


def on_timeout_of(spec: models.OnTimeoutSpec | None) -> OnTimeout | None:
    if spec is None:
        return None
    if isinstance(spec, models.BotOnTimeout):
        return OnTimeout(policy=TimeoutPolicy.bot, bot=BotKind(spec.bot))
    return OnTimeout(policy=TimeoutPolicy.forfeit, bot=None)


TIME_CONTROL = Codec(Optional(TimeControl), time_control_of)
ON_TIMEOUT = Codec(Optional(OnTimeout), on_timeout_of)


def time_control_input(value: TimeControlInput | None) -> dict[str, Any] | None:
    """``createMatch``'s ``timeControl`` as the REST request's JSON."""
    if value is None or value is strawberry.UNSET:
        return None
    if value.correspondence not in (None, strawberry.UNSET):
        return {"correspondence": CORRESPONDENCE_INPUT.convert(value.correspondence)}
    assert value.live is not None and value.live is not strawberry.UNSET
    return {"live": LIVE_INPUT.convert(value.live)}


def on_timeout_input(value: OnTimeoutInput | None) -> dict[str, Any] | None:
    """``createMatch``'s ``onTimeout`` as the REST request's JSON."""
    if value is None or value is strawberry.UNSET:
        return None
    out: dict[str, Any] = {"policy": value.policy.value}
    if value.bot not in (None, strawberry.UNSET):
        assert value.bot is not None
        out["bot"] = value.bot.value
    return out
