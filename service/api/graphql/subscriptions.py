"""Subscription: ``matchUpdated``, every new version of a match as the caller sees it.

Served over ``graphql-transport-ws``; the seat token travels in the ``connection_init``
payload (``routes.py``). Versions arrive in order and without gaps (the service replays the
log for versions the stream has not seen; a subscription more than the server's resume
window behind starts with the current version instead). Without ``after``, the first
message is the current state; with it, the versions after ``after``. The stream completes
after the version that finishes the match, or after a failure member (which is then its
only message), or after ``Unauthorized`` with code ``credential_revoked`` when the seat's
credential stops reading it (the seat handed to a bot, its token renewed, its player gone:
checked before every version, and nothing of that version is sent). ``after`` must not be
negative (``BadRequest``, code ``malformed``, like REST's 400); one beyond the current
version starts with the current state, as REST does. Every subscription holds one of the
replica's watcher slots (the caps of the event stream: ``Unavailable`` with code
``too_many_streams`` or ``replica_full``).
"""

from collections import OrderedDict
from collections.abc import AsyncGenerator
from typing import Any

import strawberry

from service.errors import ApiError
from service.i18n import T
from service.identity import checked
from service.live import Shutdown
from service.matches import models
from service.matches.watch import Revoked

from ..rate_limits import stream_client
from .context import Info
from .feed import build_feed_subscription
from .results import READ_FAILURES, result_union
from .types.failures import failure_for
from .types.games import GameTypes
from .types.match import MatchTypes

CONVERTED = 64
"""GraphQL objects kept per schema: the states the replica's watchers receive now."""


def build_subscription(types: MatchTypes, games: GameTypes | None = None) -> type:
    # Every subscriber of one version and visibility receives the same MatchState object
    # (the match's timeline renders it once); convert it once too.
    converted: OrderedDict[int, tuple[object, object]] = OrderedDict()

    def from_state(state: models.MatchState) -> object:
        found = converted.get(id(state))
        if found is not None and found[0] is state:
            return found[1]
        value = types.from_state(state)
        converted[id(state)] = (state, value)
        if len(converted) > CONVERTED:
            converted.popitem(last=False)
        return value

    match_update = result_union(
        "MatchUpdate", types.state, READ_FAILURES, "A new version, or why the stream ended."
    )

    base: Any = build_feed_subscription(types.converter) if games is not None else object

    @strawberry.type(description="Live updates over graphql-transport-ws.")
    class Subscription(base):  # type: ignore[misc]
        @strawberry.subscription(
            description="Each new version of the match as the caller sees it, in order. "
            "Authenticate in connection_init: {\"authorization\": \"Bearer <seat token>\"}."
        )
        async def match_updated(
            self, info: Info, match_id: strawberry.ID, after: int | None = None
        ) -> AsyncGenerator[match_update, None]:  # type: ignore[valid-type]
            service = info.context.service
            lease = None
            try:
                if after is not None and after < 0:
                    # REST's ?after=-1 is 400 malformed: the same refusal, not a replay of
                    # every version.
                    raise ApiError.of(
                        "malformed", T("{name} must be a non-negative integer.", name="after")
                    )
                token = info.context.credentials()
                holder = checked.watch()  # what head() proves, for the stream cap
                version, finished = await service.head(str(match_id), token)
                if after is not None and after > version:
                    after = None  # from the future: start afresh with the current state
                if finished and after is not None and after >= version:
                    return
                lease = service.hub.admit(
                    stream_client(info.context.request.scope, token, holder))
                updates = service.follow(str(match_id), token=token, after=after,
                                         client=lease.client)
                try:
                    async for update in updates:
                        yield from_state(update.state)
                        if update.finished:
                            return
                finally:
                    await updates.aclose()
            except Revoked as revoked:
                # The credential stopped reading the seat: the problem, then completion.
                yield failure_for(revoked.error, READ_FAILURES, info.context.lang)
            except Shutdown:
                return  # the replica is stopping: the client reconnects (elsewhere)
            except ApiError as error:
                yield failure_for(error, READ_FAILURES, info.context.lang)
            finally:
                if lease is not None:
                    lease.release()

    return Subscription
