"""The reference client follows a seat's match through an EventSource opened with stream
tickets: never the seat token in a URL, a fresh ticket for every connection, and a dropped
stream resumed with ``after=<last id>``."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

from .test_client import _rest, _wait_idle


def test_the_client_streams_with_a_fresh_ticket_per_connection(page: Any, server: str) -> None:
    status, created = _rest(server, "POST", "/v1/matches",
                            {"game": "ny1901", "players": 2, "seed": 8,
                             "options": {"challenge": "none"}})
    assert status == 201
    match_id = created["matchId"]
    seat0, seat1 = (s["token"] for s in created["seats"])
    _, state = _rest(server, "GET", f"/v1/matches/{match_id}", token=seat1)
    requests: list[Any] = []
    page.on("request", lambda request: requests.append(request))
    streams: list[str] = []

    def events(route: Any) -> None:
        streams.append(route.request.url)
        if len(streams) == 1:  # the first stream ends after one event, as a dropped one does
            route.fulfill(status=200, headers={"Content-Type": "text/event-stream"},
                          body=f"event: state\nid: 0\ndata: {json.dumps(state)}\n\n")
        else:
            route.continue_()

    page.route(lambda url: f"/v1/matches/{match_id}/events?" in url, events)
    page.goto(server + "/play/")
    page.wait_for_function("() => document.body.dataset.ready === 'true'")
    page.fill("#join-match", match_id)
    page.fill("#join-token", seat1)
    page.click("#join")
    _wait_idle(page)
    # Seat 0 moves elsewhere; the reopened stream brings it to the page.
    _, moves = _rest(server, "GET", f"/v1/matches/{match_id}/legal-moves", token=seat0)
    acquire = next(m for m in moves["moves"] if m["type"] == "acquire")
    _rest(server, "POST", f"/v1/matches/{match_id}/actions",
          {"action": acquire, "expectedVersion": 0}, token=seat0)
    page.wait_for_function("() => document.querySelector('#status').dataset.version === '1'")
    assert len(streams) >= 2
    first, second = (parse_qs(urlsplit(url).query) for url in streams[:2])
    assert first["ticket"][0].startswith("skt_") and second["ticket"][0].startswith("skt_")
    assert "after" not in first and second["after"] == ["0"]  # resumed after the last id
    # A ticket is fetched for each connection, just before it (two issued within one second
    # are the same string: same seat, same time).
    kinds = [("ticket" if r.url.endswith("/stream-tickets") else "stream")
             for r in requests if "/stream-tickets" in r.url or "/events?" in r.url]
    assert kinds[:4] == ["ticket", "stream", "ticket", "stream"], kinds
    tickets = [r for r in requests if r.url.endswith(f"/v1/matches/{match_id}/stream-tickets")]
    assert all(r.method == "POST" for r in tickets)
    assert all(r.headers.get("authorization") == f"Bearer {seat1}" for r in tickets)
    for request in requests:  # the token goes in a header, never in a URL
        assert seat1 not in request.url and seat0 not in request.url, request.url
        if "/events" in request.url:
            assert "authorization" not in request.headers
    assert page.js_errors == []
