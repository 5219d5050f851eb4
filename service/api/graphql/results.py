"""The result unions of the operations, and the one helper every resolver uses to fill them.

A resolver calls exactly one ``MatchService`` method; an ``ApiError`` becomes the matching
union member (``types/failures.py``), a GraphQL input that cannot become wire JSON becomes
``BadRequest``. Anything else is a bug: it surfaces as a masked GraphQL error.
"""

from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Any, TypeVar, Union, get_args

import strawberry

from service.errors import ApiError
from service.i18n import DEFAULT_LANGUAGE, Lang

from .convert import MalformedInput
from .types.failures import (
    BadRequest,
    Conflict,
    Forbidden,
    IllegalMove,
    MatchFinished,
    NotFound,
    NotYourTurn,
    Unauthorized,
    Unavailable,
    VersionConflict,
    bad_request,
    failure_for,
)

T = TypeVar("T")

READ_FAILURES: tuple[type, ...] = (NotFound, Unauthorized, BadRequest, Unavailable)
CREATE_FAILURES: tuple[type, ...] = (Unauthorized, Forbidden, NotFound, BadRequest, Unavailable)
HAND_FAILURES: tuple[type, ...] = (
    MatchFinished, Conflict, Unauthorized, Forbidden, NotFound, BadRequest, Unavailable
)
PLAYER_FAILURES: tuple[type, ...] = (Unauthorized, Forbidden, NotFound, BadRequest, Unavailable)
"""The player operations (``players.py``) and writes that need a seat (tickets); the
lobby's lists (``service.tables``)."""
TABLE_FAILURES: tuple[type, ...] = (
    Conflict, Unauthorized, Forbidden, NotFound, BadRequest, Unavailable
)
"""The writes of a waiting match (``service.tables``): join, leave, start, cancel."""
ACT_FAILURES: tuple[type, ...] = (
    VersionConflict,
    IllegalMove,
    NotYourTurn,
    MatchFinished,
    Conflict,
    Unauthorized,
    Forbidden,
    NotFound,
    BadRequest,
    Unavailable,
)


def result_union(name: str, success: type | tuple[type, ...], failures: Sequence[type],
                 description: str) -> Any:
    """``success | failures...`` as a named GraphQL union (``success``: one type, or
    several)."""
    members = success if isinstance(success, tuple) else (success,)
    return Annotated[
        Union[(*members, *failures)],
        strawberry.union(name, description=description),
    ]


def union_name(union: Any) -> str:
    """The GraphQL name of a ``result_union``."""
    name: str = get_args(union)[1].graphql_name
    return name


async def answer(
    failures: Sequence[type],
    call: Callable[[], Awaitable[T]],
    render: Callable[[T], object],
    lang: Lang = DEFAULT_LANGUAGE,
) -> object:
    """``render(await call())``, or the failure member for an expected failure (its message
    in ``lang``)."""
    try:
        return render(await call())
    except ApiError as error:
        return failure_for(error, failures, lang)
    except MalformedInput as error:
        return bad_request(str(error))
