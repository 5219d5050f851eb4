"""Issue 15: one render per version and visibility, one store watch per match, gapless
streams for every watcher, bounded resumes and the patch mode (service level, both stores)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jsonpatch
import pytest

from service.live import Shutdown
from service.matches import MatchService
from service.matches import timeline as timeline_module
from service.matches.watch import LiveEvent
from service.store import MatchStore
from tests.support.states import timeless

from .conftest import make_service, new_match

SETTLE = 60.0  # seconds a watcher may take to see the last version (a hang guard only)


async def _collect(
    service: MatchService, match_id: str, until: int, seen: list[LiveEvent], **follow: Any
) -> None:
    async with contextlib.aclosing(service.follow(match_id, **follow)) as events:
        async for event in events:
            seen.append(event)
            if event.version >= until:
                return


def _counting(monkeypatch: pytest.MonkeyPatch) -> tuple[Counter[tuple[int, int | None]],
                                                        Counter[str]]:
    """Counts of view renders per (version, seat) and of JSON encodings per payload kind."""
    views: Counter[tuple[int, int | None]] = Counter()
    encodings: Counter[str] = Counter()
    real_state_of = timeline_module.state_of
    real_encode = timeline_module.encode

    def state_of(match_id: str, version: int, engine: Any, state: Any, seat: int | None,
                 record: Any = None, *args: Any, **kwargs: Any) -> Any:
        views[(version, seat)] += 1
        return real_state_of(match_id, version, engine, state, seat, record, *args, **kwargs)

    def encode(value: Any) -> str:
        encodings["patch" if "operations" in value else "state"] += 1
        return real_encode(value)

    monkeypatch.setattr(timeline_module, "state_of", state_of)
    monkeypatch.setattr(timeline_module, "encode", encode)
    return views, encodings


async def _wait(tasks: list[asyncio.Task[None]]) -> None:
    await asyncio.wait_for(asyncio.gather(*tasks), SETTLE)


async def _until(condition: Callable[[], bool], tasks: list[asyncio.Task[None]]) -> None:
    """Until ``condition()`` holds; a watcher that failed meanwhile fails the test with its
    error (else the wait would never end), and so does waiting longer than ``SETTLE``."""
    async with asyncio.timeout(SETTLE):
        while not condition():
            for task in tasks:
                error = task.exception() if task.done() and not task.cancelled() else None
                if error is not None:
                    raise error
            await asyncio.sleep(0.01)


@dataclass(frozen=True)
class Received:
    """What a consumer took from an event as it arrived: an SSE stream the JSON, a GraphQL
    subscription the ``MatchState``."""

    kind: str
    version: int
    seat: int | None
    payload: object


async def _consume(
    service: MatchService, match_id: str, until: int, seen: list[Received], form: str,
    **follow: Any,
) -> None:
    async with contextlib.aclosing(service.follow(match_id, **follow)) as events:
        async for event in events:
            if form == "json":
                data = event.data
                seen.append(Received(event.kind, event.version, json.loads(data)["seat"], data))
            else:
                state = event.state
                seen.append(Received(event.kind, event.version, state.seat, state))
            if event.version >= until:
                return


@pytest.mark.parametrize("form", ["json", "objects"])
async def test_200_spectators_and_3_seats_cost_one_render_per_version_and_visibility(
    store: MatchStore, monkeypatch: pytest.MonkeyPatch, form: str
) -> None:
    """SSE streams take each version's JSON, GraphQL subscriptions its ``MatchState``: either
    way one view per version and visibility, and the JSON encoded once (SSE) or never
    (GraphQL), however many watch."""
    service = make_service(store)
    played = await new_match(service, players=3)
    rng = random.Random(5)
    for _ in range(2):
        await played.move(rng)
    start = (await service.get_state(played.match_id, None)).version
    moves = 8
    views, encodings = _counting(monkeypatch)
    spectators: list[list[Received]] = [[] for _ in range(200)]
    seats: dict[int, list[list[Received]]] = {seat: [[], []] for seat in played.tokens}
    until = start + moves
    tasks = [asyncio.create_task(_consume(service, played.match_id, until, seen, form))
             for seen in spectators]
    for seat, lists in seats.items():
        tasks += [asyncio.create_task(_consume(service, played.match_id, until, seen, form,
                                               token=played.tokens[seat]))
                  for seen in lists]
    # Every watcher has its first state: now play.
    await _until(lambda: all(seen for seen in spectators), tasks)
    for _ in range(moves):
        await played.move(rng)
    await _wait(tasks)

    expected_versions = list(range(start, until + 1))
    for seen in spectators:
        assert [e.version for e in seen] == expected_versions
        assert all(e.kind == "state" and e.seat is None for e in seen)
    for seat, lists in seats.items():
        for seen in lists:
            assert [e.version for e in seen] == expected_versions
            assert all(e.seat == seat for e in seen)
    visibilities = [None, *sorted(played.tokens)]
    # One view per version and visibility, however many watch it; the JSON encoded once
    # each for the streams, never for the subscriptions.
    assert views == Counter({(v, s): 1 for v in expected_versions for s in visibilities})
    encoded = len(expected_versions) * len(visibilities) if form == "json" else 0
    assert encodings == Counter({"state": encoded} if encoded else {})
    # The 200 spectators received the very same bytes (the very same objects).
    assert len({tuple(id(e.payload) for e in seen) for seen in spectators}) == 1
    # Private views stay private: a seat's view differs from the spectators' one.
    assert seats[0][0][-1].payload != spectators[0][-1].payload
    assert service.hub.watchers == 0 and service.hub.topics == 0
    assert len(service.watching.timelines) == 0


async def test_500_watchers_on_50_matches_see_every_version_in_order(
    store: MatchStore,
) -> None:
    service = make_service(store)
    matches = [await new_match(service, players=2, seed=seed) for seed in range(50)]
    moves = 3
    seen: dict[str, list[list[LiveEvent]]] = {m.match_id: [[] for _ in range(10)]
                                              for m in matches}
    tasks = [asyncio.create_task(_collect(service, m.match_id, moves, events, after=0))
             for m in matches for events in seen[m.match_id]]
    await _until(lambda: service.hub.topics >= len(matches), tasks)
    assert service.hub.topics == len(matches)  # one store watch per match, not per watcher
    if hasattr(store, "is_cluster"):  # Redis: all of them on the store's one connection
        assert getattr(store, "pubsub_connections", None) == 1
    rng = random.Random(9)
    for _ in range(moves):
        for match in matches:
            await match.move(rng)
    await _wait(tasks)
    for lists in seen.values():
        for events in lists:
            assert [e.version for e in events] == list(range(1, moves + 1))
    assert service.hub.topics == 0 and service.hub.watchers == 0


async def test_a_resume_within_the_window_gets_each_version_further_one_snapshot(
    store: MatchStore,
) -> None:
    service = make_service(store, resume_window=5)
    played = await new_match(service)
    rng = random.Random(3)
    for _ in range(12):
        await played.move(rng)
    near: list[LiveEvent] = []
    await _collect(service, played.match_id, 12, near, after=8)
    assert [(e.kind, e.version) for e in near] == [("state", v) for v in (9, 10, 11, 12)]
    assert service.watching.resumes == {"replay": 1, "snapshot": 0}
    # The versions equal what a watcher that was there saw: the log replayed exactly.
    current = await service.get_state(played.match_id, None)
    assert timeless(near[-1].state.model_dump()) == timeless(current.model_dump())

    far: list[LiveEvent] = []
    task = asyncio.create_task(_collect(service, played.match_id, 14, far, after=2))
    await _until(lambda: bool(far), [task])
    assert [(e.kind, e.version) for e in far] == [("snapshot", 12)]  # the documented gap
    assert service.watching.resumes == {"replay": 1, "snapshot": 1}
    await played.move(rng)
    await played.move(rng)
    await _wait([task])
    assert [(e.kind, e.version) for e in far] == [("snapshot", 12), ("state", 13),
                                                 ("state", 14)]


async def test_patch_mode_patches_apply_to_the_previous_view_with_regular_snapshots(
    store: MatchStore,
) -> None:
    service = make_service(store)
    played = await new_match(service, players=2)
    rng = random.Random(21)
    await played.move(rng)
    start = (await service.get_state(played.match_id, None)).version
    moves = 9
    until = start + moves
    full: list[LiveEvent] = []
    patched: list[LiveEvent] = []
    seat_patched: list[LiveEvent] = []
    tasks = [
        asyncio.create_task(_collect(service, played.match_id, until, full)),
        asyncio.create_task(_collect(service, played.match_id, until, patched,
                                     mode="patch", snapshot_every=4)),
        asyncio.create_task(_collect(service, played.match_id, until, seat_patched,
                                     mode="patch", token=played.tokens[1])),
    ]
    await _until(lambda: bool(full and patched and seat_patched), tasks)
    for _ in range(moves):
        await played.move(rng)
    await _wait(tasks)

    kinds = [e.kind for e in patched]
    assert kinds == ["snapshot", "patch", "patch", "patch", "snapshot", "patch", "patch",
                     "patch", "snapshot", "patch"]
    document: Any = None
    for event, whole in zip(patched, full, strict=True):
        assert event.version == whole.version
        body = json.loads(event.data)
        if event.kind == "snapshot":
            document = body
        else:
            assert body["version"] == event.version
            assert body["baseVersion"] == event.version - 1
            document = jsonpatch.apply_patch(document, body["operations"])
        assert timeless(document) == timeless(json.loads(whole.data))
    # A seat's patches rebuild the seat's own view, never the spectators'.
    document = None
    for event in seat_patched:
        body = json.loads(event.data)
        document = body if event.kind == "snapshot" else jsonpatch.apply_patch(
            document, body["operations"])
        assert timeless(document) == timeless(event.state.to_json())
        assert document["seat"] == 1


async def test_a_lagging_patch_watcher_resynchronizes_with_a_snapshot(
    store: MatchStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(timeline_module, "FRAMES", 2)
    service = make_service(store)
    played = await new_match(service, players=2)
    rng = random.Random(8)
    updates = service.follow(played.match_id, mode="patch")
    first = await anext(updates)
    assert first.kind == "snapshot"
    for _ in range(6):  # the watcher reads nothing meanwhile: the shared frames move on
        await played.move(rng)
    events: list[LiveEvent] = []
    async for event in updates:
        events.append(event)
        if event.version == first.version + 6:
            break
    await updates.aclose()  # type: ignore[attr-defined]
    assert [e.version for e in events] == list(range(first.version + 1, first.version + 7))
    # Rebuilding the view from what it got gives the current state: nothing lost.
    document: Any = json.loads(first.data)
    for event in events:
        body = json.loads(event.data)
        document = body if event.kind == "snapshot" else jsonpatch.apply_patch(
            document, body["operations"])
    assert timeless(document) == timeless(
        (await service.get_state(played.match_id, None)).to_json())


async def test_caps_refuse_new_streams_and_never_cut_established_ones(
    store: MatchStore,
) -> None:
    from service.errors import ApiError

    service = make_service(store, max_watchers=3, max_watchers_per_client=2)
    hub = service.hub
    first, second = hub.admit("a"), hub.admit("a")
    with pytest.raises(ApiError) as refused:
        hub.admit("a")
    assert (refused.value.status, refused.value.code) == (429, "too_many_streams")
    assert refused.value.extra["retryAfter"] > 0
    third = hub.admit("b")
    with pytest.raises(ApiError) as full:
        hub.admit("c")
    assert (full.value.status, full.value.code) == (503, "replica_full")
    first.release()
    first.release()  # idempotent: releasing twice frees one slot only
    fourth = hub.admit("c")
    with pytest.raises(ApiError):
        hub.admit("d")
    for lease in (second, third, fourth):
        lease.release()
    assert hub.watchers == 0 and hub.refused == {"too_many_streams": 1, "replica_full": 2}


async def test_shutdown_ends_every_stream(store: MatchStore) -> None:
    service = make_service(store)
    played = await new_match(service, players=2)
    streams = [service.follow(played.match_id) for _ in range(5)]
    for stream in streams:
        await anext(stream)
    pending: list[Callable[[], Any]] = [lambda s=s: anext(s) for s in streams]
    waiting = [asyncio.create_task(call()) for call in pending]
    await asyncio.sleep(0.05)
    service.hub.shutdown()
    results = await asyncio.wait_for(
        asyncio.gather(*waiting, return_exceptions=True), SETTLE
    )
    assert all(isinstance(r, Shutdown) for r in results)
