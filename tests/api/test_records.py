"""The stored bytes: match records, compressed log entries, seat tokens."""

from __future__ import annotations

from dataclasses import replace

import pytest

from service.api.credentials import bearer_token
from service.clocks import OnTimeout, SeatClock, TimeControl
from service.errors import ApiError
from service.identity import seats
from service.matches import logdict
from service.matches.records import (
    Away,
    IdempotentResult,
    LogRecord,
    MatchRecord,
    OutdatedRecord,
    SeatPlayer,
)


def test_record_round_trip_and_bounded_idempotency_memory() -> None:
    record = MatchRecord(game="toy", players=2, options={"rounds": 2}, seed=5,
                         tokens=("a", None), state=b"\x00\n{raw}\n", bots={1: "greedy"})
    for version in range(40):
        record = record.remember(IdempotentResult(f"k{version}", version, "x"))
    assert MatchRecord.decode(record.encode()) == record
    assert len(record.idempotency) == 16
    assert record.recall("k39") is not None and record.recall("k0") is None


def test_clock_fields_round_trip_and_give_the_deadlines() -> None:
    control = TimeControl("correspondence", seconds_per_move=60)
    record = MatchRecord(
        game="toy", players=3, options=None, seed=5, tokens=("a", None, "c"), state=b"x",
        bots={1: "random"}, time_control=control, on_timeout=OnTimeout("bot", "greedy"),
        clocks=(SeatClock(1_000, None, 4), SeatClock(2_000, None, 5), SeatClock(None, None, 1)),
        termination="resign", forfeited=(1,),
        away={1: Away(SeatPlayer("p1", "Ann"), "d1", "resign", 6)},
    )
    assert MatchRecord.decode(record.encode()) == record
    # Seat 1 is a bot's now: it has no deadline; seat 2's clock is stopped.
    assert record.deadlines() == {0: 61_000}
    assert replace(record, finished=True).deadlines() == {}
    assert replace(record, time_control=None).deadlines() == {}
    untimed = MatchRecord(game="toy", players=2, options=None, seed=5, tokens=("a", "b"),
                          state=b"x")
    assert b'"tc"' not in untimed.encode() and MatchRecord.decode(untimed.encode()) == untimed


def test_records_from_before_per_seat_bot_kinds_still_decode() -> None:
    record = MatchRecord(game="toy", players=3, options=None, seed=1,
                         tokens=("a", None, None), state=b"x")
    header, _, state = record.encode().partition(b"\n")
    old = header.replace(b'"b":{}', b'"b":[1,2],"k":"greedy"')
    assert MatchRecord.decode(old + b"\n" + state).bots == {1: "greedy", 2: "greedy"}


@pytest.mark.parametrize("game", ["ny1901", "ginkgopolis"])
def test_log_entries_compress_with_the_records_dictionary_and_round_trip(game: str) -> None:
    number = logdict.current_number(game)
    assert number is not None
    entry = LogRecord(seat=1, action={"type": "build", "tile": "B5", "x": 3, "rotation": 0})
    data = entry.encode(game, number)
    assert LogRecord.decode(game, number, data) == entry
    handover = LogRecord(seat=None, action={"type": "seat_to_bot", "seat": 2, "kind": "random"})
    assert LogRecord.decode(game, number, handover.encode(game, number)) == handover
    for header in ({"@": 1}, {"@": -3}, {"@": 70_000, "u": -1}, {"=": 1, "f": True}, {}):
        for with_header in (replace(entry, header=header),
                            replace(entry, header=header, checkpoint=b"\x01state")):
            for n in (number, logdict.TIMED - 1, 0):
                assert LogRecord.decode(game, n, with_header.encode(game, n)) == with_header
    plain = entry.encode(game, 0)  # dictionary 0: plain JSON
    assert plain.startswith(b"{") and LogRecord.decode(game, 0, plain) == entry
    assert len(data) < len(plain)


def test_the_dictionary_number_is_kept_in_the_record() -> None:
    record = MatchRecord(game="ny1901", players=2, options=None, seed=1, tokens=("a", "b"),
                         state=b"x", log_dict=2)
    assert MatchRecord.decode(record.encode()).log_dict == 2
    header, _, state = record.encode().partition(b"\n")
    older = header.replace(b',"d":2', b"")  # written before the field existed
    assert older != header
    with pytest.raises(OutdatedRecord):  # that format's log is not readable here
        MatchRecord.decode(older + b"\n" + state)


@pytest.mark.parametrize(("game", "move", "most"), [
    # With the time since the entry before (a byte: ``headers.py``); dictionary 4 codes
    # the rare choose_card of this example in one byte more than dictionary 3 did.
    ("ny1901", {"type": "acquire", "lot": "yA"}, 8),
    ("ny1901", {"type": "end_turn"}, 6),
    ("ginkgopolis", {"type": "choose_card", "card": 34, "tile": 39, "hal_card": None}, 12),
    ("ginkgopolis", {"type": "take_item", "item": "resource"}, 8),
])
def test_a_typical_move_is_stored_in_a_few_bytes(game: str, move: dict[str, object],
                                                 most: int) -> None:
    """The stored-bytes goal rests on this: with the game's dictionary a move costs a
    handful of bytes (plain JSON: 30-70)."""
    number = logdict.current_number(game)
    assert number is not None
    entry = LogRecord(seat=3, action=move, header={"@": 40})  # type: ignore[arg-type]
    data = entry.encode(game, number)
    assert len(data) <= most, (len(data), data)
    assert LogRecord.decode(game, number, data) == entry


def test_tokens_are_stored_as_digests_and_matched_per_seat() -> None:
    tokens = [seats.new_token() for _ in range(3)]
    assert len(set(tokens)) == 3 and all(len(t) > 40 for t in tokens)
    digests = [seats.digest(t) for t in tokens]
    assert all(t not in d for t, d in zip(tokens, digests, strict=True))
    assert [seats.seat_of(t, digests) for t in tokens] == [0, 1, 2]
    assert seats.seat_of("sky_guess", digests) is None
    assert seats.seat_of(tokens[1], [digests[0], None, digests[2]]) is None  # a bot seat
    assert bearer_token(None) is None
    assert bearer_token(f"bearer {tokens[0]}") == tokens[0]
    with pytest.raises(ApiError):
        bearer_token("Token abc")


def test_match_ids_never_start_with_a_dash() -> None:
    """A command line (``skyline show <id>``) would read such an id as an option."""
    import asyncio

    from service.matches import MatchService
    from service.matches.models import CreateMatchRequest
    from service.store.sqlite import SqliteStore

    async def ids() -> list[str]:
        service = MatchService(SqliteStore(":memory:"), ttl_finished=None, ttl_idle=None)
        return [(await service.create_match(
            CreateMatchRequest(game="ny1901", players=2, seed=n))).match_id for n in range(300)]

    assert not [i for i in asyncio.run(ids()) if i.startswith("-")]
