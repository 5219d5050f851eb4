"""Wire models of invitations: to a player, or a code (a seat's, or a spectator's)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from service.matches.models import InputModel, SeatHolder, WireModel

INVITE_MAX_SECONDS = 30 * 86400
INVITE_DEFAULT_SECONDS = 7 * 86400
INVITE_MAX_USES = 1000

InvitationKind = Literal["player", "seat", "spectate"]
InvitationStatus = Literal["valid", "expired", "used_up", "revoked", "declined"]


class InvitationRequest(InputModel):
    """Either `player` (invite that player of the app: its feed and
    `GET /v1/me/invitations` show it) or a code (`seat`, `uses`, `expiresInSeconds`,
    `spectate`)."""

    player: str | None = Field(default=None, min_length=1, max_length=64,
                               description="The player to invite (its id).")
    seat: int | None = Field(default=None, ge=0, le=15,
                             description="The open seat the invitation is to (omitted: any).")
    uses: int | None = Field(
        default=None, ge=1, le=INVITE_MAX_USES,
        description="How many times a code may be used (default 1). Not with `player`.")
    expires_in_seconds: int | None = Field(
        default=None, ge=60, le=INVITE_MAX_SECONDS,
        description="Seconds until the invitation expires (default 7 days).")
    spectate: bool = Field(
        default=False,
        description="A spectator code: redeemed (POST /v1/invitations/{code}/redeem) for a "
        "spectator token that reads this match (private ones included). Not with `player` "
        "or `seat`.")


class Invitation(WireModel):
    """An invitation: to a player, or a code (a seat's or a spectator's)."""

    id: str = Field(description="The invitation's id (a code's is the start of its hash).")
    kind: InvitationKind
    match_id: str
    game: str
    seat: int | None = Field(description="The seat it is to; null: any open seat.")
    player: str | None = Field(default=None, description="The invited player (kind player).")
    code: str | None = Field(
        default=None,
        description="The code (kinds seat and spectate), shown once, when it is made: share "
        "it, or `url`. A seat code is used with POST /v1/matches/{matchId}/join "
        "`{\"invite\": code}`.")
    url: str | None = Field(
        default=None,
        description="The app's link for the code (its matchUrlTemplate with `invite=<code>` "
        "added); null when the app has none.")
    uses: int
    uses_left: int
    expires_at: datetime | None
    status: InvitationStatus


class InvitationInfo(WireModel):
    """What a code invites to, as anyone holding it may see: no seed, no hands."""

    kind: InvitationKind
    match_id: str
    game: str
    players: int
    seats: list[SeatHolder]
    open_seats: list[int]
    seat: int | None
    name: str | None
    visibility: str
    status: str = Field(description="The match's status.")
    uses_left: int
    expires_at: datetime | None


class SpectatorToken(WireModel):
    token: str = Field(description="`sks_…`: reads this one match (Authorization: Bearer), "
                       "private or not; plays no seat. Shown once.")
    match_id: str


class PlayerInvitation(WireModel):
    """An invitation to the calling player, still open."""

    id: str = Field(description="Accept with POST /v1/me/invitations/{id}/accept (a join), "
                    "or decline.")
    match_id: str
    game: str
    players: int
    seats: list[SeatHolder]
    seat: int | None
    name: str | None
    by: str | None = Field(description="The inviting player's display name (null: the app).")
    created_at: datetime
    expires_at: datetime | None


class PlayerInvitationsPage(WireModel):
    items: list[PlayerInvitation] = Field(
        description="Newest first; only invitations that may still be accepted (a page may "
        "hold fewer than `limit` while more follow: only a null `nextCursor` ends it).")
    next_cursor: str | None
