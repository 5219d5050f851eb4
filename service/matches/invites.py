"""Invitations and spectator tokens: their shapes, and the checks of one being used.

Three credentials, told apart by their prefix, none of them a seat token:

- ``ski_<match id>.<secret>``: a **seat code** of a waiting match, kept in its record as a
  digest (``Invitation.digest``), used through ``join`` -- so taking the seat and counting
  the use are one compare-and-set;
- ``skv_<match id>.<secret>``: a **spectator code**, kept beside the match
  (``service.invitations.service``), redeemed for a spectator token;
- ``sks_<match id>.<nonce>.<mac>``: a **spectator token**, reading that one match: its MAC
  under the match's ``view_key`` (in every match's record) proves it, with nothing stored
  per token. The nonce starts with the tag of the code it was redeemed with
  (``view_tag``): revoking the code puts its tag in the record's ``revoked_views``, and
  every token redeemed with it stops reading (its open streams end at the next version).

A player's invitation (``Invitation.player``) has the id ``<match id>.<random>`` and is
accepted by that player only. Pure: no I/O; the clock is the caller's ``now``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from typing import Literal

from service.errors import ApiError
from service.identity.credentials import SPECTATOR_TOKEN_PREFIX

from .records import Invitation, MatchRecord

SEAT_CODE = "ski_"
SPECTATE_CODE = "skv_"
SPECTATOR_TOKEN = SPECTATOR_TOKEN_PREFIX
_ID = r"[A-Za-z0-9_-]{1,64}"
_SECRET = r"[A-Za-z0-9_-]{22,43}"
_CODE = re.compile(rf"(?:{SEAT_CODE}|{SPECTATE_CODE})({_ID})\.{_SECRET}")
_TOKEN = re.compile(rf"{SPECTATOR_TOKEN}({_ID})\.([A-Za-z0-9_-]{{16}})\.([A-Za-z0-9_-]{{22}})")
_PLAYER_INVITE = re.compile(rf"({_ID})\.([A-Za-z0-9_-]{{12}})")
MAX_LIVE_INVITES = 64
TAG = 8
"""Characters of a spectator token's nonce that name its code (``view_tag``); the other
8 are random (48 bits: two redemptions of one code are two tokens)."""
MAX_REVOKED_VIEWS = 256
"""Revoked spectator codes a record remembers; past them the match's view key is replaced
(``revoke_view``): every spectator token ends, and the list starts again."""
"""Invitations a waiting match keeps that may still be used."""

Status = Literal["valid", "expired", "used_up", "revoked", "declined"]


def digest(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()


def new_code(prefix: str, match_id: str) -> str:
    return f"{prefix}{match_id}.{secrets.token_urlsafe(18)}"


def code_id(code: str) -> str:
    """A code's public id: the start of its digest (what lists and logs name it by)."""
    return digest(code)[:16]


def match_of_code(code: str) -> str | None:
    """The match a seat or spectator code names (None: no code of ours)."""
    found = _CODE.fullmatch(code)
    return found.group(1) if found else None


def player_invite_id(match_id: str) -> str:
    return f"{match_id}.{secrets.token_urlsafe(9)}"


def match_of_invite(invite_id: str) -> str | None:
    found = _PLAYER_INVITE.fullmatch(invite_id)
    return found.group(1) if found else None


def status(invitation: Invitation, now: int) -> Status:
    if invitation.declined:
        return "declined"
    if invitation.revoked:
        return "revoked"
    if invitation.used >= invitation.uses:
        return "used_up"
    if invitation.expires is not None and now >= invitation.expires:
        return "expired"
    return "valid"


def refuse(state: Status) -> ApiError:
    """The 410 (404 for a declined one) of an invitation that can no longer be used."""
    if state == "expired":
        return ApiError.of("invite_expired", "This invitation has expired.")
    if state == "used_up":
        return ApiError.of("invite_used_up", "This invitation has been used up.")
    if state == "revoked":
        return ApiError.of("invite_revoked", "This invitation was revoked.")
    return not_found()


def not_found() -> ApiError:
    return ApiError.of("invite_not_found", "No such invitation (or it expired).")


def find(record: MatchRecord, invite: str, player: str | None) -> Invitation:
    """The invitation ``invite`` (a seat code, or a player's invitation id for ``player``)
    names in ``record``: 404 ``invite_not_found`` when there is none for this caller."""
    if invite.startswith(SEAT_CODE):
        wanted = digest(invite)
        for invitation in record.invites:
            if invitation.digest is not None and hmac.compare_digest(invitation.digest,
                                                                     wanted):
                return invitation
        raise not_found()
    for invitation in record.invites:
        if invitation.id == invite and invitation.player is not None:
            if invitation.player != player:
                break
            return invitation
    raise not_found()


def usable(record: MatchRecord, invite: str, player: str | None, now: int) -> Invitation:
    """``find`` and check that it may be used now (410 otherwise)."""
    invitation = find(record, invite, player)
    state = status(invitation, now)
    if state != "valid":
        raise refuse(state)
    return invitation


def used(record: MatchRecord, invitation: Invitation) -> tuple[Invitation, ...]:
    """``record``'s invitations with one more use of ``invitation``."""
    from dataclasses import replace

    return tuple(replace(i, used=i.used + 1) if i.id == invitation.id else i
                 for i in record.invites)


def kept(invites: tuple[Invitation, ...], now: int) -> tuple[Invitation, ...]:
    """The invitations worth keeping: live ones, and the newest few spent ones (so that a
    late use is answered 410 with its reason rather than 404)."""
    live = [i for i in invites if status(i, now) == "valid"]
    spent = [i for i in invites if status(i, now) != "valid"][-16:]
    return tuple(sorted([*live, *spent], key=lambda i: i.created))


def new_view_key() -> bytes:
    return secrets.token_bytes(16)


def _mac(view_key: bytes, match_id: str, nonce: str) -> str:
    mac = hmac.new(view_key, f"{match_id}.{nonce}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac[:16]).decode().rstrip("=")


def view_tag(code: str) -> str:
    """The tag a spectator code gives its tokens (the start of its public id)."""
    return code_id(code)[:TAG]


def spectator_token(match_id: str, view_key: bytes, tag: str) -> str:
    """A spectator token of ``match_id`` redeemed with the code of tag ``tag``."""
    nonce = tag[:TAG] + secrets.token_urlsafe(6)
    return f"{SPECTATOR_TOKEN}{match_id}.{nonce}.{_mac(view_key, match_id, nonce)}"


def revoke_view(record: MatchRecord, tag: str) -> MatchRecord:
    """``record`` with the spectator code of tag ``tag`` revoked: its tokens read nothing
    more. Past ``MAX_REVOKED_VIEWS`` codes, a new view key ends every spectator token (the
    holders of codes still valid redeem them again)."""
    from dataclasses import replace

    if tag in record.revoked_views:
        return record
    if len(record.revoked_views) >= MAX_REVOKED_VIEWS:
        return replace(record, view_key=new_view_key(), revoked_views=(tag,))
    return replace(record, revoked_views=(*record.revoked_views, tag))


def is_spectator_token(token: str) -> bool:
    return token.startswith(SPECTATOR_TOKEN)


def reads(token: str, record: MatchRecord) -> bool:
    """Whether spectator token ``token`` was issued for this match: its MAC under the match's
    own key (every match has one since issue 30; a token of another match never verifies,
    public or not: docs/lobby.md, "that one match"). A match written before keys were given
    to every match has no key: its spectator tokens read nothing (it is open to all)."""
    found = _TOKEN.fullmatch(token)
    if found is None or record.view_key is None:
        return False
    match_id, nonce, mac = found.groups()
    return hmac.compare_digest(mac, _mac(record.view_key, match_id, nonce)) \
        and nonce[:TAG] not in record.revoked_views


def revoked(token: str, record: MatchRecord) -> bool:
    """Whether spectator token ``token`` of this match was redeemed with a code revoked
    since (its MAC verifies; its tag is in ``revoked_views``)."""
    found = _TOKEN.fullmatch(token)
    if found is None or record.view_key is None:
        return False
    match_id, nonce, mac = found.groups()
    return nonce[:TAG] in record.revoked_views \
        and hmac.compare_digest(mac, _mac(record.view_key, match_id, nonce))
