""""My matches": newest created first, a page at a time, filters on the match's own record,
and a cursor that neither repeats nor skips a match while others are created."""

from __future__ import annotations

from .conftest import Guest, Rig, bearer


def _ids(rig: Rig, guest: Guest, query: str = "") -> tuple[list[str], str | None]:
    answer = rig.client.get(f"/v1/me/matches{query}", headers=guest.auth)
    assert answer.status_code == 200, answer.text
    page = answer.json()
    return [item["matchId"] for item in page["items"]], page["nextCursor"]


def _all(rig: Rig, guest: Guest, query: str = "?limit=2") -> list[str]:
    ids, cursor = _ids(rig, guest, query)
    while cursor is not None:
        more, cursor = _ids(rig, guest, f"{query}&cursor={cursor}")
        ids += more
    return ids


def test_items_name_the_seat_the_players_and_whose_turn_it_is(rig: Rig) -> None:
    alice = rig.guest("Alice")
    # Alice in seat 0 moves first (toy), so the bot waits: nothing moves while we compare.
    match_id = rig.seated(alice.auth, [{"player": alice.id}, {"bot": "random"}])
    answer = rig.client.get("/v1/me/matches", headers=alice.auth)
    assert "Authorization" in answer.headers["vary"]
    (item,) = answer.json()["items"]
    state = rig.client.get(f"/v1/matches/{match_id}").json()
    assert item["matchId"] == match_id and item["game"] == "toy" and item["seat"] == 0
    assert item["players"] == [{"seat": 0, "name": "Alice", "bot": None, "open": False},
                               {"seat": 1, "name": None, "bot": "random", "open": False}]
    assert item["version"] == state["version"] == 0 and item["status"] == "active"
    assert item["activeSeats"] == state["activeSeats"] == [0]
    assert item["yourTurn"] is True
    assert item["url"] is None and item["updatedAt"].endswith("Z")


def test_newest_first_and_paging_reaches_every_match_once(rig: Rig) -> None:
    alice = rig.guest()
    made = [rig.seated(alice.auth, [{"player": alice.id}, {"bot": "random"}])
            for _ in range(5)]
    assert _all(rig, alice) == made[::-1]
    assert _all(rig, alice, "?limit=100") == made[::-1]


def test_matches_created_while_paging_are_neither_repeated_nor_skipped(rig: Rig) -> None:
    alice = rig.guest()
    made = [rig.seated(alice.auth, [{"player": alice.id}, {"bot": "random"}])
            for _ in range(4)]
    first, cursor = _ids(rig, alice, "?limit=2")
    newer = [rig.seated(alice.auth, [{"player": alice.id}, {"bot": "random"}])
             for _ in range(3)]
    rest = []
    while cursor is not None:
        more, cursor = _ids(rig, alice, f"?limit=2&cursor={cursor}")
        rest += more
    assert first + rest == made[::-1]  # the newer ones sort before the cursor
    assert _all(rig, alice)[:3] == newer[::-1]


def test_other_players_matches_are_not_listed(rig: Rig) -> None:
    alice, bob = rig.guest("Alice"), rig.guest("Bob")
    rig.seated(alice.auth, [{"player": alice.id}, {"bot": "random"}])
    assert _ids(rig, bob) == ([], None)


def test_status_and_turn_filters_read_each_match(rig: Rig) -> None:
    alice, bob = rig.guest("Alice"), rig.guest("Bob")
    # The default app's key seats both guests; no bot, so nothing moves by itself. Toy:
    # seat 0 draws first, so the match with Alice in seat 0 is her turn, the other is not.
    key = rig.call(rig.players.apps.rotate_key, "app_default")
    app = bearer(key)
    mine = rig.seated(app, [{"player": alice.id}, {"player": bob.id}])
    theirs = rig.seated(app, [{"player": bob.id}, {"player": alice.id}])
    assert _all(rig, alice, "?limit=100&turn=mine") == [mine]
    assert _all(rig, bob, "?limit=100&turn=mine") == [theirs]
    assert _all(rig, alice, "?limit=100&status=finished") == []
    assert set(_all(rig, alice, "?limit=100&status=active")) == {mine, theirs}


def test_bad_paging_parameters_are_refused(rig: Rig) -> None:
    alice = rig.guest()
    for query in ("?limit=0", "?limit=101", "?cursor=nonsense", "?status=over",
                  "?turn=theirs", "?limit=1&limit=2"):
        answer = rig.client.get(f"/v1/me/matches{query}", headers=alice.auth)
        assert answer.status_code == 400 and answer.json()["code"] == "malformed", query
    anonymous = rig.client.get("/v1/me/matches")
    assert anonymous.status_code == 401


def test_an_index_entry_whose_match_was_never_written_is_skipped(rig: Rig) -> None:
    """The crash between the two writes: the index entry lands, the match does not."""
    from service.players.listing import member
    from service.players.records import MATCHES_INDEX, player_key

    alice = rig.guest()
    kept = rig.seated(alice.auth, [{"player": alice.id}, {"bot": "random"}])
    store = rig.players.store
    rig.call(store.index_add, player_key(alice.id), MATCHES_INDEX,
             [member(10**12, "neverWritten1")])
    assert _all(rig, alice) == [kept]
    assert _all(rig, alice, "?limit=1") == [kept]
