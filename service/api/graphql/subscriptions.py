"""Subscription: ``matchUpdated``, every new version of a match as the caller sees it.

Served over ``graphql-transport-ws``; the seat token travels in the ``connection_init``
payload (``routes.py``). Versions arrive in order and without gaps (the service replays the
log for versions the stream has not seen). Without ``after``, the first message is the
current state; with it, the versions after ``after``. The stream completes after the version
that finishes the match, or after a failure member (which is then its only message).
"""

from collections.abc import AsyncGenerator

import strawberry

from service.errors import ApiError

from .context import Info
from .results import READ_FAILURES, result_union
from .types.failures import failure_for
from .types.match import MatchStatus, MatchTypes


def build_subscription(types: MatchTypes) -> type:
    match_update = result_union(
        "MatchUpdate", types.state, READ_FAILURES, "A new version, or why the stream ended."
    )

    @strawberry.type(description="Live updates over graphql-transport-ws.")
    class Subscription:
        @strawberry.subscription(
            description="Each new version of the match as the caller sees it, in order. "
            "Authenticate in connection_init: {\"authorization\": \"Bearer <seat token>\"}."
        )
        async def match_updated(
            self, info: Info, match_id: strawberry.ID, after: int | None = None
        ) -> AsyncGenerator[match_update, None]:  # type: ignore[valid-type]
            service = info.context.service
            try:
                token = info.context.credentials()
                current = await service.get_state(str(match_id), token)
                finished = current.status == MatchStatus.finished.value
                if after is None:
                    yield types.from_state(current)
                    after = current.version
                if finished and after >= current.version:
                    return
                updates = service.watch(str(match_id), token, max(after, 0))
                try:
                    async for update in updates:
                        state = types.from_state(update)
                        yield state
                        if state.status is MatchStatus.finished:
                            return
                finally:
                    await updates.aclose()  # type: ignore[attr-defined]
            except ApiError as error:
                yield failure_for(error, READ_FAILURES, info.context.lang)

    return Subscription
