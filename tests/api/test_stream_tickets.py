"""Stream tickets (``POST /v1/matches/{id}/stream-tickets``, ``?ticket=`` on the event
stream): the seat's stream with its private view; refused when expired (an injected clock),
for another match, tampered with, or after the seat was handed to a bot; spectators need
none; the same over GraphQL; and never in the access log of a real server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from starlette.testclient import TestClient

from service.identity import stream_tickets
from service.identity.seats import digest
from tests.api.conftest import Match, bearer, create, free_port, make_app, serve_in_thread
from tests.api.sse import read_states

ROOT = Path(__file__).resolve().parents[2]
NOW = 1_800_000_000.0
LIFETIME = 60


class Clock:
    def __init__(self, now: float = NOW) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(client: TestClient) -> Clock:
    """The app's service clock, set by the test."""
    fake = Clock()
    client.app.state.match_service.storage.clock = fake  # type: ignore[attr-defined]
    return fake


def ticket_for(client: TestClient, match: Match, seat: int) -> dict[str, Any]:
    answer = client.post(f"{match.url}/stream-tickets", headers=match.auth(seat))
    assert answer.status_code == 200, answer.text
    assert answer.headers["cache-control"] == "no-store"
    body: dict[str, Any] = answer.json()
    return body


def refusal(answer: httpx2.Response) -> tuple[int, str]:
    assert answer.headers["content-type"] == "application/problem+json"
    return answer.status_code, answer.json()["code"]


def seat_of_ticket(client: TestClient, match: Match, ticket: str) -> int:
    service = client.app.state.match_service  # type: ignore[attr-defined]
    assert client.portal is not None
    seat: int = client.portal.call(service.seat_of_ticket, match.id, ticket)
    return seat


# -- the signed ticket itself (pure) -------------------------------------------------------


KEYS = (digest("sky_seat0"), digest("sky_seat1"), None)


def test_a_ticket_names_its_seat_until_it_expires() -> None:
    issued = stream_tickets.issue(KEYS[1], "m1", 1, NOW + 0.9, LIFETIME)
    assert issued.ticket.startswith("skt_1:") and issued.seat == 1
    again = stream_tickets.issue(KEYS[1], "m1", 1, NOW + 0.9, LIFETIME)
    assert again.ticket != issued.ticket  # a nonce: each ticket single-use on its own
    assert issued.expires == int(NOW) + LIFETIME + 1
    for now in (NOW, NOW + LIFETIME, issued.expires - 0.01, NOW - stream_tickets.CLOCK_SKEW):
        assert stream_tickets.verify(issued.ticket, "m1", KEYS, now, LIFETIME) == 1, now
    for now in (issued.expires, NOW - stream_tickets.CLOCK_SKEW - 1):
        with pytest.raises(stream_tickets.TicketRefused) as refused:
            stream_tickets.verify(issued.ticket, "m1", KEYS, now, LIFETIME)
        assert refused.value.reason == "expired"


def test_a_forged_or_foreign_ticket_is_invalid() -> None:
    good = stream_tickets.issue(KEYS[0], "m1", 0, NOW, LIFETIME).ticket
    body = good.removeprefix("skt_")
    middle = len(good) - 10  # inside the signature: every bit of it counts
    flipped = good[:middle] + ("A" if good[middle] != "A" else "B") + good[middle + 1:]
    # The last character's low bits are ignored by base64: other spellings of the same
    # signature would be other tickets (each single-use): only the canonical one verifies.
    import base64

    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    last = alphabet.index(good[-1])
    aliases = [good[:-1] + alphabet[last ^ low] for low in (1, 2, 3)]
    assert all(base64.urlsafe_b64decode(a.rpartition(".")[2] + "=")
               == base64.urlsafe_b64decode(good.rpartition(".")[2] + "=") for a in aliases)
    candidates = {
        "other match": ("m2", KEYS, good),
        "other seat's key": ("m1", (KEYS[1], KEYS[1]), good),
        "seat handed to a bot": ("m1", (None, KEYS[1]), good),
        "tampered signature": ("m1", KEYS, flipped),
        "another seat named": ("m1", KEYS, "skt_1." + body.partition(".")[2]),
        "a seat with no digest": ("m1", KEYS, "skt_2." + body.partition(".")[2]),
        "no such seat": ("m1", KEYS, "skt_9." + body.partition(".")[2]),
        "no prefix": ("m1", KEYS, body),
        "a seat token": ("m1", KEYS, "sky_seat0"),
        "empty": ("m1", KEYS, ""),
        "garbage": ("m1", KEYS, "skt_0.ü.x"),
        "no signature": ("m1", KEYS, "skt_0"),
        **{f"signature spelled otherwise {n}": ("m1", KEYS, alias)
           for n, alias in enumerate(aliases)},
    }
    for name, (match_id, keys, ticket) in candidates.items():
        with pytest.raises(stream_tickets.TicketRefused) as refused:
            stream_tickets.verify(ticket, match_id, keys, NOW, LIFETIME)
        assert refused.value.reason == "invalid", name


# -- REST ---------------------------------------------------------------------------------


def test_a_seat_gets_a_ticket_for_its_own_seat(client: TestClient, clock: Clock) -> None:
    match = create(client)
    body = ticket_for(client, match, 1)
    assert set(body) == {"ticket", "expiresAt"}
    assert body["ticket"].startswith("skt_")
    assert body["expiresAt"] == "2027-01-15T08:01:01Z"  # NOW + 61 s, RFC 3339 UTC
    assert datetime.fromisoformat(body["expiresAt"]).timestamp() == int(NOW) + LIFETIME + 1
    assert seat_of_ticket(client, match, body["ticket"]) == 1


def test_only_a_seat_gets_a_ticket(client: TestClient) -> None:
    match = create(client)
    url = f"{match.url}/stream-tickets"
    spectator = client.post(url)
    assert refusal(spectator) == (401, "unauthorized")
    assert "Spectators need no ticket" in spectator.json()["detail"]
    assert refusal(client.post(url, headers=bearer("sky_not-a-seat"))) == (401, "unauthorized")
    assert refusal(client.post(url, headers={"Authorization": "Basic x"})) == (
        401, "unauthorized")
    other = create(client, seed=8)
    assert refusal(client.post(url, headers=other.auth(0))) == (401, "unauthorized")
    assert refusal(client.post("/v1/matches/nope/stream-tickets", headers=match.auth(0))) == (
        404, "match_not_found")
    # A ticket is no credential for getting another ticket.
    ticket = ticket_for(client, match, 0)["ticket"]
    assert refusal(client.post(url, headers=bearer(ticket))) == (401, "unauthorized")


def test_the_stream_refuses_a_ticket_once_it_expires(client: TestClient, clock: Clock) -> None:
    match = create(client)
    ticket = ticket_for(client, match, 0)["ticket"]
    clock.now = NOW + LIFETIME
    assert seat_of_ticket(client, match, ticket) == 0  # the last second it is accepted
    clock.now = NOW + LIFETIME + 1
    answer = client.get(f"{match.url}/events?ticket={ticket}")
    assert refusal(answer) == (401, "ticket_invalid")
    assert "expired" in answer.json()["detail"]


def test_the_stream_refuses_foreign_tampered_and_orphaned_tickets(client: TestClient) -> None:
    match, other = create(client), create(client, seed=8)
    ticket = ticket_for(client, match, 0)["ticket"]
    foreign = ticket_for(client, other, 0)["ticket"]
    tampered = ticket[:-2] + ("AA" if not ticket.endswith("AA") else "BB")
    for bad in (foreign, tampered, "skt_1" + ticket.removeprefix("skt_0"), "", "nonsense",
                match.tokens[0]):
        answer = client.get(f"{match.url}/events", params={"ticket": bad})
        assert refusal(answer) == (401, "ticket_invalid"), bad
    # The seat leaves: its token and every ticket issued for it stop working.
    handed = client.post(f"{match.url}/seats/0/bot", json={"kind": "random"},
                         headers=match.auth(0))
    assert handed.status_code == 200, handed.text
    assert refusal(client.get(f"{match.url}/events", params={"ticket": ticket})) == (
        401, "ticket_invalid")
    assert refusal(client.post(f"{match.url}/stream-tickets", headers=match.auth(0))) == (
        401, "seat_handed_to_bot")  # issue 18: the old token is told why
    missing = client.get("/v1/matches/nope/events", params={"ticket": ticket})
    assert refusal(missing) == (404, "match_not_found")


def test_a_ticket_and_a_token_together_are_malformed(client: TestClient) -> None:
    match = create(client)
    ticket = ticket_for(client, match, 0)["ticket"]
    url = f"{match.url}/events"
    both = client.get(url, params={"ticket": ticket}, headers=match.auth(0))
    assert refusal(both) == (400, "malformed")
    twice = client.get(f"{url}?ticket={ticket}&ticket={ticket}")
    assert refusal(twice) == (400, "malformed")


def test_a_ticket_is_no_credential_anywhere_else(client: TestClient) -> None:
    match = create(client)
    ticket = ticket_for(client, match, 0)["ticket"]
    state = client.get(match.url, params={"ticket": ticket})
    assert state.status_code == 200 and state.json()["seat"] is None  # a spectator
    moves = client.get(f"{match.url}/legal-moves", params={"ticket": ticket})
    assert moves.status_code == 200 and moves.json()["moves"] == []
    acting = client.post(f"{match.url}/actions", params={"ticket": ticket},
                         json={"action": {"type": "pass"}})
    assert refusal(acting) == (401, "unauthorized")
    assert client.get(match.url, params={"ticket": "garbage"}).status_code == 200


@pytest.mark.slow
async def test_a_ticket_opens_the_seats_own_stream() -> None:
    with serve_in_thread(make_app()) as server:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
            created = (await http.post("/v1/matches", json={"game": "toy", "players": 2,
                                                              "seed": 5})).json()
            url = f"/v1/matches/{created['matchId']}"
            token = created["seats"][1]["token"]
            issued = await http.post(f"{url}/stream-tickets", headers=bearer(token))
            ticket = issued.json()["ticket"]
            [seat] = await read_states(http, f"{url}/events?ticket={ticket}", limit=1)
            [spectator] = await read_states(http, f"{url}/events", limit=1)
            own = (await http.get(url, headers=bearer(token))).json()
    assert seat.json()["seat"] == 1 and seat.json()["view"] == own["view"]
    assert own["view"]["hand"]  # the seat's private part
    assert spectator.json()["seat"] is None and spectator.json()["view"]["hand"] is None


# -- GraphQL ------------------------------------------------------------------------------

MUTATION = """
mutation Ticket($id: ID!) {
  createStreamTicket(matchId: $id) {
    __typename
    ... on StreamTicket { ticket expiresAt }
    ... on Problem { code message }
  }
}
"""


def graphql_ticket(client: TestClient, match_id: str, token: str | None) -> dict[str, Any]:
    answer = client.post("/graphql", json={"query": MUTATION, "variables": {"id": match_id}},
                         headers=bearer(token) if token else {})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert "errors" not in body, body
    result: dict[str, Any] = body["data"]["createStreamTicket"]
    return result


def test_graphql_issues_the_same_tickets(client: TestClient, clock: Clock) -> None:
    match = create(client)
    issued = graphql_ticket(client, match.id, match.tokens[1])
    assert issued["__typename"] == "StreamTicket"
    assert issued["expiresAt"] == "2027-01-15T08:01:01Z"
    assert seat_of_ticket(client, match, issued["ticket"]) == 1
    spectator = graphql_ticket(client, match.id, None)
    assert (spectator["__typename"], spectator["code"]) == ("Unauthorized", "unauthorized")
    assert "Spectators need no ticket" in spectator["message"]
    missing = graphql_ticket(client, "nope", match.tokens[0])
    assert (missing["__typename"], missing["code"]) == ("NotFound", "match_not_found")


# -- the access log -----------------------------------------------------------------------


def _call(base: str, path: str, method: str = "GET", token: str | None = None,
          body: Any = None, read: int | None = None) -> Any:
    """A plain HTTP request (no compression asked); the JSON answer, or the first ``read``
    bytes of it."""
    request = urllib.request.Request(
        base + path, method=method, headers={"Content-Type": "application/json"},
        data=None if method == "GET" else json.dumps(body or {}).encode(),
    )
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=30) as answer:
        return answer.read(read) if read else json.loads(answer.read())


@pytest.mark.slow
def test_tickets_never_reach_the_access_log() -> None:
    """A real ``skyline serve`` with its access log on: every request that carried the
    ticket is logged, the ticket is not."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "serve", "--host", "127.0.0.1", "--port",
             str(port), "--log-level", "info", "--data-dir", ":memory:"],
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
            env={k: v for k, v in os.environ.items() if not k.startswith("SKYLINE_")},
        )
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    _call(base, "/healthz")
                    break
                except OSError:
                    if process.poll() is not None or time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)
            created = _call(base, "/v1/matches", "POST",
                            body={"game": "ny1901", "players": 2, "seed": 1})
            url = f"/v1/matches/{created['matchId']}"
            token = created["seats"][0]["token"]
            ticket = _call(base, f"{url}/stream-tickets", "POST", token)["ticket"]
            first = _call(base, f"{url}/events?ticket={ticket}&lang=en", read=200)
            assert b"event: state" in first
            _call(base, f"{url}?lang=en&tick%65t={ticket}")  # ignored here, but still secret
        finally:
            process.terminate()
            process.wait(timeout=20)
        log.seek(0)
        text = log.read().decode(errors="replace")
    assert f"GET {url}/events?ticket=[redacted]&lang=en HTTP/1.1" in text, text
    assert f"GET {url}?lang=en&tick%65t=[redacted] HTTP/1.1" in text, text
    assert ticket not in text and ticket.removeprefix("skt_") not in text
    assert token not in text


def test_redaction_keeps_everything_but_the_secret() -> None:
    from service.api.logs import redact

    assert redact("/v1/matches/m/events?after=3&ticket=skt_0.a.b&lang=cs") == (
        "/v1/matches/m/events?after=3&ticket=[redacted]&lang=cs")
    assert redact('GET /e?t%69cket=skt_x HTTP/1.1" 200') == (
        'GET /e?t%69cket=[redacted] HTTP/1.1" 200')
    assert redact("/e?ticketing=1&ticket&x=ticket=2") == "/e?ticketing=1&ticket&x=ticket=2"
    assert redact("no url here") == "no url here"


@pytest.mark.slow
async def test_a_ticket_opens_one_stream_only() -> None:
    """Issue 31, item 12: a stream ticket was reusable within its minute (one leaked from a
    URL opened streams until it expired). The first stream claims it; any later one, on
    this replica or another, is 401 ``ticket_invalid``."""
    with serve_in_thread(make_app()) as server:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
            created = (await http.post("/v1/matches", json={"game": "toy", "players": 2,
                                                              "seed": 5})).json()
            url = f"/v1/matches/{created['matchId']}"
            token = created["seats"][1]["token"]
            ticket = (await http.post(f"{url}/stream-tickets",
                                      headers=bearer(token))).json()["ticket"]
            [first] = await read_states(http, f"{url}/events?ticket={ticket}", limit=1)
            again = await http.get(f"{url}/events?ticket={ticket}")
            fresh = (await http.post(f"{url}/stream-tickets",
                                     headers=bearer(token))).json()["ticket"]
            [second] = await read_states(http, f"{url}/events?ticket={fresh}", limit=1)
    assert first.json()["seat"] == 1 and second.json()["seat"] == 1
    assert again.status_code == 401 and again.json()["code"] == "ticket_invalid"
    assert "used" in again.json()["detail"]
