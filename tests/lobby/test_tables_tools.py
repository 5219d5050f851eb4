"""The operator's tools on matches that waited for players: ``skyline show`` says there is
no game yet; ``skyline verify`` checks a match that started late (its lobby versions
included) like any other, and has nothing to check before the start."""

from __future__ import annotations

from typing import Any

from service.cli import show
from service.matches.verify import verify
from service.tables.models import JoinRequest

from .conftest import Replica
from .test_tables_races import _waiting


class _Kept:
    """The replica's store, lent to ``skyline show`` (which closes the store it is given)."""

    def __init__(self, store: Any) -> None:
        self.store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    async def close(self) -> None:
        return None


async def _show(store: Any, match_id: str) -> str:
    return await show(_Kept(store), match_id)


async def test_show_and_verify_a_waiting_then_started_match(one: Replica) -> None:
    host, bob, cid = [await one.guest(n) for n in ("Ann", "Bob", "Cid")]
    match_id = await _waiting(one, host, 2)
    text = await _show(one.store, match_id)
    assert text.startswith(f"ny1901 match {match_id} · version 0 · waiting")
    assert "no game yet" in text and "open seats: 1, 2" in text
    waiting = await verify(one.matches.storage, match_id)
    assert waiting.problems and "no game" in waiting.problems[0]
    await one.tables.join(bob, match_id, JoinRequest())
    await one.tables.leave(bob, match_id)
    await one.tables.join(bob, match_id, JoinRequest())
    await one.tables.join(cid, match_id, JoinRequest())
    _, record = await one.matches.load_record(match_id)
    assert record.started and record.start_version == 4
    verdict = await verify(one.matches.storage, match_id)
    assert verdict.problems == [] and verdict.version == 4
    text = await _show(one.store, match_id)
    assert " · active · " in text and "open market:" in text


async def test_a_chosen_seed_where_the_deployment_allows_it(one: Replica) -> None:
    """``--allow-chosen-seeds``: the creator's seed is kept until the start and used then
    (two such matches deal alike); every view says ``seedChosen``."""
    from service.matches.models import CreateMatchRequest

    one.matches.create_match.__self__.allow_chosen_seeds = True  # type: ignore[attr-defined]
    host, bob = [await one.guest(n) for n in ("Ann", "Bob")]
    states = []
    for _ in range(2):
        created = await one.tables.create_match(host, CreateMatchRequest.model_validate({
            "game": "ny1901", "seed": 77, "visibility": "public",
            "seats": [{"player": "me"}, {"open": True}]}))
        lobby = await one.tables.lobby(bob, game=None, players=None, cursor=None, limit=None)
        assert [e.seed_chosen for e in lobby.items if e.match_id == created.match_id] == [True]
        state = await one.tables.join(bob, created.match_id, JoinRequest())
        assert state.status == "active" and state.seed_chosen is True
        assert state.seed_commitment is None
        states.append(state)
    assert states[0].view == states[1].view  # the same seed, the same deal
