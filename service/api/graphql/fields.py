"""The Query and Mutation fields generated from the operation table (``api.operations``).

An ``Operation`` declared as a GraphQL ``query`` or ``mutation`` (``GraphQL``) is served as
one field: its name the operation's GraphQL name (else its id), its description the
operation's (``GraphQL.description``, else the summary), its arguments its path and query
parameters (a path parameter is an ``ID``, a query parameter typed by its schema: with a
default it is non-null and shows it, otherwise it is optional), its result the union of its
answer and the failures its problem codes map to (``types/failures.py``; none: the answer
itself), its budget charged as REST charges it (the middleware charges every GraphQL
request to ``read``; another budget is charged once more, as REST's twin is), and its call
the operation's own, with a ``Context`` as REST's generic handler makes it. Fields marked
``hand_written`` are left to their resolvers in this package.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Annotated, Any, cast

import strawberry
from starlette.requests import Request

from ..operations.base import Call, Context, Operation, Param
from ..rate_limits import charge, limits_of
from .context import Info
from .convert import Codec, Converter, Optional, pascal
from .results import answer, result_union
from .types.failures import FAILURES, failure_kind

_SCALARS: dict[str, type] = {"integer": int, "string": str, "boolean": bool, "number": float}
SPECTATOR_FIRST: tuple[type, ...] = tuple(
    kind for kind in FAILURES if kind.__name__ == "NotFound"
)
"""A query a spectator may send lists ``NotFound`` first: to an outsider, not finding the
thing is the answer it meets first."""


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def field_name(operation: Operation) -> str:
    """The GraphQL field name of ``operation``."""
    return operation.graphql.name or operation.id


def failures_of(operation: Operation) -> tuple[type, ...]:
    """The failure members of the operation's result: those its codes map to, in the order
    of ``FAILURES`` (``NotFound`` first for a query a spectator may send)."""
    kinds = {failure_kind(code) for code in operation.codes}
    ordered = [kind for kind in FAILURES if kind in kinds]
    spectators = operation.graphql.kind == "query" and (
        not operation.security or {} in operation.security)
    if spectators:
        ordered.sort(key=lambda kind: kind not in SPECTATOR_FIRST)
    return tuple(ordered)


def _argument(operation: Operation, param: Param) -> inspect.Parameter:
    spec = operation.graphql
    name = spec.args.get(param.name, param.name)
    kind = _SCALARS[str(param.schema.get("type", "string"))]
    annotation: Any
    default: Any = inspect.Parameter.empty
    if param.where == "path":
        annotation = kind if param.name in spec.strings or kind is not str else strawberry.ID
    elif "default" in param.schema:
        annotation, default = kind, param.schema["default"]
    else:
        annotation, default = Optional(kind), None
    return inspect.Parameter(_snake(name), inspect.Parameter.KEYWORD_ONLY,
                             annotation=Annotated[annotation, strawberry.argument(name=name)],
                             default=default)


def _success(operation: Operation, converter: Converter,
             outputs: Mapping[Any, Codec]) -> tuple[Any, Callable[[Any], Any]]:
    """The answer's GraphQL annotation (a tuple: union members) and its converter."""
    returns = operation.graphql.returns
    if returns is None:
        returns = operation.reply.model
    if inspect.isfunction(returns):
        members = {model: outputs.get(model) or converter.output(model) for model in returns()}

        def by_type(value: Any) -> Any:
            return members[type(value)].convert(value)

        return tuple(c.annotation for c in members.values()), by_type
    codec = outputs.get(returns) or converter.output(returns)
    return codec.annotation, codec.convert


def _result(operation: Operation, success: Any, failures: Sequence[type]) -> Any:
    spec = operation.graphql
    if not failures:
        return success
    name = spec.result or f"{pascal(field_name(operation))}Result"
    return result_union(name, success, failures, spec.result_description)


def operation_field(operation: Operation, converter: Converter,
                    outputs: Mapping[Any, Codec]) -> Any:
    """The Strawberry field serving ``operation`` (see the module docstring)."""
    spec = operation.graphql
    call = cast(Call, spec.resolve or operation.call)
    assert call is not None, f"{operation.id} has no call for GraphQL"
    params = [p for p in operation.params if p.where in ("path", "query")]
    arguments = {_snake(spec.args.get(p.name, p.name)): p for p in params}
    success, render = _success(operation, converter, outputs)
    failures = failures_of(operation)
    budget = operation.budget

    async def resolve(info: Info, **values: Any) -> Any:
        ctx = info.context

        async def run() -> Any:
            request = cast(Request, ctx.request)
            path = {_snake(p.name): values[k] for k, p in arguments.items()
                    if p.where == "path"}
            path = {key: str(value) if isinstance(value, str) else value
                    for key, value in path.items()}
            query = {p.name: values[k] for k, p in arguments.items() if p.where == "query"}
            context = Context(request, operation, path, query, language=ctx.lang)
            if operation.reads_credential:
                context.caller = ctx.credentials()
            if budget != "read":
                await charge(limits_of(request.app), request.scope, budget)
            return await call(context)

        if not failures:
            return render(await run())
        return await answer(failures, run, render, ctx.lang)

    resolve.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("info", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Info),
         *(_argument(operation, p) for p in params)],
        return_annotation=_result(operation, success, failures),
    )
    resolve.__name__ = _snake(field_name(operation))
    description = spec.description or operation.summary
    if spec.kind == "mutation":
        return strawberry.mutation(resolver=resolve, description=description)
    return strawberry.field(resolver=resolve, description=description)


def operation_fields(operations: Iterable[Operation], kind: str, converter: Converter,
                     outputs: Mapping[Any, Codec]) -> dict[str, Any]:
    """The generated fields of ``kind`` (``query``, ``mutation``) by Python attribute name,
    in the table's order."""
    return {
        _snake(field_name(op)): operation_field(op, converter, outputs)
        for op in operations
        if op.graphql.kind == kind and not op.graphql.hand_written
    }

