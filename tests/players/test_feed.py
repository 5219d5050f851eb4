"""The player feed: every event derived from stored match versions, each once and in
version order per match, whatever replica wrote it or died between the match's write and
the feed's; resumable with Last-Event-ID, a reset beyond what it keeps."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from service.matches.storage import Written
from service.players import feed as feed_module
from service.players.feed import Feed, FeedItem, FeedReset

from .conftest import Guest, Rig, bearer


def events(rig: Rig, guest: Guest, after: int = 0) -> list[tuple[str, dict[str, Any]]]:
    """The guest's feed after ``after``, read as Server-Sent Events (the stream ends after
    the app's sse_max_seconds)."""
    headers = {**guest.auth, "Last-Event-ID": str(after)} if after else guest.auth
    with rig.client.stream("GET", f"/v1/me/events?after={after}", headers=headers) as answer:
        assert answer.status_code == 200
        text = b"".join(answer.iter_bytes()).decode().replace("\r\n", "\n")
    out = []
    for block in text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "event" in fields:
            out.append((fields["event"], json.loads(fields["data"])))
    return out


def test_a_whole_match_tells_each_player_its_turns_once_in_order(rig: Rig) -> None:
    alice, bob = rig.guest("Alice"), rig.guest("Bob")
    match_id = rig.seated(alice.auth, [{"player": alice.id}, {"bot": "random"}],
                          options={"rounds": 1})
    final = play_out_with_bot(rig, match_id, alice)
    got = events(rig, alice)
    kinds = [k for k, e in got if e["matchId"] == match_id]
    assert kinds[0] == "match_started" and kinds[-1] == "match_finished"
    seqs = [e["seq"] for _, e in got]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    versions = [e["version"] for k, e in got if e["matchId"] == match_id]
    assert versions == sorted(versions)
    turns = [e["version"] for k, e in got if k == "your_turn"]
    assert len(turns) == len(set(turns)) >= 1
    finished = got[-1][1]
    assert finished["version"] == final and finished["result"]["seats"]
    assert events(rig, bob) == []  # Bob has no seat: nothing for him


def play_out_with_bot(rig: Rig, match_id: str, guest: Guest) -> int:
    """Alice plays her seat until the match ends (the in-process worker plays the bot)."""
    for _ in range(400):
        state = rig.client.get(f"/v1/matches/{match_id}", headers=guest.auth).json()
        if state["status"] == "finished":
            return int(state["version"])
        if state["seat"] in state["activeSeats"]:
            moves = rig.client.get(f"/v1/matches/{match_id}/legal-moves",
                                   headers=guest.auth).json()
            if moves["moves"]:
                rig.client.post(f"/v1/matches/{match_id}/actions", headers=guest.auth,
                                json={"action": moves["moves"][0],
                                      "expectedVersion": moves["version"]})
                continue
        time.sleep(0.02)  # the bot's turn: the worker plays it
    raise AssertionError("the match did not end")


def test_your_turn_matches_every_activation_of_the_seat(rig: Rig) -> None:
    """Count them: one your_turn per version at which the seat went from waiting to active,
    recomputed here from the replayed states."""
    alice = rig.guest("Alice")
    match_id = rig.seated(alice.auth, [{"player": alice.id}, {"bot": "random"}],
                          options={"rounds": 2})
    play_out_with_bot(rig, match_id, alice)
    from service.games import get as get_engine
    from service.matches.replay import state_at

    storage = rig.players.matches.storage
    version, record = rig.call(storage.load, match_id)
    engine = get_engine(record.game)
    activations = []
    before: set[int] = set()
    for v in range(version + 1):
        state = rig.call(state_at, storage, match_id, engine, record, v)
        now = set() if engine.result(state) is not None else set(engine.active_seats(state))
        if 0 in now and 0 not in before:
            activations.append(v)
        before = now
    turns = [e["version"] for k, e in events(rig, alice) if k == "your_turn"]
    assert turns == activations


def test_resuming_with_last_event_id_sends_only_what_follows(rig: Rig) -> None:
    alice = rig.guest()
    for _ in range(3):
        rig.seated(alice.auth, [{"player": alice.id}, {"bot": "random"}])
    everything = events(rig, alice)
    middle = everything[1][1]["seq"]
    assert events(rig, alice, after=middle) == everything[2:]


def test_a_reader_beyond_what_the_feed_keeps_gets_a_reset(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(feed_module, "KEEP", 2)
    monkeypatch.setattr(feed_module, "KEEP_SECONDS", 0)
    alice = rig.guest()
    for _ in range(4):
        rig.seated(alice.auth, [{"player": alice.id}, {"bot": "random"}])
    got = events(rig, alice, after=1)
    assert got[0][0] == "reset"
    assert [k for k, _ in got[1:]] and all(k != "reset" for k, _ in got[1:])
    future = events(rig, alice, after=10_000)
    assert [k for k, _ in future] == ["reset"]


def test_two_replicas_appending_the_same_version_deliver_it_once(rig: Rig) -> None:
    alice = rig.guest()
    match_id = rig.seated(alice.auth, [{"player": alice.id}, {"bot": "random"}])
    before = events(rig, alice)
    storage = rig.players.matches.storage
    _, record = rig.call(storage.load, match_id)
    # Three more "replicas" hear of the same version 0 again, at once.
    replicas = [Feed(rig.players.store, rig.players.matches, rig.players.clock)
                for _ in range(3)]
    written = Written(match_id, 0, None, record, None)

    async def all_at_once() -> None:
        await asyncio.gather(*(r.on_write(written) for r in replicas))

    rig.call(all_at_once)
    assert sum(r.appended + r.filled for r in replicas) == 0
    assert events(rig, alice) == before


def test_a_replica_dying_between_the_match_and_the_feed_loses_nothing(rig: Rig) -> None:
    """The writer of version 0 died before appending it: the next write (by anyone) fills
    the gap first, so the feed still has every version once, in order."""
    alice = rig.guest()
    storage = rig.players.matches.storage
    listeners = list(storage.listeners)
    storage.listeners.clear()  # this "replica" dies after the match's write
    try:
        match_id = rig.seated(alice.auth, [{"player": alice.id}, {"bot": "random"}])
    finally:
        storage.listeners[:] = listeners
    moves = rig.client.get(f"/v1/matches/{match_id}/legal-moves", headers=alice.auth).json()
    rig.client.post(f"/v1/matches/{match_id}/actions", headers=alice.auth,
                    json={"action": moves["moves"][0], "expectedVersion": 0})
    got = [(k, e["version"]) for k, e in events(rig, alice) if e["matchId"] == match_id]
    assert got[:2] == [("match_started", 0), ("your_turn", 0)]
    assert len(got) == len(set(got))
    assert [v for _, v in got] == sorted(v for _, v in got)


def test_opening_the_feed_repairs_a_version_nobody_will_write_after(rig: Rig) -> None:
    """A lost your_turn would stall the match: nobody writes to it until the player moves,
    so the feed's repair (on open, and every minute while open) appends it."""
    alice = rig.guest()
    storage = rig.players.matches.storage
    listeners = list(storage.listeners)
    storage.listeners.clear()
    try:
        match_id = rig.seated(alice.auth, [{"player": alice.id}, {"bot": "random"}])
    finally:
        storage.listeners[:] = listeners
    got = [(k, e["version"]) for k, e in events(rig, alice) if e["matchId"] == match_id]
    assert got == [("match_started", 0), ("your_turn", 0)]
    assert rig.players.feed.filled >= 1


def test_feed_tickets_open_the_feed_without_a_header(rig: Rig) -> None:
    alice, bob = rig.guest("Alice"), rig.guest("Bob")
    rig.seated(alice.auth, [{"player": alice.id}, {"bot": "random"}])
    ticket = rig.client.post("/v1/me/stream-tickets", headers=alice.auth).json()["ticket"]
    with rig.client.stream("GET", f"/v1/me/events?after=0&ticket={ticket}") as answer:
        assert answer.status_code == 200
        assert b"match_started" in b"".join(answer.iter_bytes())
    # Single-use (issue 31, item 12): the ticket opened its stream; it opens no other.
    again = rig.client.get(f"/v1/me/events?after=0&ticket={ticket}")
    assert again.status_code == 401 and again.json()["code"] == "ticket_invalid"
    assert "used" in again.json()["detail"]
    ticket = rig.client.post("/v1/me/stream-tickets", headers=alice.auth).json()["ticket"]
    both = rig.client.get(f"/v1/me/events?ticket={ticket}", headers=alice.auth)
    assert both.status_code == 400
    forged = ticket[:-3] + ("abc" if not ticket.endswith("abc") else "xyz")
    assert rig.client.get(f"/v1/me/events?ticket={forged}").json()["code"] == "ticket_invalid"
    # Another spelling of the same signature (base64 ignores the last character's low bits)
    # is no second ticket: a ticket would otherwise open up to four streams.
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    for low in (1, 2, 3):
        alias = ticket[:-1] + alphabet[alphabet.index(ticket[-1]) ^ low]
        refused = rig.client.get(f"/v1/me/events?ticket={alias}")
        assert refused.json()["code"] == "ticket_invalid", low
    assert rig.client.post("/v1/me/stream-tickets").status_code == 401
    rig.client.delete("/v1/me", headers=alice.auth)
    gone = rig.client.get(f"/v1/me/events?ticket={ticket}")
    assert gone.status_code == 401 and gone.json()["code"] == "ticket_invalid"
    del bob


def test_the_feed_needs_a_player(rig: Rig) -> None:
    created = rig.client.post("/v1/matches", json={"game": "toy", "players": 2}).json()
    seat = rig.client.get("/v1/me/events", headers=bearer(created["seats"][0]["token"]))
    assert seat.status_code == 401
    assert rig.client.get("/v1/me/events").status_code == 401


def test_feed_items_are_what_the_reader_reads(rig: Rig) -> None:
    """Feed.read turns stored items into numbered events, a reset first when behind."""
    alice = rig.guest()
    rig.seated(alice.auth, [{"player": alice.id}, {"bot": "random"}])
    items, after = rig.call(rig.players.feed.read, alice.id, 0)
    assert all(isinstance(i, FeedItem) for i in items) and after == items[-1].seq
    assert json.loads(items[0].data)["seq"] == items[0].seq
    behind, _ = rig.call(rig.players.feed.read, alice.id, 10_000)
    assert isinstance(behind[0], FeedReset)


def test_a_stopping_replica_ends_feed_streams_with_a_reconnection_delay(rig: Rig) -> None:
    from service.api.rest.feed import _encoded
    from service.live import LiveHub

    alice = rig.guest()
    store = rig.players.store
    hub = LiveHub(store)  # type: ignore[arg-type]

    async def run() -> list[bytes]:
        chunks = []
        stream = _encoded(rig.players.follow_feed(alice.id, None), hub)
        first = asyncio.ensure_future(stream.__anext__())
        await asyncio.sleep(0.1)
        hub.shutdown()
        chunks.append(await asyncio.wait_for(first, timeout=5))
        async for chunk in stream:
            chunks.append(chunk)
        return chunks

    chunks = rig.call(run)
    assert len(chunks) == 1 and b"retry:" in chunks[0] and b"shutdown" in chunks[0]


def test_timeout_soon_reaches_the_seats_player_once_per_activation(rig: Rig) -> None:
    """The clock worker's warning (``Feed.warn``, a ``Timeouts`` warner) is appended once
    per activation of the seat, however often a worker looks inside the window."""
    from dataclasses import replace

    alice = rig.guest("Alice")
    match_id = rig.seated(alice.auth, [{"player": alice.id}, {"bot": "random"}])
    version, record = rig.call(rig.players.matches.storage.load, match_id)
    deadline = 1_900_000_000_000
    feed = rig.players.feed
    for _ in range(3):  # three looks, one warning
        rig.call(feed.warn, match_id, version, record, 0, deadline)
    clock = record.clocks[0]
    later = replace(record, clocks=(replace(clock, activation=clock.activation + 2),
                                    *record.clocks[1:]))
    rig.call(feed.warn, match_id, version + 2, later, 0, deadline + 1000)
    rig.call(feed.warn, match_id, version, record, 1, deadline)  # the bot's seat: nobody
    soon = [e for k, e in events(rig, alice) if k == "timeout_soon"]
    from service.players.models import TimeoutSoonEvent

    assert all(TimeoutSoonEvent.model_validate(e).kind == "timeout_soon" for e in soon)
    assert [(e["matchId"], e["version"], e["seat"], e["deadline"]) for e in soon] == [
        (match_id, version, 0, "2030-03-17T17:46:40.000Z"),
        (match_id, version + 2, 0, "2030-03-17T17:46:41.000Z"),
    ]
