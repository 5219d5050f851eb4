"""Verifying a match (``skyline verify MATCH``): its seed against the commitment it published,
and its log replayed from that seed.

The engines are deterministic and keep their random generator inside the state, so a match
replayed from its seed and its logged moves reaches, version by version, exactly the states
it was played through: every draw included. ``verify`` replays the whole log from the seed
(never from a checkpoint) and checks that

- the seed and salt give the commitment the match published (``seeds.commitment``), and the
  one a player noted at the start when one is given;
- the log holds every version from 1 to the latest, each move legal for its seat in the
  replayed state;
- every checkpoint the log carries, and the stored latest state, equal the replayed state;
- the stored finished flag and the result agree with the replay.

It reads the store only; a third party without the store follows the same steps over the
public API (docs/security.md, "Verifiable seeds (item 8)"; ``tools/verify_match.py``).
"""

from __future__ import annotations

import hmac
import zlib
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from service.games import get as get_engine
from service.games.base import Engine, IllegalAction

from . import seeds
from .records import LogRecord, MatchRecord
from .replay import initial_state, replay_step
from .storage import StoredMatches


@dataclass
class Verdict:
    """What ``verify`` found: ``ok`` when nothing disagrees."""

    match_id: str
    version: int = 0
    finished: bool = False
    commitment: str | None = None
    """The commitment recomputed from the stored seed and salt (None: there is none)."""
    commitment_note: str = ""
    moves: int = 0
    """Logged versions replayed."""
    problems: list[str] = field(default_factory=list)
    seed: int | None = None
    """The seed, once the match is finished (not shown before)."""
    seed_salt: str | None = None

    @property
    def ok(self) -> bool:
        return not self.problems

    def lines(self) -> list[str]:
        """The verdict as text, one finding a line, the verdict last."""
        out = [f"match {self.match_id}: version {self.version}, "
               f"{'finished' if self.finished else 'still being played'}"]
        out.append(f"commitment: {self.commitment_note}")
        if self.seed is not None:
            out.append(f"seed: {self.seed}" + (
                f", salt: {self.seed_salt}" if self.seed_salt is not None else ""))
        out.append(f"replayed {self.moves} logged versions from the seed")
        out += [f"MISMATCH: {problem}" for problem in self.problems]
        if self.ok:
            out.append("verdict: OK, the log replays from the seed to the stored match"
                       + ("" if self.commitment is not None else
                          " (but no commitment: nothing shows the seed was drawn)"))
        else:
            out.append(f"verdict: FAILED ({len(self.problems)} mismatch"
                       f"{'es' if len(self.problems) != 1 else ''})")
        return out


def _canonical(engine: Engine[Any], data: bytes) -> bytes:
    """A state's bytes as this build writes them (so equal states compare equal)."""
    return engine.dumps(engine.loads(data))


async def verify(
    storage: StoredMatches, match_id: str, *, published: str | None = None
) -> Verdict:
    """Check the match ``match_id`` (see the module's text). ``published``: the commitment a
    player noted when the match started (hex), compared too. Raises ``ApiError`` when the
    match cannot be read (``match_not_found``, ``store_unavailable``)."""
    version, record = await storage.load(match_id)
    engine = get_engine(record.game)
    verdict = Verdict(match_id=match_id, version=version, finished=record.finished)
    if not record.started:
        verdict.problems.append(
            "the match has no game: it waits for players or was cancelled before it started "
            "(nothing was drawn yet to verify)")
        return verdict
    _check_commitment(verdict, record, published)
    if record.finished:
        verdict.seed = record.seed
        verdict.seed_salt = None if record.seed_salt is None else record.seed_salt.hex()
    state = initial_state(engine, record)
    expected = 1
    for entry in await storage.entries(match_id, 0):
        if entry.version != expected:
            verdict.problems.append(
                f"the log jumps from version {expected - 1} to {entry.version}")
            return verdict
        expected += 1
        try:
            logged = LogRecord.decode(record.game, record.log_dict, entry.data)
        except (ValueError, KeyError, TypeError, zlib.error) as unreadable:
            verdict.problems.append(
                f"version {entry.version}: the log entry cannot be read ({unreadable})")
            return verdict
        try:
            state, _ = replay_step(engine, state, logged)
        except (IllegalAction, ValidationError) as refused:
            why = refused.code if isinstance(refused, IllegalAction) else "not a move"
            verdict.problems.append(
                f"version {entry.version}: seat {logged.seat}'s logged move is not legal in "
                f"the state replayed from the seed ({why})")
            return verdict
        verdict.moves += 1
        if logged.checkpoint is not None and (
            _canonical(engine, logged.checkpoint) != engine.dumps(state)
        ):
            verdict.problems.append(
                f"version {entry.version}: the checkpoint stored in the log differs from the "
                "state replayed from the seed")
    if expected - 1 != version:
        verdict.problems.append(
            f"the log ends at version {expected - 1}, the match is at version {version}")
    elif _canonical(engine, record.state) != engine.dumps(state):
        verdict.problems.append(
            f"the stored state at version {version} differs from the state replayed from the "
            "seed (another seed, or other draws)")
    finished = engine.result(state) is not None
    if finished != record.finished:
        verdict.problems.append(
            "the stored match is " + ("finished" if record.finished else "not finished")
            + " but the replay " + ("is" if finished else "is not"))
    return verdict


def _check_commitment(verdict: Verdict, record: MatchRecord, published: str | None) -> None:
    verdict.commitment = seeds.commitment_of(record)
    if verdict.commitment is None:
        why = ("the creator chose the seed" if record.seed_chosen
               else "the match was stored before seeds were committed to")
        verdict.commitment_note = f"no commitment ({why})"
        if published is not None:
            verdict.problems.append(
                "a commitment was given, but the match has none to compare it with")
        return
    computed = f"{verdict.commitment} = sha256(salt ‖ seed) of the stored salt and seed"
    if published is None:
        verdict.commitment_note = (f"{computed}; compare it with the seedCommitment published "
                                   "at the start (or pass --commitment)")
    elif hmac.compare_digest(published.strip().lower(), verdict.commitment):
        verdict.commitment_note = f"{computed}: equal to the commitment given"
    else:
        verdict.commitment_note = f"{computed}: NOT the commitment given"
        verdict.problems.append(
            f"the commitment given ({published.strip()}) is not sha256(salt ‖ seed) of the "
            "stored seed: the seed changed after the match started")
