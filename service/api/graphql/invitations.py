"""Invitations in GraphQL: the same operations as REST's ``/v1/matches/{id}/invitations``,
``/v1/invitations/{code}`` and ``/v1/me/invitations``, on the same ``InvitationService``
(``service.invitations.service``), with the same codes as union members (an invitation that is
unknown, expired, used up or revoked: ``NotFound`` with ``invite_not_found``,
``invite_expired``, ``invite_used_up``, ``invite_revoked``; REST's 404 and 410s).

Generated from the table (``fields.py``): ``invitation``, ``myInvitations``,
``revokeInvitation``, ``redeemInvitation``, ``acceptInvitation`` and
``declineInvitation``. Hand-written here: ``createInvitation`` (arguments the body model does
not shape: ``player`` an ``ID``, ``spectate`` a non-null ``Boolean`` with a default), with
``InvitationResult``, which the generated writes share; and the shapes of the invitation
models. The Mutation type inherits ``createInvitation`` (``mutations.py``)."""

from typing import Any

import strawberry
from pydantic import ValidationError

from service.errors import ApiError
from service.invitations import InvitationService, models

from ..rate_limits import charge, limits_of
from .context import Context, Info
from .convert import Shape
from .results import TABLE_FAILURES, answer, result_union
from .types.wire import MATCH_STATUS, VISIBILITY, WIRE

WIRE.shape(models.InvitationKind, Shape(
    name="InvitationKind",
    description="What an invitation is: to a `player` of the app, a `seat` code (used with "
    "joinMatch's `invite`), or a `spectate` code (redeemed for a spectator token).",
))
WIRE.shape(models.InvitationStatus, Shape(
    name="InvitationStatus", description="Where an invitation stands."))
WIRE.shape(models.Invitation, Shape(
    ids=("id", "match_id", "player"), renamed={"code": "invite_code"},
    notes={
        "code": "The code (kinds seat and spectate), shown once, when it is made: share it, "
        "or `url`. A seat code is used with joinMatch's `invite`; a spectator code with "
        "redeemInvitation. (REST's `code`: named apart from the failures' `code`, so that one "
        "selection may ask for both.)",
        "uses": "How many times it may be used.",
        "expires_at": "RFC 3339, UTC.",
    },
))
WIRE.shape(models.InvitationInfo, Shape(
    ids=("match_id",),
    fields={"visibility": VISIBILITY, "status": MATCH_STATUS},
    notes={"seat": "The seat it is to; null: any open seat.", "expires_at": "RFC 3339, UTC."},
))
WIRE.shape(models.SpectatorToken, Shape(description="A spectator token.", ids=("match_id",)))
WIRE.shape(models.PlayerInvitation, Shape(
    ids=("id", "match_id"),
    notes={"seat": "The seat it is to; null: any open seat.", "created_at": "RFC 3339, UTC.",
           "expires_at": "RFC 3339, UTC."},
))
WIRE.shape(models.PlayerInvitationsPage, Shape(
    description="A page of the invitations to the calling player.",
    notes={"next_cursor": "Pass it as `cursor` for the next page; null: the last page."},
))
INVITATION = WIRE.output(models.Invitation)
INVITATION_INFO = WIRE.output(models.InvitationInfo)
SPECTATOR_TOKEN = WIRE.output(models.SpectatorToken)
PLAYER_INVITATIONS = WIRE.output(models.PlayerInvitationsPage)
Invitation: Any = INVITATION.annotation
InvitationInfo: Any = INVITATION_INFO.annotation
SpectatorToken: Any = SPECTATOR_TOKEN.annotation
PlayerInvitationsPage: Any = PLAYER_INVITATIONS.annotation


invitation_result = result_union(
    "InvitationResult", Invitation, TABLE_FAILURES, "An invitation, or why not.")


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


def build_invitations_mutation() -> type:
    """``createInvitation``: its ``player`` argument is an ``ID`` and its ``spectate`` a
    non-null ``Boolean`` with a default, shapes the body model's fields have not."""

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

            return await answer(TABLE_FAILURES, create, INVITATION.convert, ctx.lang)

    return InvitationsMutation


__all__ = ["build_invitations_mutation", "invitation_result"]
