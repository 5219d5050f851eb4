"""The webhook events of one stored match version, for the endpoints of its app.

The per-player events are the player feed's (``service.players.feed_events.derive``): each
becomes, for every enabled endpoint subscribed to its kind, one message whose body is
``{"type": kind, "timestamp": <the version's write time>, "data": {...}}``; ``data`` names the
match (``matchId``), its ``version``, the ``seat``, the ``player`` and -- for an app's user
signed in with JWTs -- its ``sub``. Everything in it comes from the stored records, so the
same version always gives the same bytes and the same ids.

``timeout_soon``: for each seat that became active with a deadline (``MatchRecord.deadlines``)
a warning is scheduled ``warnBeforeSeconds`` before it, per subscribed endpoint, once per
deadline (its id names the deadline, not the version: a seat taken back from a bot finds its
deadline as it was and queues no second warning); it carries the check the worker makes when
it is due (the seat still has that very deadline).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from service.matches.records import MatchRecord
from service.matches.storage import Written
from service.players.feed_events import derive
from service.players.records import PlayerRecord

from .endpoints import Endpoint
from .outbox import Check, Message, message_id

TIMEOUT_SOON = "timeout_soon"


def rfc3339(seconds: float) -> str:
    stamp = datetime.fromtimestamp(seconds, UTC)
    return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def body(kind: str, seconds: float, data: dict[str, Any]) -> str:
    return json.dumps({"type": kind, "timestamp": rfc3339(seconds), "data": data},
                      separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def deadlines(record: MatchRecord | None) -> dict[int, int]:
    """seat -> deadline (ms, store clock) of each running clock of ``record``."""
    return {} if record is None else record.deadlines()


def players_of(written: Written) -> list[str]:
    """Every player the version may concern (to look their ``sub`` up once)."""
    per_player = derive(written.match_id, written.version, written.before, written.after,
                        written.entry)
    out = [p for p, items in per_player.items() if items]
    for seat in _new_deadlines(written):
        holder = written.after.holder(seat)
        if holder is not None and holder.player not in out:
            out.append(holder.player)
    return out


def _new_deadlines(written: Written) -> dict[int, int]:
    before, after = deadlines(written.before), deadlines(written.after)
    return {seat: at for seat, at in after.items()
            if before.get(seat) != at and seat not in written.after.bots}


def _who(player: str, records: dict[str, PlayerRecord]) -> dict[str, Any]:
    found = records.get(player)
    return {"player": player, **({"sub": found.sub} if found and found.sub else {})}


def messages(written: Written, endpoints: Sequence[Endpoint],
             records: dict[str, PlayerRecord], now_ms: int) -> list[Message]:
    """The messages of a version for ``endpoints`` (``records``: the players concerned)."""
    app = written.after.app or ""
    live = [e for e in endpoints if e.enabled]
    if not live:
        return []
    seconds = written.after.updated or now_ms / 1000
    per_player = derive(written.match_id, written.version, written.before, written.after,
                        written.entry)
    out: list[Message] = []
    for player, items in per_player.items():
        for raw in items:
            item: dict[str, Any] = json.loads(raw)
            kind = str(item.pop("kind"))
            data = {**item, **_who(player, records)}
            for endpoint in live:
                if not endpoint.wants(kind):
                    continue
                msg = message_id(app, endpoint.id, written.match_id, written.version, kind,
                                 data.get("seat"), player)
                out.append(Message(id=msg, app=app, endpoint=endpoint.id, type=kind,
                                   body=body(kind, seconds, {"id": msg, **data}),
                                   due=now_ms))
    for seat, deadline in _new_deadlines(written).items():
        holder = written.after.holder(seat)
        if holder is None:
            continue
        data = {"matchId": written.match_id, "version": written.version,
                "game": written.after.game, "seat": seat, "deadline": rfc3339(deadline / 1000),
                **_who(holder.player, records)}
        for endpoint in live:
            if not endpoint.wants(TIMEOUT_SOON):
                continue
            at = deadline - endpoint.warn_before * 1000
            # One warning per deadline, whichever write made it a player's (the seat's
            # activation, or a reclaim that found it running: hand-over and reclaim do not
            # move a deadline, and must not multiply its warning either).
            msg = message_id(app, endpoint.id, written.match_id, TIMEOUT_SOON, seat, deadline)
            out.append(Message(
                id=msg, app=app, endpoint=endpoint.id, type=TIMEOUT_SOON,
                body=body(TIMEOUT_SOON, at / 1000,
                          {"id": msg, **data, "warnBeforeSeconds": endpoint.warn_before}),
                due=max(0, at), check=Check(written.match_id, seat, deadline)))
    return out


def player_of(message: Message) -> str:
    """The player a message concerns (its body's ``data.player``; "" for none)."""
    data = json.loads(message.body).get("data", {})
    return str(data.get("player", ""))


def ping(app: str, endpoint: Endpoint, msg: str, now_ms: int) -> Message:
    return Message(id=msg, app=app, endpoint=endpoint.id, type="ping",
                   body=body("ping", now_ms / 1000, {"id": msg, "webhookId": endpoint.id}),
                   due=now_ms)
