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
from typing import Annotated, Any, cast, get_args

import strawberry
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from starlette.requests import Request

from service.errors import ApiError

from ..operations.base import Call, Context, Operation, Param
from ..rate_limits import charge, limits_of
from .context import Info
from .convert import Codec, Converter, Optional, camel, pascal
from .results import ACT_FAILURES, answer, result_union
from .types.failures import NotFound, failure_kind

_SCALARS: dict[str, type] = {"integer": int, "string": str, "boolean": bool, "number": float}
ORDER = ACT_FAILURES
"""The order of the failure members in a result union (``act``'s, which has them all)."""


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def field_name(operation: Operation) -> str:
    """The GraphQL field name of ``operation``."""
    return operation.graphql.name or operation.id


def failures_of(operation: Operation) -> tuple[type, ...]:
    """The failure members of the operation's result: those its codes map to, in ``ORDER``
    (``NotFound`` first for a query a spectator may send, or an operation that takes no
    credential: to an outsider, not finding the thing is the answer it meets first)."""
    kinds = {failure_kind(code) for code in (*operation.codes, *operation.graphql.also)}
    ordered = [kind for kind in ORDER if kind in kinds]
    spectators = not operation.security or (
        operation.graphql.kind == "query" and {} in operation.security)
    if spectators:
        ordered.sort(key=lambda kind: kind is not NotFound)
    return tuple(ordered)


def _argument(operation: Operation, param: Param) -> inspect.Parameter:
    spec = operation.graphql
    name = spec.args.get(param.name, param.name)
    kind = _SCALARS[str(param.schema.get("type", "string"))]
    annotation: Any
    default: Any = inspect.Parameter.empty
    if param.where == "path":
        annotation = kind if param.name in spec.strings or kind is not str else strawberry.ID
    elif "default" in param.schema and param.name not in spec.optional:
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


def _result(operation: Operation, success: Any, failures: Sequence[type],
            unions: dict[str, Any]) -> Any:
    """The field's type: its result union (one per name: operations may share one, as
    ``WebhookResult``), or the answer itself when it fails in no expected way."""
    spec = operation.graphql
    if not failures:
        return success
    name = spec.result or f"{pascal(field_name(operation))}Result"
    if name not in unions:
        unions[name] = result_union(name, success, failures, spec.result_description)
    return unions[name]


def _members(union: Any) -> tuple[type, ...]:
    """The member types of a result union (``Annotated[Union[...], ...]``)."""
    return get_args(get_args(union)[0])


def _body_argument(name: str, info: FieldInfo, codec: Codec) -> inspect.Parameter:
    """A field of the body model as an argument (today's: no description)."""
    annotation, default = codec.annotation, cast(Any, inspect.Parameter.empty)
    if not info.is_required():
        annotation, default = Optional(annotation), None
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY,
                             annotation=Annotated[annotation, strawberry.argument(
                                 name=camel(name))], default=default)


def _body_of(model: type[BaseModel], fields: Mapping[str, tuple[FieldInfo, Codec]],
             values: Mapping[str, Any]) -> Any:
    """The arguments as REST's body, checked by the same model (400 ``malformed``)."""
    wire = {info.alias or name: codec.convert(values[name])
            for name, (info, codec) in fields.items() if values.get(name) is not None}
    try:
        return model.model_validate(wire)
    except ValidationError as error:
        first = error.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "input"
        raise ApiError.of("malformed", f"{where}: {first['msg']}") from None


def operation_field(operation: Operation, converter: Converter,
                    outputs: Mapping[Any, Codec], unions: dict[str, Any]) -> Any:
    """The Strawberry field serving ``operation`` (see the module docstring)."""
    spec = operation.graphql
    call = cast(Call, spec.resolve or operation.call)
    assert call is not None, f"{operation.id} has no call for GraphQL"
    params = [p for p in operation.params if p.where in ("path", "query")]
    arguments = {_snake(spec.args.get(p.name, p.name)): p for p in params}
    model = operation.body
    body = {} if model is None else {
        name: (info, converter.input(info.annotation, owner=model.__name__, field=name))
        for name, info in model.model_fields.items()}
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
            if model is not None:
                context.body = _body_of(model, body, values)
            return await call(context)

        if not failures:
            return render(await run())
        return await answer(failures, run, render, ctx.lang)

    result = _result(operation, success, failures, unions)
    if failures:  # the union's own members: it may be shared, made by a resolver
        failures = tuple(kind for kind in _members(result) if kind in ORDER)
    resolve.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("info", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Info),
         *(_argument(operation, p) for p in params),
         *(_body_argument(name, info, codec) for name, (info, codec) in body.items())],
        return_annotation=result,
    )
    resolve.__name__ = _snake(field_name(operation))
    description = spec.description or operation.summary
    if spec.kind == "mutation":
        return strawberry.mutation(resolver=resolve, description=description)
    return strawberry.field(resolver=resolve, description=description)


def operation_fields(operations: Iterable[Operation], kind: str, converter: Converter,
                     outputs: Mapping[Any, Codec], unions: dict[str, Any]) -> dict[str, Any]:
    """The generated fields of ``kind`` (``query``, ``mutation``) by Python attribute name,
    in the table's order; ``unions``: the result unions made so far, by name."""
    return {
        _snake(field_name(op)): operation_field(op, converter, outputs, unions)
        for op in operations
        if op.graphql.kind == kind and not op.graphql.hand_written
    }

