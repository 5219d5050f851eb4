"""The Starlette routes of the operation table: one generic handler per operation
(credential, parameters and body read in the operation's ``order``, then its call, then the
answer rendered as declared), one route per path so that a 405 names every method."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..languages import lang_of, none_match, tagged
from ..rest.http import token_of
from .base import Answered, Context, Endpoint, Operation, body_of

_PARAM = re.compile(r"\{([A-Za-z]+)\}")


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def route_path(operation: Operation) -> str:
    """The Starlette path of ``operation``: snake-case names, integers converted
    (``/v1/matches/{match_id}/seats/{seat:int}/bot``)."""
    integers = {p.name for p in operation.params
                if p.where == "path" and p.schema.get("type") == "integer"}

    def convert(found: re.Match[str]) -> str:
        name = found.group(1)
        return "{" + _snake(name) + (":int" if name in integers else "") + "}"

    return _PARAM.sub(convert, operation.path)


async def context_of(request: Request, operation: Operation) -> Context:
    """The request as ``operation`` reads it, each step in its ``order``."""
    context = Context(request, operation, request.path_params)
    for step in operation.order:
        if step == "credential" and operation.reads_credential:
            context.caller = await token_of(request)
        elif step == "params":
            context.query = {p.name: p.parse(request, p.name) for p in operation.params
                             if p.parse is not None}
        elif step == "body" and operation.body is not None:
            context.body = await body_of(request, operation)
    return context


def _json(answer: Any) -> Any:
    if isinstance(answer, list):
        return [item.to_json() for item in answer]
    return answer.to_json()


def render(request: Request, operation: Operation, answer: Any) -> Response:
    """``answer`` as the operation declares it: status, cache headers, ``ETag`` (304 when
    ``If-None-Match`` names it and the operation revalidates), ``Location``."""
    if isinstance(answer, Response):
        return answer
    status = operation.status
    if isinstance(answer, Answered):
        answer, status = answer.value, answer.status
    headers = dict(operation.headers)
    if operation.etag is not None:
        tag = tagged(operation.etag(answer), lang_of(request))
        headers = {"ETag": tag, **headers}
        if operation.revalidate and none_match(request.headers.get("if-none-match"), tag):
            return Response(status_code=304, headers=headers)
    if operation.location is not None:
        headers = {"Location": operation.location(answer), **headers}
    return JSONResponse(_json(answer), status_code=status, headers=headers)


def endpoint(operation: Operation) -> Endpoint:
    """The handler of ``operation``: its own, or the generic one over its call."""
    if operation.handler is not None:
        return operation.handler
    call = operation.call
    assert call is not None, f"{operation.id} declares neither a call nor a handler"

    async def handle(request: Request) -> Response:
        context = await context_of(request, operation)
        return render(request, operation, await call(context))

    return handle


def _dispatch(by_method: dict[str, Endpoint]) -> Endpoint:
    if len(by_method) == 1:
        return next(iter(by_method.values()))

    async def handle(request: Request) -> Response:
        method = "GET" if request.method == "HEAD" else request.method
        return await by_method[method](request)

    return handle


def operation_routes(operations: Iterable[Operation]) -> list[Route]:
    """One route per path (in declaration order), its methods those declared on it."""
    paths: dict[str, dict[str, Endpoint]] = {}
    names: dict[str, str] = {}
    for operation in operations:
        path = route_path(operation)
        paths.setdefault(path, {})[operation.method] = endpoint(operation)
        names.setdefault(path, operation.id)
    return [Route(path, _dispatch(methods), methods=list(methods), name=names[path])
            for path, methods in paths.items()]

