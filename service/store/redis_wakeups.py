"""Wake-ups for ``RedisStore.watch`` and ``watch_feed``: one pub/sub connection per node,
shared by all watchers.

A watcher does not own a connection. The store keeps one ``Wakeups`` multiplexer; it holds
ONE pub/sub connection (a *link*) on a single node (``SUBSCRIBE``) and, on a cluster, one per
shard primary that owns a watched match (``SSUBSCRIBE`` on the node that owns the channel's
slot). Every watcher of every match of the store shares them. These connections are made
here, from the client's connection settings, and never come from the command pool.

Channels
--------
A channel (a match's hash key, or a feed's: any key name, placed by the slot of its hash
tag; the multiplexer does not care what it names, and a message names a version or a feed
seq alike) is subscribed when its first watcher arrives and unsubscribed when its last one
leaves (reference counts). One reader task per link reads everything the
server sends on it; a message wakes every local waiter of its channel. A waiter keeps what
it saw of its channel (``_Channel.epoch``, ``messages``) and wakes when the channel has moved
on since: a message naming a version above the waiter's last one, or an *epoch* change (the
subscription was confirmed, lost, moved or refused -- anything after which the waiter must
read the version because a message may have been missed). A burst of messages while a
waiter reads wakes it once. Messages are only wake-ups: the caller reads the version.

Order on a connection is the guard against a lost wake-up: a waiter reads the version only
after the server confirmed its channel's subscription (``settle``), so every write after
that read publishes to a subscription already in place. Until it is confirmed (connecting,
reconnecting, moving), waiters poll every ``poll`` seconds; the confirmation wakes them.

Commands on a link carry one channel each (``SSUBSCRIBE`` needs all its channels in one
slot), and the replies come back in order: a FIFO of what was sent tells a reply from a
push (``message``; an ``unsubscribe`` nobody asked for: the server dropped a shard channel
because its slot moved).

Faults
------
A dropped link (server restart, ``CLIENT KILL``, a crashed node) wakes every waiter of its
channels, reconnects with exponential backoff and jitter, subscribes every channel again and
wakes them once more when confirmed. A silent link is found by a ``PING`` every
``ping_every`` seconds of silence: no reply within two more such periods closes it (then as
a dropped link).

On a cluster, a channel follows its slot: when ``owner(key)`` (the cluster client's view)
names another node than its link's -- checked before every wait of a waiter and every
``tick`` for all channels -- the channel moves to that node's link (unsubscribed from the old
one, subscribed on the new one, waiters woken when that is confirmed). A link left without
channels is closed. A ``sunsubscribe`` pushed by the server (failover, resharding) or a
``MOVED`` answer detaches the channel and wakes its waiters; their version read refreshes
the client's view of the slot, after which the channel is placed again.

A refusal other than a redirect (``NOPERM``: the ACL user has no channel rights; a server
without the command) switches the whole multiplexer off for good: ``on_refused`` is called
once, links are closed and every waiter polls.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import random
import time
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from redis.asyncio.connection import AbstractConnection
from redis.exceptions import (
    AskError,
    ClusterDownError,
    MovedError,
    RedisError,
    ResponseError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError

__all__ = ["SINGLE_NODE", "Waiter", "Wakeups"]

log = logging.getLogger("skyline.store")

SINGLE_NODE = ""
"""The node name ``owner`` gives on a single Redis (one link for every channel)."""

# Answers to a subscribe that say "not here, not now" rather than "never": the channel is
# placed again (after the waiters' reads have refreshed the client's view of the slot).
_REDIRECTS: tuple[type[ResponseError], ...] = (MovedError, AskError, TryAgainError,
                                               ClusterDownError)
_REDIRECT_PREFIXES = ("MOVED", "ASK", "TRYAGAIN", "CLUSTERDOWN", "LOADING", "MASTERDOWN")


def _text(value: Any) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


class _Confused(RedisConnectionError):
    """A reply that matches nothing sent: drop the link and start clean."""


class _Channel:
    """One watched channel: its watchers, where it is subscribed, what woke it."""

    __slots__ = ("epoch", "key", "link", "messages", "named", "pulse", "ready", "refs")

    def __init__(self, key: str) -> None:
        self.key = key
        self.refs = 0
        self.link: _Link | None = None
        self.ready = False  # the server confirmed the subscription on ``link``
        self.epoch = 0  # bumped on anything after which waiters must read again
        self.messages = 0  # messages received
        self.named = -1  # the highest version a message named
        self.pulse = asyncio.Event()  # set (and replaced) by every wake-up

    def wake(self) -> None:
        pulse, self.pulse = self.pulse, asyncio.Event()
        pulse.set()

    def bump(self) -> None:
        self.epoch += 1
        self.wake()

    def message(self, data: Any) -> None:
        try:
            named = int(data)
        except (TypeError, ValueError):
            self.bump()  # not a version number: a plain wake-up
            return
        self.messages += 1
        self.named = max(self.named, named)
        self.wake()


class Waiter:
    """One watcher's hold on a channel (``Wakeups.acquire``); ``close()`` releases it."""

    __slots__ = ("_channel", "_closed", "_epoch", "_messages", "_wakeups")

    def __init__(self, wakeups: Wakeups, channel: _Channel) -> None:
        self._wakeups = wakeups
        self._channel = channel
        self._epoch = channel.epoch
        self._messages = channel.messages
        self._closed = False

    @property
    def subscribed(self) -> bool:
        """The server confirmed the channel's subscription (wake-ups will come)."""
        return self._channel.ready and not self._wakeups.refused

    async def settle(self, timeout: float) -> bool:
        """Wait (at most ``timeout`` seconds) until the subscription is confirmed or refused;
        True when subscribed. Read the version after this, not before."""
        deadline = time.monotonic() + timeout
        channel = self._channel
        while not channel.ready and not self._wakeups.refused:
            pulse = channel.pulse
            left = deadline - time.monotonic()
            if left <= 0:
                break
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(left):
                    await pulse.wait()
        self._seen()
        return self.subscribed

    async def wait(self, last: int, timeout: float) -> bool:
        """Until a wake-up the caller must act on (a message naming a version above
        ``last``, or an epoch change) or ``timeout`` seconds (``poll`` at most while not
        subscribed); True when woken. The caller reads the version after either."""
        wakeups, channel = self._wakeups, self._channel
        wakeups.place(channel)  # the slot moved since the last look: follow it
        if not self.subscribed:
            timeout = min(timeout, wakeups.poll)
        deadline = time.monotonic() + timeout
        woken = False
        while True:
            if channel.epoch != self._epoch or (
                channel.messages != self._messages and channel.named > last
            ):
                woken = True
                break
            self._messages = channel.messages  # only old versions named: nothing to do
            pulse = channel.pulse
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                async with asyncio.timeout(left):
                    await pulse.wait()
            except TimeoutError:
                break
        self._seen()
        return woken

    def _seen(self) -> None:
        self._epoch, self._messages = self._channel.epoch, self._channel.messages

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._wakeups.release(self._channel)


class _Link:
    """One pub/sub connection to one node, and the channels placed on it."""

    def __init__(self, wakeups: Wakeups, node: str) -> None:
        self.wakeups = wakeups
        self.node = node
        self.channels: dict[str, _Channel] = {}
        self.conn: AbstractConnection | None = None
        self.requested: set[str] = set()  # sent a subscribe for, on this connection
        self.confirmed: set[str] = set()  # the server confirmed, on this connection
        self.sent: deque[tuple[str, str]] = deque()  # (kind, channel) awaiting a reply
        self.outstanding: dict[str, int] = {}  # commands per channel awaiting a reply
        self.pending: dict[str, bool] = {}  # channel -> subscribe (True) / unsubscribe
        self.heard = time.monotonic()  # the last time the server sent anything
        self.pinged: float | None = None  # when a PING went out that has no reply yet
        self.worked = False  # a subscription was confirmed on this connection
        self.closed = False
        self.task: asyncio.Task[None] | None = None
        self.flusher: asyncio.Task[None] | None = None
        self.sub = "SSUBSCRIBE" if wakeups.sharded else "SUBSCRIBE"
        self.unsub = "SUNSUBSCRIBE" if wakeups.sharded else "UNSUBSCRIBE"

    # -- placement (called on the loop, synchronously) --------------------------------------

    def add(self, channel: _Channel) -> None:
        self.channels[channel.key] = channel
        # Still subscribed on the server (its last watcher left a moment ago and the
        # unsubscribe is not sent yet): ready at once.
        channel.ready = channel.key in self.confirmed and self.conn is not None
        channel.link = self
        self.pending[channel.key] = True
        if self.task is None:
            self.task = self.wakeups.spawn(self._run())
        self.kick()

    def remove(self, channel: _Channel) -> None:
        """Take ``channel`` off this link (unsubscribing it); the link closes when empty."""
        if self.channels.pop(channel.key, None) is None:
            return
        if channel.link is self:
            channel.link, channel.ready = None, False
        if not self.channels:
            self.close()
            return
        self.pending[channel.key] = False
        self.kick()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.wakeups.forget(self)
        for channel in self.channels.values():
            if channel.link is self:
                channel.link, channel.ready = None, False
        self.channels.clear()
        for task in (self.flusher, self.task):
            if task is not None and task is not asyncio.current_task():
                task.cancel()
        if self.conn is not None:
            self.wakeups.spawn(self.conn.disconnect(nowait=True))

    def kick(self) -> None:
        """Send what ``pending`` holds, soon (one task batches every change until then)."""
        if self.conn is None or self.flusher is not None or self.closed:
            return
        self.flusher = self.wakeups.spawn(self._flush())

    # -- the connection --------------------------------------------------------------------

    async def _flush(self) -> None:
        try:
            while self.pending and self.conn is not None and not self.closed:
                conn = self.conn
                if not conn.is_connected:
                    return  # the reader finds it gone and starts over (all pending again)
                commands: list[tuple[str, str]] = []
                pending, self.pending = self.pending, {}
                for name, wanted in pending.items():
                    if wanted and name not in self.requested and name in self.channels:
                        self.requested.add(name)
                        commands.append((self.sub, name))
                        self.sent.append(("sub", name))
                    elif not wanted and name in self.requested and name not in self.channels:
                        self.requested.discard(name)
                        self.confirmed.discard(name)
                        commands.append((self.unsub, name))
                        self.sent.append(("unsub", name))
                    else:
                        continue
                    self.outstanding[name] = self.outstanding.get(name, 0) + 1
                if commands:
                    await conn.send_packed_command(conn.pack_commands(commands),
                                                   check_health=False)
        except (RedisError, OSError) as exc:
            log.debug("wake-up link %s: send failed: %s", self.node or "redis", exc)
            if self.conn is not None:
                self._disconnect(self.conn)  # the reader sees it and reconnects
        finally:
            if self.flusher is asyncio.current_task():
                self.flusher = None

    async def ping(self) -> None:
        conn = self.conn
        if conn is None or not conn.is_connected or self.closed:
            return
        self.sent.append(("ping", ""))
        self.pinged = time.monotonic()
        try:
            await conn.send_command("PING", check_health=False)
        except (RedisError, OSError):
            self._disconnect(conn)

    def check(self, now: float) -> None:
        """Housekeeping: ``PING`` a silent link; close a link that does not answer."""
        w = self.wakeups
        if self.conn is None:
            return
        if self.pinged is not None and now - self.pinged > 2 * w.ping_every:
            log.info("wake-up link %s: no answer to PING; reconnecting", self.node or "redis")
            self._disconnect(self.conn)
        elif self.pinged is None and now - self.heard > w.ping_every:
            w.spawn(self.ping())

    def _disconnect(self, conn: AbstractConnection) -> None:
        self.wakeups.spawn(conn.disconnect(nowait=True))

    async def _run(self) -> None:
        """Connect, subscribe everything, read until the connection breaks; again, with
        backoff, while the link has channels."""
        w = self.wakeups
        delay = w.backoff_base
        try:
            while self.channels and not self.closed and not w.refused:
                conn: AbstractConnection | None = None
                try:
                    conn = w.connect(self.node)
                    async with asyncio.timeout(w.connect_timeout):
                        await conn.connect()  # type: ignore[no-untyped-call]
                except (RedisError, OSError, TimeoutError, LookupError) as exc:
                    log.debug("wake-up link %s: connect failed: %s", self.node or "redis", exc)
                    if conn is not None:
                        await _quietly(conn.disconnect(nowait=True))
                else:
                    if self.closed:
                        # Closed while connecting, and the task's cancellation did not reach
                        # us (redis-py's connect can swallow it): never attach a connection
                        # to a closed link -- nobody would read it, count it or close it.
                        await _quietly(conn.disconnect(nowait=True))
                        break
                    self._attach(conn)
                    try:
                        await self._read(conn)
                    except (RedisError, OSError) as exc:
                        log.debug("wake-up link %s: lost: %s", self.node or "redis", exc)
                    except Exception:  # a bug: never leave the channels without a reader
                        log.exception("wake-up link %s failed", self.node or "redis")
                    finally:
                        self._detach(conn)
                        await _quietly(conn.disconnect(nowait=True))
                    if self.worked:
                        delay = w.backoff_base  # it served: reconnect fast, back off if not
                if self.channels and not self.closed and not w.refused:
                    await asyncio.sleep(delay * random.uniform(0.5, 1.0))
                    delay = min(delay * 2, w.backoff_cap)
        finally:
            if self.task is asyncio.current_task():
                self.task = None
            if not self.closed and not self.channels:
                self.close()

    def _attach(self, conn: AbstractConnection) -> None:
        self.conn = conn
        self.requested.clear()
        self.confirmed.clear()
        self.sent.clear()
        self.outstanding.clear()
        self.pending = dict.fromkeys(self.channels, True)
        self.heard, self.pinged = time.monotonic(), None
        self.worked = False
        self.wakeups.pubsub_connections += 1
        self.kick()

    def _detach(self, conn: AbstractConnection) -> None:
        if self.conn is conn:
            self.conn = None
            self.wakeups.pubsub_connections -= 1
        self.requested.clear()
        self.confirmed.clear()
        if self.flusher is not None:
            self.flusher.cancel()
            self.flusher = None
        for channel in self.channels.values():
            if channel.link is self:
                channel.ready = False
                channel.bump()  # anything may have been missed: read again

    async def _read(self, conn: AbstractConnection) -> None:
        """Read until the connection breaks (or the link closes)."""
        while True:
            try:
                reply = await conn.read_response(timeout=math.inf)
            except ResponseError as error:
                self.heard = time.monotonic()
                self._refused(error)
            else:
                self.heard = time.monotonic()
                self._reply(reply)
            if self.closed:
                return

    def _pop(self, kind: str, name: str) -> bool:
        """Take the oldest command sent if it is ``(kind, name)``; False if it is not."""
        if not self.sent or self.sent[0] != (kind, name):
            return False
        self.sent.popleft()
        if name:
            left = self.outstanding.get(name, 1) - 1
            if left > 0:
                self.outstanding[name] = left
            else:
                self.outstanding.pop(name, None)
        return True

    def _reply(self, reply: Any) -> None:
        if isinstance(reply, bytes | str):  # +PONG: no subscription on the connection now
            if not self._pop("ping", ""):
                raise _Confused(f"unexpected reply {reply!r}")
            self.pinged = None
            return
        if not isinstance(reply, list | tuple) or len(reply) < 2:
            raise _Confused(f"unexpected reply {reply!r}")
        kind = _text(reply[0])
        if kind in ("message", "smessage"):
            self.wakeups.wakeups += 1
            channel = self.channels.get(_text(reply[1]))
            if channel is not None and channel.link is self:
                channel.message(reply[2])
            return
        if kind == "pong":
            if not self._pop("ping", ""):
                raise _Confused(f"unexpected reply {reply!r}")
            self.pinged = None
            return
        name = _text(reply[1])
        if kind in ("subscribe", "ssubscribe"):
            if not self._pop("sub", name):
                raise _Confused(f"unexpected reply {reply!r}")
            if name in self.requested and name not in self.outstanding:
                self.confirmed.add(name)
                self.worked = True
                channel = self.channels.get(name)
                if channel is not None and channel.link is self and not channel.ready:
                    channel.ready = True
                    channel.bump()  # subscribed now: read the version (again)
            return
        if kind in ("unsubscribe", "sunsubscribe"):
            if self._pop("unsub", name):
                return  # the answer to ours
            # Pushed by the server: the slot moved (failover, resharding).
            self.requested.discard(name)
            self.confirmed.discard(name)
            channel = self.channels.get(name)
            if channel is not None and channel.link is self:
                self.drop(channel)
                channel.bump()  # a message may be lost: read again (and so refresh the slot)
            return
        raise _Confused(f"unexpected reply {reply!r}")

    def _refused(self, error: ResponseError) -> None:
        """An error answers the oldest command sent."""
        if not self.sent:
            raise _Confused(f"unexpected error {error}")
        kind, name = self.sent[0]
        self._pop(kind, name)
        if kind != "sub":
            return
        self.requested.discard(name)
        channel = self.channels.get(name)
        if isinstance(error, _REDIRECTS) or str(error).startswith(_REDIRECT_PREFIXES):
            # Not this node's channel (any more): place it again once the client knows
            # better; its waiters poll meanwhile and their reads refresh the slot map.
            if channel is not None and channel.link is self:
                self.drop(channel)
            return
        self.wakeups.refuse(error)

    def drop(self, channel: _Channel) -> None:
        """The server will not deliver ``channel`` here: detach it, to be placed again."""
        self.wakeups.dropped += 1
        self.channels.pop(channel.key, None)
        self.confirmed.discard(channel.key)
        channel.link, channel.ready = None, False
        if not self.channels:
            self.close()


async def _quietly(call: Awaitable[Any]) -> None:
    with contextlib.suppress(RedisError, OSError, RuntimeError):
        await call


class Wakeups:
    """The multiplexer. ``acquire(key)`` gives a ``Waiter``; see the module docstring.

    ``connect(node)`` makes an unconnected pub/sub connection to ``node`` (a name ``owner``
    returned); ``owner(key)`` names the node that owns ``key`` now (``SINGLE_NODE`` on a
    single Redis; None: unknown now); ``prepare()`` is awaited before a channel is placed
    (e.g. the cluster client's topology discovery); ``on_refused(error)`` is called once when
    the server refuses a subscription.

    Counters: ``pubsub_connections`` (open now), ``wakeups`` (messages received),
    ``subscribed_channels`` (confirmed by the server now), ``watched_channels`` (channels with
    at least one watcher), ``watchers``, ``dropped`` (subscriptions the server ended or
    redirected), ``moves`` (channels moved to another node while subscribed there).
    """

    def __init__(
        self,
        *,
        connect: Callable[[str], AbstractConnection],
        owner: Callable[[str], str | None],
        sharded: bool,
        on_refused: Callable[[Exception], None],
        prepare: Callable[[], Awaitable[None]] | None = None,
        backoff_base: float = 0.05,
        backoff_cap: float = 0.5,
        poll: float = 0.5,
        connect_timeout: float = 5.0,
        tick: float = 1.0,
        ping_every: float = 5.0,
    ) -> None:
        self.connect = connect
        self.owner = owner
        self.sharded = sharded
        self.on_refused = on_refused
        self.prepare = prepare
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self.poll = poll
        self.connect_timeout = connect_timeout
        self.tick = tick
        self.ping_every = ping_every
        self.refused = False
        self.closed = False
        self.pubsub_connections = 0
        self.wakeups = 0
        self.dropped = 0  # subscriptions the server ended or redirected (slot moves)
        self.moves = 0  # channels moved to another node's link
        self.channels: dict[str, _Channel] = {}
        self.links: dict[str, _Link] = {}
        self._keeper: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, call: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """A task of ours, kept referenced until it ends; what it raises is only logged."""
        task = asyncio.get_running_loop().create_task(call)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and (error := task.exception()) is not None:
            log.debug("wake-up task %s ended: %r", task.get_name(), error)

    @property
    def subscribed_channels(self) -> int:
        return sum(len(link.confirmed) for link in self.links.values())

    @property
    def watched_channels(self) -> int:
        return len(self.channels)

    @property
    def watchers(self) -> int:
        return sum(channel.refs for channel in self.channels.values())

    async def acquire(self, key: str) -> Waiter:
        """Hold ``key``'s channel (subscribing it if it is the first hold)."""
        channel = self.channels.get(key)
        if channel is None:
            channel = self.channels[key] = _Channel(key)
        channel.refs += 1
        waiter = Waiter(self, channel)
        try:
            if channel.link is None and self.prepare is not None and not self.refused:
                with contextlib.suppress(RedisError, OSError):
                    await self.prepare()
            self.place(channel)
        except BaseException:
            waiter.close()
            raise
        if self._keeper is None and not self.closed:
            self._keeper = self.spawn(self._keep())
        return waiter

    def release(self, channel: _Channel) -> None:
        channel.refs -= 1
        if channel.refs > 0:
            return
        if self.channels.get(channel.key) is channel:
            del self.channels[channel.key]
        if channel.link is not None:
            channel.link.remove(channel)

    def place(self, channel: _Channel) -> None:
        """Put ``channel`` on the link of the node that owns it now (moving it if needed)."""
        if self.refused or self.closed or channel.refs <= 0:
            return
        try:
            node = self.owner(channel.key)
        except (RedisError, LookupError):
            node = None
        if node is None:
            return  # unknown now: stays where it is (or unplaced), looked at again later
        if channel.link is not None:
            if channel.link.node == node:
                return
            channel.link.remove(channel)  # the slot moved: follow it
            channel.bump()
            self.moves += 1
        link = self.links.get(node)
        if link is None:
            link = self.links[node] = _Link(self, node)
        link.add(channel)

    def forget(self, link: _Link) -> None:
        if self.links.get(link.node) is link:
            del self.links[link.node]

    def refuse(self, error: Exception) -> None:
        """The server refused a subscription: every waiter polls from now on."""
        if self.refused:
            return
        self.refused = True
        self.on_refused(error)
        for link in list(self.links.values()):
            link.close()
        for channel in self.channels.values():
            channel.bump()

    async def _keep(self) -> None:
        """Every ``tick``: place every channel (slot moves), PING silent links."""
        try:
            while self.channels and not self.closed:
                await asyncio.sleep(self.tick)
                for channel in list(self.channels.values()):
                    self.place(channel)
                now = time.monotonic()
                for link in list(self.links.values()):
                    link.check(now)
        finally:
            if self._keeper is asyncio.current_task():
                self._keeper = None

    async def aclose(self) -> None:
        self.closed = True
        for link in list(self.links.values()):
            link.close()
        if self._keeper is not None:
            self._keeper.cancel()
        tasks = list(self._tasks)
        await asyncio.gather(*tasks, return_exceptions=True)
