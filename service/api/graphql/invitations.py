"""Invitations in GraphQL: the same operations as REST's ``/v1/matches/{id}/invitations``,
``/v1/invitations/{code}`` and ``/v1/me/invitations``, on the same ``InvitationService``
(``service.lobby.invitations``), with the same codes as union members (an invitation that is
unknown, expired, used up or revoked: ``NotFound`` with ``invite_not_found``,
``invite_expired``, ``invite_used_up``, ``invite_revoked``; REST's 404 and 410s).

Queries ``invitation`` (what a code invites to; no credential: the code is one) and
``myInvitations``; mutations ``createInvitation``, ``revokeInvitation``,
``redeemInvitation`` (a spectator code -> a spectator token; no credential),
``acceptInvitation`` (a join: ``TableResult``) and ``declineInvitation``. The mutations are
charged to the ``act`` budget, as their REST twins; the queries, as every GraphQL request,
to ``read``. The Query and Mutation types inherit these fields (``queries.py``,
``mutations.py``)."""

from enum import Enum
from typing import Any

import strawberry
from pydantic import ValidationError

from service.errors import ApiError
from service.lobby import invitation_models as models
from service.lobby.invitations import InvitationService
from service.players.models import MY_MATCHES_MAX

from ..rate_limits import charge, limits_of
from .context import Context, Info
from .results import PLAYER_FAILURES, READ_FAILURES, TABLE_FAILURES, answer, result_union
from .types.match import MatchStatus, MatchTypes, SeatHolder, Visibility, seat_holder

_OUT = models.Invitation.model_fields
_INFO = models.InvitationInfo.model_fields
_MINE = models.PlayerInvitation.model_fields
_REQUEST = models.InvitationRequest.model_fields


@strawberry.enum(description="What an invitation is: to a `player` of the app, a `seat` "
                 "code (used with joinMatch's `invite`), or a `spectate` code (redeemed for "
                 "a spectator token).")
class InvitationKind(Enum):
    player = "player"
    seat = "seat"
    spectate = "spectate"


@strawberry.enum(description="Where an invitation stands.")
class InvitationStatus(Enum):
    valid = "valid"
    expired = "expired"
    used_up = "used_up"
    revoked = "revoked"
    declined = "declined"


@strawberry.type(description="An invitation as its maker (or the invited player declining "
                 "it) sees it (REST's Invitation).")
class Invitation:
    id: strawberry.ID = strawberry.field(description=_OUT["id"].description)
    kind: InvitationKind
    match_id: strawberry.ID
    game: str
    seat: int | None = strawberry.field(description=_OUT["seat"].description)
    player: strawberry.ID | None = strawberry.field(description=_OUT["player"].description)
    invite_code: str | None = strawberry.field(
        description="The code (kinds seat and spectate), shown once, when it is made: share "
        "it, or `url`. A seat code is used with joinMatch's `invite`; a spectator code with "
        "redeemInvitation. (REST's `code`: named apart from the failures' `code`, so that one "
        "selection may ask for both.)")
    url: str | None = strawberry.field(description=_OUT["url"].description)
    uses: int = strawberry.field(description="How many times it may be used.")
    uses_left: int
    expires_at: str | None = strawberry.field(description="RFC 3339, UTC.")
    status: InvitationStatus

    @classmethod
    def from_model(cls, out: models.Invitation) -> "Invitation":
        wire = out.to_json()
        return cls(
            id=strawberry.ID(out.id), kind=InvitationKind(out.kind),
            match_id=strawberry.ID(out.match_id), game=out.game, seat=out.seat,
            player=None if out.player is None else strawberry.ID(out.player),
            invite_code=out.code, url=out.url, uses=out.uses, uses_left=out.uses_left,
            expires_at=_text(wire.get("expiresAt")), status=InvitationStatus(out.status),
        )


@strawberry.type(description="What a code invites to, as anyone holding it may see: no seed, "
                 "no hands (REST's InvitationInfo).")
class InvitationInfo:
    kind: InvitationKind
    match_id: strawberry.ID
    game: str
    players: int
    seats: list[SeatHolder]
    open_seats: list[int]
    seat: int | None = strawberry.field(description="The seat it is to; null: any open seat.")
    name: str | None
    visibility: Visibility
    status: MatchStatus = strawberry.field(description=_INFO["status"].description)
    uses_left: int
    expires_at: str | None = strawberry.field(description="RFC 3339, UTC.")

    @classmethod
    def from_model(cls, info: models.InvitationInfo) -> "InvitationInfo":
        wire = info.to_json()
        return cls(
            kind=InvitationKind(info.kind), match_id=strawberry.ID(info.match_id),
            game=info.game, players=info.players,
            seats=[seat_holder(h) for h in info.seats], open_seats=list(info.open_seats),
            seat=info.seat, name=info.name, visibility=Visibility(info.visibility),
            status=MatchStatus(info.status), uses_left=info.uses_left,
            expires_at=_text(wire.get("expiresAt")),
        )


@strawberry.type(description="A spectator token (REST's SpectatorToken).")
class SpectatorToken:
    token: str = strawberry.field(
        description="`sks_…`: reads this one match (`Authorization: Bearer`), private or "
        "not; plays no seat. Shown once.")
    match_id: strawberry.ID


@strawberry.type(description="An invitation to the calling player, still open (REST's "
                 "PlayerInvitation).")
class PlayerInvitation:
    id: strawberry.ID = strawberry.field(
        description="Accept with acceptInvitation (a join), or declineInvitation.")
    match_id: strawberry.ID
    game: str
    players: int
    seats: list[SeatHolder]
    seat: int | None = strawberry.field(description="The seat it is to; null: any open seat.")
    name: str | None
    by: str | None = strawberry.field(description=_MINE["by"].description)
    created_at: str = strawberry.field(description="RFC 3339, UTC.")
    expires_at: str | None = strawberry.field(description="RFC 3339, UTC.")


@strawberry.type(description="A page of the invitations to the calling player.")
class PlayerInvitationsPage:
    items: list[PlayerInvitation] = strawberry.field(
        description=models.PlayerInvitationsPage.model_fields["items"].description)
    next_cursor: str | None = strawberry.field(
        description="Pass it as `cursor` for the next page; null: the last page.")

    @classmethod
    def from_model(cls, page: models.PlayerInvitationsPage) -> "PlayerInvitationsPage":
        wire = page.to_json()["items"]
        assert isinstance(wire, list)
        return cls(
            items=[
                PlayerInvitation(
                    id=strawberry.ID(item.id), match_id=strawberry.ID(item.match_id),
                    game=item.game, players=item.players,
                    seats=[seat_holder(h) for h in item.seats], seat=item.seat,
                    name=item.name, by=item.by, created_at=str(raw["createdAt"]),
                    expires_at=_text(raw.get("expiresAt")),
                )
                for item, raw in zip(page.items, wire, strict=True)
            ],
            next_cursor=page.next_cursor,
        )


def _text(value: object) -> str | None:
    return None if value is None else str(value)


invitation_result = result_union(
    "InvitationResult", Invitation, TABLE_FAILURES, "An invitation, or why not.")
invitation_info_result = result_union(
    "InvitationInfoResult", InvitationInfo, READ_FAILURES,
    "What a code invites to, or why not.")
spectator_token_result = result_union(
    "SpectatorTokenResult", SpectatorToken, READ_FAILURES,
    "A spectator token of the code's match, or why not.")
my_invitations_result = result_union(
    "MyInvitationsResult", PlayerInvitationsPage, PLAYER_FAILURES,
    "A page of the invitations to the calling player, or why not.")


def _invitations(ctx: Context) -> InvitationService:
    service: InvitationService | None = getattr(ctx.request.app.state,
                                                "invitation_service", None)
    if service is None:
        raise ApiError.of("unauthorized", "The lobby is not served here.")
    return service


def _request(fields: dict[str, Any]) -> models.InvitationRequest:
    """``createInvitation``'s arguments as REST's body, checked by the same model."""
    try:
        return models.InvitationRequest.model_validate(
            {k: v for k, v in fields.items() if v is not None})
    except ValidationError as error:
        first = error.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "input"
        raise ApiError.of("malformed", f"{where}: {first['msg']}") from None


@strawberry.type
class InvitationsQuery:
    @strawberry.field(
        description="What an invitation code invites to (`ski_…` a seat's, `skv_…` a "
        "spectator's): game, seats, open seats, name, visibility, status, uses left, expiry "
        "-- nothing hidden. No credential needed: the code is one. An unknown code is "
        "NotFound `invite_not_found`; a spent one NotFound `invite_expired`, "
        "`invite_used_up` or `invite_revoked` (REST: GET /v1/invitations/{code})."
    )
    async def invitation(self, info: Info, code: str) -> invitation_info_result:  # type: ignore[valid-type]
        ctx = info.context
        return await answer(READ_FAILURES, lambda: _invitations(ctx).describe(code),
                            InvitationInfo.from_model, ctx.lang)

    @strawberry.field(
        description="The invitations to the calling player that may still be accepted, "
        "newest first (follow `nextCursor`, as `cursor`, until it is null); `limit` 1 to "
        f"{MY_MATCHES_MAX} (default 20). Needs a player token or an app's JWT (REST: GET "
        "/v1/me/invitations)."
    )
    async def my_invitations(
        self, info: Info, cursor: str | None = None, limit: int | None = None,
    ) -> my_invitations_result:  # type: ignore[valid-type]
        ctx = info.context
        return await answer(
            PLAYER_FAILURES, lambda: _invitations(ctx).mine(ctx.credentials(), cursor, limit),
            PlayerInvitationsPage.from_model, ctx.lang)


def build_invitations_mutation(types: MatchTypes, table_result: Any) -> type:
    """The invitation writes; ``acceptInvitation`` answers ``table_result`` (``TableResult``,
    ``tables.build_table_result``), the match after the join."""

    @strawberry.type
    class InvitationsMutation:
        @strawberry.mutation(
            description="Invite to a waiting match (a player seated in it, or the app's key). "
            "With `player`: that player of the app (its feed gets an `InvitedEvent`, "
            "myInvitations lists it; used once). Else a seat code (`ski_…`; to `seat`, or "
            "any open seat), used `uses` times (default 1) with joinMatch's `invite`; with "
            "`spectate: true` a spectator code (`skv_…`, any match not cancelled; no `player`, "
            "no `seat`) for redeemInvitation. Expires after `expiresInSeconds` (60 to 30 "
            "days; default 7 days). The code is shown once. Refusals: NotFound "
            "`player_not_found`, Conflict (`already_seated`, `seat_taken`, `match_started`, "
            "`match_cancelled`), Unavailable `quota_exceeded` (too many open invitations), "
            "BadRequest `malformed`. REST: POST /v1/matches/{id}/invitations."
        )
        async def create_invitation(
            self, info: Info, match_id: strawberry.ID, player: strawberry.ID | None = None,
            seat: int | None = None, uses: int | None = None,
            expires_in_seconds: int | None = None, spectate: bool = False,
        ) -> invitation_result:  # type: ignore[valid-type]
            ctx = info.context

            async def create() -> Any:
                caller = ctx.credentials()
                request = _request({
                    "player": None if player is None else str(player), "seat": seat,
                    "uses": uses, "expiresInSeconds": expires_in_seconds,
                    "spectate": spectate,
                })
                await charge(limits_of(ctx.request.app), ctx.request.scope, "act")
                return await _invitations(ctx).create(caller, str(match_id), request)

            return await answer(TABLE_FAILURES, create, Invitation.from_model, ctx.lang)

        @strawberry.mutation(
            description="Revoke a code (or a player's invitation, by its id): the inviter, "
            "the match's creator or its app. Using it afterwards is NotFound "
            "`invite_revoked`. REST: DELETE /v1/matches/{id}/invitations/{code}."
        )
        async def revoke_invitation(
            self, info: Info, match_id: strawberry.ID, code: str,
        ) -> invitation_result:  # type: ignore[valid-type]
            ctx = info.context

            async def revoke() -> Any:
                caller = ctx.credentials()
                await charge(limits_of(ctx.request.app), ctx.request.scope, "act")
                return await _invitations(ctx).revoke(caller, str(match_id), code)

            return await answer(TABLE_FAILURES, revoke, Invitation.from_model, ctx.lang)

        @strawberry.mutation(
            description="Redeem a spectator code (one use of it) for a spectator token "
            "(`sks_…`) that reads that one match -- a private one included -- and nothing "
            "else. No credential needed. A seat code is BadRequest `malformed` (join with "
            "it). REST: POST /v1/invitations/{code}/redeem."
        )
        async def redeem_invitation(
            self, info: Info, code: str,
        ) -> spectator_token_result:  # type: ignore[valid-type]
            ctx = info.context

            async def redeem() -> Any:
                await charge(limits_of(ctx.request.app), ctx.request.scope, "act")
                return await _invitations(ctx).redeem(code)

            return await answer(READ_FAILURES, redeem, lambda token: SpectatorToken(
                token=token.token, match_id=strawberry.ID(token.match_id)), ctx.lang)

        @strawberry.mutation(
            description="Accept an invitation to the calling player: a join with it (a "
            "private match included), answering the match as the player sees it, or the "
            "refusals of joinMatch (an invitation to another player: NotFound "
            "`invite_not_found`). REST: POST /v1/me/invitations/{id}/accept."
        )
        async def accept_invitation(
            self, info: Info, invitation_id: strawberry.ID,
        ) -> table_result:
            ctx = info.context

            async def accept() -> Any:
                caller = ctx.credentials()
                await charge(limits_of(ctx.request.app), ctx.request.scope, "act")
                return await _invitations(ctx).accept(caller, str(invitation_id))

            return await answer(TABLE_FAILURES, accept, types.from_state, ctx.lang)

        @strawberry.mutation(
            description="Decline an invitation to the calling player (`status: declined`); "
            "it is no longer listed nor accepted. REST: POST "
            "/v1/me/invitations/{id}/decline."
        )
        async def decline_invitation(
            self, info: Info, invitation_id: strawberry.ID,
        ) -> invitation_result:  # type: ignore[valid-type]
            ctx = info.context

            async def decline() -> Any:
                caller = ctx.credentials()
                await charge(limits_of(ctx.request.app), ctx.request.scope, "act")
                return await _invitations(ctx).decline(caller, str(invitation_id))

            return await answer(TABLE_FAILURES, decline, Invitation.from_model, ctx.lang)

    return InvitationsMutation


__all__ = ["InvitationsQuery", "build_invitations_mutation"]
