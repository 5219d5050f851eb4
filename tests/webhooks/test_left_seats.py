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


async def test_hand_over_and_reclaim_do_not_multiply_a_deadline_warning(
        stack: Stack, receiver: Receiver) -> None:
    """Issue 31, item 7: taking a seat back does not move its deadline, and does not queue
    another ``timeout_soon`` for the deadline it already had a warning for."""
    from service.clocks import OnTimeout, TimeControl
    from service.matches.models import CreateMatchRequest

    app = await stack.app()
    await stack.endpoint(app, receiver, "/soon", events=["timeout_soon"],
                         warn_before_seconds=10)
    created = await stack.players.create_match(app, CreateMatchRequest.model_validate(
        {"game": "toy", "seats": [{"user": "w1"}, {"user": "w2"}]}), extra={
            "time_control": TimeControl("correspondence", seconds_per_move=600),
            "on_timeout": OnTimeout("forfeit")})
    match_id = created.match_id
    _, record = await stack.matches.storage.load(match_id)
    first = record.seat_players[0]
    assert first is not None
    deadline = record.deadlines()[0]
    assert stack.hooks.enqueued == 1  # seat 0's warning
    player = Caller(app=app.app, player=first.player)
    for _ in range(3):
        await stack.matches.hand_seat_to_bot(match_id, player, "random", 0)
        await stack.matches.reclaim_seat(match_id, player, 0)
    _, record = await stack.matches.storage.load(match_id)
    assert record.deadlines()[0] == deadline
    assert stack.hooks.enqueued == 1
