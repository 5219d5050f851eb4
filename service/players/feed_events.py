"""The player feed's events, derived from one stored match version: which players it
concerns (those bound to a seat, and those whose seat a bot took over: they still hear how
the match ends) and what it tells each (``your_turn`` when a seat *becomes* active, the match
started or finished, a seat that changed). Pure: the same version always gives the same
events, whichever replica derives it, so appending them is safe to repeat
(``feed.py``)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import TypeAdapter

from service.games import get as get_engine
from service.matches.outcome import MatchOutcome, outcome_of
from service.matches.records import LogRecord, MatchRecord

_RESULT = TypeAdapter(MatchOutcome)
_CHANGES = {"seat_to_bot": "to_bot", "seat_token_renewed": "token_renewed",
            "seat_renamed": "renamed", "timeout": "timed_out", "resign": "resigned",
            "seat_reclaimed": "reclaimed"}


def _compact(value: dict[str, Any]) -> bytes:
    return json.dumps(value, separators=(",", ":"), sort_keys=True,
                      ensure_ascii=False).encode()


def derive(
    match_id: str, version: int, before: MatchRecord | None, after: MatchRecord,
    entry: LogRecord | None,
) -> dict[str, list[bytes]]:
    """player id -> the feed items version ``version`` (``before`` -> ``after``) means for it,
    for every player bound to a seat before or after (an empty list: nothing to tell)."""
    invited = _merge(_invited(match_id, version, before, after),
                     _offered(match_id, version, before, after))
    bound = _bound(before, after)
    if not bound:
        return invited
    if not after.started or (before is not None and not before.started):
        return _lobby(match_id, version, before, after, entry, bound)
    engine = get_engine(after.game)
    new_state = engine.loads(after.state)
    result = engine.result(new_state)
    # Over by the rules, or ended by the service (fewer than two seats still in).
    over = result is not None or after.finished
    active = set() if over else set(engine.active_seats(new_state))
    was_active: set[int] = set()
    was_finished = False
    if before is not None:
        old_state = engine.loads(before.state)
        was_finished = before.finished or engine.result(old_state) is not None
        if not was_finished:
            was_active = set(engine.active_seats(old_state))
    changed = _changed_seat(entry)
    out: dict[str, list[bytes]] = {}
    for player, seat in bound.items():
        base = {"matchId": match_id, "version": version, "game": after.game, "seat": seat}
        items: list[dict[str, Any]] = []
        if before is None:
            items.append({**base, "kind": "match_started"})
        mine = changed is not None and changed[0] == seat
        if mine and changed is not None:
            items.append({**base, "kind": "seat_changed", "change": changed[1]})
            if changed[1] == "timed_out" and entry is not None \
                    and isinstance(entry.action, dict):
                items.append({**base, "kind": "timed_out",
                              "policy": str(entry.action.get("policy", "forfeit"))})
        still_bound = after.player_seat(after.app or "", player) == seat
        taken_back = mine and changed is not None and changed[1] == "reclaimed"
        if (still_bound and seat in active and (seat not in was_active or taken_back)
                and seat not in after.bots):
            items.append({**base, "kind": "your_turn"})
        if over and not was_finished:
            outcome = outcome_of(result, after.players, after.forfeited, after.termination)
            items.append({**base, "kind": "match_finished",
                          "result": _RESULT.dump_python(outcome, mode="json", by_alias=True)})
        out[player] = [_compact(item) for item in items]
    return out


def _lobby(
    match_id: str, version: int, before: MatchRecord | None, after: MatchRecord,
    entry: LogRecord | None, bound: dict[str, int],
) -> dict[str, list[bytes]]:
    """The feed items of a version of a match that waited for players: a player joined or
    left (told to the others seated), the match cancelled (told to everyone seated before),
    the match started (``match_started``, then whose turn it is, as for a new match), a
    player invited (told to that player)."""
    action = entry.action if entry is not None and isinstance(entry.action, dict) else {}
    kind = action.get("type")
    mover = action.get("player") if kind == "player_joined" else None
    left_seat = action.get("seat") if kind in ("player_left", "match_cancelled") else None
    started = derive(match_id, version, None, after, None) if after.started else {}
    out: dict[str, list[bytes]] = {}
    for player, seat in bound.items():
        base = {"matchId": match_id, "version": version, "game": after.game, "seat": seat}
        items: list[dict[str, Any]] = []
        if kind == "player_joined" and player != mover:
            items.append({**base, "kind": "player_joined", "playerSeat": action.get("seat"),
                          "playerName": action.get("name")})
        if kind == "player_left" and seat != left_seat:
            items.append({**base, "kind": "player_left", "playerSeat": left_seat})
        if kind == "match_cancelled" and seat != left_seat:
            items.append({**base, "kind": "match_cancelled", "reason": action.get("reason")})
        out[player] = [_compact(item) for item in items] + started.get(player, [])
    return _merge(out, _merge(_invited(match_id, version, before, after),
                              _offered(match_id, version, before, after)))


def _merge(one: dict[str, list[bytes]], two: dict[str, list[bytes]]) -> dict[str, list[bytes]]:
    out = dict(one)
    for player, items in two.items():
        out[player] = out.get(player, []) + items
    return out


def _offered(match_id: str, version: int, before: MatchRecord | None,
             after: MatchRecord) -> dict[str, list[bytes]]:
    """``rematch_offered`` for each former player a new rematch keeps a seat for."""
    if before is not None or after.rematch_of is None:
        return {}
    return {player: [_compact({
        "kind": "rematch_offered", "matchId": match_id, "version": version,
        "game": after.game, "seat": seat, "rematchOf": after.rematch_of,
    })] for seat, player in after.reserved.items()}


def _invited(match_id: str, version: int, before: MatchRecord | None,
             after: MatchRecord) -> dict[str, list[bytes]]:
    """``invited`` for each player whose invitation this version added."""
    known = {i.id for i in before.invites} if before is not None else set()
    out: dict[str, list[bytes]] = {}
    for invitation in after.invites:
        if invitation.player is None or invitation.id in known:
            continue
        by = next((p.name for p in after.seat_players
                   if p is not None and p.player == invitation.by), None)
        out[invitation.player] = [_compact({
            "kind": "invited", "matchId": match_id, "version": version, "game": after.game,
            "seat": invitation.seat, "invitationId": invitation.id, "by": by,
        })]
    return out


def _bound(before: MatchRecord | None, after: MatchRecord) -> dict[str, int]:
    """player -> seat for every player who holds a seat in ``before`` or ``after``, or held
    one a bot took over (``MatchRecord.seats_held``): a player whose seat a bot holds, or
    who resigned or forfeited, is still told how the match ends (``match_finished``)."""
    found: dict[str, int] = {}
    for record in (before, after):
        if record is None:
            continue
        for player, seat in record.seats_held().items():
            found.setdefault(player, seat)
    return found


def _changed_seat(entry: LogRecord | None) -> tuple[int, str] | None:
    """The seat a service entry (hand-over, token renewed, renamed) changed, and how."""
    if entry is None or entry.seat is not None or not isinstance(entry.action, dict):
        return None
    change = _CHANGES.get(str(entry.action.get("type")))
    seat = entry.action.get("seat")
    if change is None or not isinstance(seat, int):
        return None
    return seat, change
