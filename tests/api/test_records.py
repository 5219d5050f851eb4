"""The stored bytes: match records, compressed log entries, seat tokens."""

from __future__ import annotations

import pytest

from service.api import auth, logdict
from service.api.errors import ApiError
from service.api.records import IdempotentResult, LogRecord, MatchRecord
from service.games.base import Event


def test_record_round_trip_and_bounded_idempotency_memory() -> None:
    record = MatchRecord(game="toy", players=2, options={"rounds": 2}, seed=5,
                         tokens=("a", None), state=b"\x00\n{raw}\n", bots={1: "greedy"})
    for version in range(40):
        record = record.remember(IdempotentResult(f"k{version}", version, "x"))
    assert MatchRecord.decode(record.encode()) == record
    assert len(record.idempotency) == 16
    assert record.recall("k39") is not None and record.recall("k0") is None


def test_records_from_before_per_seat_bot_kinds_still_decode() -> None:
    record = MatchRecord(game="toy", players=3, options=None, seed=1,
                         tokens=("a", None, None), state=b"x")
    header, _, state = record.encode().partition(b"\n")
    old = header.replace(b'"b":{}', b'"b":[1,2],"k":"greedy"')
    assert MatchRecord.decode(old + b"\n" + state).bots == {1: "greedy", 2: "greedy"}


@pytest.mark.parametrize("game", ["ny1901", "ginkgopolis", "toy"])
def test_log_entries_compress_and_round_trip(game: str) -> None:
    entry = LogRecord(
        seat=1, action={"type": "build", "tile": "B5", "x": 3, "y": 7, "rotation": 0},
        events=(Event("build", {"seat": 1, "tile": "B5"}, {1: {"secret": [1, 2]}}),
                Event("market_refill", {"revealed": [{"district": "blue", "size": 2}]})),
    )
    data = entry.encode(game)
    assert LogRecord.decode(data) == entry
    plain = entry.encode("no-such-game")
    assert len(data) <= len(plain)
    if logdict.current_id(game) is not None:
        assert data.startswith(b"\x01")  # compressed with the game's dictionary


def test_plain_json_entries_still_decode() -> None:
    raw = b'{"s":0,"a":{"type":"pass"},"e":[["passed",{"seat":0},{}]]}'
    assert LogRecord.decode(raw) == LogRecord(0, {"type": "pass"},
                                              (Event("passed", {"seat": 0}),))


def test_tokens_are_stored_as_digests_and_matched_per_seat() -> None:
    tokens = [auth.new_token() for _ in range(3)]
    assert len(set(tokens)) == 3 and all(len(t) > 40 for t in tokens)
    digests = [auth.digest(t) for t in tokens]
    assert all(t not in d for t, d in zip(tokens, digests, strict=True))
    assert [auth.seat_of(t, digests) for t in tokens] == [0, 1, 2]
    assert auth.seat_of("sky_guess", digests) is None
    assert auth.seat_of(tokens[1], [digests[0], None, digests[2]]) is None  # a bot seat
    assert auth.bearer_token(None) is None
    assert auth.bearer_token(f"bearer {tokens[0]}") == tokens[0]
    with pytest.raises(ApiError):
        auth.bearer_token("Token abc")
