"""Watching a match: every new version as the caller sees it, in order, without gaps.

``Watching.follow`` serves the event stream and the GraphQL subscription. Live versions come
from the replica's ``LiveHub`` (one store watch per match) and are rendered once per version
and visibility by the match's ``Timeline``. A watcher that resumes at most ``resume_window``
versions behind gets each missed version (replayed from the newest checkpoint, a bounded
number of moves); further behind, one ``snapshot`` of the current state and then each new
version -- a documented gap (the log has every past move).

Modes: ``full`` sends each version's whole ``MatchState`` (event ``state``); ``patch`` sends a
``snapshot`` first, then ``patch`` events (RFC 6902 operations from the previous version of
the same view), and a ``snapshot`` again every ``snapshot_every`` versions and whenever no
patch can be made (a gap, or a version no longer at hand).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from typing import Literal

from service.errors import ApiError
from service.games import get as get_engine
from service.i18n import N_, T
from service.identity.callers import Caller, Credential
from service.live import DEFAULT_RESUME_WINDOW, LiveHub
from service.live.lifetime import until
from service.store import MatchNotFound, StoreUnavailable

from . import absence, invites
from .models import MatchState
from .records import MatchRecord
from .replay import SeatChange, seat_change, versions_between
from .storage import RETRY_AFTER_SECONDS, StoredMatches
from .timeline import Frame, Timeline, Timelines
from .views import seat_of, view_revoked

HANDED_OVER = N_("The seat was handed to a bot: this credential no longer reads it.")
TAKEN_BY_BOT = N_("A bot took the seat over (its time ran out, or it resigned): this "
                  "credential no longer reads it.")
RENEWED = N_("The seat's token was renewed: the old token and its stream tickets no longer "
             "read it.")
LEFT = N_("This player left for good.")

Mode = Literal["full", "patch"]
Kind = Literal["state", "snapshot", "patch"]
DEFAULT_SNAPSHOT_EVERY = 50


@dataclass(frozen=True, slots=True)
class LiveEvent:
    """One event of a stream: its kind, the version (the SSE ``id``), the JSON ``data`` (a
    patch's operations, else the ``MatchState``) and the ``MatchState`` itself (what the
    GraphQL subscription converts), both from the version's shared frame, asked for only
    by the consumer that needs them."""

    kind: Kind
    frame: Frame
    seat: int | None
    patch: str | None = None

    @property
    def version(self) -> int:
        return self.frame.version

    @property
    def data(self) -> str:
        return self.patch if self.patch is not None else self.frame.json_for(self.seat)

    @property
    def state(self) -> MatchState:
        return self.frame.state_for(self.seat)

    @property
    def finished(self) -> bool:
        return self.frame.finished


class Revoked(Exception):
    """The stream's credential stopped reading its seat: the stream ends before the version
    it was about to send (``error``: the problem, code ``seat_handed_to_bot`` when a bot took
    the seat, else ``credential_revoked``)."""

    def __init__(self, error: ApiError) -> None:
        super().__init__(error.detail)
        self.error = error


def _revoked(detail: str) -> ApiError:
    return ApiError.of("credential_revoked", detail)


def _to_bot(detail: str = HANDED_OVER) -> ApiError:
    """The seat went to a bot (a hand-over, a timeout, a resignation): the credential may
    take it back (``reclaimSeat``) unless the seat forfeited."""
    return ApiError.of("seat_handed_to_bot", detail)


BOT_TAKES = {"seat_to_bot": HANDED_OVER, absence.TIMEOUT: TAKEN_BY_BOT,
             absence.RESIGN: TAKEN_BY_BOT}
"""The log entries by which a bot takes a seat over, and what a revoked stream is told."""


def expired() -> ApiError:
    """A stream's credential (an app-signed JWT) expired while it was open."""
    return ApiError.of("token_expired", T("The token has expired."))


@dataclass(slots=True)
class _Holder:
    """The credential a seat's stream was opened with, checked again at every version it is
    about to send (docs/events.md, "revoked"): a seat token or a stream ticket by the seat's
    token digest, a player credential by the seat's binding to the player."""

    seat: int
    digest: str | None
    """The seat's token digest the stream was opened with (a seat token or stream ticket)."""
    player: tuple[str, str] | None
    """``(app, player)`` for a player credential."""
    checked: int
    """The newest version at which the credential was valid."""
    expires_at: int | None = None
    """When the credential stops being accepted (an app-signed JWT), Unix seconds."""
    view: str | None = None
    """A spectator token (``sks_…``, ``seat`` -1): it stops reading once its code is
    revoked (``invites.revoke_view``)."""

    @classmethod
    def of(cls, record: MatchRecord, version: int, token: Credential,
           seat: int | None) -> _Holder | None:
        """The holder of ``seat`` at ``version``, or of a spectator token (None: a spectator
        without one, nothing to revoke)."""
        if seat is None:
            if isinstance(token, str) and invites.is_spectator_token(token):
                return cls(-1, None, None, version, view=token)
            return None
        if isinstance(token, Caller) and token.player is not None:
            return cls(seat, None, (token.app, token.player), version, token.expires_at)
        digest = record.tokens[seat] if seat < len(record.tokens) else None
        if digest is None:  # a stream ticket whose seat went to a bot since it was checked
            raise Revoked(_to_bot())
        return cls(seat, digest, None, version)

    def against(self, record: MatchRecord) -> ApiError | None:
        """Why the credential no longer reads the seat of a stored ``record``, or None."""
        if self.view is not None:
            return None if invites.reads(self.view, record) else view_revoked()
        if self.player is not None:
            if record.player_seat(*self.player) == self.seat:
                return None
            return _to_bot() if self.seat in record.bots else _revoked(LEFT)
        if self.seat < len(record.tokens) and record.tokens[self.seat] == self.digest:
            return None
        return _to_bot() if self.seat in record.bots else _revoked(RENEWED)

    def after(self, change: SeatChange | None) -> ApiError | None:
        """Why a replayed version's seat-credential change revokes the credential, or None."""
        if change is None or change[1] != self.seat:
            return None
        kind = change[0]
        if kind in BOT_TAKES:
            return _to_bot(BOT_TAKES[kind])
        if kind == "seat_token_renewed" and self.digest is not None:
            return _revoked(RENEWED)
        if kind == "seat_renamed" and self.player is not None:
            return _revoked(LEFT)
        return None


class Watching:
    """The live side of the match service on this replica."""

    def __init__(self, storage: StoredMatches, hub: LiveHub, *,
                 resume_window: int = DEFAULT_RESUME_WINDOW) -> None:
        self.storage = storage
        self.hub = hub
        self.timelines = Timelines(storage)
        self.resume_window = resume_window
        self.deliveries = 0
        self.resumes: dict[str, int] = {"replay": 0, "snapshot": 0}

    async def follow(
        self, match_id: str, *, token: Credential = None, seat: int | None = None,
        after: int | None = None, mode: Mode = "full",
        snapshot_every: int = DEFAULT_SNAPSHOT_EVERY, client: str | None = None,
    ) -> AsyncGenerator[LiveEvent, None]:
        """The stream of ``match_id`` as the caller sees it. The caller is a seat token's
        holder (``token``), a seat already authenticated another way (``seat``, e.g. by a
        stream ticket), or a spectator (neither). Without ``after`` the stream starts with
        the current version; with it, with the first version after it. Ends after the
        version that finishes the match. ``client``: whose replay budget a replay for this
        watcher draws from (``live.replays``; None: nobody's, unbudgeted)."""
        version, record = await self.storage.load(match_id)
        if token is not None:
            seat = seat_of(record, token, required=False)
        holder = _Holder.of(record, version, token, seat)
        engine = get_engine(record.game)
        timeline = self.timelines.acquire(match_id, engine, version, record)
        stream = _Stream(self, timeline, seat, mode, max(snapshot_every, 1), holder, client)
        try:
            await timeline.advance(version)
            newest = timeline.newest
            # What a replay needs of the record (game, log dictionary, seed) is the match's
            # own: share the timeline's instead of keeping a copy per watcher.
            record = newest.record
            if after is None or after > newest.version:
                await stream.admit(newest)
                yield stream.snapshot(newest)
                cursor = newest.version
            elif newest.version - after > self.resume_window:
                await stream.admit(newest)
                self.resumes["snapshot"] += 1
                yield stream.snapshot(newest, gap=True)
                cursor = newest.version
            else:
                stream.last = cursor = max(after, 0)
                if cursor < newest.version:
                    self.resumes["replay"] += 1
                async for event in stream.catch_up(record, newest.version):
                    yield event
                    cursor = event.version
            if stream.finished:
                return
            async with contextlib.aclosing(self.hub.updates(match_id, cursor)) as updates:
                # A JWT's stream ends at its expiry, even on a quiet match (live.lifetime).
                deadline = None if holder is None else holder.expires_at
                async for latest in until(updates, deadline, self.storage.clock,
                                          lambda: Revoked(expired())):
                    await timeline.advance(latest)
                    async for event in stream.upto(record, latest):
                        yield event
                        if stream.finished:
                            return
        except MatchNotFound:
            return  # expired while watched
        except StoreUnavailable:
            raise ApiError.of(
                "store_unavailable", "The match store is unavailable; retry shortly.",
                retryAfter=RETRY_AFTER_SECONDS,
            ) from None
        finally:
            self.timelines.release(timeline)


class _Stream:
    """One watcher's position: the last version it got, and what it needs next."""

    __slots__ = ("base", "client", "finished", "holder", "last", "mode", "seat",
                 "sent_snapshot", "since_snapshot", "snapshot_every", "timeline", "watching")

    def __init__(self, watching: Watching, timeline: Timeline, seat: int | None,
                 mode: Mode, snapshot_every: int, holder: _Holder | None = None,
                 client: str | None = None) -> None:
        self.watching = watching
        self.client = client
        self.timeline = timeline
        self.seat = seat
        self.mode = mode
        self.snapshot_every = snapshot_every
        self.last = -1
        """The last version sent, or the one the watcher said it has (``after``)."""
        self.base: Frame | None = None
        """The frame of the last event sent (the base of the next patch)."""
        self.sent_snapshot = False
        self.since_snapshot = 0
        self.finished = False
        self.holder = holder

    async def admit(self, frame: Frame) -> None:
        """Raise ``Revoked`` unless the stream's credential still reads its seat at
        ``frame``: every version since the last check is looked at (a stored record by its
        tokens and players, a replayed version by its log entry's seat change); versions no
        longer at hand are judged by the stored record (a store read, on gaps only)."""
        holder = self.holder
        if holder is None or frame.version <= holder.checked:
            return
        if holder.expires_at is not None and \
                self.timeline.storage.clock() >= holder.expires_at:
            raise Revoked(expired())
        error: ApiError | None = None
        for version in range(holder.checked + 1, frame.version + 1):
            step = frame if version == frame.version or frame.exact else \
                self.timeline.frame(version)
            if step is None:
                _, record = await self.timeline.storage.load(self.timeline.match_id)
                error = holder.against(record)
                break
            # A spectator token is judged by any version's record: what it reads of it (the
            # view key, the revoked codes) is the stored record's, and only ever grows.
            error = holder.against(step.record) if step.exact or holder.view else None
            if error is None and step.change is not None:
                # What the version's entry did to seats (a stored record may not say it).
                error = holder.after(step.change)
            if error is not None or step is frame:
                break
        if error is not None:
            raise Revoked(error)
        holder.checked = frame.version

    def _sent(self, event: LiveEvent, frame: Frame) -> LiveEvent:
        self.last = event.version
        self.base = frame
        self.finished = event.finished
        self.watching.deliveries += 1
        return event

    def snapshot(self, frame: Frame, *, gap: bool = False) -> LiveEvent:
        """The whole state at ``frame``: event ``snapshot`` in patch mode and after a gap
        (the versions in between are skipped), else ``state``."""
        kind: Kind = "state" if self.mode == "full" and not gap else "snapshot"
        self.sent_snapshot = True
        self.since_snapshot = 0
        return self._sent(LiveEvent(kind, frame, self.seat), frame)

    def next(self, frame: Frame) -> LiveEvent:
        """The event for ``frame``, the version right after the last one sent."""
        if self.mode == "full" or not self.sent_snapshot:
            return self.snapshot(frame)
        self.since_snapshot += 1
        patch = None
        if self.since_snapshot < self.snapshot_every and self.last == frame.version - 1:
            patch = frame.patch_for(self.seat, self.base)
        if patch is None:
            return self.snapshot(frame)
        return self._sent(LiveEvent("patch", frame, self.seat, patch), frame)

    async def upto(self, record: MatchRecord, latest: int) -> AsyncIterator[LiveEvent]:
        """Every version after the last one sent, up to ``latest``: from the shared frames,
        or, for a watcher that fell behind them, replayed on its own (or a snapshot when it
        is more than the resume window behind)."""
        while self.last < latest:
            frame = self.timeline.frame(self.last + 1)
            if frame is not None:
                await self.admit(frame)
                yield self.next(frame)
                continue
            newest = self.timeline.newest
            if newest.version <= self.last:
                return  # the timeline restarted behind us; the next wake-up moves it on
            if newest.version - self.last > self.watching.resume_window:
                await self.admit(newest)
                self.watching.resumes["snapshot"] += 1
                yield self.snapshot(newest, gap=True)
                continue
            async for event in self.catch_up(record, newest.version):
                yield event

    async def catch_up(self, record: MatchRecord, upto: int) -> AsyncIterator[LiveEvent]:
        """Versions after the last one up to ``upto``, rendered for this watcher alone (a
        resume): the shared frames where they still are, else replayed from the newest
        checkpoint (a bounded number of moves)."""
        timeline = self.timeline
        first_shared = min(timeline.frames)
        if self.last + 1 < first_shared:
            if self.client is not None:
                # Replayed for this watcher alone: drawn from its client's budget, paced
                # past it, and past the longest wait a snapshot instead (live.replays).
                wait = self.watching.hub.replays.charge(self.client,
                                                        first_shared - 1 - self.last)
                if wait is None:
                    newest = timeline.newest
                    await self.admit(newest)
                    self.watching.resumes["snapshot"] += 1
                    yield self.snapshot(newest, gap=True)
                    return
                if wait > 0:
                    await asyncio.sleep(wait)
            engine, match_id = timeline.engine, timeline.match_id
            # Each version from its own record (its log entry's header), never the newest.
            for past in await versions_between(timeline.storage, match_id, engine, record,
                                               self.last, first_shared - 1):
                replayed = Frame(match_id, past.version, engine, past.state, past.record,
                                 change=seat_change(past.logged), versioned=past.versioned)
                await self.admit(replayed)
                yield self.next(replayed)
                # Rendered for this watcher alone: let other requests in between versions.
                await asyncio.sleep(0)
        while self.last < upto:
            shared = timeline.frame(self.last + 1)
            if shared is None:
                return
            await self.admit(shared)
            yield self.next(shared)


__all__ = ["LiveEvent", "Mode", "Revoked", "Watching"]
