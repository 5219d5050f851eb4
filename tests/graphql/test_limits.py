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


def test_aliases_spread_through_fragments_count_too(gql: GraphQLClient) -> None:
    half = MAX_ALIASES // 2 + 1
    fragments = " ".join(
        f"fragment {name} on Game {{ " + " ".join(f"{name}{i}: id" for i in range(half)) + " }"
        for name in ("A", "B")
    )
    messages = errors_of(gql, f"{{ games {{ ...A ...B }} }} {fragments}")
    assert messages == [f"{2 * half} aliases found. Allowed: {MAX_ALIASES}"]


def test_batched_operations_are_refused_before_any_runs(gql: GraphQLClient) -> None:
    answer = gql.http.post("/graphql", json=[{"query": "{ games { id } }"}] * 2)
    assert answer.status_code == 400
    assert answer.headers["content-type"] == "application/problem+json"
    assert answer.json()["code"] == "malformed"


SUBSCRIBE = 'subscription {{ matchUpdated(matchId: "nope") {{ {fields} }} }}'


def _subscribe(gql: GraphQLClient, query: str) -> dict[str, Any]:
    """The first message answering a subscribe of ``query`` (a close: WebSocketDisconnect)."""
    with gql.http.websocket_connect("/graphql", subprotocols=["graphql-transport-ws"]) as ws:
        ws.send_json({"type": "connection_init"})
        assert ws.receive_json()["type"] == "connection_ack"
        ws.send_json({"id": "1", "type": "subscribe", "payload": {"query": query}})
        message: dict[str, Any] = ws.receive_json()
        return message


def test_a_subscription_over_the_limits_is_refused_on_the_websocket(
    gql: GraphQLClient,
) -> None:
    from starlette.websockets import WebSocketDisconnect

    deep = "a { " * (MAX_DEPTH + 1) + "b" + " }" * (MAX_DEPTH + 1)
    answer = _subscribe(gql, SUBSCRIBE.format(fields=deep))
    assert answer["type"] == "error"
    assert f"'anonymous' exceeds maximum operation depth of {MAX_DEPTH}" in [
        e["message"] for e in answer["payload"]]
    aliased = " ".join(f"a{i}: __typename" for i in range(MAX_ALIASES + 1))
    answer = _subscribe(gql, SUBSCRIBE.format(fields=aliased))
    assert answer["type"] == "error"
    assert [e["message"] for e in answer["payload"]] == [
        f"{MAX_ALIASES + 1} aliases found. Allowed: {MAX_ALIASES}"]
    # A document that does not parse (too long, or a syntax error) closes the socket with
    # 4400 and the parser's message, as graphql-transport-ws has it -- not a dead operation.
    for query, reason in (
        (SUBSCRIBE.format(fields=" ".join("__typename" for _ in range(MAX_TOKENS))),
         f"Syntax Error: Document contains more than {MAX_TOKENS} tokens. Parsing aborted."),
        ("subscription {", "Syntax Error: Expected Name, found <EOF>."),
    ):
        with pytest.raises(WebSocketDisconnect) as closed:
            _subscribe(gql, query)
        assert (closed.value.code, closed.value.reason) == (4400, reason)


def test_root_fields_are_limited_by_what_they_execute(gql: GraphQLClient) -> None:
    from service.api.graphql.limits import MAX_ROOT_FIELDS

    def reads(count: int) -> str:
        return " ".join(f'm{i}: match(id: "nope") {{ __typename }}' for i in range(count))

    body = gql.raw(f"query Many {{ {reads(MAX_ROOT_FIELDS)} }}")
    assert "errors" not in body and len(body["data"]) == MAX_ROOT_FIELDS
    messages = errors_of(gql, f"query Many {{ {reads(MAX_ROOT_FIELDS + 1)} }}")
    assert messages == [
        f"'Many' asks for {MAX_ROOT_FIELDS + 1} root fields. Allowed: {MAX_ROOT_FIELDS}"]
    # Through fragments too; merged fields (one response key) and __typename count once / not.
    spread = f"{{ ...F __typename }} fragment F on Query {{ {reads(MAX_ROOT_FIELDS + 1)} }}"
    assert len(errors_of(gql, spread)) == 1
    merged = " ".join(["games { id }"] * 10 + ["__typename"] * 3 + [reads(MAX_ROOT_FIELDS - 1)])
    body = gql.raw(f"{{ {merged} }}")
    assert "errors" not in body, body
    writes = " ".join(f'c{i}: createMatch(game: "toy", players: 2) {{ __typename }}'
                      for i in range(MAX_ROOT_FIELDS + 1))
    assert len(errors_of(gql, f"mutation {{ {writes} }}")) == 1
