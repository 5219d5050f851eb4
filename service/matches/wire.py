"""Reading what clients send: JSON validated as JSON Schema reads the published schema.

Shared by the transports (request bodies) and the match service (a game's options and moves,
whose shape only the engine knows).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from service.errors import ApiError
from service.games.base import JSON, Engine, action_adapter
from service.i18n import T

Value = TypeVar("Value")


def first_error(errors: list[dict[str, Any]]) -> str:
    first = errors[0] if errors else {"loc": [], "msg": "invalid"}
    where = ".".join(first["loc"]) or "value"
    return f"{where}: {first['msg']}"


def _wire_errors(error: ValidationError) -> list[dict[str, Any]]:
    return [
        {"loc": [str(p) for p in e["loc"]], "msg": e["msg"], "type": e["type"]}
        for e in error.errors(include_url=False, include_input=False, include_context=False)
    ]


def validate_wire(
    lax: Callable[[Any], Value], strict_json: Callable[[str], object], data: JSON
) -> tuple[Value | None, list[dict[str, Any]]]:
    """Validate JSON ``data`` as JSON Schema reads the published schema: pydantic's lax mode
    (which accepts ``3.0`` for an integer, as JSON Schema does), minus the coercions JSON
    Schema refuses (``0`` for a boolean, ``"5"`` for an integer), found by a strict pass.

    Returns ``(value, [])`` or ``(None, errors)``.
    """
    try:
        value = lax(data)
    except ValidationError as error:
        return None, _wire_errors(error)
    try:
        # Integral numbers as integers first (JSON Schema's "integer" takes 3.0): the strict
        # pass then judges only what JSON Schema refuses, also inside unions, whose other
        # members would otherwise report their own errors for a 3.0.
        strict_json(json.dumps(_integral(data)))
    except ValidationError as error:
        coerced = [
            e for e in error.errors(include_url=False, include_context=False)
            if not (e["type"] == "int_type" and isinstance(e.get("input"), float)
                    and e["input"].is_integer())
        ]
        if coerced:
            return None, [
                {"loc": [str(p) for p in e["loc"]], "msg": e["msg"], "type": e["type"]}
                for e in coerced
            ]
    return value, []


def _integral(data: Any) -> Any:
    """``data`` with every float that is an integer (``3.0``) written as one (``3``)."""
    if isinstance(data, float) and data.is_integer():
        return int(data)
    if isinstance(data, dict):
        return {key: _integral(value) for key, value in data.items()}
    if isinstance(data, list):
        return [_integral(value) for value in data]
    return data


def parse_options(engine: Engine[Any], options: dict[str, JSON] | None) -> BaseModel | None:
    """The game's options (None: the defaults); 422 ``bad_options`` when they do not fit."""
    if options is None:
        return None
    model = engine.Options
    value, errors = validate_wire(
        model.model_validate, lambda raw: model.model_validate_json(raw, strict=True),
        options,
    )
    if errors:
        raise ApiError.of("bad_options", first_error(errors), errors=errors)
    return value


def parse_action(engine: Engine[Any], action: JSON) -> Any:
    """A move of ``engine``'s game; 422 ``invalid_action`` when it is not one (legal or not)."""
    adapter = action_adapter(engine)
    value, errors = validate_wire(
        adapter.validate_python, lambda raw: adapter.validate_json(raw, strict=True), action
    )
    if errors:
        raise ApiError.of(
            "invalid_action",
            T("Not a {game} move: {error}", game=engine.title, error=first_error(errors)),
            errors=errors,
        )
    return value
