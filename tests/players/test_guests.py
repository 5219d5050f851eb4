"""Guest players: a name in, a secret player token out; the token acts for the player's seat
in every match it sits in; names are checked; unknown and unseeable players answer alike."""

from __future__ import annotations

import unicodedata
from typing import Any

import pytest
from starlette.testclient import TestClient

from .conftest import Rig, alike, bearer


def test_a_guest_gets_an_id_a_token_and_its_cleaned_name(rig: Rig) -> None:
    answer = rig.client.post("/v1/players", json={"name": "  Ame\u0301lie "})
    assert answer.status_code == 201
    assert answer.headers["cache-control"] == "no-store"
    got = answer.json()
    assert got["name"] == unicodedata.normalize("NFC", "Amélie") and got["name"] == "Amélie"
    assert got["token"].startswith("skp_") and got["appId"] == "app_default"
    assert len(got["id"]) >= 26  # >= 128 random bits
    me = rig.client.get("/v1/me", headers=bearer(got["token"]))
    assert me.status_code == 200
    assert me.json() == {"id": got["id"], "name": "Amélie", "appId": "app_default",
                         "user": None}


@pytest.mark.parametrize("name", ["", "   ", "x" * 33, "bad\u0007bell", "rtl\u202eflip",
                                  "zero\u200bwidth"])
def test_bad_names_are_refused_and_nothing_is_written(rig: Rig, name: str) -> None:
    answer = rig.client.post("/v1/players", json={"name": name})
    assert answer.status_code == 400
    assert answer.json()["code"] == "bad_name"


def test_thirty_two_code_points_and_emoji_are_a_name(rig: Rig) -> None:
    assert rig.guest("é" * 32).name == "é" * 32
    assert rig.guest("🎲 Dice").name == "🎲 Dice"


def test_an_unknown_app_and_an_app_without_guests_are_refused(rig: Rig) -> None:
    unknown = rig.client.post("/v1/players", json={"name": "A", "appId": "app_nosuchapp"})
    assert unknown.status_code == 422 and unknown.json()["code"] == "unknown_app"
    app_id, _ = rig.app("Closed", guests=False)
    closed = rig.client.post("/v1/players", json={"name": "A", "appId": app_id})
    assert closed.status_code == 403 and closed.json()["code"] == "guests_disabled"


def test_wrong_and_tampered_player_tokens_get_one_answer(rig: Rig) -> None:
    alice = rig.guest()
    tampered = alice.token[:-2] + ("AA" if not alice.token.endswith("AA") else "BB")
    other_id = "skp_" + "a" * 26 + "." + alice.token.split(".", 1)[1]
    answers = [rig.client.get("/v1/me", headers=bearer(t)) for t in (tampered, other_id)]
    assert [a.status_code for a in answers] == [401, 401]
    assert alike(answers[0], answers[1])


def test_a_seat_token_is_not_a_player(rig: Rig) -> None:
    created = rig.client.post("/v1/matches", json={"game": "toy", "players": 2}).json()
    answer = rig.client.get("/v1/me", headers=bearer(created["seats"][0]["token"]))
    assert answer.status_code == 401 and answer.json()["code"] == "unauthorized"


def test_a_player_plays_its_seat_with_its_own_token(rig: Rig) -> None:
    alice, bob = rig.guest("Alice"), rig.guest("Bob")
    match_id = rig.seated(alice.auth, [{"player": alice.id}, {"bot": "random"}])
    created_seats = rig.client.get(f"/v1/matches/{match_id}", headers=alice.auth).json()
    assert created_seats["seat"] == 0
    assert created_seats["players"] == [{"seat": 0, "name": "Alice", "bot": None, "open": False},
                                         {"seat": 1, "name": None, "bot": "random", "open": False}]
    moves = rig.client.get(f"/v1/matches/{match_id}/legal-moves", headers=alice.auth).json()
    move = {"action": moves["moves"][0], "expectedVersion": moves["version"]}
    # Bob has no seat here: a spectator when reading, 403 when writing.
    seen = rig.client.get(f"/v1/matches/{match_id}", headers=bob.auth).json()
    assert seen["seat"] is None
    refused = rig.client.post(f"/v1/matches/{match_id}/actions", json=move, headers=bob.auth)
    assert refused.status_code == 403 and refused.json()["code"] == "forbidden"
    played = rig.client.post(f"/v1/matches/{match_id}/actions", json=move, headers=alice.auth)
    assert played.status_code == 200 and played.json()["version"] == moves["version"] + 1


def test_a_player_seats_only_itself(rig: Rig) -> None:
    alice, bob = rig.guest("Alice"), rig.guest("Bob")
    other = rig.client.post("/v1/matches", headers=alice.auth, json={
        "game": "toy", "seats": [{"player": alice.id}, {"player": bob.id}]})
    missing = rig.client.post("/v1/matches", headers=alice.auth, json={
        "game": "toy", "seats": [{"player": alice.id}, {"player": "b" * 26}]})
    assert other.status_code == missing.status_code == 404
    assert alike(other, missing)  # an unseeable player is an unknown one
    anonymous = rig.client.post("/v1/matches", json={
        "game": "toy", "seats": [{"player": alice.id}, {"bot": "random"}]})
    assert anonymous.status_code == 401


@pytest.mark.parametrize("body", [
    {"game": "toy", "seats": [{"player": "x"}, {"bot": "random"}], "bots": {"1": "random"}},
    {"game": "toy", "seats": [{"bot": "random"}, {"bot": "random"}], "players": 3},
    {"game": "toy", "seats": [{"player": "x", "bot": "random"}, {"bot": "random"}]},
    {"game": "toy", "seats": [{}, {"bot": "random"}]},
])
def test_malformed_seat_lists_are_refused(rig: Rig, body: dict[str, object]) -> None:
    alice = rig.guest()
    body = {**body, "seats": [
        {**s, "player": alice.id} if s.get("player") == "x" else s  # type: ignore[attr-defined]
        for s in body["seats"]]}  # type: ignore[attr-defined]
    answer = rig.client.post("/v1/matches", json=body, headers=alice.auth)
    assert answer.status_code == 400 and answer.json()["code"] == "malformed"


def test_one_player_in_two_seats_is_refused(rig: Rig) -> None:
    alice = rig.guest()
    answer = rig.client.post("/v1/matches", headers=alice.auth, json={
        "game": "toy", "seats": [{"player": alice.id}, {"player": alice.id}]})
    assert answer.status_code == 400 and answer.json()["code"] == "malformed"


def test_leaving_for_good_renames_every_seat_and_revokes_the_token(rig: Rig) -> None:
    alice, bob = rig.guest("Alice"), rig.guest("Bob")
    first = rig.seated(alice.auth, [{"player": alice.id}, {"bot": "random"}])
    second = rig.seated(alice.auth, [{"bot": "random"}, {"player": alice.id}])
    before = rig.client.get(f"/v1/matches/{first}").json()["version"]
    gone = rig.client.delete("/v1/me", headers=alice.auth)
    assert gone.status_code == 200
    assert gone.json() == {"id": alice.id, "name": "Former player", "matchesRenamed": 2}
    for match_id, seat in ((first, 0), (second, 1)):
        state = rig.client.get(f"/v1/matches/{match_id}", headers=bob.auth).json()
        assert state["players"][seat]["name"] == "Former player"
    after = rig.client.get(f"/v1/matches/{first}").json()
    assert after["version"] == before + 1  # the rename is a version of its own
    log = rig.client.get(f"/v1/matches/{first}/log").json()
    assert log["entries"][-1]["seat"] is None
    revoked = rig.client.get("/v1/me", headers=alice.auth)
    assert revoked.status_code == 401 and revoked.json()["code"] == "credential_revoked"


def test_a_lost_seat_token_is_recovered_with_the_player_token(rig: Rig) -> None:
    alice, bob = rig.guest("Alice"), rig.guest("Bob")
    match_id = rig.seated(alice.auth, [{"player": alice.id}, {"bot": "random"}])
    renewed = rig.client.post(f"/v1/matches/{match_id}/seats/0/token", headers=alice.auth)
    assert renewed.status_code == 200
    token = renewed.json()["token"]
    assert rig.client.get(f"/v1/matches/{match_id}", headers=bearer(token)).json()["seat"] == 0
    again = rig.client.post(f"/v1/matches/{match_id}/seats/0/token", headers=alice.auth).json()
    old = rig.client.get(f"/v1/matches/{match_id}", headers=bearer(token))
    assert old.status_code == 401  # the previous token stopped working
    assert rig.client.get(f"/v1/matches/{match_id}",
                          headers=bearer(again["token"])).json()["seat"] == 0
    stolen = rig.client.post(f"/v1/matches/{match_id}/seats/0/token", headers=bob.auth)
    assert stolen.status_code == 403


# -- issue 31, item 6: guests and quick match within the address's quotas and budgets ----


def _limited_app(**settings: Any) -> Any:
    from service.limits import DEFAULT_POLICIES, LimitSettings, Policy, Quotas
    from tests.api.conftest import make_app

    policies = dict(DEFAULT_POLICIES)
    for name, spec in settings.pop("budgets", {}).items():
        quota, window = spec.split("/")
        policies[name] = Policy(name, int(quota), int(window))
    quotas = settings.pop("quotas", Quotas(player=0, app=0, address=0))
    return make_app(limits=LimitSettings(enabled=True, policies=policies, quotas=quotas),
                    **settings)


def _vs_bot(client: TestClient, guest: dict[str, Any]) -> Any:
    return client.post("/v1/matches", headers=bearer(guest["token"]), json={
        "game": "toy", "seats": [{"player": guest["id"]}, {"bot": "random"}]})


def test_the_quotas_of_guests_count_against_their_address(toy_module: None) -> None:
    """Before the fix 15 guests from one address held 1,500 unfinished matches against an
    address quota of 1,000: here the second guest got its own 3."""
    from service.limits import Quotas

    with TestClient(_limited_app(quotas=Quotas(player=3, address=4))) as client:
        one, two = [client.post("/v1/players", json={"name": n}).json() for n in "AB"]
        assert [_vs_bot(client, one).status_code for _ in range(3)] == [201] * 3
        answers = [_vs_bot(client, two) for _ in range(2)]
        assert [a.status_code for a in answers] == [201, 429]
        assert answers[1].json()["code"] == "quota_exceeded"
        # the refused creation left no slot taken in the guest's own quota
        assert _vs_bot(client, one).json()["code"] == "quota_exceeded"


def test_guest_creation_is_budgeted_per_address(toy_module: None) -> None:
    from service.limits import DEFAULT_POLICIES

    default = DEFAULT_POLICIES["guests"]
    assert default.quota * 60 / default.window >= 30  # a classroom behind one NAT
    with TestClient(_limited_app(budgets={"guests": "3/60"})) as client:
        made = [client.post("/v1/players", json={"name": "G"}) for _ in range(3)]
        assert [m.status_code for m in made] == [201] * 3
        refused = client.post("/v1/players", json={"name": "G"},
                              headers=bearer(made[0].json()["token"]))
        assert refused.status_code == 429 and refused.json()["code"] == "rate_limited"
        graphql = client.post("/graphql", json={
            "query": 'mutation { createPlayer(name: "G") { __typename } }'}).json()
        assert graphql["data"]["createPlayer"]["__typename"] == "Unavailable"
        # matches are still created: the address's create budget is apart
        assert client.post("/v1/matches", json={"game": "toy", "players": 2}).status_code == 201


def test_quick_match_counts_quotas(toy_module: None) -> None:
    """Before the fix one guest got 150 bot-filled quick matches in 7.6 s."""
    from service.limits import Quotas

    with TestClient(_limited_app(quotas=Quotas(player=2, address=100))) as client:
        guest = client.post("/v1/players", json={"name": "Q"}).json()
        quick = {"game": "ny1901", "players": 2, "fillWithBotsAfterSeconds": 0}
        for _ in range(2):
            answer = client.post("/v1/queue", json=quick, headers=bearer(guest["token"]))
            assert answer.status_code == 201 and answer.json()["status"] == "matched"
        refused = client.post("/v1/queue", json=quick, headers=bearer(guest["token"]))
        assert refused.status_code == 429 and refused.json()["code"] == "quota_exceeded"
        assert _vs_bot(client, guest).json()["code"] == "quota_exceeded"


def test_a_quick_match_formed_by_another_client_counts_against_each_guests_address(
    toy_module: None,
) -> None:
    """Issue 31, item 6: a guest's quick match counts against its address's quota even when
    another client's request formed it (before the fix only the guest's own quota counted
    it, so guests waiting for others' requests never filled their address's)."""
    from service.limits import Quotas

    app = _limited_app(quotas=Quotas(player=100, address=2))
    quick = {"game": "ny1901", "players": 2}
    with TestClient(app, client=("10.0.0.1", 1000)) as first:
        second = TestClient(app, client=("10.0.0.2", 1000))
        waiter = first.post("/v1/players", json={"name": "W"}).json()
        for n in range(2):
            queued = first.post("/v1/queue", json=quick, headers=bearer(waiter["token"]))
            assert queued.status_code == 201 and queued.json()["status"] == "waiting"
            other = second.post("/v1/players", json={"name": f"O{n}"}).json()
            formed = second.post("/v1/queue", json=quick, headers=bearer(other["token"]))
            assert formed.json()["status"] == "matched", formed.text
        # Two unfinished matches count against 10.0.0.1: its guests, old and new, are full.
        refused = first.post("/v1/queue", json=quick, headers=bearer(waiter["token"]))
        assert refused.status_code == 429 and refused.json()["code"] == "quota_exceeded"
        newcomer = first.post("/v1/players", json={"name": "N"}).json()
        assert _vs_bot(first, newcomer).json()["code"] == "quota_exceeded"
        # ...and 10.0.0.2, whose two guests formed them, too.
        third = second.post("/v1/players", json={"name": "T"}).json()
        assert _vs_bot(second, third).json()["code"] == "quota_exceeded"
        # Another address is not touched.
        elsewhere = TestClient(app, client=("10.0.0.3", 1000))
        stranger = elsewhere.post("/v1/players", json={"name": "S"}).json()
        assert _vs_bot(elsewhere, stranger).status_code == 201


def _play_out(client: TestClient, match_id: str, tokens: dict[int, str]) -> None:
    import random

    chooser = random.Random(3)
    url = f"/v1/matches/{match_id}"
    for _ in range(200):
        state = client.get(url).json()
        if state["status"] == "finished":
            return
        seat = chooser.choice(state["activeSeats"])
        moves = client.get(f"{url}/legal-moves", headers=bearer(tokens[seat])).json()
        done = client.post(f"{url}/actions", headers=bearer(tokens[seat]), json={
            "action": chooser.choice(moves["moves"]), "expectedVersion": moves["version"]})
        assert done.status_code == 200, done.text
    raise AssertionError("the toy match did not end")


def test_idle_guests_expire_unless_mid_game_or_with_a_history_worth_keeping(
    toy_module: None,
) -> None:
    """Before the fix guests never expired. With ``--guest-ttl`` 1 s: a guest without
    matches leaves for good (its token refused); one with an unfinished match stays; two
    who finished a match against each other are kept for good."""
    import time

    from service.players.expiry import GUESTS
    from service.workers.guests import GuestWorker
    from tests.api.conftest import make_app

    with TestClient(make_app(guest_ttl=1.0, worker=False)) as client:
        players = client.app.state.player_service  # type: ignore[attr-defined]

        def guest(name: str) -> dict[str, Any]:
            made = client.post("/v1/players", json={"name": name})
            assert made.status_code == 201
            got: dict[str, Any] = made.json()
            return got

        idle, busy, one, other = (guest(n) for n in ("Idle", "Busy", "One", "Other"))
        assert _vs_bot(client, busy).status_code == 201
        duel = client.post("/v1/matches", headers=bearer(one["token"]), json={
            "game": "toy", "options": {"rounds": 1},
            "seats": [{"player": "me"}, {"open": True}]})
        assert duel.status_code == 201, duel.text
        duel_id = duel.json()["matchId"]
        joined = client.post(f"/v1/matches/{duel_id}/join", headers=bearer(other["token"]))
        assert joined.status_code == 200, joined.text
        _play_out(client, duel_id, {0: one["token"], 1: other["token"]})
        time.sleep(2.2)
        worker = GuestWorker(players.expiry)
        assert client.portal.call(worker.once) == 4  # type: ignore[union-attr]
        assert worker.expired == 1
        me = {g["name"]: client.get("/v1/me", headers=bearer(g["token"])).status_code
              for g in (idle, busy, one, other)}
        assert me == {"Idle": 401, "Busy": 200, "One": 200, "Other": 200}

        async def due(player_id: str) -> int | None:
            return await players.expiry.schedules.schedule_due_at(GUESTS, player_id)

        portal = client.portal  # type: ignore[union-attr]
        assert portal.call(due, busy["id"]) is not None  # looked at again later
        assert portal.call(due, one["id"]) is None and portal.call(due, other["id"]) is None


def test_the_guest_ttl_flag() -> None:
    from service.cli import build_parser

    def ttl(*flags: str) -> float:
        value: float = build_parser().parse_args(["serve", *flags]).guest_ttl
        return value

    assert ttl() == 30 * 86400
    assert ttl("--guest-ttl", "12h") == 12 * 3600
    assert ttl("--guest-ttl", "90") == 90
    assert ttl("--guest-ttl", "never") == 0
    assert build_parser().parse_args(["worker", "--guest-ttl", "2d"]).guest_ttl == 2 * 86400


def test_a_finished_match_someone_resigned_or_left_to_a_bot_is_still_worth_keeping() -> None:
    """A resigned, timed-out or handed-over seat is in ``bots`` (a bot holds it), but it was
    a person's: the match was played against another person (before, such a guest's
    history was not worth keeping and the guest could expire)."""
    from service.matches.records import Away, MatchRecord, SeatPlayer
    from service.players.expiry import worth_keeping

    def record(bots: dict[int, str], away: dict[int, Away]) -> MatchRecord:
        return MatchRecord(game="toy", players=2, options=None, seed=1, tokens=(None, None),
                           state=b"", finished=True, bots=bots, away=away)

    left = Away(SeatPlayer("p2", "Bea"), None, "resign", 7)
    assert worth_keeping(record({}, {}))
    assert worth_keeping(record({1: "random"}, {1: left}))
    assert worth_keeping(record({1: "random"}, {1: Away(None, "d", "hand_over", 3)}))
    assert not worth_keeping(record({1: "random"}, {}))  # against a bot from the start

def test_rate_limits_off_switch_off_the_guest_budget_and_the_guest_quotas(
    toy_module: None,
) -> None:
    from service.limits import LimitSettings, Quotas
    from tests.api.conftest import make_app

    off = LimitSettings(enabled=False, quotas=Quotas(player=1, app=1, address=1))
    with TestClient(make_app(limits=off)) as client:
        made = [client.post("/v1/players", json={"name": "G"}) for _ in range(70)]
        assert {m.status_code for m in made} == {201}
        guest = made[0].json()
        assert [_vs_bot(client, guest).status_code for _ in range(3)] == [201] * 3
        quick = {"game": "ny1901", "players": 2, "fillWithBotsAfterSeconds": 0}
        queued = [client.post("/v1/queue", json=quick, headers=bearer(guest["token"]))
                  for _ in range(3)]
        assert [q.json()["status"] for q in queued] == ["matched"] * 3
