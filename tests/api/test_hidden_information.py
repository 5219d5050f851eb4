"""Hidden information per seat: a token never shows another seat's hand or secret choice --
not in a view, legal moves, the log, an event stream, an error or an ETag -- and a spectator
sees only public information.

The toy game has both kinds of secret (a private hand with private draws, and a
simultaneous secret choice). For every game, real ones included, the API must serve each
seat exactly what the engine's per-seat functions give it (``view(state, seat)``,
``legal_actions``, ``Event.for_seat``) and nothing more.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from starlette.testclient import TestClient

from service import games
from service.games.base import Event, dump_action
from tests.api.conftest import GAMES, Match, create, engine_state, stored

SPECTATOR: dict[str, str] = {}


def seat_headers(match: Match) -> dict[int | None, dict[str, str]]:
    return {None: SPECTATOR, **{s: match.auth(s) for s in match.tokens}}


def post(client: TestClient, match: Match, seat: int, action: dict[str, Any]) -> Any:
    response = client.post(f"{match.url}/actions", headers=match.auth(seat),
                           json={"action": action})
    assert response.status_code == 200, response.text
    return response.json()


def text_of(client: TestClient, match: Match, headers: dict[str, str]) -> str:
    """Everything a caller can read about the match, as one string."""
    parts = [
        client.get(match.url, headers=headers).text,
        client.get(f"{match.url}/legal-moves", headers=headers).text,
        client.get(f"{match.url}/log", headers=headers).text,
    ]
    return "\n".join(parts)


# -- the toy game: concrete secrets --------------------------------------------------------


def test_a_private_draw_is_seen_only_by_the_drawer(client: TestClient) -> None:
    match = create(client, seed=41)
    drew = post(client, match, 0, {"type": "draw"})
    card = drew["events"][0]["data"]["card"]
    # (The toy game has no sentences of its own: its events' text is the neutral one.)
    assert drew["events"] == [{"kind": "drew", "data": {"seat": 0, "card": card},
                               "text": "Event: drew"}]
    hand0 = client.get(match.url, headers=match.auth(0)).json()["view"]["hand"]
    assert card in hand0

    for headers in (match.auth(1), SPECTATOR):
        state = client.get(match.url, headers=headers).json()
        assert state["view"]["hand"] != hand0
        assert state["view"]["hand_sizes"] == [4, 3]
        log = client.get(f"{match.url}/log", headers=headers).json()
        assert log["entries"] == [
            {"version": 1, "seat": 0, "action": None,
             "events": [{"kind": "drew", "data": {"seat": 0}, "text": "Event: drew"}]}
        ]
    assert client.get(match.url).json()["view"]["hand"] is None  # spectator: no hand
    own = client.get(f"{match.url}/log", headers=match.auth(0)).json()["entries"][0]
    assert own["action"] == {"type": "draw"}
    assert own["events"][0]["data"]["card"] == card


def test_a_secret_choice_stays_secret_until_the_reveal(client: TestClient) -> None:
    match = create(client, seed=42)
    post(client, match, 0, {"type": "pass"})
    post(client, match, 1, {"type": "pass"})
    hand0 = client.get(match.url, headers=match.auth(0)).json()["view"]["hand"]
    chosen = hand0[-1]
    mine = post(client, match, 0, {"type": "play", "card": chosen})
    assert mine["state"]["view"]["my_choice"] == chosen
    assert mine["events"] == [{"kind": "chose", "data": {"seat": 0, "card": chosen},
                               "text": "Event: chose"}]

    for headers in (match.auth(1), SPECTATOR):
        state = client.get(match.url, headers=headers).json()
        assert state["view"]["has_chosen"] == [True, False]
        assert state["view"]["my_choice"] is None
        entry = client.get(f"{match.url}/log?after=2", headers=headers).json()["entries"][0]
        assert entry == {"version": 3, "seat": 0, "action": None,
                         "events": [{"kind": "chose", "data": {"seat": 0},
                                     "text": "Event: chose"}]}
    # Seat 1 cannot learn the choice by probing it either: refusing a card it lacks says
    # the same whether seat 0 chose it or it is still in the deck.
    hand1 = client.get(match.url, headers=match.auth(1)).json()["view"]["hand"]
    in_deck = next(c for c in range(1, 31) if c not in hand0 and c not in hand1)
    probes = [
        client.post(f"{match.url}/actions", headers=match.auth(1),
                    json={"action": {"type": "play", "card": card}})
        for card in (chosen, in_deck)
    ]
    assert [p.status_code for p in probes] == [422, 422]
    assert probes[0].json()["detail"] == probes[1].json()["detail"]
    assert probes[0].json()["code"] == probes[1].json()["code"] == "not_in_hand"
    # ETags carry the version only: the same for every caller.
    etags = {client.get(match.url, headers={**h, "Accept-Encoding": "identity"}).headers["etag"]
             for h in seat_headers(match).values()}
    assert etags == {'"3"'}
    # Once both chose, the reveal is public.
    post(client, match, 1, {"type": "play", "card": hand1[0]})
    reveal = client.get(f"{match.url}/log?after=3").json()["entries"][0]["events"][-1]
    assert reveal["kind"] == "revealed"
    assert sorted(reveal["data"]["cards"]) == sorted([chosen, hand1[0]])


def test_a_token_grants_only_its_own_seat(client: TestClient) -> None:
    match = create(client, seed=43)
    for seat in (0, 1):
        assert client.get(match.url, headers=match.auth(seat)).json()["seat"] == seat
        moves = client.get(f"{match.url}/legal-moves", headers=match.auth(seat)).json()
        assert moves["seat"] == seat
    assert client.get(f"{match.url}/legal-moves", headers=match.auth(1)).json()["moves"] == []
    spectator = client.get(f"{match.url}/legal-moves").json()
    assert spectator["seat"] is None and spectator["moves"] == []
    # Seat 1's token cannot move for seat 0 (it is seat 0's turn).
    response = client.post(f"{match.url}/actions", headers=match.auth(1),
                           json={"action": {"type": "draw"}})
    assert response.status_code == 409 and response.json()["code"] == "not_your_turn"


def test_streams_are_filtered_per_seat(client: TestClient) -> None:
    """The watch behind SSE yields each seat's own view and never another's."""
    match = create(client, seed=44)
    post(client, match, 0, {"type": "draw"})
    service = client.app.state.match_service  # type: ignore[attr-defined]

    async def collect(token: str | None) -> list[Any]:
        seen = []
        async for state in service.watch(match.id, token, 0):
            seen.append(state.to_json())
            if state.version == 1:
                break
        return seen

    assert client.portal is not None
    hand0 = client.get(match.url, headers=match.auth(0)).json()["view"]["hand"]
    as_seat1 = client.portal.call(collect, match.tokens[1])
    as_spectator = client.portal.call(collect, None)
    assert as_seat1[-1]["view"]["hand"] != hand0
    assert as_spectator[-1]["view"]["hand"] is None
    assert client.portal.call(collect, match.tokens[0])[-1]["view"]["hand"] == hand0


# -- every game: the API serves exactly the engine's per-seat output ------------------------


def _as_json(value: Any) -> Any:
    return value.model_dump(mode="json", by_alias=True)


@pytest.mark.parametrize("game", GAMES)
def test_every_response_is_the_engines_view_for_that_seat(client: TestClient, game: str
                                                          ) -> None:
    info = next(g for g in client.get("/v1/games").json() if g["id"] == game)
    players = min(max(info["minPlayers"], 2), info["maxPlayers"])
    match = create(client, game=game, players=players, seed=77)
    engine = games.get(game)
    chooser = random.Random(77)
    # What the engine itself said for every move so far (seat, events): the log must serve
    # exactly these, filtered per seat, whether the store kept or re-derived them.
    played: list[tuple[int, list[Event]]] = []
    for _step in range(40):
        version, record = stored(client, match.id)
        state = engine_state(record)
        entries = client.portal.call(  # type: ignore[union-attr]
            client.app.state.store.log, match.id, 0  # type: ignore[attr-defined]
        )
        assert len(entries) == len(played) == version
        for seat, headers in seat_headers(match).items():
            got = client.get(match.url, headers={**headers, "Accept-Encoding": "identity"})
            assert got.headers["etag"] == f'"{version}"'
            assert got.json()["view"] == _as_json(engine.view(state, seat))
            assert got.json()["seat"] == seat
            moves = client.get(f"{match.url}/legal-moves", headers=headers).json()["moves"]
            expected = [] if seat is None else engine.legal_actions(state, seat)
            assert moves == [dump_action(engine, a) for a in expected]
            log = client.get(f"{match.url}/log", headers=headers).json()["entries"]
            assert len(log) == version
            for served, (mover, events) in zip(log, played, strict=True):
                assert served["seat"] == mover
                # Own moves only; every move once the match is finished (its seed is public
                # then, and the moves let anyone replay it: docs/security.md, item 8).
                finished = engine.result(state) is not None
                assert (served["action"] is not None) == (
                    finished or (seat is not None and mover == seat))
                assert [{"kind": e["kind"], **e["data"]} for e in served["events"]] == [
                    e.for_seat(seat) for e in events
                ]
        if engine.result(state) is not None:
            break
        seat = chooser.choice(sorted(engine.active_seats(state)))
        action = chooser.choice(engine.legal_actions(state, seat))
        _, events = engine.apply(state, seat, action)
        played.append((seat, list(events)))
        post(client, match, seat, dump_action(engine, action))


# -- Ginkgopolis: hands and the simultaneous card choice, end to end -------------------------


def _card_marks(cards: list[dict[str, Any]]) -> list[str]:
    """How a card object starts in compact JSON (tiles share labels but have no kind)."""
    return [f'"id":{c["id"]},"label":"{c["label"]}","kind"' for c in cards]


@pytest.mark.skipif("ginkgopolis" not in GAMES, reason="Ginkgopolis is not registered")
def test_ginkgopolis_hands_and_choices_stay_private(client: TestClient) -> None:
    match = create(client, game="ginkgopolis", players=3, seed=5)
    me0 = client.get(match.url, headers=match.auth(0)).json()["view"]["me"]
    assert me0["seat"] == 0 and me0["hand"]
    secrets_of_0 = _card_marks(me0["hand"])

    def others_read() -> str:
        seen = [text_of(client, match, match.auth(1)), text_of(client, match, SPECTATOR)]
        return "\n".join(seen)

    def assert_hidden(text: str) -> None:
        for mark in secrets_of_0:
            assert mark not in text, f"seat 0's card leaked: {mark}"

    assert_hidden(others_read())
    assert client.get(match.url).json()["view"]["me"] is None
    assert client.get(match.url, headers=match.auth(1)).json()["view"]["me"]["seat"] == 1

    moves = client.get(f"{match.url}/legal-moves", headers=match.auth(0)).json()["moves"]
    choice = next(m for m in moves if m["type"] == "choose_card")
    post(client, match, 0, choice)
    assert_hidden(others_read())
    entry = client.get(f"{match.url}/log", headers=match.auth(1)).json()["entries"][-1]
    assert entry["seat"] == 0 and entry["action"] is None

    # Probing seat 0's chosen card from seat 1 is refused like any card seat 1 lacks.
    hand1 = client.get(match.url, headers=match.auth(1)).json()["view"]["me"]["hand"]
    held = {c["id"] for c in hand1} | {c["id"] for c in me0["hand"]}
    elsewhere = next(i for i in range(1, 200) if i not in held)
    probes = [
        client.post(f"{match.url}/actions", headers=match.auth(1),
                    json={"action": {**choice, "card": card, "tile": None}})
        for card in (choice["card"], elsewhere)
    ]
    assert probes[0].status_code == probes[1].status_code
    assert probes[0].status_code in (409, 422)
    first, second = (p.json() for p in probes)
    assert first["code"] == second["code"]
    assert first["detail"].replace(str(choice["card"]), "#") == second["detail"].replace(
        str(elsewhere), "#"
    )
    assert_hidden("\n".join(p.text for p in probes))
