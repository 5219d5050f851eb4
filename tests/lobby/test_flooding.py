"""Issue 31 item 9: lobby and live-list flooding. One address filled 99 of 100 lobby entries
on page 1, and refused joins left phantom live-list entries (page 1 of the live list came
back empty). A creator may have a capped number of public tables waiting in the lobby (429
``too_many_waiting_tables``: per player, and per address for guests), and a refused write
leaves no list entry."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from service.limits import LimitSettings
from service.tables.lists import ACTIVE, WAITING, lobby_key
from tests.api.conftest import make_app

NY = "ny1901"
TWO = [{"player": "me"}, {"open": True}]


class Lobby:
    def __init__(self, client: TestClient) -> None:
        self.client = client
        players = client.app.state.player_service  # type: ignore[attr-defined]
        self.players = players
        app, _ = client.portal.call(players.apps.add, "Flood")  # type: ignore[union-attr]
        self.app = app.id

    def guest(self, name: str) -> dict[str, str]:
        answer = self.client.post("/v1/players", json={"name": name, "appId": self.app})
        assert answer.status_code == 201, answer.text
        return {"Authorization": f"Bearer {answer.json()['token']}"}

    def table(self, auth: dict[str, str], seats: list[dict[str, Any]] = TWO,
              **extra: Any) -> Any:
        return self.client.post("/v1/matches", json={"game": NY, "seats": seats, **extra},
                                headers=auth)

    def index(self, kind: str) -> list[str]:
        async def page() -> list[str]:
            members: list[str] = await self.players.store.index_page(
                lobby_key(self.app), kind, after=None, limit=1000)
            return members
        return self.client.portal.call(page)  # type: ignore[union-attr,no-any-return]


def lobby_of(**limits: Any) -> Iterator[Lobby]:
    settings = LimitSettings(**limits)
    with TestClient(make_app(limits=settings)) as client:
        yield Lobby(client)


@pytest.fixture
def lobby() -> Iterator[Lobby]:
    yield from lobby_of(waiting_tables=2, waiting_tables_address=3)


def _refused(answer: Any, status: int, code: str) -> None:
    assert answer.status_code == status, answer.text
    assert answer.json()["code"] == code, answer.text


def test_a_player_has_a_capped_number_of_waiting_public_tables(lobby: Lobby) -> None:
    ann = lobby.guest("Ann")
    first = lobby.table(ann, visibility="public").json()["matchId"]
    lobby.table(ann, visibility="public")
    refused = lobby.table(ann, visibility="public")
    _refused(refused, 429, "too_many_waiting_tables")
    assert refused.json()["limit"] == 2
    assert len(lobby.index(WAITING)) == 2  # the refused one left no entry
    # Tables nobody lists are not capped (the match quota still counts them).
    assert lobby.table(ann).status_code == 201
    assert lobby.table(ann, visibility="private").status_code == 201
    # A table that leaves the lobby frees its slot.
    assert lobby.client.post(f"/v1/matches/{first}/cancel", headers=ann).status_code == 200
    assert lobby.table(ann, visibility="public").status_code == 201
    _refused(lobby.table(ann, visibility="public"), 429, "too_many_waiting_tables")


def test_guests_of_one_address_share_a_cap(lobby: Lobby) -> None:
    ann, bob = lobby.guest("Ann"), lobby.guest("Bob")
    assert [lobby.table(ann, visibility="public").status_code for _ in range(2)] == [201, 201]
    assert lobby.table(bob, visibility="public").status_code == 201
    _refused(lobby.table(bob, visibility="public"), 429, "too_many_waiting_tables")
    _refused(lobby.table(lobby.guest("Cid"), visibility="public"), 429,
             "too_many_waiting_tables")
    assert len(lobby.index(WAITING)) == 3


def test_the_cap_goes_with_rate_limits_off() -> None:
    for lobby in lobby_of(enabled=False, waiting_tables=1):
        ann = lobby.guest("Ann")
        assert [lobby.table(ann, visibility="public").status_code
                for _ in range(3)] == [201] * 3


def test_refused_joins_leave_no_live_list_entry(lobby: Lobby) -> None:
    """Before: each refused join of a last seat left a live-list entry; past four pages of
    them, page 1 of the live list came back empty."""
    hosts = [lobby.guest(f"Host{i}") for i in range(2)]
    outsider = lobby.guest("Eve")
    # A real live match, the oldest entry (listed last: newest first).
    real = lobby.table(hosts[0], visibility="public").json()["matchId"]
    assert lobby.client.post(f"/v1/matches/{real}/join", headers=outsider).status_code == 200
    tables = [lobby.table(hosts[1], visibility="public").json()["matchId"]]
    tables += [lobby.table(lobby.guest("Host2"), visibility="public").json()["matchId"]]
    for match_id in tables:  # the host joining its own table: refused, 409 already_seated
        host = hosts[1] if match_id == tables[0] else None
        for _ in range(3):
            answer = lobby.client.post(f"/v1/matches/{match_id}/join", json={"seat": 0},
                                       headers=host or outsider)
            assert answer.status_code == 409, answer.text
    assert [m.partition(".")[2] for m in lobby.index(ACTIVE)] == [real]
    page = lobby.client.get("/v1/matches?status=active&visibility=public&limit=1",
                            headers=outsider).json()
    assert [item["matchId"] for item in page["items"]] == [real]
