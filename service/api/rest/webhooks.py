"""An app's webhook endpoints (``/v1/apps/me/webhooks``, the app's key): list, create (the
signing secret shown once), read, change, delete, ping, enable, rotate the secret, and the
delivery log. Each handler calls one ``WebhookService`` method."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from service.errors import ApiError
from service.notify import WebhookService
from service.notify.models import CreateWebhookRequest, UpdateWebhookRequest

from .http import NO_STORE, PRIVATE, query_count, query_once, read_body, token_of


def webhooks_of(request: Request) -> WebhookService:
    service: WebhookService | None = getattr(request.app.state, "webhook_service", None)
    if service is None:
        raise ApiError.of("unauthorized", "Webhooks are not served here.")
    return service


def _id(request: Request) -> str:
    return str(request.path_params["webhook_id"])


async def webhooks(request: Request) -> Response:
    """``/v1/apps/me/webhooks``: GET the list, POST a new endpoint."""
    caller = await token_of(request)
    service = webhooks_of(request)
    if request.method == "POST":
        body = await read_body(request, CreateWebhookRequest)
        created = await service.create(caller, body)
        return JSONResponse(created.to_json(), status_code=201, headers={
            **NO_STORE, "Location": f"/v1/apps/me/webhooks/{created.id}"})
    found = await service.all(caller)
    return JSONResponse(found.to_json(), headers=PRIVATE)


async def webhook(request: Request) -> Response:
    """``/v1/apps/me/webhooks/{id}``: GET, PATCH or DELETE one endpoint."""
    caller = await token_of(request)
    service = webhooks_of(request)
    if request.method == "PATCH":
        body = await read_body(request, UpdateWebhookRequest)
        changed = await service.update(caller, _id(request), body)
        return JSONResponse(changed.to_json(), headers=NO_STORE)
    if request.method == "DELETE":
        gone = await service.delete(caller, _id(request))
        return JSONResponse(gone.to_json(), headers=NO_STORE)
    found = await service.get(caller, _id(request))
    return JSONResponse(found.to_json(), headers=PRIVATE)


async def ping_webhook(request: Request) -> Response:
    queued = await webhooks_of(request).ping(await token_of(request), _id(request))
    return JSONResponse(queued.to_json(), status_code=202, headers=NO_STORE)


async def enable_webhook(request: Request) -> Response:
    found = await webhooks_of(request).enable(await token_of(request), _id(request))
    return JSONResponse(found.to_json(), headers=NO_STORE)


async def rotate_webhook_secret(request: Request) -> Response:
    secret = await webhooks_of(request).rotate_secret(await token_of(request), _id(request))
    return JSONResponse(secret.to_json(), headers=NO_STORE)


async def webhook_deliveries(request: Request) -> Response:
    caller = await token_of(request)
    cursor = query_once(request, "cursor")
    limit = query_count(request, "limit")
    page = await webhooks_of(request).deliveries(caller, _id(request), cursor, limit)
    return JSONResponse(page.to_json(), headers=PRIVATE)
