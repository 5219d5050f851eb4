"""The generic converter: engine wire types (pydantic models, frozen dataclasses, tagged
unions, literals, enums) to Strawberry types and back, on sample types shaped like the
engine contract."""

# No `from __future__ import annotations`: the Query classes below use local annotations.

import enum
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import pytest
import strawberry
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from service.api.graphql.convert import (
    Converter,
    MalformedInput,
    UnsupportedType,
    camel,
    union_members,
)
from service.games.base import Result, ScoreLine, SeatResult, WireInt


class SmpColour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class SmpCoord(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    x: WireInt
    y: WireInt


@dataclass(frozen=True, slots=True)
class SmpBuild:
    __pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[misc]
    type: Literal["build_tower"]
    lot: WireInt
    size: Literal["small", "large"] = "small"
    cards: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class SmpPass:
    type: Literal["pass"] = "pass"


class SmpMove(BaseModel):
    """Move a piece."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    type: Literal["move"] = "move"
    to: SmpCoord
    colour: SmpColour | None = None
    via: list[SmpCoord] = Field(default_factory=list, description="Waypoints.")


SmpAction = Annotated[SmpBuild | SmpPass | SmpMove, Field(discriminator="type")]


class SmpView(BaseModel):
    phase: Literal["draft", "build"]
    hand: list[int] | None
    board: list[SmpCoord]
    last: SmpAction | None = None
    result: Result | None = None


MEMBERS: list[type] = [SmpBuild, SmpPass, SmpMove]


def sample_schema() -> tuple[strawberry.Schema, list[Any]]:
    converter = Converter()
    view_codec = converter.output_union("SmpViews", [SmpView], None)
    move_codec = converter.output_union("SmpMoves", MEMBERS)
    action_codec = converter.input_one_of("SmpActionInput", MEMBERS)
    decoded: list[Any] = []
    adapter = TypeAdapter(SmpAction)

    @strawberry.type
    class Query:
        @strawberry.field
        def view(self) -> view_codec.annotation:  # type: ignore[valid-type]
            return view_codec.convert(
                SmpView(
                    phase="build", hand=None, board=[SmpCoord(x=1, y=2)],
                    last=SmpBuild("build_tower", 3, "large", (4, 5)),
                    result=Result(
                        seats=[SeatResult(seat=0, score=3, rank=1,
                                          breakdown=[ScoreLine(rule="r", points=3)])],
                        winners=[0],
                    ),
                )
            )

        @strawberry.field
        def moves(self) -> list[move_codec.annotation]:  # type: ignore[valid-type]
            values: list[Any] = [
                SmpBuild("build_tower", 1), SmpPass(),
                SmpMove(to=SmpCoord(x=0, y=1), colour=SmpColour.BLUE),
                {"type": "pass"},  # the JSON form converts too
            ]
            return [move_codec.convert(v) for v in values]

        @strawberry.field
        def act(self, action: action_codec.annotation) -> bool:  # type: ignore[valid-type]
            wire = action_codec.convert(action)
            decoded.append(adapter.validate_python(wire))
            return True

    return strawberry.Schema(query=Query), decoded


def test_sdl_of_the_sample_types() -> None:
    schema, _ = sample_schema()
    sdl = str(schema)
    for expected in [
        "union SmpMoves = SmpBuild | SmpPass | SmpMove",
        "union SmpViews = SmpView",
        "input SmpActionInput @oneOf {\n  buildTower: SmpBuildInput\n  pass: Boolean\n"
        '\n  """Move a piece."""\n  move: SmpMoveInput\n}',
        "input SmpBuildInput {\n  lot: Int!\n  size: SmpBuildSize! = small\n  cards: [Int!]\n}",
        "enum SmpBuildSize {\n  small\n  large\n}",
        "enum SmpColour {\n  RED\n  BLUE\n}",
        "type SmpPass {\n  type: String!\n}",
        "input SmpCoordInput {\n  x: Int!\n  y: Int!\n}",
        "union SmpViewLast = SmpBuild | SmpPass | SmpMove",
        "hand: [Int!]\n",
        '"""Waypoints."""\n  via: [SmpCoord!]!',
        "type Result {\n  seats: [SeatResult!]!\n  winners: [Int!]!\n"
        "  opponents: [OpponentResult!]!\n}",
    ]:
        assert expected in sdl, expected


def test_outputs_convert_values_and_json() -> None:
    schema, _ = sample_schema()
    result = schema.execute_sync(
        """{
          view { ... on SmpView { phase hand board { x y }
                 last { __typename ... on SmpBuild { type lot size cards } }
                 result { winners seats { breakdown { rule points } } } } }
          moves { __typename ... on SmpMove { to { x y } colour via { x } } }
        }"""
    )
    assert result.errors is None
    assert result.data == {
        "view": {
            "phase": "build", "hand": None, "board": [{"x": 1, "y": 2}],
            "last": {"__typename": "SmpBuild", "type": "build_tower", "lot": 3,
                     "size": "large", "cards": [4, 5]},
            "result": {"winners": [0], "seats": [{"breakdown": [{"rule": "r", "points": 3}]}]},
        },
        "moves": [
            {"__typename": "SmpBuild"}, {"__typename": "SmpPass"},
            {"__typename": "SmpMove", "to": {"x": 0, "y": 1}, "colour": "BLUE", "via": []},
            {"__typename": "SmpPass"},
        ],
    }


@pytest.mark.parametrize(
    ("literal", "expected"),
    [
        ("{pass: true}", SmpPass()),
        ("{buildTower: {lot: 3}}", SmpBuild("build_tower", 3)),
        ("{buildTower: {lot: 3, size: large, cards: [1, 2]}}",
         SmpBuild("build_tower", 3, "large", (1, 2))),
        ("{buildTower: {lot: 3, cards: null}}", SmpBuild("build_tower", 3)),
        ("{move: {to: {x: 1, y: 2}, colour: RED}}",
         SmpMove(to=SmpCoord(x=1, y=2), colour=SmpColour.RED)),
        ("{move: {to: {x: 1, y: 2}, via: [{x: 0, y: 0}]}}",
         SmpMove(to=SmpCoord(x=1, y=2), via=[SmpCoord(x=0, y=0)])),
    ],
)
def test_inputs_decode_to_the_engines_wire_json(literal: str, expected: Any) -> None:
    schema, decoded = sample_schema()
    result = schema.execute_sync(f"{{ act(action: {literal}) }}")
    assert result.errors is None, result.errors
    assert decoded == [expected]


@pytest.mark.parametrize(
    "literal", ["{pass: true, move: {to: {x: 1, y: 2}}}", "{}", "{pass: null}"]
)
def test_one_of_inputs_refuse_zero_or_several_fields(literal: str) -> None:
    schema, decoded = sample_schema()
    result = schema.execute_sync(f"{{ act(action: {literal}) }}")
    assert result.errors and decoded == []


def test_a_flag_member_must_be_true() -> None:
    converter = Converter()
    codec = converter.input_one_of("SmpActionInput", MEMBERS)
    with pytest.raises(MalformedInput):
        codec.convert(codec.annotation(pass_=strawberry.Some(False)))
    assert codec.convert(codec.annotation(pass_=strawberry.Some(True))) == {"type": "pass"}


def test_aliases_are_the_wire_keys() -> None:
    class SmpAliased(BaseModel):
        model_config = ConfigDict(frozen=True)
        type: Literal["aliased"] = "aliased"
        from_lot: int = Field(alias="from")

    converter = Converter()
    codec = converter.input_one_of("SmpAliasedAction", [SmpAliased])
    sdl = str(strawberry.Schema(query=_query_taking(codec.annotation)))
    assert "input SmpAliasedInput {\n  fromLot: Int!\n}" in sdl
    inner = converter._input_object(SmpAliased).annotation(from_lot=4)
    value = codec.annotation(aliased=strawberry.Some(inner))
    assert codec.convert(value) == {"type": "aliased", "from": 4}


def _query_taking(annotation: Any) -> type:
    @strawberry.type
    class Query:
        @strawberry.field
        def take(self, value: annotation) -> bool:  # type: ignore[valid-type]
            return True

    return Query


@pytest.mark.parametrize(
    "annotation",
    [dict[str, int], int | str, Any, tuple[int, str], Literal["a", 1]],
)
def test_shapes_without_a_graphql_form_are_refused(annotation: Any) -> None:
    class SmpBad(BaseModel):
        value: annotation  # type: ignore[valid-type]

    with pytest.raises(UnsupportedType, match=r"SmpBad\.value"):
        Converter().output(SmpBad)


def test_two_classes_with_one_name_are_refused() -> None:
    first = type("SmpSame", (BaseModel,), {"__annotations__": {"x": int}})
    second = type("SmpSame", (BaseModel,), {"__annotations__": {"y": int}})
    converter = Converter()
    converter.output(first)
    with pytest.raises(UnsupportedType, match="SmpSame"):
        converter.output(second)
    with pytest.raises(UnsupportedType, match="Query"):
        Converter(reserved=["Query"]).output(type("Query", (BaseModel,), {
            "__annotations__": {"x": int}}))


def test_generation_is_deterministic() -> None:
    assert str(sample_schema()[0]) == str(sample_schema()[0])


def test_helpers() -> None:
    assert camel("build_tower") == "buildTower"
    assert camel("end-turn") == "endTurn"
    assert camel("pass") == "pass"
    members = union_members(SmpAction)
    assert members == (MEMBERS, "type")
    assert union_members(int | None) is None


def test_forward_references_are_resolved() -> None:
    from tests.graphql.forward_models import SmpOuter

    sdl = str(strawberry.Schema(query=_query_returning(SmpOuter)))
    assert "type SmpOuter {\n  inner: SmpInner\n}" in sdl


def _query_returning(cls: type) -> type:
    codec = Converter().output(cls)

    @strawberry.type
    class Query:
        @strawberry.field
        def get(self) -> codec.annotation:  # type: ignore[valid-type]
            raise NotImplementedError

    return Query
