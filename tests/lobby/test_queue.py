"""Quick match in the service: compatible players matched, incompatible ones not, one ticket
per player per queue, leaving, expiry on the service's clock, bots filling a match, and each
player's match_started -- on the embedded store, Redis and a Redis Cluster."""

from __future__ import annotations

import json
from typing import Any

import pytest

from service.errors import ApiError
from service.games import get as get_engine
from service.identity.callers import Caller
from service.players.records import player_key
from service.queue.models import EnqueueRequest
from service.queue.records import digest_of_ticket, queue_key

from .conftest import Clock, Replica

NY = {"game": "ny1901", "players": 4}
GINKGO = {"game": "ginkgopolis", "players": 3}


async def started(replica: Replica, who: Caller) -> list[dict[str, Any]]:
    """The match_started events in the player's feed."""
    assert who.player is not None
    items, _ = await replica.players.feed.read(who.player, 0)
    events = [json.loads(item.data) for item in items if hasattr(item, "data")]
    return [e for e in events if e["kind"] == "match_started"]


async def test_four_compatible_players_make_one_match_and_each_hears_of_it(
    replicas: list[Replica],
) -> None:
    who = [await replicas[0].guest(f"P{n}") for n in range(5)]
    tickets = []
    for n, caller in enumerate(who[:4]):
        tickets.append(await replicas[n % 3].enqueue(caller, **NY))
    assert [t.status for t in tickets] == ["waiting"] * 3 + ["matched"]
    answers = [await replicas[n % 3].queue.poll(c, t.ticket)
               for n, (c, t) in enumerate(zip(who, tickets, strict=False))]
    match = answers[0].match_id
    assert match is not None
    assert {a.match_id for a in answers} == {match}
    assert sorted(a.seat for a in answers if a.seat is not None) == [0, 1, 2, 3]
    _, record = await replicas[1].matches.load_record(match)
    assert record.game == "ny1901" and record.players == 4 and not record.bots
    for caller, answer in zip(who, answers, strict=False):
        assert answer.seat is not None
        assert record.seat_players[answer.seat].player == caller.player
        events = await started(replicas[2], caller)
        assert [(e["matchId"], e["seat"]) for e in events] == [(match, answer.seat)]
        page = await replicas[0].players.my_matches(caller)
        assert [m.match_id for m in page.items] == [match]
    # A fifth player waits alone: nobody else is queued.
    fifth = await replicas[2].enqueue(who[4], **NY)
    assert fifth.status == "waiting"
    assert (await replicas[0].queue.poll(who[4], fifth.ticket)).status == "waiting"


async def test_players_are_matched_on_options_after_defaults(one: Replica) -> None:
    a, b, c = [await one.guest(n) for n in "abc"]
    defaults = get_engine("ny1901").Options().model_dump(mode="json")
    first = await one.enqueue(a, game="ny1901", players=2)
    plain = await one.enqueue(c, game="ny1901", players=2, options={"expert": True})
    second = await one.enqueue(b, game="ny1901", players=2, options=defaults)
    assert second.status == "matched"
    assert (await one.queue.poll(a, first.ticket)).match_id == second.match_id
    assert (await one.queue.poll(c, plain.ticket)).status == "waiting"
    assert digest_of_ticket(plain.ticket) != digest_of_ticket(first.ticket)


async def test_player_counts_and_rules_versions_make_separate_queues(
    one: Replica, monkeypatch: pytest.MonkeyPatch,
) -> None:
    a, b, c = [await one.guest(n) for n in "abc"]
    two = await one.enqueue(a, game="ny1901", players=2)
    three = await one.enqueue(b, game="ny1901", players=3)
    engine = get_engine("ny1901")
    monkeypatch.setattr(engine, "rules_versions", engine.rules_versions[:-1])
    older = await one.enqueue(c, game="ny1901", players=2)
    monkeypatch.undo()
    assert len({digest_of_ticket(t.ticket) for t in (two, three, older)}) == 3
    for caller, ticket in ((a, two), (b, three), (c, older)):
        assert (await one.queue.poll(caller, ticket.ticket)).status == "waiting"


async def test_a_player_holds_one_ticket_per_queue(one: Replica) -> None:
    a, b = await one.guest("a"), await one.guest("b")
    first, created = await one.queue.enqueue(a, EnqueueRequest.model_validate(NY))
    again, created_again = await one.queue.enqueue(a, EnqueueRequest.model_validate(NY))
    assert created and not created_again
    assert again.ticket == first.ticket
    # Another queue: another ticket.
    other = await one.enqueue(a, game="ny1901", players=2)
    assert other.ticket != first.ticket
    # Alone in a 2-player queue twice over, a never plays itself.
    await one.enqueue(a, game="ny1901", players=2)
    assert (await one.queue.poll(a, other.ticket)).status == "waiting"
    matched = await one.enqueue(b, game="ny1901", players=2)
    assert matched.status == "matched"
    # Once matched, queueing again is a new ticket.
    after = await one.enqueue(a, game="ny1901", players=2)
    assert after.ticket != other.ticket and after.status == "waiting"


async def test_a_player_that_left_is_not_matched(one: Replica) -> None:
    a, b, c = [await one.guest(n) for n in "abc"]
    gone = await one.enqueue(a, game="ny1901", players=2)
    assert (await one.queue.leave(a, gone.ticket)).status == "left"
    assert (await one.queue.poll(a, gone.ticket)).status == "left"
    waiting = await one.enqueue(b, game="ny1901", players=2)
    assert waiting.status == "waiting"
    matched = await one.enqueue(c, game="ny1901", players=2)
    assert matched.status == "matched"
    assert (await one.queue.poll(b, waiting.ticket)).match_id == matched.match_id
    # Leaving a matched ticket changes nothing: it says it is matched.
    assert (await one.queue.leave(b, waiting.ticket)).status == "matched"


async def test_a_ticket_not_polled_expires_on_the_services_clock(
    tmp_path: Any, request: pytest.FixtureRequest, clock: Clock,
) -> None:
    from .conftest import close, make_replicas

    made = await make_replicas(request, "sqlite", tmp_path, 1, clock, ticket_seconds=60)
    one = made[0]
    try:
        a, b, c = [await one.guest(n) for n in "abc"]
        kept = await one.enqueue(a, game="ny1901", players=2)
        clock.now += 50
        assert (await one.queue.poll(a, kept.ticket)).status == "waiting"  # a sign of life
        clock.now += 50
        assert (await one.queue.poll(a, kept.ticket)).status == "waiting"
        lapsed = await one.enqueue(b, game="ginkgopolis", players=2)
        clock.now += 64  # 60 s + the 3 s refresh slack, and more
        assert (await one.queue.poll(b, lapsed.ticket)).status == "expired"
        # c joins b's queue: b expired, so c waits rather than being matched with it.
        alone = await one.enqueue(c, game="ginkgopolis", players=2)
        assert alone.status == "waiting"
        assert (await one.queue.poll(b, lapsed.ticket)).status == "expired"
    finally:
        await close(made)


async def test_bots_fill_a_match_once_the_delay_passed(replicas: list[Replica],
                                                       clock: Clock) -> None:
    a, b = [await replicas[0].guest(n) for n in "ab"]
    patient = await replicas[0].enqueue(a, **GINKGO, fillWithBotsAfterSeconds=30)
    purist = await replicas[1].enqueue(b, game="ginkgopolis", players=2)
    clock.now += 29
    assert (await replicas[2].queue.poll(a, patient.ticket)).status == "waiting"
    clock.now += 1
    done = await replicas[2].queue.poll(a, patient.ticket)
    assert done.status == "matched" and done.match_id is not None
    _, record = await replicas[0].matches.load_record(done.match_id)
    assert sorted(record.bots.values()) == ["greedy", "greedy"]
    assert done.seat not in record.bots
    assert [e["matchId"] for e in await started(replicas[1], a)] == [done.match_id]
    # A ticket that did not ask for bots keeps waiting for a player.
    clock.now += 120
    assert (await replicas[0].queue.poll(b, purist.ticket)).status == "waiting"


async def test_bots_fill_only_for_players_who_accept_them(one: Replica, clock: Clock) -> None:
    a, b, c = [await one.guest(n) for n in "abc"]
    eager = await one.enqueue(a, game="ny1901", players=4, fillWithBotsAfterSeconds=0)
    assert eager.status == "matched"  # due at once, alone: three bots
    later = await one.enqueue(b, game="ny1901", players=4, fillWithBotsAfterSeconds=10)
    purist = await one.enqueue(c, game="ny1901", players=4)
    clock.now += 10
    with_bots = await one.queue.poll(b, later.ticket)
    assert with_bots.status == "matched" and with_bots.match_id is not None
    _, record = await one.matches.load_record(with_bots.match_id)
    assert len(record.bots) == 3
    assert (await one.queue.poll(c, purist.ticket)).status == "waiting"


async def test_bad_input_is_refused_with_nothing_written(one: Replica) -> None:
    a = await one.guest("a")
    cases = [
        ({"game": "ny1901", "players": 4, "options": {"nope": 1}}, "bad_options"),
        ({"game": "ny1901", "players": 5}, "bad_player_count"),
        ({"game": "ny1901", "players": 1}, "bad_player_count"),
        ({"game": "chess", "players": 2}, "unknown_game"),
    ]
    for body, code in cases:
        with pytest.raises(ApiError) as refused:
            await one.enqueue(a, **body)
        assert refused.value.code == code
    assert a.player is not None
    page = await one.store.index_page(player_key(a.player), "m", after=None, limit=10)
    assert page == []
    # No queue was written for any of them (the only key a queue could have for ny1901/4
    # with default options is the one a valid request makes -- absent until then).
    good = await one.enqueue(a, **NY)
    digest = digest_of_ticket(good.ticket)
    assert digest is not None
    stored = await one.store.get_doc(queue_key(a.app, digest))
    assert stored is not None and stored.version == 1


async def test_only_players_queue_and_only_the_holder_reads_a_ticket(one: Replica) -> None:
    a, b = await one.guest("a"), await one.guest("b")
    mine = await one.enqueue(a, **NY)
    for caller, code in ((None, "unauthorized"), (Caller(app=a.app), "forbidden"),
                         ("sky_" + "x" * 40, "forbidden")):
        with pytest.raises(ApiError) as refused:
            await one.queue.enqueue(caller, EnqueueRequest.model_validate(NY))
        assert refused.value.code == code
    for ticket in (mine.ticket, "nope", mine.ticket[:-1] + "0", ""):
        for call in (one.queue.poll, one.queue.leave):
            with pytest.raises(ApiError) as refused:
                await call(b, ticket)
            assert refused.value.code == "ticket_not_found"
    assert (await one.queue.poll(a, mine.ticket)).status == "waiting"


async def test_answers_and_the_queue_hold_no_secrets(one: Replica) -> None:
    who = [await one.guest(n) for n in "ab"]
    first = await one.enqueue(who[0], game="ny1901", players=2)
    second = await one.enqueue(who[1], game="ny1901", players=2)
    assert set(first.to_json()) == {"ticket", "status", "game", "players", "matchId", "seat",
                                    "pollWithinSeconds"}
    assert second.match_id is not None
    _, record = await one.matches.load_record(second.match_id)
    digest = digest_of_ticket(first.ticket)
    assert digest is not None
    stored = await one.store.get_doc(queue_key(who[0].app, digest))
    assert stored is not None
    for text in (stored.data.decode(), json.dumps(second.to_json()),
                 json.dumps((await one.queue.poll(who[0], first.ticket)).to_json())):
        assert str(record.seed) not in text
        assert "sky_" not in text and "skp_" not in text
        for token in record.tokens:
            assert token is None or token not in text


async def test_a_long_poll_answers_as_soon_as_the_match_is_formed(
    replicas: list[Replica],
) -> None:
    import asyncio
    import time

    a, b = await replicas[0].guest("a"), await replicas[1].guest("b")
    mine = await replicas[0].enqueue(a, game="ny1901", players=2)
    polling = asyncio.create_task(replicas[2].queue.poll(a, mine.ticket, wait=20))
    await asyncio.sleep(0.3)
    assert not polling.done()
    started_at = time.monotonic()
    other = await replicas[1].enqueue(b, game="ny1901", players=2)
    answer = await asyncio.wait_for(polling, timeout=5)
    assert answer.status == "matched" and answer.match_id == other.match_id
    assert time.monotonic() - started_at < 2.0


async def test_a_long_poll_ends_when_its_wait_ends(one: Replica) -> None:
    import time

    a = await one.guest("a")
    mine = await one.enqueue(a, game="ny1901", players=2)
    began = time.monotonic()
    assert (await one.queue.poll(a, mine.ticket, wait=1)).status == "waiting"
    assert 0.9 <= time.monotonic() - began < 3
    with pytest.raises(ApiError) as refused:
        await one.queue.poll(a, mine.ticket, wait=61)
    assert refused.value.code == "malformed"
