"""Issue 30, item 2: ``match_finished`` reaches by webhook every player who held a seat --
one whose seat a bot holds (a hand-over) as well as one who resigned."""

from __future__ import annotations

from service.identity.callers import Caller

from .conftest import Receiver, Stack, until


async def test_match_finished_is_sent_for_a_seat_a_bot_holds_and_a_resigned_one(
        stack: Stack, receiver: Receiver) -> None:
    app = await stack.app()
    await stack.endpoint(app, receiver, "/done", events=["match_finished"])
    stack.start_worker()
    match_id = await stack.match(app)
    _, record = await stack.matches.storage.load(match_id)
    first, second = record.seat_players
    assert first is not None and second is not None
    # u1 hands its seat to a bot (no bot worker runs here: the bot does not move), then u2
    # resigns: the match ends with u1's seat held by the bot.
    await stack.matches.hand_seat_to_bot(match_id, Caller(app=app.app, player=first.player),
                                         "random", 0)
    await stack.matches.resign(match_id, Caller(app=app.app, player=second.player), 1)
    await until(lambda: len(receiver.bodies("/done")) >= 2, "match_finished for both players")
    told = {(b["data"]["sub"], b["data"]["seat"]) for b in receiver.bodies("/done")
            if b["type"] == "match_finished" and b["data"]["matchId"] == match_id}
    assert told == {("u1", 0), ("u2", 1)}
    assert receiver.bad == []
