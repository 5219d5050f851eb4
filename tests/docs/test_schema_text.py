"""What the published documents and the docs' prose say about types (issue 14, items 6-7).

- No description in the OpenAPI document, the GraphQL schema or a game's ``optionsSchema``
  carries reStructuredText (````x````, ``:role:`x```): they are Markdown (CommonMark, as OpenAPI
  and GraphQL specify), and our docstrings, which become descriptions, are written for them.
- The examples a description gives are real: the rule ids ``ScoreLine`` names are ids of the
  catalogues' ``scoringRules``.
- ``MatchState.bots`` answers the bot kinds the requests take (an enum, not any string).
- ``ActResponse.state`` / ``ActionAccepted.state`` say what the server does: the state right
  after the caller's move, before any bot moves (``tests/api/test_act_answer.py`` checks the
  behaviour).
- A type the docs state in prose, `` `Type.field: T` ``, is the field's type in the schema.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from graphql import (
    GraphQLEnumType,
    GraphQLInputObjectType,
    GraphQLInterfaceType,
    GraphQLObjectType,
    GraphQLSchema,
    build_schema,
)

from service import games
from service.api.graphql.schema import sdl
from service.api.openapi import build_openapi
from service.catalogue.documents import catalogue_of, has_catalogue
from tests.docs.examples import DOCS, ROOT

RST = re.compile(r"``|:[a-z][a-z:]*:`")
"""Double backticks (reST inline literals) and roles (``:ref:`x```, ``:class:`x```)."""


@pytest.fixture(scope="module")
def openapi() -> dict[str, Any]:
    return build_openapi()


@pytest.fixture(scope="module")
def schema() -> GraphQLSchema:
    return build_schema(sdl())


def _openapi_texts(node: Any, where: str = "#") -> Iterator[tuple[str, str]]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("description", "summary", "title") and isinstance(value, str):
                yield f"{where}/{key}", value
            else:
                yield from _openapi_texts(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _openapi_texts(value, f"{where}/{index}")


def _graphql_texts(schema: GraphQLSchema) -> Iterator[tuple[str, str]]:
    for name, kind in schema.type_map.items():
        if name.startswith("__"):
            continue
        yield name, kind.description or ""
        if isinstance(kind, GraphQLEnumType):
            for value_name, value in kind.values.items():
                yield f"{name}.{value_name}", (value.description or "") + (
                    value.deprecation_reason or "")
        if isinstance(kind, GraphQLObjectType | GraphQLInterfaceType | GraphQLInputObjectType):
            for field_name, field in kind.fields.items():
                yield f"{name}.{field_name}", (field.description or "") + (
                    getattr(field, "deprecation_reason", None) or "")
                for arg_name, arg in getattr(field, "args", {}).items():
                    yield f"{name}.{field_name}({arg_name})", (arg.description or "") + (
                        arg.deprecation_reason or "")


def test_no_description_carries_restructuredtext(
    openapi: dict[str, Any], schema: GraphQLSchema
) -> None:
    texts = [*_openapi_texts(openapi), *(("GraphQL " + w, t) for w, t in _graphql_texts(schema))]
    for game in sorted(games.ids()):
        texts += [(f"{game} optionsSchema {w}", t)
                  for w, t in _openapi_texts(games.get(game).Options.model_json_schema())]
    leaks = [f"{where}: {text[:120]!r}" for where, text in texts if RST.search(text)]
    assert len(texts) > 500, "the walk found too few descriptions to be looking at them"
    assert not leaks, "reStructuredText in descriptions (write Markdown):\n" + "\n".join(leaks)


def _rule_ids() -> tuple[set[str], set[str]]:
    """(ids, prefixes) of every hosted game's scoring rules, every rules version."""
    ids: set[str] = set()
    prefixes: set[str] = set()
    for game in games.ids():
        if not has_catalogue(game):
            continue
        for version in games.get(game).rules_versions:
            document = catalogue_of(game, version).model.model_dump(by_alias=True)
            for rule in document["scoringRules"]:
                (prefixes if rule["prefix"] else ids).add(rule["id"])
    return ids, prefixes


def test_the_score_line_examples_are_rule_ids(
    openapi: dict[str, Any], schema: GraphQLSchema
) -> None:
    ids, prefixes = _rule_ids()
    texts = [openapi["components"]["schemas"]["ScoreLine"]["description"],
             schema.type_map["ScoreLine"].description or ""]
    for text in texts:
        examples = re.findall(r"`([^`]+)`", text.split("example", 1)[1])
        assert examples, text
        for example in examples:
            assert example in ids or any(example.startswith(p) for p in prefixes), (
                f"ScoreLine's example {example!r} is no scoring rule id ({sorted(ids)})")


def test_match_state_bots_answer_the_bot_kinds_requests_take(
    openapi: dict[str, Any], schema: GraphQLSchema
) -> None:
    schemas = openapi["components"]["schemas"]
    answered = schemas["MatchState"]["properties"]["bots"]["additionalProperties"]
    taken = schemas["HandSeatRequest"]["properties"]["kind"]
    assert answered.get("enum") == taken["enum"] == ["random", "greedy", "search"], answered
    bot_seat = schema.type_map["BotSeat"]
    assert isinstance(bot_seat, GraphQLObjectType)
    assert str(bot_seat.fields["kind"].type) == "BotKind!"


def test_the_act_answer_says_its_state_is_from_before_the_bot_moves(
    openapi: dict[str, Any], schema: GraphQLSchema
) -> None:
    rest = openapi["components"]["schemas"]["ActResponse"]["properties"]
    accepted = schema.type_map["ActionAccepted"]
    assert isinstance(accepted, GraphQLObjectType)
    for text in (rest["state"]["description"], accepted.fields["state"].description or ""):
        assert "before any bot moves" in text, text
        assert "after any bot" not in text, text
    assert "bot" not in rest["events"]["description"], "the events are the caller's move's"


TYPE_CLAIM = re.compile(r"`([A-Z][A-Za-z0-9]*)\.([a-z][A-Za-z0-9]*):\s+([A-Za-z0-9_!\[\]]+)`")


def test_the_types_the_docs_state_are_the_schema_s(schema: GraphQLSchema) -> None:
    claims = []
    for path in DOCS:
        for found in TYPE_CLAIM.finditer(path.read_text("utf-8")):
            claims.append((path.relative_to(ROOT), *found.groups()))
    assert len(claims) >= 3, claims
    wrong = []
    for path, type_name, field_name, shown in claims:
        kind = schema.type_map.get(type_name)
        fields = getattr(kind, "fields", {})
        real = str(fields[field_name].type) if field_name in fields else "(no such field)"
        if real != shown:
            wrong.append(f"{path}: `{type_name}.{field_name}: {shown}`, the schema says {real}")
    assert not wrong, "\n".join(wrong)
