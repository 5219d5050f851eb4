"""Depth, alias and token limits refuse abusive documents with a clear GraphQL error, a query
selecting every field of every game stays within them, and unexpected failures are masked."""

from __future__ import annotations

from typing import Any

import pytest

from service import games
from service.api.graphql.schema import MAX_ALIASES, MAX_DEPTH, MAX_TOKENS
from tests.graphql.client import GraphQLClient


def errors_of(gql: GraphQLClient, query: str) -> list[str]:
    body = gql.raw(query)
    assert body.get("data") is None
    return [error["message"] for error in body["errors"]]


def test_deep_query_is_refused(gql: GraphQLClient) -> None:
    nested = "a { " * (MAX_DEPTH + 2) + "b" + " }" * (MAX_DEPTH + 2)
    messages = errors_of(gql, f"query Deep {{ {nested} }}")
    assert f"'Deep' exceeds maximum operation depth of {MAX_DEPTH}" in messages


def test_many_aliases_are_refused(gql: GraphQLClient) -> None:
    aliases = " ".join(f"g{i}: games {{ id }}" for i in range(MAX_ALIASES + 1))
    messages = errors_of(gql, f"{{ {aliases} }}")
    assert any("aliases found" in m and str(MAX_ALIASES) in m for m in messages), messages


def test_huge_query_is_refused(gql: GraphQLClient) -> None:
    fields = " ".join("id" for _ in range(MAX_TOKENS))
    messages = errors_of(gql, f"{{ games {{ {fields} }} }}")
    assert messages == [
        f"Syntax Error: Document contains more than {MAX_TOKENS} tokens. Parsing aborted."
    ]


@pytest.mark.parametrize("game", ["ginkgopolis", "ny1901", "toy"])
def test_a_query_of_every_field_of_a_game_fits_the_limits(gql: GraphQLClient, game: str) -> None:
    if game not in games.ids():
        pytest.skip(f"{game} is not registered in this build")
    view, move = gql.selection("MatchView", game), gql.selection("Move", game)
    event = gql.selection("Event", game)
    query = f"""
    query Everything($id: ID!) {{
      match(id: $id) {{
        ... on MatchState {{ version status seat activeSeats view {{ {view} }}
                             result {{ winners seats {{ seat score rank
                                                       breakdown {{ rule points }} }} }} }}
        ... on Problem {{ code message }}
      }}
      legalMoves(matchId: $id) {{ ... on LegalMoves {{ version moves {{ {move} }} }} }}
      log(matchId: $id) {{
        ... on LogPage {{ entries {{ version seat action {{ {move} }} events {{ {event} }} }} }}
      }}
    }}
    """
    body = gql.raw(query, {"id": "nope"})
    assert "errors" not in body, body["errors"]
    assert body["data"]["match"]["code"] == "match_not_found"


def test_introspection_is_not_limited_by_depth(gql: GraphQLClient) -> None:
    from graphql import get_introspection_query

    body = gql.raw(get_introspection_query())
    assert "errors" not in body and body["data"]["__schema"]["types"]


def test_unexpected_failures_are_masked(gql: GraphQLClient, monkeypatch: Any) -> None:
    service = gql.http.app.state.match_service  # type: ignore[attr-defined]

    async def broken() -> Any:
        raise RuntimeError("secret internals: hand=[1, 2, 3]")

    monkeypatch.setattr(service, "catalogue", broken)
    with pytest.raises(AssertionError):
        gql("{ games { id } }")
    body = gql.raw("{ games { id } }")
    assert [e["message"] for e in body["errors"]] == ["Unexpected error."]
    assert "secret" not in str(body)
