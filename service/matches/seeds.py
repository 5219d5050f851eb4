"""Seeds: drawn by the service and committed to, or chosen by the creator (docs/security.md,
"Verifiable seeds (item 8)").

A match's seed fixes every draw of the match (the engines are deterministic), so whoever
knows it knows every future card and every hand. A drawn seed is secret until the match
ends; the state publishes from version 0 a commitment to it -- ``hex(SHA-256(salt ‖ seed as
8 bytes big-endian))``, the salt 16 random bytes -- and the finished match reveals seed and
salt, so anyone can check that the match was played from the seed committed to at its start
(``verify.py``, ``skyline verify``, ``tools/verify_match.py``). A chosen seed is known to its
creator: it is refused when players other than the creator sit in the match, unless the
deployment allows it (``--allow-chosen-seeds``), and every view says ``seedChosen``.

Randomness comes from ``secrets`` here, in the service layer; engines only receive the seed.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping

from service.errors import ApiError

from .models import MAX_SEED
from .records import MatchRecord, SeatPlayer

SALT_BYTES = 16
SEED_BYTES = 8
"""A seed is at most ``MAX_SEED`` (2**53 - 1): it fits 8 bytes, unsigned."""


def draw() -> tuple[int, bytes]:
    """A fresh seed (uniform in ``0..MAX_SEED``) and the salt its commitment hides it with."""
    return secrets.randbelow(MAX_SEED + 1), secrets.token_bytes(SALT_BYTES)


def commitment(seed: int, salt: bytes) -> str:
    """``hex(SHA-256(salt ‖ seed as 8 bytes big-endian))``."""
    return hashlib.sha256(salt + seed.to_bytes(SEED_BYTES, "big")).hexdigest()


def commitment_of(record: MatchRecord) -> str | None:
    """The commitment a match publishes; None when its seed was chosen or the match was
    stored before commitments."""
    return None if record.seed_salt is None else commitment(record.seed, record.seed_salt)


def chosen(record: MatchRecord) -> bool:
    """What ``seedChosen`` says: True unless the service is known to have drawn the seed (a
    match stored before this was recorded says True: nothing shows its seed was drawn)."""
    return record.seed_chosen is not False


def check_chosen_seed(
    bound: Mapping[int, SeatPlayer], creator: str | None, *, allowed: bool,
    through_lobby: bool = False,
) -> None:
    """Refuse a creator-chosen seed (400 ``seed_not_allowed``) when anyone but the creator
    could sit in the match: a seat bound to another player (``creator``: the creating
    player's id; None for an app key, which is no player) or seats to be filled through the
    lobby (``through_lobby``: the lobby, when it lands, passes True for its open seats) --
    unless the deployment allows chosen seeds (``allowed``). Anonymous seats (``players``)
    and bot seats are the creator's own to hand out: a chosen seed stays allowed there, and
    every view says ``seedChosen``."""
    if allowed:
        return
    others = any(seated.player != creator for seated in bound.values())
    if others or through_lobby:
        raise ApiError.of(
            "seed_not_allowed",
            "A chosen seed would tell its creator every draw and every hand: omit `seed` "
            "when other players sit in the match (this server does not allow it).",
        )
