"""Invitations (``InvitationService``): a player invited or a code made
(``createInvitation``), revoked (``revokeInvitation``); a code read (``getInvitation``) and
a spectator code redeemed (``redeemInvitation``); the invited player's list
(``listMyInvitations``), accepted (``acceptInvitation``) or declined
(``declineInvitation``)."""

from __future__ import annotations

from service.invitations.models import (
    Invitation,
    InvitationInfo,
    InvitationRequest,
    PlayerInvitationsPage,
    SpectatorToken,
)
from service.matches.models import MatchState
from service.players.models import MY_MATCHES_DEFAULT, MY_MATCHES_MAX

from ..rest.http import query_count, query_once
from . import codes
from .base import (
    APP_SECURITY,
    MATCH_ID,
    NO_STORE,
    PLAYER_SECURITY,
    PRIVATE,
    PUBLIC,
    Operation,
    Param,
    Reply,
    mutation,
    query,
)
from .matches import GET_MATCH
from .tables import TABLE_RESULT

CODE = Param("code", "path", {"type": "string", "minLength": 1, "maxLength": 200},
             "An invitation code (`ski_…` a seat's, `skv_…` a spectator's).")
INVITATION_ID = Param("invitationId", "path",
                      {"type": "string", "minLength": 1, "maxLength": 100},
                      "The invitation's id (the `invited` feed event, GET /v1/me/invitations).")
OWNER = [*PLAYER_SECURITY, *APP_SECURITY]
ACCEPT_LINK = {"GetMatch": {"operationId": GET_MATCH,
                            "parameters": {"path.matchId": "$response.body#/matchId"}}}
INVITATION_LINKS = {
    "GetInvitation": {"operationId": "getInvitation",
                      "parameters": {"path.code": "$response.body#/code"}},
    "RevokeInvitation": {"operationId": "revokeInvitation", "parameters": {
        "path.matchId": "$request.path.matchId", "path.code": "$response.body#/code"}},
}
MY_INVITATIONS = (
    "The invitations to the calling player that may still be accepted, newest first (follow "
    "`nextCursor`, as `cursor`, until it is null); `limit` 1 to "
    f"{MY_MATCHES_MAX} (default 20). Needs a player token or an app's JWT (REST: GET "
    "/v1/me/invitations)."
)
INVITATION_RESULT = "InvitationResult"
"""The GraphQL union of an invitation's writes (made with ``createInvitation``'s resolver)."""
INVITE_USED = ("invite_not_found", "invite_expired", "invite_used_up", "invite_revoked")


CREATE_INVITATION_ARGS = (
    "`player` is an ID and `spectate` a non-null Boolean with a default, shapes the "
    "body model's fields have not"
)


OPERATIONS = (
    Operation(
        id="createInvitation", method="POST", path="/v1/matches/{matchId}/invitations",
        tag="lobby", summary="Invite a player, or make a code.",
        description="`{\"player\": id}` invites that player of the app to a waiting match "
        "(its feed gets `invited`; it accepts through /v1/me/invitations). Else a code: a "
        "seat code (`ski_…`, used with joinMatch's `invite`; `uses`, `expiresInSeconds`, "
        "`seat`) or, with `spectate: true`, a spectator code (`skv_…`, any match not "
        "cancelled; redeemed for a spectator token). Codes are shown once, never seat "
        "tokens. A player seated in the match or the app's key may invite. docs/lobby.md.",
        codes=(*codes.BODY, *codes.READ, "forbidden", "player_not_found", "already_seated",
               "seat_taken", "match_started", "match_cancelled", "quota_exceeded"),
        budget="act", security=OWNER, graphql=mutation(hand_written=CREATE_INVITATION_ARGS),
        params=(MATCH_ID,),
        body=InvitationRequest, status=201,
        reply=Reply(Invitation, "Made.", links=INVITATION_LINKS),
        call=lambda c: c.state.invitation_service.create(c.caller, c.path["match_id"], c.body),
        headers=NO_STORE,
    ),
    Operation(
        id="revokeInvitation", method="DELETE",
        path="/v1/matches/{matchId}/invitations/{code}", tag="lobby",
        summary="Revoke a code or an invitation.",
        description="By its code (or a player's invitation by its id): the inviter, the "
        "match's creator or its app. Later uses: 410 `invite_revoked`.",
        codes=(*codes.READ, "forbidden", "invite_not_found"), budget="act", security=OWNER,
        graphql=mutation(description="Revoke a code (or a player's invitation, by its id): "
                         "the inviter, the match's creator or its app. Using it afterwards is "
                         "NotFound `invite_revoked`. REST: DELETE "
                         "/v1/matches/{id}/invitations/{code}.", result=INVITATION_RESULT,
                         strings=("code",)),
        params=(MATCH_ID, CODE), reply=Reply(Invitation, "Revoked."),
        call=lambda c: c.state.invitation_service.revoke(
            c.caller, c.path["match_id"], c.path["code"]),
        headers=NO_STORE,
    ),
    Operation(
        id="getInvitation", method="GET", path="/v1/invitations/{code}", tag="lobby",
        summary="What a code invites to.",
        description="The code is the credential: no other needed. The match's game, seats, "
        "name and status -- nothing hidden. 410 `invite_expired`, `invite_used_up`, "
        "`invite_revoked`; 404 `invite_not_found`.",
        codes=(*INVITE_USED, "rules_version_retired", "rules_version_unavailable",
               "store_unavailable", "store_full"),
        budget="read", security=PUBLIC,
        graphql=query("invitation", description="What an invitation code invites to "
                      "(`ski_…` a seat's, `skv_…` a spectator's): game, seats, open seats, "
                      "name, visibility, status, uses left, expiry -- nothing hidden. No "
                      "credential needed: the code is one. An unknown code is NotFound "
                      "`invite_not_found`; a spent one NotFound `invite_expired`, "
                      "`invite_used_up` or `invite_revoked` (REST: GET "
                      "/v1/invitations/{code}).", result="InvitationInfoResult",
                      result_description="What a code invites to, or why not.",
                      strings=("code",), also=("unauthorized", "malformed")),
        params=(CODE,),
        reply=Reply(InvitationInfo, "The invitation."),
        call=lambda c: c.state.invitation_service.describe(c.path["code"]),
        headers=NO_STORE,
    ),
    Operation(
        id="redeemInvitation", method="POST", path="/v1/invitations/{code}/redeem",
        tag="lobby", summary="A spectator code for a spectator token.",
        description="One use of the code: a spectator token (`sks_…`) that reads its match "
        "(`Authorization: Bearer`), private or not, and nothing else. A seat code: 400 (it "
        "is used through joinMatch).",
        codes=("malformed", *INVITE_USED, "rules_version_retired",
               "rules_version_unavailable", "busy", "store_unavailable", "store_full"),
        budget="act", security=PUBLIC,
        graphql=mutation(description="Redeem a spectator code (one use of it) for a "
                         "spectator token (`sks_…`) that reads that one match -- a private "
                         "one included -- and nothing else. No credential needed. A seat code "
                         "is BadRequest `malformed` (join with it). REST: POST "
                         "/v1/invitations/{code}/redeem.", result="SpectatorTokenResult",
                         result_description="A spectator token of the code's match, or why "
                         "not.", strings=("code",), also=("unauthorized",)),
        params=(CODE,), status=201,
        reply=Reply(SpectatorToken, "The token (shown once).", links=ACCEPT_LINK),
        call=lambda c: c.state.invitation_service.redeem(c.path["code"]), headers=NO_STORE,
    ),
    Operation(
        id="listMyInvitations", method="GET", path="/v1/me/invitations", tag="lobby",
        summary="Invitations to the calling player, still open.",
        codes=(*codes.PLAYER, "malformed"), budget="read", security=PLAYER_SECURITY,
        graphql=query("myInvitations", description=MY_INVITATIONS, optional=("limit",),
                      result_description="A page of the invitations to the calling player, "
                      "or why not.", also=("forbidden", "not_found")),
        params=(Param("cursor", "query", {"type": "string", "maxLength": 200},
                      "`nextCursor` of the previous page.", parse=query_once),
                Param("limit", "query", {"type": "integer", "minimum": 1,
                                         "maximum": MY_MATCHES_MAX,
                                         "default": MY_MATCHES_DEFAULT},
                      "The most items in the page.", parse=query_count)),
        reply=Reply(PlayerInvitationsPage, "A page."),
        call=lambda c: c.state.invitation_service.mine(
            c.caller, c.query["cursor"], c.query["limit"]),
        headers=PRIVATE,
    ),
    Operation(
        id="acceptInvitation", method="POST", path="/v1/me/invitations/{invitationId}/accept",
        tag="lobby", summary="Accept: take the seat (a join).",
        description="As joinMatch with the invitation.",
        codes=(*codes.READ, "forbidden", "seat_taken", "already_seated", "match_started",
               "match_cancelled", *INVITE_USED, "malformed"),
        budget="act", security=PLAYER_SECURITY,
        graphql=mutation(description="Accept an invitation to the calling player: a join "
                         "with it (a private match included), answering the match as the "
                         "player sees it, or the refusals of joinMatch (an invitation to "
                         "another player: NotFound `invite_not_found`). REST: POST "
                         "/v1/me/invitations/{id}/accept.", result=TABLE_RESULT),
        params=(INVITATION_ID,),
        reply=Reply(MatchState, "The match after the join.", links=ACCEPT_LINK),
        call=lambda c: c.state.invitation_service.accept(c.caller, c.path["invitation_id"]),
        headers=NO_STORE,
    ),
    Operation(
        id="declineInvitation", method="POST",
        path="/v1/me/invitations/{invitationId}/decline", tag="lobby",
        summary="Decline an invitation.", description="It leaves the player's list for good.",
        codes=(*codes.READ, "forbidden", *INVITE_USED), budget="act",
        security=PLAYER_SECURITY, graphql=mutation(
            description="Decline an invitation to the calling player (`status: declined`); "
            "it is no longer listed nor accepted. REST: POST "
            "/v1/me/invitations/{id}/decline.",
            result=INVITATION_RESULT),
        params=(INVITATION_ID,),
        reply=Reply(Invitation, "Declined."),
        call=lambda c: c.state.invitation_service.decline(c.caller, c.path["invitation_id"]),
        headers=NO_STORE,
    ),
)
