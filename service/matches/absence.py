"""A seat whose player is gone, and back: pure record changes for a timeout, a resignation,
a hand-over and a reclaim, each stored as a service entry of its own (``seat: null``).

- ``to_bot``: a bot takes the seat; the seat's token and player are kept in ``away`` (so the
  old token is told why it stopped working and its player may take the seat back).
- ``forfeit``: the seat is out (``forfeited``, ranked last). With fewer than two seats still
  in, the match ends there (``termination`` says why); else a random bot plays the seat on,
  so that the rules stay whole.
- ``reclaim``: the player takes the seat back from its bot.

Clocks: a seat a bot holds for its player keeps its clock running from its activation (the
bot has no deadline: ``MatchRecord.deadlines``), and a reclaim leaves it as it is, so handing
a seat over and taking it back never moves its deadline (``service.clocks.reclaimed``).

The entries (``timeout``, ``resign``, ``seat_reclaimed``) are replayed by
``replay.with_handover`` from their own fields, so timelines and streams see the same
seats."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from service.clocks import out_of_time, reclaimed, stopped

from .records import Away, MatchRecord, SeatPlayer

FORFEIT_BOT = "random"
"""The bot that plays a forfeited seat on (its moves no longer matter to its rank)."""

TIMEOUT = "timeout"
RESIGN = "resign"
RECLAIMED = "seat_reclaimed"


def _clock_out(record: MatchRecord, seat: int, reason: str, now_ms: int) -> MatchRecord:
    """The seat's clock once a bot took it: as it is when the bot holds it for its player (a
    hand-over, a timeout under the ``bot`` policy: the activation runs on, whoever holds the
    seat, so taking it back never restarts it); stopped when the seat is out (forfeited)."""
    if seat >= len(record.clocks) or seat not in record.forfeited:
        return record
    clocks = list(record.clocks)
    clock = clocks[seat]
    clocks[seat] = (out_of_time(record.time_control, clock) if reason == TIMEOUT
                    else stopped(record.time_control, clock, now_ms))
    return replace(record, clocks=tuple(clocks))


def to_bot(record: MatchRecord, seat: int, kind: str, reason: str, version: int,
           now_ms: int, updated: int) -> MatchRecord:
    """A ``kind`` bot takes ``seat`` at ``version`` (``reason``: hand_over, timeout,
    resign); its token and player are remembered in ``away``."""
    tokens = list(record.tokens)
    players = list(record.seat_players) or [None] * record.players
    away = dict(record.away)
    held: SeatPlayer | None = players[seat] if seat < len(players) else None
    digest = tokens[seat] if seat < len(tokens) else None
    if held is not None or digest is not None or seat not in away:
        away[seat] = Away(held, digest, "hand_over" if reason == "hand_over" else reason,
                          version)
    if seat < len(tokens):
        tokens[seat] = None
    if seat < len(players):
        players[seat] = None
    out = replace(record, bots=dict(sorted({**record.bots, seat: kind}.items())),
                  tokens=tuple(tokens), seat_players=tuple(players),
                  away=dict(sorted(away.items())), updated=updated)
    return _clock_out(out, seat, reason, now_ms)


def still_in(record: MatchRecord) -> list[int]:
    """The seats that have not forfeited."""
    return [s for s in range(record.players) if s not in record.forfeited]


def forfeit(record: MatchRecord, seat: int, reason: str, version: int, now_ms: int,
            updated: int) -> MatchRecord:
    """``seat`` is out at ``version`` (``reason``: timeout or resign)."""
    out = replace(record, forfeited=(*record.forfeited, seat))
    if len(still_in(out)) < 2:
        out = to_bot(out, seat, FORFEIT_BOT, reason, version, now_ms, updated)
        clocks = tuple(stopped(out.time_control, c, now_ms) for c in out.clocks)
        return replace(out, finished=True, termination=reason, clocks=clocks)
    return to_bot(out, seat, FORFEIT_BOT, reason, version, now_ms, updated)


def reclaim(record: MatchRecord, seat: int, digest: str | None, active: bool, version: int,
            now_ms: int, updated: int) -> MatchRecord:
    """The player in ``away[seat]`` takes the seat back at ``version`` (``digest``: its new
    token's, None when the seat is bound to a player); ``active``: the seat may act now."""
    gone = record.away[seat]
    tokens = list(record.tokens)
    players = list(record.seat_players) or [None] * record.players
    tokens[seat] = digest
    players[seat] = gone.player
    bots = {s: k for s, k in record.bots.items() if s != seat}
    away = {s: a for s, a in record.away.items() if s != seat}
    clocks = list(record.clocks)
    if seat < len(clocks):
        clocks[seat] = reclaimed(record.time_control, clocks[seat], active, now_ms, version)
    return replace(record, bots=bots, tokens=tuple(tokens), seat_players=tuple(players),
                   away=away, clocks=tuple(clocks), updated=updated)


def replayed(record: MatchRecord, action: dict[str, Any]) -> MatchRecord:
    """``record`` after a logged ``timeout``/``resign``/``seat_reclaimed`` entry, for
    replays: the seats' bots and forfeits (tokens and clocks are not replayed)."""
    seat, kind = action.get("seat"), action.get("type")
    if not isinstance(seat, int) or not 0 <= seat < record.players:
        return record
    if kind == RECLAIMED:
        return replace(record, bots={s: k for s, k in record.bots.items() if s != seat})
    if kind == TIMEOUT and action.get("policy") == "bot":
        bot = action.get("kind")
        if isinstance(bot, str):
            return replace(record, bots=dict(sorted({**record.bots, seat: bot}.items())))
        return record
    if kind in (TIMEOUT, RESIGN):
        out = replace(record, forfeited=(*record.forfeited, seat),
                      bots=dict(sorted({**record.bots, seat: FORFEIT_BOT}.items())))
        if len(still_in(out)) < 2:
            out = replace(out, finished=True, termination=str(kind))
        return out
    return record
