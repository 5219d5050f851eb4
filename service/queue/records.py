"""The stored queue document: one per compatible set of players -- (app, game, player count,
rules version, options after defaults) -- under ``queue:<app>:<digest>``, so that everything
of a queue is one document (on Redis Cluster one hash slot) written by compare-and-set.

A ticket's id names its queue's digest (``qt_<digest>_<random>``): its holder's app and the
digest find the document.

The document (compact JSON, read and written only here):

- ``waiting``: the tickets in the queue, oldest first (ticket, player, name, queued and last
  polled in ms, the bot-fill delay in s or None);
- ``forming``: the match being formed, or None: its id (derived from the queue's ``salt``
  and the number of matches it formed, ``n``), when, and who sits where; its tickets are in
  no other part of the document until it is marked (``done``);
- ``done``: tickets out of the queue -- matched (match id and seat), expired or left -- kept
  for ``keep`` seconds so that their holders can still read them.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from dataclasses import asdict, dataclass, field, replace
from typing import Any

DIGEST_HEX = 24
TICKET = re.compile(rf"^qt_([0-9a-f]{{{DIGEST_HEX}}})_[0-9a-f]{{16}}$")


def _dump(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), sort_keys=True).encode()


def queue_digest(game: str, players: int, rules_version: int, options: dict[str, Any]) -> str:
    """The queue of compatible players: same game, player count, rules version and options
    after defaults (the app is in the key)."""
    canonical = _dump({"g": game, "p": players, "r": rules_version, "o": options})
    return hashlib.blake2b(canonical, digest_size=DIGEST_HEX // 2).hexdigest()


def queue_key(app: str, digest: str) -> str:
    return f"queue:{app}:{digest}"


def new_ticket(digest: str) -> str:
    return f"qt_{digest}_{secrets.token_hex(8)}"


def digest_of_ticket(ticket: str) -> str | None:
    found = TICKET.match(ticket)
    return found.group(1) if found is not None else None


def match_id_of(salt: str, number: int) -> str:
    """The id of the queue's ``number``-th match: derived, so that forming it again after a
    crash creates the same match (or finds it created); unguessable without the salt."""
    digest = hashlib.blake2b(f"{salt}:{number}".encode(), digest_size=12).hexdigest()
    return "q" + digest[:15]


@dataclass(frozen=True, slots=True)
class QueueEntry:
    ticket: str
    player: str
    name: str
    queued: int
    """ms"""
    seen: int
    """ms: queued or last polled (refreshed lazily, ``REFRESH``)."""
    fill: int | None = None
    """Seconds after which bots may fill the match (None: never)."""
    quota: str | None = None
    """The address whose quota a guest's matches count against too (issue 31, item 6);
    None for a player of the app's own."""


@dataclass(frozen=True, slots=True)
class Seat:
    ticket: str
    player: str
    name: str
    quota: str | None = None
    """``QueueEntry.quota`` of the player seated."""


@dataclass(frozen=True, slots=True)
class Forming:
    match: str
    at: int
    """ms: when it was formed (the players' "my matches" entries use it)."""
    seats: tuple[Seat | None, ...]
    """Per seat: a queued player, or None for a bot."""


@dataclass(frozen=True, slots=True)
class Done:
    player: str
    status: str
    """``matched``, ``expired`` or ``left``."""
    at: int
    match: str | None = None
    seat: int | None = None


@dataclass(frozen=True, slots=True)
class QueueDoc:
    app: str
    game: str
    players: int
    rules: int
    options: dict[str, Any]
    salt: str
    n: int = 0
    waiting: tuple[QueueEntry, ...] = ()
    forming: Forming | None = None
    done: dict[str, Done] = field(default_factory=dict)

    def encode(self) -> bytes:
        raw = asdict(self)
        raw["waiting"] = [asdict(w) for w in self.waiting]
        return _dump(raw)

    @classmethod
    def decode(cls, data: bytes) -> QueueDoc:
        raw = json.loads(data)
        forming = raw.get("forming")
        return cls(
            app=raw["app"], game=raw["game"], players=raw["players"], rules=raw["rules"],
            options=raw["options"], salt=raw["salt"], n=raw["n"],
            waiting=tuple(QueueEntry(**w) for w in raw["waiting"]),
            forming=None if forming is None else Forming(
                match=forming["match"], at=forming["at"],
                seats=tuple(None if s is None else Seat(**s) for s in forming["seats"]),
            ),
            done={t: Done(**d) for t, d in raw["done"].items()},
        )

    def but(self, **changes: Any) -> QueueDoc:
        return replace(self, **changes)
