"""``InvitationService``: invitations to a waiting match's seats (to a player, or a seat
code) and spectator codes, behind one object that REST and GraphQL share.

- A player's invitation and a seat code live in the match record (``MatchRecord.invites``)
  and are written by a compare-and-set of the match with a log entry of its own
  (``invited``, ``invite_revoked``, ``invite_declined``): using one is part of the join's
  own compare-and-set (``waiting.py``), so a single-use code seats one player, however many
  race. The invited player's index of invitations (``GET /v1/me/invitations``) is written
  first (index-first: a crash leaves an entry that is skipped, never an invitation the
  player cannot find).
- A spectator code lives beside the match, in its own document (``spectate:<match id>``):
  redeeming one is a compare-and-set of that document, and needs no version of the match
  (spectators come and go while it is played). Its token (``sks_…``) is proven by a MAC
  under the match's key (``invites.py``), so nothing is stored per token.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from service.errors import ApiError
from service.identity.callers import Credential
from service.matches import MatchService, invites
from service.matches.models import MatchState
from service.matches.records import Invitation, LogRecord, MatchRecord
from service.matches.storage import busy
from service.matches.views import hidden, holders, no_seat
from service.matches.waiting import Member
from service.players import PlayerService
from service.players.apps import match_url
from service.players.docs import guard
from service.players.listing import check_limit, decode_cursor, encode_cursor, member
from service.players.records import player_key
from service.tables import TableService
from service.tables.models import JoinRequest

from .models import (
    INVITE_DEFAULT_SECONDS,
    InvitationInfo,
    InvitationRequest,
    PlayerInvitation,
    PlayerInvitationsPage,
    SpectatorToken,
)
from .models import (
    Invitation as InvitationOut,
)

INVITATIONS_INDEX = "i"
"""A player's index of the invitations it received: ``<inverted ms>.<invitation id>``."""
MAX_ATTEMPTS = 32
MAX_SPECTATE_CODES = 64


def _time(seconds: int | None) -> datetime | None:
    return None if seconds is None else datetime.fromtimestamp(seconds, UTC)


def spectate_key(match_id: str) -> str:
    return f"spectate:{match_id}"


@dataclass(frozen=True, slots=True)
class SpectateCode:
    id: str
    digest: str
    created: int
    expires: int | None
    uses: int
    used: int = 0
    revoked: bool = False
    by: str | None = None

    def invitation(self) -> Invitation:
        """As an ``Invitation`` (for its status)."""
        return Invitation(id=self.id, created=self.created, expires=self.expires,
                          uses=self.uses, used=self.used, revoked=self.revoked,
                          digest=self.digest, by=self.by)


def _codes(data: bytes | None) -> list[SpectateCode]:
    if data is None:
        return []
    return [SpectateCode(*raw) for raw in json.loads(data)["c"]]


def _dump(codes: list[SpectateCode]) -> bytes:
    """The document's bytes, with a nonce of this write: two writers that computed the same
    change from the same version must not both land (the store takes byte-identical data
    at the next version for a retry of the same write)."""
    return json.dumps({"c": [[c.id, c.digest, c.created, c.expires, c.uses, c.used,
                              c.revoked, c.by] for c in codes],
                       "n": secrets.token_hex(8)}, separators=(",", ":")).encode()


class InvitationService:
    def __init__(self, tables: TableService) -> None:
        self.tables = tables
        self.players: PlayerService = tables.players
        self.matches: MatchService = tables.matches
        self.storage = self.matches.storage
        self.store = self.players.store

    # -- making, revoking ---------------------------------------------------------------

    async def create(self, caller: Credential, match_id: str,
                     req: InvitationRequest) -> InvitationOut:
        who = await self.players.member(caller)
        if req.spectate:
            if req.player is not None or req.seat is not None:
                raise ApiError.of("malformed", "A spectator code names no player and no seat.")
            return await self._spectate_code(who, match_id, req)
        if req.player is not None and req.uses is not None:
            raise ApiError.of("malformed", "An invitation to a player is used once: give "
                              "`uses` for a code only.")
        target = None
        if req.player is not None:
            target = await self.players.directory.get(req.player)
            if target is None or target.app != who.app or target.deleted:
                raise ApiError.of("player_not_found", "No such player.")
        now = self.storage.now()
        expires = now + (req.expires_in_seconds or INVITE_DEFAULT_SECONDS)
        code = invites.new_code(invites.SEAT_CODE, match_id) if target is None else None
        invitation = Invitation(
            id=invites.player_invite_id(match_id) if code is None else invites.code_id(code),
            created=now, expires=expires, uses=req.uses or 1, seat=req.seat,
            player=target.id if target is not None else None,
            digest=invites.digest(code) if code is not None else None, by=who.player,
        )
        indexed = False
        for _ in range(MAX_ATTEMPTS):
            version, record = await self.storage.load(match_id)
            _may_invite(record, who)
            _check_open(record, req.seat)
            if target is not None:
                if record.player_seat(record.app or "", target.id) is not None:
                    raise ApiError.of("already_seated", "That player already sits in this "
                                      "match.")
                if not indexed:
                    await guard(self.store.index_add(
                        player_key(target.id), INVITATIONS_INDEX,
                        [member(now * 1000, invitation.id)]))
                    indexed = True
            live = [i for i in record.invites if invites.status(i, now) == "valid"]
            if len(live) >= invites.MAX_LIVE_INVITES:
                raise ApiError.of("quota_exceeded", "This match has as many open invitations "
                                  "as it may keep: revoke one first.")
            after = replace(record, invites=invites.kept((*record.invites, invitation), now),
                            updated=now)
            entry = LogRecord(seat=None, action={"type": "invited", "seat": req.seat})
            if await self.storage.write(match_id, version, after, entry, before=record):
                return await self._out(record, match_id, invitation, code, now)
        raise busy()

    async def _spectate_code(self, who: Member, match_id: str,
                             req: InvitationRequest) -> InvitationOut:
        _, record = await self.storage.load(match_id)
        _may_invite(record, who)
        if record.cancelled:
            raise ApiError.of("match_cancelled", "This match was cancelled.")
        now = self.storage.now()
        code = invites.new_code(invites.SPECTATE_CODE, match_id)
        made = SpectateCode(invites.code_id(code), invites.digest(code), now,
                            now + (req.expires_in_seconds or INVITE_DEFAULT_SECONDS),
                            req.uses or 1, by=who.player)

        def add(data: bytes | None) -> bytes:
            codes = [c for c in _codes(data)
                     if invites.status(c.invitation(), now) == "valid"][-MAX_SPECTATE_CODES + 1:]
            return _dump([*codes, made])

        await self._update(spectate_key(match_id), add)
        return await self._out(record, match_id, made.invitation(), code, now,
                               kind="spectate")

    async def revoke(self, caller: Credential, match_id: str, code: str) -> InvitationOut:
        """Revoke a code (or a player's invitation, by its id): the inviter, the match's
        creator or its app."""
        who = await self.players.member(caller)
        now = self.storage.now()
        if code.startswith(invites.SPECTATE_CODE):
            return await self._revoke_spectate(who, match_id, code, now)
        for _ in range(MAX_ATTEMPTS):
            version, record = await self.storage.load(match_id)
            _may_invite(record, who)
            invitation = _by_code_or_id(record, code)
            if invitation.by not in (None, who.player) and who.player != record.creator \
                    and who.player is not None:
                raise ApiError.of("forbidden", "Only the inviter, the match's creator or its "
                                  "app may revoke this invitation.")
            if invitation.revoked:
                return await self._out(record, match_id, invitation, None, now)
            revoked = replace(invitation, revoked=True)
            after = replace(record, invites=tuple(revoked if i.id == invitation.id else i
                                                  for i in record.invites), updated=now)
            entry = LogRecord(seat=None, action={"type": "invite_revoked"})
            if await self.storage.write(match_id, version, after, entry, before=record):
                return await self._out(record, match_id, revoked, None, now)
        raise busy()

    async def _revoke_spectate(self, who: Member, match_id: str, code: str,
                               now: int) -> InvitationOut:
        """Revoke a spectator code: first the match's record (a compare-and-set with a log
        entry ``spectate_revoked``) names the code's tag, so every token redeemed with it
        stops reading and its streams end at that version; then the code's document says
        revoked (redeeming it is refused either way: ``redeem`` checks the record too)."""
        _, record = await self.storage.load(match_id)
        _may_invite(record, who)
        await self._spectate(match_id, code)  # 404 invite_not_found: no such code here
        wanted = invites.digest(code)
        tag = invites.view_tag(code)
        for _ in range(MAX_ATTEMPTS):
            version, record = await self.storage.load(match_id)
            _may_invite(record, who)
            if tag in record.revoked_views:
                break
            after = replace(invites.revoke_view(record, tag), updated=now)
            entry = LogRecord(seat=None, action={"type": "spectate_revoked"})
            if await self.storage.write(match_id, version, after, entry, before=record):
                break
        else:
            raise busy()
        found: list[SpectateCode] = []

        def revoke(data: bytes | None) -> bytes | None:
            codes = _codes(data)
            hit = [c for c in codes if c.digest == wanted]
            if not hit:
                raise invites.not_found()
            found[:] = [replace(hit[0], revoked=True)]
            return _dump([found[0] if c.digest == wanted else c for c in codes])

        await self._update(spectate_key(match_id), revoke)
        return await self._out(record, match_id, found[0].invitation(), None, now,
                               kind="spectate")

    # -- codes: what they invite to, spectators ------------------------------------------

    async def describe(self, code: str) -> InvitationInfo:
        match_id = invites.match_of_code(code)
        if match_id is None:
            raise invites.not_found()
        record = await self._record_of(match_id)
        now = self.storage.now()
        if code.startswith(invites.SPECTATE_CODE):
            found = await self._spectate(match_id, code)
            if invites.view_tag(code) in record.revoked_views:
                found = replace(found, revoked=True)  # the record says so first
            _spent(found.invitation(), now)
            kind, seat, left, expires = "spectate", None, found.uses - found.used, found.expires
        else:
            invitation = invites.find(record, code, None)
            _spent(invitation, now)
            kind, seat = "seat", invitation.seat
            left, expires = invitation.uses - invitation.used, invitation.expires
        state = ("finished" if record.finished else record.phase) if record.started \
            else record.phase
        return InvitationInfo(
            kind=kind, match_id=match_id, game=record.game, players=record.players,
            seats=holders(record), open_seats=record.free_seats() if record.waiting else [],
            seat=seat, name=record.name, visibility=record.visibility, status=state,
            uses_left=left, expires_at=_time(expires),
        )

    async def redeem(self, code: str) -> SpectatorToken:
        """A spectator code -> a spectator token of its match (one use of the code)."""
        match_id = invites.match_of_code(code)
        if match_id is None:
            raise invites.not_found()
        if not code.startswith(invites.SPECTATE_CODE):
            raise ApiError.of("malformed", "A seat code is used by joining with it: POST "
                              "/v1/matches/{matchId}/join with the code as `invite`.")
        record = await self._record_of(match_id)
        now = self.storage.now()
        wanted = invites.digest(code)

        def use(data: bytes | None) -> bytes:
            codes = _codes(data)
            hit = [c for c in codes if c.digest == wanted]
            if not hit:
                raise invites.not_found()
            _spent(hit[0].invitation(), now)
            return _dump([replace(c, used=c.used + 1) if c.digest == wanted else c
                          for c in codes])

        tag = invites.view_tag(code)
        if tag in record.revoked_views:  # revoked in the record, its document not yet told
            raise invites.refuse("revoked")
        await self._update(spectate_key(match_id), use)
        return SpectatorToken(token=invites.spectator_token(match_id, record.view_key or b"",
                                                            tag), match_id=match_id)

    # -- the invited player ----------------------------------------------------------------

    async def mine(self, caller: Credential, cursor: str | None,
                   limit: int | None) -> PlayerInvitationsPage:
        own = await self.players.member(caller)
        if own.player is None:
            raise ApiError.of("unauthorized", "This needs a player token or an app's JWT.")
        size = check_limit(limit)
        after = decode_cursor(cursor)
        key = player_key(own.player)
        members = await guard(self.store.index_page(key, INVITATIONS_INDEX, after=after,
                                                    limit=size))
        ids = [m.partition(".")[2] for m in members]
        match_ids = [invites.match_of_invite(i) or "" for i in ids]
        loaded = await self.matches.load_records(match_ids)
        now = self.storage.now()
        items: list[PlayerInvitation] = []
        for entry, invite_id, match_id, found in zip(members, ids, match_ids, loaded,
                                                     strict=True):
            invitation = None
            if found is not None:
                record = found[1]
                invitation = next((i for i in record.invites
                                   if i.id == invite_id and i.player == own.player), None)
            open_ = (invitation is not None and found is not None and found[1].waiting
                     and invites.status(invitation, now) == "valid"
                     and found[1].player_seat(own.app, own.player) is None)
            if not open_:
                if found is None or not found[1].waiting or invitation is None \
                        or invites.status(invitation, now) != "valid":
                    await guard(self.store.index_remove(key, INVITATIONS_INDEX, [entry]))
                continue
            assert invitation is not None and found is not None
            record = found[1]
            by = next((p.name for p in record.seat_players
                       if p is not None and p.player == invitation.by), None)
            items.append(PlayerInvitation(
                id=invitation.id, match_id=match_id, game=record.game,
                players=record.players, seats=holders(record), seat=invitation.seat,
                name=record.name, by=by,
                created_at=datetime.fromtimestamp(invitation.created, UTC),
                expires_at=_time(invitation.expires)))
        more = len(members) == size
        return PlayerInvitationsPage(items=items,
                                     next_cursor=encode_cursor(members[-1]) if more else None)

    async def accept(self, caller: Credential, invite_id: str) -> MatchState:
        await self._invitee(caller)  # who asks first: 401 / 403 before any look-up
        match_id = invites.match_of_invite(invite_id)
        if match_id is None:
            raise invites.not_found()
        return await self.tables.join(caller, match_id, JoinRequest(invite=invite_id))

    async def decline(self, caller: Credential, invite_id: str) -> InvitationOut:
        own = await self._invitee(caller)
        match_id = invites.match_of_invite(invite_id)
        if match_id is None or own.player is None:
            raise invites.not_found()
        for _ in range(MAX_ATTEMPTS):
            version, record = await self.storage.load(match_id)
            invitation = invites.find(record, invite_id, own.player)
            now = self.storage.now()
            if invitation.declined:
                return await self._out(record, match_id, invitation, None, now)
            _spent(invitation, now)
            declined = replace(invitation, declined=True)
            after = replace(record, invites=tuple(declined if i.id == invitation.id else i
                                                  for i in record.invites), updated=now)
            entry = LogRecord(seat=None, action={"type": "invite_declined"})
            if await self.storage.write(match_id, version, after, entry, before=record):
                return await self._out(record, match_id, declined, None, now)
        raise busy()

    # -- helpers --------------------------------------------------------------------------

    async def _invitee(self, caller: Credential) -> Member:
        """A player answering its invitation: 401 without a player credential, 403 for an
        app's key (it is invited to nothing)."""
        own = await self.players.member(caller)
        if own.player is None:
            raise ApiError.of("forbidden", "Only the invited player answers an invitation.")
        return own

    async def _record_of(self, match_id: str) -> MatchRecord:
        try:
            _, record = await self.storage.load(match_id)
        except ApiError as error:
            if error.code == "match_not_found":
                raise invites.not_found() from None
            raise
        return record

    async def _spectate(self, match_id: str, code: str) -> SpectateCode:
        doc = await guard(self.store.get_doc(spectate_key(match_id)))
        wanted = invites.digest(code)
        for found in _codes(doc.data if doc is not None else None):
            if found.digest == wanted:
                return found
        raise invites.not_found()

    async def _update(self, key: str, change: Any) -> None:
        for _ in range(MAX_ATTEMPTS):
            doc = await guard(self.store.get_doc(key))
            data = change(doc.data if doc is not None else None)
            if await guard(self.store.put_doc(key, doc.version if doc else 0, data)):
                return
        raise busy()

    async def _out(self, record: MatchRecord, match_id: str, invitation: Invitation,
                   code: str | None, now: int, *, kind: str | None = None) -> InvitationOut:
        url = None
        if code is not None and record.app is not None:
            app = await self.players.apps.cached(record.app)
            base = match_url(app, match_id)
            if base is not None:
                url = f"{base}{'&' if '?' in base else '?'}invite={quote(code)}"
        return InvitationOut(
            id=invitation.id,
            kind=kind or ("player" if invitation.player is not None else "seat"),
            match_id=match_id, game=record.game, seat=invitation.seat,
            player=invitation.player, code=code, url=url, uses=invitation.uses,
            uses_left=max(invitation.uses - invitation.used, 0),
            expires_at=_time(invitation.expires), status=invites.status(invitation, now),
        )


def _spent(invitation: Invitation, now: int) -> None:
    state = invites.status(invitation, now)
    if state != "valid":
        raise invites.refuse(state)


def _by_code_or_id(record: MatchRecord, code: str) -> Invitation:
    if code.startswith(invites.SEAT_CODE):
        return invites.find(record, code, None)
    for invitation in record.invites:
        if invitation.id == code:
            return invitation
    raise invites.not_found()


def _may_invite(record: MatchRecord, who: Member) -> None:
    """A player seated in the match, or its app's key, may invite; others that may not read
    the match get its 404, the rest 403."""
    if record.app != who.app:
        raise hidden()
    if who.player is None:
        return
    if record.player_seat(who.app, who.player) is None:
        if record.visibility == "private":
            raise hidden()
        raise no_seat()


def _check_open(record: MatchRecord, seat: int | None) -> None:
    if record.cancelled:
        raise ApiError.of("match_cancelled", "This match was cancelled.")
    if not record.waiting:
        raise ApiError.of("match_started", "This match has started: its seats are no longer "
                          "open.")
    if seat is not None and seat not in record.free_seats():
        if not 0 <= seat < record.players:
            raise ApiError.of("malformed", "seat is no seat of this match.")
        raise ApiError.of("seat_taken", "That seat is taken.")


__all__ = ["InvitationService"]
