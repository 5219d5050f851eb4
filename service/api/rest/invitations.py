"""Invitations: ``POST /v1/matches/{id}/invitations`` (to a player, or a code),
``DELETE /v1/matches/{id}/invitations/{code}``, ``GET /v1/invitations/{code}``, ``POST
/v1/invitations/{code}/redeem`` (a spectator code), and the invited player's
``/v1/me/invitations`` (list, accept, decline), through ``InvitationService``."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from service.lobby.invitation_models import InvitationRequest
from service.lobby.invitations import InvitationService

from .http import NO_STORE, PRIVATE, query_count, query_once, read_body, token_of


def invitations_of(request: Request) -> InvitationService:
    service: InvitationService = request.app.state.invitation_service
    return service


async def create_invitation(request: Request) -> Response:
    caller = await token_of(request)
    body = await read_body(request, InvitationRequest)
    made = await invitations_of(request).create(caller, request.path_params["match_id"], body)
    return JSONResponse(made.to_json(), status_code=201, headers=NO_STORE)


async def revoke_invitation(request: Request) -> Response:
    caller = await token_of(request)
    revoked = await invitations_of(request).revoke(
        caller, request.path_params["match_id"], request.path_params["code"])
    return JSONResponse(revoked.to_json(), headers=NO_STORE)


async def get_invitation(request: Request) -> Response:
    info = await invitations_of(request).describe(request.path_params["code"])
    return JSONResponse(info.to_json(), headers=NO_STORE)


async def redeem_invitation(request: Request) -> Response:
    token = await invitations_of(request).redeem(request.path_params["code"])
    return JSONResponse(token.to_json(), status_code=201, headers=NO_STORE)


async def my_invitations(request: Request) -> Response:
    caller = await token_of(request)
    page = await invitations_of(request).mine(caller, query_once(request, "cursor"),
                                              query_count(request, "limit"))
    return JSONResponse(page.to_json(), headers=PRIVATE)


async def accept_invitation(request: Request) -> Response:
    caller = await token_of(request)
    state = await invitations_of(request).accept(caller, request.path_params["invitation_id"])
    return JSONResponse(state.to_json(), headers=NO_STORE)


async def decline_invitation(request: Request) -> Response:
    caller = await token_of(request)
    out = await invitations_of(request).decline(caller, request.path_params["invitation_id"])
    return JSONResponse(out.to_json(), headers=NO_STORE)
