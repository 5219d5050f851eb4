"""Which credential a request proved, noted by the code that checked it (issue 31, items 1
and 2): budgets and stream slots are counted per credential only once it is verified, and
only for a credential that cost something to mint.

The transport opens a ``Checked`` for a request (``watch``); the code that verifies a
credential notes it there (``note``): the authenticator for player tokens, app keys and
JWTs, the match record for seat and spectator tokens, the stream tickets for a ticket's
seat. ``own`` says whether the credential is a client of its own:

- an app key, or an app's user signed in with the app's JWT: yes (the app vouches for it);
- a seat token of a match an app key created: yes (the app's creation budget paid for it);
- a guest's player token, a seat token of a match created anonymously or by a guest, a
  spectator token: no -- anyone may mint them for nothing, so they draw from the budgets of
  the address that sends them.

Outside a request (workers, bots) nothing is watching and ``note`` does nothing. A context
variable carries the holder: tasks started by the request share it (they copy the context,
and the holder is mutated, never replaced).
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass

from .callers import Caller, Credential, credential_key


@dataclass(slots=True)
class Checked:
    """The credential a request proved (None: none yet) and whether it is a client of its
    own."""

    credential: str | None = None
    own: bool = False


_current: ContextVar[Checked | None] = ContextVar("skyline_checked", default=None)


def watch() -> Checked:
    """A fresh holder for the current request (task) and what it starts."""
    holder = Checked()
    _current.set(holder)
    return holder


def note(credential: str, *, own: bool) -> None:
    """``credential`` was verified (``own``: it counts as a client of its own). The same
    credential noted twice is its own only if both checks said so."""
    holder = _current.get()
    if holder is None:
        return
    if holder.credential == credential:
        holder.own = holder.own and own
    else:
        holder.credential, holder.own = credential, own


def own_client(credential: Credential, holder: Checked | None, *,
               seat_key: str | None = None) -> str | None:
    """The key a credential's stream slots are counted under, or None: its address's. A
    ``Caller`` counts on its own unless it is a guest; a seat or spectator token (or a
    ticket's seat, ``seat_key``) only once ``holder`` saw it verified as its own."""
    if isinstance(credential, Caller):
        return None if credential.anonymous else credential_key(credential)
    wanted = credential if credential is not None else seat_key
    if wanted is None or holder is None or not holder.own or holder.credential != wanted:
        return None
    return wanted
