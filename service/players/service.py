"""``PlayerService``: players, apps' server-to-server calls and "my matches", behind one
object that REST and GraphQL share (the match service's ``MatchService`` for matches).

It sits above the match service: it turns bearer credentials into callers
(``authenticate``), seats players in new matches (writing their "my matches" index first)
and renames a player's seats when the player leaves for good.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from service.errors import ApiError
from service.i18n import T
from service.identity import checked, feed_tickets
from service.identity.auth import DEFAULT_USER_NAME, Authenticator
from service.identity.callers import Caller, Credential
from service.identity.jwt import JwksCache, JwtVerifier
from service.identity.names import NEUTRAL_NAME, clean_name
from service.live.lifetime import until
from service.matches import MatchService
from service.matches.models import (
    BotSeat,
    CreateMatchRequest,
    CreateMatchResponse,
    OpenSeat,
    PlayerSeat,
    SeatToken,
    StreamTicket,
)
from service.matches.records import MatchRecord, SeatPlayer
from service.matches.waiting import Member
from service.matches.watch import Revoked, expired
from service.store import DocStore

from .apps import DEFAULT_APP, Apps
from .directory import Directory, not_found
from .docs import Docs, guard
from .expiry import DEFAULT_GUEST_TTL, GuestExpiry
from .feed import Feed, FeedItem, FeedReset
from .listing import Listing, member
from .models import (
    CreatePlayerRequest,
    DeletedPlayer,
    MyMatchesPage,
    PlayerCreated,
    PlayerOut,
)
from .records import MATCHES_INDEX, PlayerRecord, player_key

DEFAULT_AUDIENCE = "skyline"
ME = "me"
"""A seat's ``player`` naming the calling player."""
RENAME_PAGE = 100


class PlayerService:
    def __init__(
        self, store: DocStore, matches: MatchService, *, audience: str = DEFAULT_AUDIENCE,
        clock: Callable[[], float] = time.time, jwks: JwksCache | None = None,
        ticket_seconds: int = 60, guest_ttl: float = DEFAULT_GUEST_TTL,
    ) -> None:
        self.ticket_seconds = ticket_seconds
        self.store = store
        self.matches = matches
        self.clock = clock
        docs = Docs(store)
        self.apps = Apps(docs)
        self.directory = Directory(docs, self.apps)
        self.jwks = jwks or JwksCache()
        verifier = JwtVerifier(audience=audience, keys_of=self.apps.jwt_keys, jwks=self.jwks,
                               clock=clock)
        self.auth = Authenticator(self.apps, self.directory, verifier, clock)
        self.listing = Listing(store, matches)
        self.feed = Feed(store, matches, clock)
        matches.subscribe(self.feed.on_write, on_warning=self.feed.warn)

        async def records(match_ids: list[str]) -> list[MatchRecord | None]:
            loaded = await matches.storage.load_many(match_ids)
            return [None if item is None else item[1] for item in loaded]

        self.expiry = GuestExpiry(store, matches.storage.schedule(), self.directory, records,
                                  self._delete, guest_ttl)
        """Idle guests expire (``expiry.py``; judged by ``service.workers.guests``)."""

    async def authenticate(self, token: str | None) -> Credential:
        """The caller a bearer credential names (see ``service.identity.auth``)."""
        return await self.auth.credential(token)

    async def aclose(self) -> None:
        await self.jwks.aclose()

    # Players -----------------------------------------------------------------------------

    async def create_guest(self, req: CreatePlayerRequest) -> PlayerCreated:
        name = clean_name(req.name)
        app = await self.apps.require(req.app_id)
        player, token = await self.directory.create_guest(app, name, int(self.clock()))
        await self.expiry.scheduled(player)
        return PlayerCreated(id=player.id, token=token, name=player.name, app_id=app.id)

    async def me(self, caller: Credential) -> PlayerOut:
        player = await self._own(caller)
        return _out(player)

    async def delete_me(self, caller: Credential) -> DeletedPlayer:
        """A guest leaves for good (an app's user is deleted by its app)."""
        player = await self._own(caller)
        if player.sub is not None:
            raise ApiError.of("forbidden", "An app's user is deleted by its app "
                              "(DELETE /v1/apps/me/players/{sub}).")
        return await self._delete(player)

    async def app_player(self, caller: Credential, sub: str) -> PlayerOut:
        app = _app_caller(caller)
        player = await self.directory.user(app.app, sub)
        if player is None:
            raise not_found()
        return _out(player)

    async def delete_app_player(self, caller: Credential, sub: str) -> DeletedPlayer:
        app = _app_caller(caller)
        player = await self.directory.user(app.app, sub)
        if player is None:
            raise not_found()
        return await self._delete(player)

    async def _delete(self, player: PlayerRecord) -> DeletedPlayer:
        # The matches first, while the credential still works: a crash part way leaves a
        # player who can ask again, and a renamed seat is skipped the second time.
        renamed = 0
        cursor: str | None = None
        while True:
            members = await guard(self.store.index_page(
                player_key(player.id), MATCHES_INDEX, after=cursor, limit=RENAME_PAGE))
            for entry in members:
                match_id = entry.partition(".")[2]
                try:
                    if await self.matches.rename_player(match_id, player.app, player.id,
                                                        NEUTRAL_NAME):
                        renamed += 1
                except ApiError as error:
                    if error.code != "match_not_found":
                        raise
            if len(members) < RENAME_PAGE:
                break
            cursor = members[-1]
        gone = await self.directory.delete(player)
        return DeletedPlayer(id=gone.id, name=gone.name, matches_renamed=renamed)

    async def _own(self, caller: Credential) -> PlayerRecord:
        if not isinstance(caller, Caller) or caller.player is None:
            raise ApiError.of("unauthorized", "This needs a player token or an app's JWT.")
        player = await self.directory.get(caller.player)
        if player is None:
            raise ApiError.of("unauthorized", "The token is not valid.")
        return player

    # My matches --------------------------------------------------------------------------

    async def my_matches(
        self, caller: Credential, *, status: str | None = None, mine: bool = False,
        cursor: str | None = None, limit: int | None = None,
    ) -> MyMatchesPage:
        # The caller was checked a moment ago (its document read): not read again, so a page
        # costs the credential's check, the index page and one batch of match records.
        own = _player_caller(caller)
        assert own.player is not None
        app = await self.apps.cached(own.app)
        return await self.listing.page(app, own.player, status=status, mine=mine,
                                       cursor=cursor, limit=limit)

    async def app_matches(
        self, caller: Credential, player_id: str, *, status: str | None = None,
        mine: bool = False, cursor: str | None = None, limit: int | None = None,
    ) -> MyMatchesPage:
        app_caller = _app_caller(caller)
        player = await self.directory.get(player_id)
        if player is None or player.app != app_caller.app:
            raise not_found()
        app = await self.apps.of_player(player)
        return await self.listing.page(app, player.id, status=status, mine=mine,
                                       cursor=cursor, limit=limit)

    # The player feed ----------------------------------------------------------------------

    @staticmethod
    def expiry_of(caller: Credential) -> int | None:
        """When ``caller``'s credential stops being accepted (an app-signed JWT), or None."""
        return caller.expires_at if isinstance(caller, Caller) else None

    async def feed_owner(self, caller: Credential) -> str:
        """The player whose feed the caller may read (its own), checked before a stream
        opens."""
        own = _player_caller(caller)
        assert own.player is not None
        return own.player

    async def issue_feed_ticket(self, caller: Credential) -> StreamTicket:
        """A short-lived ticket to open the caller's own feed with ``?ticket=``."""
        player = await self._own(caller)
        if player.ticket_key is None:
            raise ApiError.of("unauthorized", "The token is not valid.")
        issued = feed_tickets.issue(player.ticket_key, player.id, self.clock(),
                               self.ticket_seconds)
        return StreamTicket(ticket=issued.ticket,
                            expires_at=datetime.fromtimestamp(issued.expires, UTC))

    async def player_of_feed_ticket(self, ticket: str) -> str:
        """The player a feed ticket opens the feed of (401 ``ticket_invalid``)."""
        player_id = feed_tickets.player_of(ticket)
        player = await self.directory.get(player_id) if player_id is not None else None
        key = player.ticket_key if player is not None and not player.deleted else None
        owner = feed_tickets.verify(ticket, key, self.clock(), self.ticket_seconds)
        # A guest's feed counts against its address's stream slots (``identity.checked``).
        checked.note(f"player:{owner}", own=player is not None and player.sub is not None)
        return owner

    async def follow_feed(
        self, player: str, after: int | None, expires_at: int | None = None
    ) -> AsyncGenerator[FeedItem | FeedReset, None]:
        """The player's feed (``Feed.follow``), its credential checked again before every
        event: once the player has left for good (or its app deleted it), the feed ends with
        ``Revoked`` (``credential_revoked``) instead of the event; once the JWT it was opened
        with expired (``expires_at``, ``Caller.expires_at``), with ``token_expired``."""
        events = self.feed.follow(player, after)
        try:
            # Ends at the JWT's expiry, even while no event comes (live.lifetime).
            async for event in until(events, expires_at, self.clock, lambda: Revoked(expired())):
                record = await self.directory.get(player)
                if record is None or record.deleted:
                    raise Revoked(ApiError.of("credential_revoked", "This player left for good."))
                yield event
        finally:
            await events.aclose()

    # Matches with players ----------------------------------------------------------------

    async def create_match(
        self, caller: Credential, req: CreateMatchRequest, *,
        before_write: Callable[[str, MatchRecord], Awaitable[None]] | None = None,
        match_id: str | None = None, extra: Mapping[str, Any] | None = None,
    ) -> CreateMatchResponse:
        """A new match: anonymous seats (``players`` + ``bots``) as before, or ``seats``
        naming players, an app's users and bots. An app key seats any of its players; a
        player seats itself (and bots). ``before_write(match_id, record)``: run once the id
        is chosen, before anything is written (the creator's quota). ``match_id`` and
        ``extra``: as ``Creation.create_match`` (a rematch)."""
        app = caller.app if isinstance(caller, Caller) else None
        if req.seats is None:
            return await self.matches.create_match(req, app=app, before_write=before_write)
        if not isinstance(caller, Caller):
            raise ApiError.of(
                "unauthorized", "Seating players needs an app key or a player credential."
            )
        bound: dict[int, SeatPlayer] = {}
        for seat, wanted in enumerate(req.seats):
            if isinstance(wanted, BotSeat | OpenSeat):
                continue
            if isinstance(wanted, PlayerSeat) and wanted.player == ME:
                if caller.player is None:
                    raise ApiError.of("malformed", T("seats.{seat}: `me` is the calling "
                                                     "player; an app key is none.", seat=seat))
                player = await self._seatable(caller, caller.player, None)
            elif isinstance(wanted, PlayerSeat):
                player = await self._seatable(caller, wanted.player, None)
            else:
                player = await self._seatable(caller, None, wanted.user)
            if any(p.player == player.id for p in bound.values()):
                raise ApiError.of("malformed", "A player sits in one seat of a match.")
            bound[seat] = SeatPlayer(player.id, player.name)
        created_ms = int(self.clock() * 1000)

        async def index_first(match_id: str, record: MatchRecord) -> None:
            if before_write is not None:
                await before_write(match_id, record)
            entry = member(created_ms, match_id)
            for bound_player in bound.values():
                await guard(self.store.index_add(
                    player_key(bound_player.player), MATCHES_INDEX, [entry]))

        return await self.matches.create_match(req, app=caller.app, bound=bound,
                                               match_id=match_id, extra=extra,
                                               before_write=index_first,
                                               creator=caller.player)

    async def _seatable(
        self, caller: Caller, player_id: str | None, sub: str | None
    ) -> PlayerRecord:
        """The player a seat names, if the caller may seat it (else the same 404 as for a
        player that does not exist)."""
        player: PlayerRecord | None
        if player_id is not None:
            player = await self.directory.get(player_id)
        else:
            assert sub is not None
            player = await self.directory.user(caller.app, sub)
            if player is None and caller.is_app:
                player = await self.directory.sign_in(
                    caller.app, sub, DEFAULT_USER_NAME, int(self.clock()), rename=False)
        if player is None or player.app != caller.app or player.deleted:
            raise not_found()
        if not caller.is_app and player.id != caller.player:
            raise not_found()
        return player

    async def member(self, caller: Credential) -> Member:
        """Who asks, for a lobby write (``service.matches.waiting``): a player of an app
        (its display name read now), or an app's key; 401 for anyone else."""
        if not isinstance(caller, Caller):
            raise ApiError.of("unauthorized", "This needs a player credential or an app key.")
        if caller.player is None:
            return Member(caller.app, None)
        player = await self._own(caller)
        return Member(caller.app, player.id, player.name)

    async def index_match(self, player: str, created: int, match_id: str) -> None:
        """Add a match to a player's "my matches" before the player is seated in it (so a
        crash between the two leaves an entry that is skipped, never a seat unlisted)."""
        await guard(self.store.index_add(player_key(player), MATCHES_INDEX,
                                         [member(created * 1000, match_id)]))

    async def renew_seat_token(
        self, caller: Credential, match_id: str, seat: int | None
    ) -> SeatToken:
        return await self.matches.renew_seat_token(match_id, caller, seat)


def _player_caller(caller: Credential) -> Caller:
    if not isinstance(caller, Caller) or caller.player is None:
        raise ApiError.of("unauthorized", "This needs a player token or an app's JWT.")
    return caller


def _app_caller(caller: Credential) -> Caller:
    if not isinstance(caller, Caller) or not caller.is_app:
        raise ApiError.of("unauthorized", "This needs the app's key (ska_…).")
    return caller


def _out(player: PlayerRecord) -> PlayerOut:
    return PlayerOut(id=player.id, name=player.name, app_id=player.app, user=player.sub)


__all__ = ["DEFAULT_APP", "PlayerService"]
