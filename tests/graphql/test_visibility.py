"""Hidden information per seat over GraphQL: a seat's token never shows another seat's hand,
drawn card or secret choice -- in views, legal moves, the log, act answers, refusals or the
subscription; a spectator sees public information only."""

from __future__ import annotations

import random
from typing import Any

from tests.graphql.client import GraphQLClient
from tests.graphql.conftest import create_match
from tests.graphql.queries import LEGAL_MOVES, LOG, MATCH_UPDATED
from tests.graphql.test_operations import act, play, state

PRIVATE_KINDS = ("drew", "chose")


def check_events(events: list[dict[str, Any]], viewer: int | None) -> None:
    for event in events:
        if event["kind"] in PRIVATE_KINDS:
            own = event["data"]["seat"] == viewer
            assert ("card" in event["data"]) == own, (viewer, event)


def check_state(update: dict[str, Any], viewer: int | None, hands: dict[int, list[int]]) -> None:
    assert update["seat"] == viewer
    view = update["view"]
    if viewer is None:
        assert view["hand"] is None and view["myChoice"] is None
    else:
        assert view["hand"] == hands[viewer]


def check_everything(gql: GraphQLClient, match_id: str, tokens: dict[int, str]) -> None:
    hands = {seat: state(gql, match_id, token)["view"]["hand"] for seat, token in tokens.items()}
    # Once the match is finished every move is shown (the seed is revealed then: item 8).
    finished = state(gql, match_id)["status"] == "finished"
    for viewer in [*tokens, None]:
        token = tokens.get(viewer) if viewer is not None else None
        check_state(state(gql, match_id, token), viewer, hands)
        moves = gql(LEGAL_MOVES, {"id": match_id}, token)["legalMoves"]
        for move in moves["moves"]:
            if move["__typename"] == "ToyPlay":
                assert viewer is not None and move["card"] in hands[viewer]
        for entry in gql(LOG, {"id": match_id}, token)["log"]["entries"]:
            assert (entry["action"] is not None) == (finished or entry["seat"] == viewer), (
                viewer, entry)
            check_events(entry["events"], viewer)


def test_no_seat_sees_another_seats_secrets(gql: GraphQLClient) -> None:
    match_id, tokens = create_match(gql, players=3, seed=11, options={"rounds": 2})
    chooser = random.Random(3)
    with (
        gql.subscribe(MATCH_UPDATED, {"id": match_id, "after": 0}) as spectator,
        gql.subscribe(MATCH_UPDATED, {"id": match_id, "after": 0}, tokens[1]) as seat1,
    ):
        while True:
            current = state(gql, match_id)
            if current["status"] == "finished":
                break
            seat = chooser.choice(current["activeSeats"])
            moves = gql(LEGAL_MOVES, {"id": match_id}, tokens[seat])["legalMoves"]["moves"]
            move = chooser.choice(moves)
            action = (
                {"toy": {"play": {"card": move["card"]}}}
                if move["__typename"] == "ToyPlay" else {"toy": {move["type"]: True}}
            )
            accepted = act(gql, match_id, tokens[seat], action)
            assert accepted["__typename"] == "ActionAccepted"
            check_events(accepted["events"], seat)
            check_everything(gql, match_id, tokens)
            hands = {s: state(gql, match_id, t)["view"]["hand"] for s, t in tokens.items()}
            check_state(spectator.next()["matchUpdated"], None, hands)
            check_state(seat1.next()["matchUpdated"], 1, hands)


def test_refusals_do_not_reveal_other_hands(gql: GraphQLClient) -> None:
    match_id, tokens = create_match(gql, seed=5)
    act(gql, match_id, tokens[0], {"toy": {"pass": True}})
    act(gql, match_id, tokens[1], {"toy": {"pass": True}})
    theirs = state(gql, match_id, tokens[0])["view"]["hand"]
    for card in theirs:
        refused = act(gql, match_id, tokens[1], play(card))
        assert refused["__typename"] == "IllegalMove"
        assert str(card) not in refused["message"]
