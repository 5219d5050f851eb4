"""Issue 30, item 2, with clocks: a seat that timed out stays in its player's history --
``away`` under the ``bot`` policy, ``forfeited`` under ``forfeit`` -- and the player whose
seat a bot holds is told ``match_finished`` in its feed, on every store."""

from __future__ import annotations

import json
from typing import Any, cast

from service.clocks import OnTimeout, TimeControl
from service.identity.callers import Caller
from service.matches import MatchService
from service.matches.models import CreateMatchRequest
from service.players import PlayerService
from service.store import DocStore
from tests.clocks.conftest import TOY
from tests.store.conftest import Backend


async def _timed(players: PlayerService, app: Caller, users: list[str],
                 policy: OnTimeout) -> str:
    created = await players.create_match(app, CreateMatchRequest.model_validate(
        {"game": TOY, "seats": [{"user": u} for u in users]}), extra={
            "time_control": TimeControl("correspondence", seconds_per_move=60),
            "on_timeout": policy})
    return created.match_id


async def _status(players: PlayerService, player: str, match_id: str) -> tuple[str, str]:
    app = await players.apps.cached((await players.directory.get(player)).app)  # type: ignore[union-attr]
    page = await players.listing.page(app, player, status=None, mine=False, cursor=None,
                                      limit=100)
    (item,) = [i for i in page.items if i.match_id == match_id]
    return item.seat_status, item.status


async def _fire(matches: MatchService, match_id: str, seat: int) -> None:
    _, record = await matches.storage.load(match_id)
    fired = await matches.timeouts.fire(match_id, 0, record.deadlines()[seat])
    assert [f.seat for f in fired] == [seat]


async def test_timed_out_seats_stay_in_the_history_and_hear_how_the_match_ended(
        backend: Backend) -> None:
    matches = MatchService(backend.store, ttl_finished=3600, ttl_idle=3600)
    players = PlayerService(cast(DocStore, backend.store), matches)
    try:
        _, key = await players.apps.add("Clocks")
        app = await players.authenticate(key)
        assert isinstance(app, Caller)
        # The bot policy: seat 0's time runs out, a bot holds it for its player.
        match_id = await _timed(players, app, ["a1", "b1"], OnTimeout("bot", "random"))
        _, record = await matches.storage.load(match_id)
        holders = [h.player for h in record.seat_players if h is not None]
        await _fire(matches, match_id, 0)
        assert await _status(players, holders[0], match_id) == ("away", "active")
        # The other seat resigns: the match ends while the bot holds seat 0.
        await matches.resign(match_id, Caller(app=app.app, player=holders[1]), 1)
        assert await _status(players, holders[0], match_id) == ("away", "finished")
        assert await _status(players, holders[1], match_id) == ("resigned", "finished")
        items, _ = await players.feed.read(holders[0], 0)
        told: list[dict[str, Any]] = [json.loads(i.data) for i in items
                                      if getattr(i, "kind", None) == "match_finished"]
        assert [(t["matchId"], t["seat"]) for t in told] == [(match_id, 0)]
        # The forfeit policy: seat 0 is out, the match ends, its player keeps it.
        other = await _timed(players, app, ["a2", "b2"], OnTimeout("forfeit"))
        _, record = await matches.storage.load(other)
        first = record.seat_players[0]
        assert first is not None
        await _fire(matches, other, 0)
        assert await _status(players, first.player, other) == ("forfeited", "finished")
        items, _ = await players.feed.read(first.player, 0)
        assert other in [json.loads(i.data)["matchId"] for i in items
                         if getattr(i, "kind", None) == "match_finished"]
    finally:
        await players.aclose()
