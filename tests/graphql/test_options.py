"""``createMatch``'s options, typed per game (issue 14, item 6): ``gameOptions:
MatchOptionsInput @oneOf``, one field per game named after its id, holding the input generated
from the engine's ``Options`` model (its defaults in the SDL). The untyped ``options: JSON`` is
deprecated and still works; no other argument of the schema is an opaque ``JSON``."""

from __future__ import annotations

from typing import Any

from graphql import GraphQLInputObjectType, GraphQLNamedType, GraphQLObjectType, get_named_type

from service import games
from service.api.graphql.convert import camel
from tests.graphql.client import GraphQLClient

CREATE = """
mutation($game: String!, $players: Int!, $gameOptions: MatchOptionsInput, $options: JSON) {
  createMatch(game: $game, players: $players, seed: 5, gameOptions: $gameOptions,
              options: $options) {
    __typename
    ... on MatchCreated { matchId }
    ... on Problem { code message }
  }
}
"""
VIEW = """
query($id: ID!) {
  match(id: $id) {
    ... on MatchState {
      view {
        __typename
        ... on Ny1901View { expert challenge }
        ... on GkView { phase }
      }
    }
  }
}
"""


def _create(gql: GraphQLClient, game: str, players: int = 2, **arguments: Any
            ) -> dict[str, Any]:
    created: dict[str, Any] = gql(CREATE, {"game": game, "players": players, **arguments}
                                  )["createMatch"]
    return created


def _view(gql: GraphQLClient, match_id: str) -> dict[str, Any]:
    view: dict[str, Any] = gql(VIEW, {"id": match_id})["match"]["view"]
    return view


def test_every_game_s_options_are_an_input_generated_from_its_model(gql: GraphQLClient) -> None:
    schema = gql.schema._schema
    options = schema.type_map["MatchOptionsInput"]
    assert isinstance(options, GraphQLInputObjectType)
    assert "input MatchOptionsInput @oneOf {" in str(gql.schema)
    with_options = {g for g in games.ids() if games.get(g).Options.model_fields}
    assert {"ny1901", "ginkgopolis"} <= with_options
    assert set(options.fields) == {camel(g) for g in with_options}
    for game in with_options:
        model = games.get(game).Options
        typed = get_named_type(options.fields[camel(game)].type)
        assert isinstance(typed, GraphQLInputObjectType)
        assert set(typed.fields) == {camel(name) for name in model.model_fields}, game
        if game in ("ny1901", "ginkgopolis"):  # (the toy game's are not described)
            assert all(f.description for f in typed.fields.values()), f"{game}: undescribed"
    ny1901 = get_named_type(options.fields["ny1901"].type)
    assert isinstance(ny1901, GraphQLInputObjectType)
    assert str(ny1901.fields["challenge"].type) == "Ny1901OptionsChallenge!"
    sdl = str(gql.schema)
    assert "challenge: Ny1901OptionsChallenge! = random" in sdl
    assert "halExpert: Boolean! = false" in sdl


def test_no_argument_is_an_opaque_json_scalar_unless_deprecated(gql: GraphQLClient) -> None:
    schema = gql.schema._schema
    opaque = []
    for name, kind in schema.type_map.items():
        if name.startswith("__") or not isinstance(kind, GraphQLObjectType):
            continue
        for field_name, field in kind.fields.items():
            for arg_name, arg in field.args.items():
                named: GraphQLNamedType = get_named_type(arg.type)
                if named.name == "JSON" and not arg.deprecation_reason:
                    opaque.append(f"{name}.{field_name}({arg_name})")
    assert not opaque, opaque
    create = schema.type_map["Mutation"]
    assert isinstance(create, GraphQLObjectType)
    assert "gameOptions" in (create.fields["createMatch"].args["options"].deprecation_reason or "")


def test_typed_options_reach_the_engine(gql: GraphQLClient) -> None:
    typed = _create(gql, "ny1901", gameOptions={"ny1901": {"expert": True, "challenge": "none"}})
    assert typed["__typename"] == "MatchCreated", typed
    assert _view(gql, typed["matchId"]) == {
        "__typename": "Ny1901View", "expert": True, "challenge": None}
    untyped = _create(gql, "ny1901", options={"expert": True, "challenge": "none"})
    assert _view(gql, untyped["matchId"]) == _view(gql, typed["matchId"])
    plain = _create(gql, "ny1901", gameOptions={"ny1901": {}})
    assert _view(gql, plain["matchId"])["expert"] is False
    draft = _create(gql, "ginkgopolis", gameOptions={"ginkgopolis": {"characters": "draft"}})
    assert _view(gql, draft["matchId"]) == {"__typename": "GkView", "phase": "draft"}


def test_options_of_another_game_or_of_both_kinds_are_refused(gql: GraphQLClient) -> None:
    other = _create(gql, "ny1901", gameOptions={"ginkgopolis": {"halExpert": True}})
    assert (other["__typename"], other["code"]) == ("BadRequest", "malformed"), other
    assert "ginkgopolis" in other["message"]
    both = _create(gql, "ny1901", gameOptions={"ny1901": {"expert": True}},
                   options={"expert": True})
    assert (both["__typename"], both["code"]) == ("BadRequest", "malformed"), both
    repeated = _create(gql, "ny1901", gameOptions={
        "ny1901": {"streets": ["broadway", "broadway", "wall_street"]}})
    assert (repeated["__typename"], repeated["code"]) == ("BadRequest", "bad_options"), repeated


def test_a_one_of_with_two_games_is_a_graphql_error(gql: GraphQLClient) -> None:
    body = gql.raw(CREATE, {"game": "ny1901", "players": 2, "gameOptions": {
        "ny1901": {"expert": True}, "ginkgopolis": {"halExpert": True}}})
    assert body.get("errors") and not (body.get("data") or {}).get("createMatch"), body
