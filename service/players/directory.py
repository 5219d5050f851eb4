"""Players: guests (a name, a secret player token) and an app's own users (signed in with the
app's JWTs, found by their ``sub``). A player is ``(app, id)``; its id is random and opaque,
its display name is what others see.

A user's player is created on its first sign-in: the link ``user:<app>:<hash of sub>`` is
written by compare-and-set first, so two replicas signing the same user in at once agree on
one player (the loser reads the winner's link).
"""

from __future__ import annotations

from service.errors import ApiError
from service.identity import credentials, feed_tickets
from service.identity.names import NEUTRAL_NAME

from .apps import Apps
from .docs import Docs
from .records import AppRecord, PlayerRecord, UserLink, player_key

MAX_ATTEMPTS = 16


def not_found() -> ApiError:
    """The one answer for a player that does not exist and one the caller may not see."""
    return ApiError.of("player_not_found", "No such player.")


class Directory:
    def __init__(self, docs: Docs, apps: Apps) -> None:
        self.docs = docs
        self.apps = apps

    async def get(self, player_id: str) -> PlayerRecord | None:
        if not _id_ok(player_id):
            return None
        doc = await self.docs.get(player_key(player_id))
        return PlayerRecord.decode(doc.data) if doc is not None else None

    async def get_many(self, player_ids: list[str]) -> list[PlayerRecord | None]:
        docs = await self.docs.get_many(
            [player_key(p) if _id_ok(p) else "player:-" for p in player_ids]
        )
        return [PlayerRecord.decode(d.data) if d is not None else None for d in docs]

    async def create_guest(self, app: AppRecord, name: str, now: int) -> tuple[PlayerRecord, str]:
        """A guest player of ``app`` and its token (shown once)."""
        if not app.guests:
            raise ApiError.of("guests_disabled", "This app does not take guest players.")
        player_id = credentials.new_player_id()
        token = credentials.new_player_token(player_id)
        player = PlayerRecord(id=player_id, app=app.id, name=name,
                              token=credentials.digest(token), created=now,
                              ticket_key=feed_tickets.new_key())
        if not await self.docs.put(player_key(player_id), 0, player.encode()):
            raise ApiError.of("busy", "Could not allocate a player id; retry.")
        return player, token

    async def user(self, app_id: str, sub: str) -> PlayerRecord | None:
        """The player of the app's user ``sub``, if it signed in before (deleted: None; a
        ``sub`` no JWT could carry: None)."""
        if not 1 <= len(sub) <= credentials.MAX_SUB_LENGTH:
            return None
        doc = await self.docs.get(credentials.user_key(app_id, sub))
        if doc is None:
            return None
        link = UserLink.decode(doc.data)
        if link.deleted:
            return None
        return await self.get(link.player)

    async def sign_in(
        self, app_id: str, sub: str, name: str, now: int, *, rename: bool = True
    ) -> PlayerRecord:
        """The player of the app's user ``sub``, created on its first sign-in; its name
        follows the JWT's. A user the app deleted is ``credential_revoked``."""
        key = credentials.user_key(app_id, sub)
        for _ in range(MAX_ATTEMPTS):
            doc = await self.docs.get(key)
            if doc is None:
                player = PlayerRecord(id=credentials.new_player_id(), app=app_id, name=name,
                                      sub=sub, created=now, ticket_key=feed_tickets.new_key())
                # The player first, then the link: a crash between leaves an unreachable
                # player document, never a link to nothing.
                await self.docs.put(player_key(player.id), 0, player.encode())
                if await self.docs.put(key, 0, UserLink(player.id).encode()):
                    return player
                continue
            link = UserLink.decode(doc.data)
            if link.deleted:
                raise ApiError.of("credential_revoked", "This user was deleted by its app.")
            found = await self.get(link.player)
            if found is None:
                raise not_found()
            if rename and found.name != name and not found.deleted:
                found = await self.rename(found.id, name) or found
            return found
        raise ApiError.of("busy", "Too many concurrent sign-ins; retry.")

    async def rename(self, player_id: str, name: str) -> PlayerRecord | None:
        stored = await self.docs.update(
            player_key(player_id),
            lambda data: None if data is None else PlayerRecord.decode(data).but(
                name=name).encode(),
        )
        return PlayerRecord.decode(stored) if stored is not None else None

    async def delete(self, player: PlayerRecord) -> PlayerRecord:
        """Revoke the player's credentials and give it the neutral name (its matches are
        renamed by the caller first)."""
        stored = await self.docs.update(
            player_key(player.id),
            lambda data: None if data is None else PlayerRecord.decode(data).but(
                name=NEUTRAL_NAME, token=None, deleted=True, ticket_key=None).encode(),
        )
        if player.sub is not None:
            key = credentials.user_key(player.app, player.sub)
            await self.docs.update(key, lambda data: UserLink(player.id, deleted=True).encode())
        assert stored is not None
        return PlayerRecord.decode(stored)


def _id_ok(player_id: str) -> bool:
    return credentials.is_player_id(player_id)
