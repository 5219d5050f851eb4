"""Per-client replay budgets (issue 31, item 8): what a resumed stream replays for its
watcher alone is drawn from its client's bucket of versions; past the bucket it is paced,
and past the longest wait the watcher gets one snapshot of the current version instead.
Before, any number of resumes replayed at once (60 concurrent replays of the resume window
pushed unrelated GETs to 5 s); ``bench.replays`` measures what an unrelated client sees."""

from __future__ import annotations

import random

import pytest

from service.live import LiveHub
from service.live.replays import ReplayBudget
from service.matches import MatchService
from service.matches.models import CreateMatchRequest, wire_action
from service.store import SqliteStore


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_within_the_bucket_a_replay_starts_at_once_beyond_it_waits_for_the_refill() -> None:
    clock = Clock()
    budget = ReplayBudget(rate=100, burst=200, max_wait=10, clock=clock)
    assert budget.charge("a", 150) == 0
    assert budget.charge("a", 100) == pytest.approx(0.5)  # 50 left, 50 more at 100/s
    assert budget.paced == 1
    assert budget.charge("b", 200) == 0  # another client: a bucket of its own
    clock.now += 3.0  # refilled to the brim (not beyond)
    assert budget.charge("a", 200) == 0
    assert budget.charge("a", 1) == pytest.approx(0.01)


def test_a_replay_that_would_wait_too_long_is_refused_and_takes_nothing() -> None:
    clock = Clock()
    budget = ReplayBudget(rate=10, burst=20, max_wait=1, clock=clock)
    assert budget.charge("a", 20) == 0
    assert budget.charge("a", 20) is None  # 2 s to refill: over the 1 s wait
    assert budget.refused == 1
    assert budget.charge("a", 10) == pytest.approx(1.0)  # nothing was taken by the refusal
    clock.now += 100
    assert budget.charge("a", 10_000) == 0  # larger than the bucket: charged as a full one


def test_rate_zero_is_unlimited_and_buckets_are_bounded() -> None:
    assert ReplayBudget(rate=0).charge("a", 10**9) == 0
    budget = ReplayBudget(rate=1, burst=1, max_wait=0, capacity=2)
    assert budget.charge("a", 1) == 0
    assert budget.charge("a", 1) is None
    budget.charge("b", 1)
    budget.charge("c", 1)  # "a" forgotten: a forgotten bucket is full again
    assert budget.charge("a", 1) == 0


async def _played(service: MatchService, seed: int, moves: int = 30) -> tuple[str, int]:
    """A 2-seat New York match with ``moves`` random legal moves: its id and version."""
    created = await service.create_match(CreateMatchRequest(game="ny1901", players=2, seed=seed))
    tokens = {s.seat: s.token for s in created.seats}
    rng = random.Random(seed)
    for _ in range(moves):
        state = await service.get_state(created.match_id, None)
        if state.status == "finished":
            break
        seat = rng.choice(state.active_seats)
        legal = await service.legal_moves(created.match_id, tokens[seat])
        await service.act(created.match_id, tokens[seat], wire_action(rng.choice(legal.moves)),
                          None, None)
    return created.match_id, (await service.get_state(created.match_id, None)).version


async def _sent(service: MatchService, match_id: str, upto: int, client: str | None,
                after: int) -> list[tuple[str, int]]:
    """(kind, version) of every event a stream resumed after ``after`` sends up to ``upto``."""
    sent: list[tuple[str, int]] = []
    stream = service.follow(match_id, after=after, client=client)
    try:
        async for event in stream:
            sent.append((event.kind, event.version))
            if event.version >= upto:
                break
    finally:
        await stream.aclose()
    return sent


def _service(budget: ReplayBudget) -> MatchService:
    store = SqliteStore(":memory:")
    return MatchService(store, ttl_finished=None, ttl_idle=None,
                        hub=LiveHub(store, replays=budget))


async def test_a_client_over_its_budget_gets_one_snapshot_and_other_clients_replay() -> None:
    budget = ReplayBudget(rate=1, burst=10, max_wait=0)
    service = _service(budget)
    match_id, version = await _played(service, 11)
    assert version > 20
    after = version - 8  # within the bucket: every version replayed
    assert await _sent(service, match_id, version, "a", after) == [
        ("state", v) for v in range(after + 1, version + 1)]
    # The bucket is spent: the same client now gets the current version, once.
    assert await _sent(service, match_id, version, "a", after) == [("snapshot", version)]
    assert budget.refused == 1
    # Another client has a bucket of its own; a stream with no client is not budgeted.
    assert len(await _sent(service, match_id, version, "b", after)) == 8
    assert len(await _sent(service, match_id, version, None, 0)) == version


async def test_past_its_bucket_a_replay_is_paced_and_loses_nothing() -> None:
    budget = ReplayBudget(rate=1000, burst=10, max_wait=10, clock=Clock())  # no refill
    service = _service(budget)
    # Three matches: three replays (a replayed match's frames are shared afterwards).
    played = [await _played(service, seed) for seed in (12, 13, 14)]
    for match_id, version in played:
        sent = await _sent(service, match_id, version, "a", 0)
        assert [v for _, v in sent] == list(range(1, version + 1))
    assert budget.paced == 2 and budget.refused == 0


def test_serve_budgets_replays_by_default_and_not_with_rate_limits_off() -> None:
    from service.app import Settings, replay_budget
    from service.cli import _limit_settings, build_parser
    from service.live.replays import DEFAULT_RATE

    parser = build_parser()
    default = parser.parse_args(["serve"])
    assert default.replay_budget == DEFAULT_RATE
    on = replay_budget(Settings(limits=_limit_settings(default),
                                replay_budget=default.replay_budget))
    assert on.enabled and on.rate == DEFAULT_RATE and on.burst == 2 * DEFAULT_RATE
    off = parser.parse_args(["serve", "--rate-limits", "off"])
    assert not replay_budget(Settings(limits=_limit_settings(off),
                                      replay_budget=off.replay_budget)).enabled
    assert not replay_budget(Settings(replay_budget=0)).enabled
