"""Every query and mutation, every failure member of their result unions, and that a refused
operation writes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from service.store import SqliteStore, StoreUnavailable
from tests.graphql.client import GraphQLClient, dumps
from tests.graphql.conftest import CREATE, create_match
from tests.graphql.queries import ACT, LEGAL_MOVES, LOG, MATCH

DRAW = {"toy": {"draw": True}}
PASS = {"toy": {"pass": True}}


def play(card: int) -> dict[str, Any]:
    return {"toy": {"play": {"card": card}}}


def act(gql: GraphQLClient, match_id: str, token: str | None, action: dict[str, Any],
        **extra: Any) -> dict[str, Any]:
    result: dict[str, Any] = gql(ACT, {"id": match_id, "action": action, **extra}, token)["act"]
    return result


def state(gql: GraphQLClient, match_id: str, token: str | None = None) -> dict[str, Any]:
    result: dict[str, Any] = gql(MATCH, {"id": match_id}, token)["match"]
    return result


def history(gql: GraphQLClient, match_id: str, token: str) -> str:
    """Everything a seat can read about the match, to compare before and after a refusal."""
    return dumps([state(gql, match_id, token), gql(LOG, {"id": match_id}, token)["log"]])


def to_choose_phase(gql: GraphQLClient, match_id: str, tokens: dict[int, str]) -> None:
    """Both seats pass the draw step: the match is in the simultaneous choice."""
    assert act(gql, match_id, tokens[0], PASS)["__typename"] == "ActionAccepted"
    assert act(gql, match_id, tokens[1], PASS)["__typename"] == "ActionAccepted"


# -- queries ---------------------------------------------------------------------------------


def test_games_lists_every_registered_engine(gql: GraphQLClient) -> None:
    data = gql("{ games { id title minPlayers maxPlayers optionsSchema } }")
    toy = next(g for g in data["games"] if g["id"] == "toy")
    assert (toy["title"], toy["minPlayers"], toy["maxPlayers"]) == ("Toy Cards", 2, 4)
    assert "rounds" in toy["optionsSchema"]["properties"]


def test_create_match_gives_one_token_per_human_seat(gql: GraphQLClient) -> None:
    data = gql(CREATE, {"game": "toy", "players": 3, "seed": 1,
                       "bots": [{"seat": 2, "kind": "random"}]})["createMatch"]
    assert data["__typename"] == "MatchCreated"
    assert data["game"] == "toy" and data["version"] == 0
    assert [s["seat"] for s in data["seats"]] == [0, 1]
    assert len({s["token"] for s in data["seats"]}) == 2


def test_match_as_seat_and_as_spectator(gql: GraphQLClient) -> None:
    match_id, tokens = create_match(gql)
    seat = state(gql, match_id, tokens[1])
    assert seat["__typename"] == "MatchState"
    assert (seat["matchId"], seat["game"], seat["version"]) == (match_id, "toy", 0)
    assert (seat["status"], seat["seat"], seat["activeSeats"]) == ("active", 1, [0])
    assert seat["view"]["__typename"] == "ToyView" and len(seat["view"]["hand"]) == 3
    assert seat["result"] is None
    spectator = state(gql, match_id)
    assert spectator["seat"] is None and spectator["view"]["hand"] is None


def test_legal_moves_per_seat(gql: GraphQLClient) -> None:
    match_id, tokens = create_match(gql)
    first = gql(LEGAL_MOVES, {"id": match_id}, tokens[0])["legalMoves"]
    assert first["seat"] == 0 and first["version"] == 0
    assert [m["__typename"] for m in first["moves"]] == ["ToyDraw", "ToyPass"]
    assert [m["type"] for m in first["moves"]] == ["draw", "pass"]
    assert gql(LEGAL_MOVES, {"id": match_id}, tokens[1])["legalMoves"]["moves"] == []
    spectator = gql(LEGAL_MOVES, {"id": match_id})["legalMoves"]
    assert spectator["seat"] is None and spectator["moves"] == []


def test_act_stores_the_move_and_answers_with_the_new_view(gql: GraphQLClient) -> None:
    match_id, tokens = create_match(gql)
    hand = state(gql, match_id, tokens[0])["view"]["hand"]
    accepted = act(gql, match_id, tokens[0], DRAW, version=0)
    assert accepted["__typename"] == "ActionAccepted"
    assert accepted["version"] == 1 and accepted["matchId"] == match_id
    [drew] = accepted["events"]
    assert drew["kind"] == "drew" and drew["data"]["seat"] == 0
    assert sorted([*hand, drew["data"]["card"]]) == accepted["state"]["view"]["hand"]
    assert accepted["state"]["version"] == 1 and accepted["state"]["activeSeats"] == [1]


def test_choice_moves_are_listed_and_played_back(gql: GraphQLClient) -> None:
    match_id, tokens = create_match(gql)
    to_choose_phase(gql, match_id, tokens)
    moves = gql(LEGAL_MOVES, {"id": match_id}, tokens[1])["legalMoves"]["moves"]
    hand = state(gql, match_id, tokens[1])["view"]["hand"]
    assert [m["card"] for m in moves] == hand
    accepted = act(gql, match_id, tokens[1], play(moves[0]["card"]))
    assert accepted["__typename"] == "ActionAccepted"
    assert accepted["state"]["view"]["myChoice"] == moves[0]["card"]


def test_log_pages_and_own_actions(gql: GraphQLClient) -> None:
    match_id, tokens = create_match(gql)
    act(gql, match_id, tokens[0], DRAW)
    act(gql, match_id, tokens[1], PASS)
    page = gql(LOG, {"id": match_id}, tokens[0])["log"]
    assert page["__typename"] == "LogPage" and page["latestVersion"] == 2
    assert [(e["version"], e["seat"]) for e in page["entries"]] == [(1, 0), (2, 1)]
    assert page["entries"][0]["action"] == {"__typename": "ToyDraw", "type": "draw"}
    assert page["entries"][1]["action"] is None  # another seat's move
    later = gql(LOG, {"id": match_id, "after": 1}, tokens[0])["log"]
    assert [e["version"] for e in later["entries"]] == [2]


def test_idempotent_retry_returns_the_first_result(gql: GraphQLClient) -> None:
    match_id, tokens = create_match(gql)
    first = act(gql, match_id, tokens[0], DRAW, key="k-1")
    again = act(gql, match_id, tokens[0], DRAW, key="k-1")
    assert first["__typename"] == again["__typename"] == "ActionAccepted"
    assert again["version"] == first["version"] == 1
    assert state(gql, match_id, tokens[0])["version"] == 1
    reused = act(gql, match_id, tokens[0], PASS, key="k-1")
    assert (reused["__typename"], reused["code"]) == ("BadRequest", "idempotency_key_reused")


# -- failures --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("variables", "code"),
    [
        ({"game": "chess", "players": 2}, "unknown_game"),
        ({"game": "toy", "players": 9}, "bad_player_count"),
        ({"game": "toy", "players": 0}, "malformed"),
        ({"game": "toy", "players": 2, "options": {"rounds": 99}}, "bad_options"),
        ({"game": "toy", "players": 2, "options": {"colour": "red"}}, "bad_options"),
        ({"game": "toy", "players": 2, "options": [1, 2]}, "malformed"),
        ({"game": "toy", "players": 2,
          "bots": [{"seat": 0, "kind": "random"}, {"seat": 1, "kind": "random"}]}, "bad_bots"),
        ({"game": "toy", "players": 2, "bots": [{"seat": 5, "kind": "random"}]}, "bad_bots"),
        ({"game": "toy", "players": 3,
          "bots": [{"seat": 1, "kind": "random"}, {"seat": 1, "kind": "random"}]}, "bad_bots"),
        ({"game": "toy", "players": 2, "bots": [{"seat": 1, "kind": "greedy"}]}, "bad_bots"),
        ({"game": "toy", "players": 2, "seed": -1}, "malformed"),
    ],
)
def test_create_match_refusals_are_bad_requests(
    gql: GraphQLClient, variables: dict[str, Any], code: str
) -> None:
    refused = gql(CREATE, variables)["createMatch"]
    assert (refused["__typename"], refused["code"]) == ("BadRequest", code), refused
    assert refused["message"]


def test_reads_of_unknown_matches_are_not_found(gql: GraphQLClient) -> None:
    for match_id in ("nope", "x" * 200, "a{b}"):
        assert state(gql, match_id)["__typename"] == "NotFound"
        assert gql(LEGAL_MOVES, {"id": match_id})["legalMoves"]["__typename"] == "NotFound"
        assert gql(LOG, {"id": match_id})["log"]["__typename"] == "NotFound"


def test_reads_with_bad_credentials_are_unauthorized(gql: GraphQLClient) -> None:
    match_id, _ = create_match(gql)
    _, other_tokens = create_match(gql)
    for kwargs in ({"token": other_tokens[0]}, {"headers": {"Authorization": "Basic abc"}},
                   {"token": "sky_" + "A" * 43}):
        assert gql(MATCH, {"id": match_id}, **kwargs)["match"]["__typename"] == "Unauthorized"
        moves = gql(LEGAL_MOVES, {"id": match_id}, **kwargs)["legalMoves"]
        assert moves["__typename"] == "Unauthorized"
        assert gql(LOG, {"id": match_id}, **kwargs)["log"]["__typename"] == "Unauthorized"


def test_every_act_failure_is_a_union_member_and_writes_nothing(gql: GraphQLClient) -> None:
    match_id, tokens = create_match(gql)
    _, other_tokens = create_match(gql)
    act(gql, match_id, tokens[0], DRAW)  # version 1: seat 1 to draw
    before = history(gql, match_id, tokens[0])
    cases: list[tuple[str | None, dict[str, Any], dict[str, Any], str, str | None]] = [
        (tokens[1], DRAW, {"version": 0}, "VersionConflict", "version_conflict"),
        (tokens[0], DRAW, {}, "NotYourTurn", "not_your_turn"),
        (tokens[1], play(1), {}, "IllegalMove", "wrong_phase"),
        (None, DRAW, {}, "Unauthorized", "unauthorized"),
        (other_tokens[1], DRAW, {}, "Unauthorized", "unauthorized"),
        (tokens[1], {"ny1901": {"endTurn": True}}, {}, "BadRequest", "malformed"),
        (tokens[1], {"toy": {"pass": False}}, {}, "BadRequest", "malformed"),
        (tokens[1], DRAW, {"version": -1}, "BadRequest", "malformed"),
        (tokens[1], DRAW, {"key": "k" * 256}, "BadRequest", "malformed"),
    ]
    for token, action, extra, kind, code in cases:
        refused = act(gql, match_id, token, action, **extra)
        assert refused["__typename"] == kind, (action, extra, refused)
        assert refused["code"] == code and refused["message"]
        if kind in ("VersionConflict", "NotYourTurn"):
            assert refused["currentVersion"] == 1
        assert history(gql, match_id, tokens[0]) == before, (action, extra)
    missing = act(gql, "no-such-match", tokens[1], DRAW)
    assert (missing["__typename"], missing["code"]) == ("NotFound", "match_not_found")


def test_illegal_choice_is_refused_with_the_engine_code(gql: GraphQLClient) -> None:
    match_id, tokens = create_match(gql)
    to_choose_phase(gql, match_id, tokens)
    hand = state(gql, match_id, tokens[0])["view"]["hand"]
    missing = next(card for card in range(1, 31) if card not in hand)
    before = history(gql, match_id, tokens[0])
    refused = act(gql, match_id, tokens[0], play(missing))
    assert (refused["__typename"], refused["code"]) == ("IllegalMove", "not_in_hand")
    assert history(gql, match_id, tokens[0]) == before


def test_acting_on_a_finished_match_is_match_finished(gql: GraphQLClient) -> None:
    match_id, tokens = create_match(gql, options={"rounds": 1})
    to_choose_phase(gql, match_id, tokens)
    for seat in (0, 1):
        card = state(gql, match_id, tokens[seat])["view"]["hand"][0]
        assert act(gql, match_id, tokens[seat], play(card))["__typename"] == "ActionAccepted"
    final = state(gql, match_id, tokens[0])
    assert final["status"] == "finished" and final["result"]["winners"]
    before = history(gql, match_id, tokens[0])
    refused = act(gql, match_id, tokens[0], DRAW)
    assert (refused["__typename"], refused["currentVersion"]) == ("MatchFinished", 4)
    assert history(gql, match_id, tokens[0]) == before


class DownStore(SqliteStore):
    """A store that has gone away after the match was created."""

    down = False

    async def load(self, match_id: str) -> tuple[int, bytes]:
        if self.down:
            raise StoreUnavailable("down")
        return await super().load(match_id)


def test_store_outage_is_unavailable(make_client: Any) -> None:
    store = DownStore(":memory:")
    gql = make_client(store)
    match_id, tokens = create_match(gql)
    store.down = True
    read = state(gql, match_id, tokens[0])
    assert (read["__typename"], read["code"], read["retryAfter"]) == (
        "Unavailable", "store_unavailable", 1
    )
    refused = act(gql, match_id, tokens[0], DRAW)
    assert refused["__typename"] == "Unavailable"
    store.down = False
    assert state(gql, match_id, tokens[0])["version"] == 0


def test_an_act_costs_one_load_and_one_compare_and_set(
    make_client: Any,
) -> None:
    """Issue #4's budget: <= 2 store round trips per action. GraphQL's per-game move input
    is checked against the match's game on the record ``act`` loads anyway -- also for the
    first move on a match this replica has never seen."""
    store = SqliteStore(":memory:")
    gql = make_client(store)
    match_id, tokens = create_match(gql)
    before = store.round_trips
    assert act(gql, match_id, tokens[0], DRAW)["__typename"] == "ActionAccepted"
    assert store.round_trips - before == 2
    before = store.round_trips
    wrong = act(gql, match_id, tokens[1], {"ny1901": {"endTurn": True}})
    assert (wrong["__typename"], wrong["code"]) == ("BadRequest", "malformed")
    assert "plays toy" in wrong["message"]
    assert store.round_trips - before == 1  # refused on the loaded record, nothing written
