"""Quick match under concurrency and crashes: players queueing at once through several
replicas (Redis, a Redis Cluster, the embedded store) are each matched once, nobody is left
waiting while enough are queued; a replica dying between any two writes of forming a match
neither loses its players nor puts a ticket in two matches."""

from __future__ import annotations

import asyncio
import random
from collections import Counter

import pytest

from service.identity.callers import Caller
from service.queue.records import QueueDoc, digest_of_ticket, queue_key

from .conftest import Replica
from .test_queue import started


async def _everyone(replicas: list[Replica], count: int, game: str, players: int
                    ) -> tuple[list[Caller], list[str]]:
    who = [await replicas[n % len(replicas)].guest(f"P{n}") for n in range(count)]
    rng = random.Random(count)

    async def join(caller: Caller) -> str:
        await asyncio.sleep(rng.random() * 0.02)
        return (await rng.choice(replicas).enqueue(caller, game=game, players=players)).ticket

    tickets = await asyncio.gather(*(join(c) for c in who))
    return who, list(tickets)


@pytest.mark.parametrize("count", [40, 42])
async def test_concurrent_players_are_matched_once_and_nobody_waits_for_nothing(
    replicas: list[Replica], count: int,
) -> None:
    who, tickets = await _everyone(replicas, count, "ny1901", 4)
    answers = await asyncio.gather(*(
        replicas[n % 3].queue.poll(c, t) for n, (c, t) in enumerate(zip(who, tickets, strict=True))
    ))
    matched = [a for a in answers if a.status == "matched"]
    waiting = [a for a in answers if a.status == "waiting"]
    assert len(waiting) == count % 4
    assert len(matched) == count - count % 4
    per_match = Counter(a.match_id for a in matched)
    assert set(per_match.values()) == {4}
    for match_id in per_match:
        assert match_id is not None
        _, record = await replicas[0].matches.load_record(match_id)
        seated = {a.seat for a in matched if a.match_id == match_id}
        assert seated == {0, 1, 2, 3}
        holders = [h.player for h in record.seat_players if h is not None]
        assert len(holders) == 4
    # No player in two matches: each player's "my matches" has at most one, and it is the
    # one its ticket names.
    for caller, answer in zip(who, answers, strict=True):
        page = await replicas[1].players.my_matches(caller)
        expected = [answer.match_id] if answer.status == "matched" else []
        assert [m.match_id for m in page.items] == expected
        if answer.status == "matched":
            assert [e["matchId"] for e in await started(replicas[2], caller)] == expected


async def test_concurrent_enqueues_of_one_player_hold_one_ticket(
    replicas: list[Replica],
) -> None:
    a = await replicas[0].guest("a")
    tickets = await asyncio.gather(*(
        replicas[n % 3].enqueue(a, game="ny1901", players=4) for n in range(9)
    ))
    assert len({t.ticket for t in tickets}) == 1


class Crash(Exception):
    """A replica dying at this step."""


@pytest.mark.parametrize("finisher", ["retry", "poll"])
@pytest.mark.parametrize("step", ["formed", "indexed", "created"])
async def test_a_replica_dying_while_forming_a_match_loses_nobody(
    replicas: list[Replica], step: str, finisher: str,
) -> None:
    dying, other = replicas[0], replicas[1]

    async def crash(at: str) -> None:
        if at == step:
            raise Crash(at)

    who = [await other.guest(f"P{n}") for n in range(4)]
    tickets = [(await other.enqueue(c, game="ny1901", players=4)).ticket for c in who[:3]]
    dying.queue.fault = crash
    with pytest.raises(Crash):
        await dying.enqueue(who[3], game="ny1901", players=4)
    # The tickets are in the match being formed, none waiting: free for no other match.
    digest = digest_of_ticket(tickets[0])
    assert digest is not None and who[0].app is not None
    stored = await other.store.get_doc(queue_key(who[0].app, digest))
    assert stored is not None
    doc = QueueDoc.decode(stored.data)
    assert doc.waiting == () and doc.forming is not None
    assert {s.player for s in doc.forming.seats if s is not None} == {c.player for c in who}
    if finisher == "retry":
        # The dead replica's answer was lost: its holder's retry gets the same ticket and
        # finishes the match.
        retry = await other.enqueue(who[3], game="ny1901", players=4)
        assert retry.status == "matched"
        tickets.append(retry.ticket)
    else:
        # Another holder's poll finishes it (the fourth learns of it from its feed).
        assert (await replicas[2].queue.poll(who[0], tickets[0])).status == "matched"
    extra = await other.guest("late")
    assert (await other.enqueue(extra, game="ny1901", players=4)).status == "waiting"
    answers = [await replicas[2].queue.poll(c, t) for c, t in zip(who, tickets, strict=False)]
    assert {a.status for a in answers} == {"matched"}
    match_ids = {a.match_id for a in answers}
    assert len(match_ids) == 1
    assert len({a.seat for a in answers}) == len(answers)
    (match_id,) = match_ids
    for caller in who:
        page = await other.players.my_matches(caller)
        assert [m.match_id for m in page.items] == [match_id]
        assert caller.player is not None
        await other.players.feed.repair(caller.player)  # what opening the feed does
        assert [e["matchId"] for e in await started(other, caller)] == [match_id]
