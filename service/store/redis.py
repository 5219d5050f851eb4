"""``RedisStore``: the match store on Redis, single node or Redis Cluster.

Construction
------------
``RedisStore.from_url("redis://host:6379/0", prefix="skyline:")`` (``redis.asyncio.Redis``) or
``RedisStore.from_cluster_nodes("h1:7000,h2:7001", prefix="skyline:")``
(``redis.asyncio.cluster.RedisCluster``; any reachable node is enough to discover the rest).
``RedisStore(client, prefix=...)`` wraps a client you built yourself.

Keys (one hash slot per match)
------------------------------
``{prefix}match:{<id>}`` is one hash: ``v`` version, ``r`` record, ``c`` the create's write
tag, and the log in chunks ``l0``, ``l1``, ... of ``LOG_CHUNK`` entries each (version ``n`` is
entry ``(n - 1) % LOG_CHUNK`` of chunk ``l{(n - 1) // LOG_CHUNK}``). An entry is framed as the
4-byte write tag, the length of the data as a LEB128 varint, then the data.

The braces are a Redis Cluster hash tag: everything of a match hashes to the slot of
``<id>``, and so does its wake-up channel (the key's own name), so one Lua script may write
the match and publish on a cluster. The prefix therefore must not contain braces and a match
id must not contain ``}``.

Documents, indexes and feeds (``DocStore``, one hash slot per key)
------------------------------------------------------------------
Every key of a document key ``<key>`` (``base.DOC_KEY``: no braces) carries the hash tag
``{<key>}``, so its document, indexes and feed share one slot and one script may touch them
all:

``{prefix}doc:{<key>}``
    hash: ``v`` version, ``d`` data.
``{prefix}doc:{<key>}:i:<index>``
    sorted set of the members of index ``<index>``, every score 0 (read with ``ZRANGE ...
    BYLEX``: byte-wise order, ``(after`` exclusive). Emptied sets vanish, as Redis does.
``{prefix}doc:{<key>}:f``
    hash of the feed: ``n`` the newest seq ever written, ``x`` the highest seq trimmed,
    ``m:<source>`` the mark of each source (the newest version appended). Also the feed's
    wake-up channel (``PUBLISH`` / ``SPUBLISH`` of ``n`` by every append that lands).
``{prefix}doc:{<key>}:fi``
    list of the items kept, seq ``x + 1`` first; an item is stored as ``<now> <data>``
    (``now`` of its append as Python's ``repr`` of the float, a space, the bytes), so the
    script can trim by append time without a second key.

Why not a stream per match (the first layout): a stream allocates its first listpack node
at ``stream-node-max-bytes`` (4 KiB by default), so ``MEMORY USAGE`` of a one-entry stream is
4.7 KiB and a finished match took 10-16 KiB; the chunked hash keeps a whole finished match
in 1.3-7.6 KiB (docs/performance.md). Chunks, rather than one growing field, bound what
each write rewrites (and replicates) to the record and one chunk. The version checks in the
scripts are the guard against a forked log.

Round trips
-----------
Every operation is one command: ``create``, ``compare_and_set`` and ``log`` are one
``EVALSHA`` of a script (version check + record write + log append + TTL + wake-up in one
atomic step), ``load`` is one ``HMGET``. A script is sent in full (``EVAL``, which also caches
it on the server) only when the server answers ``NOSCRIPT`` -- once per server and restart;
``load_scripts()`` pre-loads them on every primary to avoid even that.
The ``DocStore`` operations are one command each too: ``put_doc`` (version check, data,
index removals then additions), ``feed_append`` (mark check, ``RPUSH``, trimming, mark,
wake-up) and ``feed_read`` (``n``, ``x`` and the ``LRANGE`` read together) are scripts;
``get_doc`` is ``HMGET``, ``index_add`` ``ZADD``, ``index_remove`` ``ZREM``, ``index_page``
``ZRANGE BYLEX``, ``feed_marks`` ``HMGET``. ``get_docs`` is one pipeline of ``HMGET``: one
round trip on a single node; on a cluster the client sends one batch per node owning some
of the keys, in parallel, and ``round_trips`` counts one per such node. A call with nothing
to do (no members, no keys, no sources) sends nothing.
``round_trips`` counts every command this store sends on its command connections (retries
included); ``script_loads`` counts the ``NOSCRIPT`` fallbacks. Topology refreshes the cluster client
does by itself (``CLUSTER SLOTS`` after a failover, ``MOVED`` redirects) are not counted.

Failures, retries and "did my write land?"
------------------------------------------
Connection errors, timeouts and the transient cluster states of a failover (``CLUSTERDOWN``,
``TRYAGAIN``, ``READONLY``, ``LOADING``, slot not covered) are retried with exponential
backoff and jitter for at most ``retry_budget`` seconds (default 2 s single node, 10 s
cluster, enough to ride out a ~4 s primary failover); then ``StoreUnavailable`` is raised.
A down server fails fast: the connect timeout is short and, once one call has spent its
budget without success (``known_down``), later calls make a single attempt -- each request
gets its 503 at once -- until one succeeds again.

A server at ``maxmemory`` under ``noeviction`` refuses writes with ``OOM command not
allowed``: that raises ``StoreFull`` (a ``StoreUnavailable``) at once, without retrying and
without marking the store down (it answers; reads and ``PING`` still work, so readiness stays
green). A script is refused at its first write, so nothing of the refused write landed.
``full_refusals`` counts them; one warning per minute is logged (``base.FullReports``). An
evicting ``maxmemory-policy`` would instead drop live matches silently: ``eviction_policies()``
reads it (``CONFIG GET``) so that ``skyline serve`` / ``worker`` can refuse to start on one.

A retried write is safe because every write carries a write id (see ``base.py``): the
caller's ``write_id=`` or a random one generated per call; the log keeps its 4-byte tag. If
the script ran but its reply was lost, the retry finds version ``expected + 1`` in the log
with the same tag and the same bytes and returns True -- the caller never sees False for a
write that landed, and it is never applied twice. When even the retries fail
(``StoreUnavailable``), the outcome is unknown; a caller that passed its own ``write_id``
(e.g. derived from the request's ``Idempotency-Key``) may repeat the call later with the
same arguments to learn it: True means it is in the log exactly once. ``create`` behaves
the same with its ``write_id``. ``put_doc`` is idempotent by data equality instead (version
``expected + 1`` holding the same bytes: True). A retried ``feed_append`` whose first reply
was lost returns False (the mark is already at its version): the items are in the feed
once either way, and False only says "not landed by this answer".

Durability caveat: Redis replicates asynchronously. A primary that is cut off right after
acknowledging a write may lose it if its replica had not received it yet; the promoted
replica then continues from the previous version (the log stays contiguous, but a watcher
that saw the lost version will see another write under that number). A crash alone
(``DEBUG SEGFAULT``, ``kill -9``) does not open that window in practice -- Redis flushes
the reply and the replication stream in the same event-loop pass -- and the fault tests
check that no acknowledged write is lost across a crash and a manual failover; a network
partition can. ``WAIT`` cannot close it here: it must run on the writer's own connection,
which the cluster client does not pin, and it would cost a second round trip per write.
The same holds for documents and feeds: a lost ``put_doc`` leaves the previous version, and
a lost ``feed_append`` takes its mark with it, so a later append of that version lands
again -- once.

Watch
-----
Every successful write publishes the new version on the match's channel (the hash key's
name): ``PUBLISH`` on a single node, sharded ``SPUBLISH`` on a cluster (routed by slot to the
shard that owns the match, so the message never crosses the cluster bus). Watchers do not
own connections: the store's multiplexer (``redis_wakeups.py``) holds ONE pub/sub connection
on a single node and one per shard primary on a cluster (``SSUBSCRIBE`` on the node that owns
the channel's slot), shared by every watcher of every match; a channel is subscribed when its
first watcher arrives and unsubscribed when its last one leaves. These connections are made
from the client's settings and never taken from the command pool.

A watcher reads the version (``HGET v``) once the server confirmed its channel's
subscription (not confirmed within ``backoff_cap``: at once, and it polls until it is), then
yields every version up to the one it read. It reads again when woken --
a message naming a later version (a burst of messages while it reads wakes it once), the
subscription confirmed again after a dropped connection (the multiplexer reconnects with
backoff, resubscribes everything and wakes every watcher), or moved (a slot moved: the
server ended the shard channel, or the cluster client's slot map names another owner; the
channel follows it to that node's connection) -- and after ``watch_block_ms`` without any.
Messages are only wake-ups -- never trusted for the number they carry, since a primary may
publish a write a failover then loses -- and the version in the hash is the truth, so the
stream of versions is ordered, gapless and resumable whatever pub/sub loses. An idle watcher
reads once per ``watch_block_ms`` and ends when the match is gone (expired); while its
channel is not subscribed it reads every ``backoff_cap`` (0.5 s). Where subscribing is
refused (an ACL user without channel rights: grant ``&{prefix}match:*`` or ``allchannels``)
the store logs a warning once and its watchers poll every ``backoff_cap`` instead; writes are
unaffected (the script's publish is a ``pcall``; grant ``&{prefix}doc:*`` too for feeds).

``watch_feed`` uses the same multiplexer: its channel is the feed hash's name (a channel
of its own, in the slot of the key), and it reads ``n`` where ``watch`` reads ``v``: once
subscribed, when woken by a message naming a seq above the last one it yielded (or an
epoch change) and every ``watch_block_ms``; it yields ``n`` when that is above what it
yielded before and runs until closed (a feed does not expire).

Attributes: ``pubsub_connections`` (open now), ``wakeups`` (messages received),
``subscribed_channels`` (subscribed now); pub/sub traffic is not counted in
``round_trips``.

Connections
-----------
Commands share a bounded pool: ``max_connections`` (default 64) per store on a single node
(redis-py's ``BlockingConnectionPool``) and per node on a cluster (the cluster client's own
per-node limit). In front of it the store lets as many commands run at once and queues the
rest first come, first served (the blocking pool lets a newcomer take the connection a long
waiter was woken for; the cluster client raises instead of waiting). A command that waits
``pool_timeout`` (2 s) for a free connection while *no* command of the store completes
raises ``StoreUnavailable`` (HTTP 503) without retrying and without marking the store down:
overload, not an outage. A queue that moves (commands complete, but a busy event loop reads
their replies late, e.g. under a connection storm) is waited out, up to ``POOL_QUEUE_CAP``
(30 s) in all. So one replica uses at most
``max_connections`` + 1 connections to a single Redis and, on a cluster, ``max_connections``
per node plus one pub/sub connection per shard primary with watched matches (and the one the
cluster client keeps from discovering the topology), whatever the number of watchers.
``client_name=`` names them all (``CLIENT SETNAME``); ``open_store`` names them
``skyline-store-<pid>`` (``connection_name``), as the rate limits name theirs
``skyline-limits-<pid>`` (``service.store.counting``; deploy/README.md "Connections").

Due signals (bot seats)
-----------------------
``{prefix}bots:due`` is a stream of match ids (field ``m``), one entry per ``signal_due``
(``XADD ... MAXLEN ~ 100000``), read by workers through the consumer group ``workers``
(created on first use, from the start of the stream): ``claim_due`` is ``XAUTOCLAIM`` (signals
idle for ``reclaim_idle_ms`` in a dead consumer's pending list) and, when that finds none,
``XREADGROUP ... BLOCK``; ``resume_due`` reads the consumer's own pending list
(``XREADGROUP ... 0``); ``ack_due`` is one script: ``XACK`` then ``XDEL``. The key is not
hash-tagged with any match: on a cluster it lives in its own slot, and signalling is a
separate command after the match's compare-and-set (a service that dies between the two
loses the signal; the service re-signals when it reads such a match).

All-bot matches have a lane of their own (``signal_due(..., all_bots=True)``): the stream
``{{prefix}bots:due}:all-bots`` (``bots_due_key``), hash-tagged so that it shares the slot of
``{prefix}bots:due`` on a cluster (one ``XREADGROUP ... BLOCK`` waits on both), read through
a group ``workers`` of its own. Its tokens are ``b:<entry id>`` (the human lane's are bare
entry ids, as before). ``claim_due`` reclaims idle entries of both streams, then reads
``all_bots_first`` entries of the all-bot stream, then the human stream, then the all-bot
stream, each without blocking; only when all are empty does it block on both at once
(``COUNT 1``: at most one entry per lane comes back).

TTL
---
``ttl_seconds`` is per write (``create`` and ``compare_and_set``): the match's key gets that
``PEXPIRE``; ``None`` clears it (``PERSIST``), so a match that finished with a TTL and is
written again without one stays.

Stored format
-------------
``LOG_CHUNK``, ``WRITE_TAG_BYTES`` and the entry framing are part of the stored format: a
match written with one value cannot be read with another. Changing any of them needs a new
key name (or a migration), not an edit.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import random
import secrets
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from typing import Any, TypeVar, cast

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.connection import AbstractConnection
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import (
    BusyLoadingError,
    ClusterDownError,
    ClusterError,
    MasterDownError,
    NoScriptError,
    OutOfMemoryError,
    ReadOnlyError,
    RedisClusterException,
    RedisError,
    ResponseError,
    SlotNotCoveredError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from .base import (
    DUE_RECLAIM_IDLE_MS,
    FEED_KEEP,
    FEED_KEEP_SECONDS,
    PAGE_LIMIT,
    WRITE_TAG_BYTES,
    Doc,
    DueSignal,
    FeedItem,
    FeedPage,
    FullReports,
    LogEntry,
    MatchExists,
    MatchNotFound,
    StoreUnavailable,
    check_feed_append,
    check_limit,
    check_members,
    check_ms,
    check_name,
    check_pairs,
    check_version,
    write_tag,
)
from .redis_wakeups import SINGLE_NODE, Wakeups

__all__ = ["DEFAULT_MAX_CONNECTIONS", "EVICTING_POLICY_PREFIXES", "RedisStore", "evicting"]

log = logging.getLogger("skyline.store")

T = TypeVar("T")
Client = Redis | RedisCluster

# Errors after which the same call may succeed shortly (server restarting, failover running).
_TRANSIENT: tuple[type[Exception], ...] = (
    RedisConnectionError,  # includes BusyLoadingError (LOADING after a restart)
    RedisTimeoutError,
    ClusterDownError,
    ClusterError,
    SlotNotCoveredError,
    TryAgainError,
    MasterDownError,
    ReadOnlyError,  # a demoted primary answering before the client saw the new topology
    BusyLoadingError,
    RedisClusterException,  # "cannot be connected" while every node is restarting
    OSError,
)

_CREATE = """
local old = redis.call('HMGET', KEYS[1], 'v', 'c')
if old[1] then
  if old[2] == ARGV[2] then return 1 end
  return 0
end
redis.call('HSET', KEYS[1], 'v', 0, 'r', ARGV[1], 'c', ARGV[2])
if ARGV[3] ~= '' then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return 1
"""

# KEYS[1] the match hash (also the wake-up channel). ARGV: expected version, record, framed
# entry, write tag size, TTL ms ('' = none), entries per chunk, 'PUBLISH' or 'SPUBLISH'.
# Returns 1 written, 0 version mismatch, 2 already written by this very call (the entry at
# the new version is this one, tag and bytes), -1 no match.
_CAS = """
local v = redis.call('HGET', KEYS[1], 'v')
if not v then return -1 end
v = tonumber(v)
local expected = tonumber(ARGV[1])
local nv = expected + 1
local size = tonumber(ARGV[6])
local field = 'l' .. math.floor((nv - 1) / size)
if v ~= expected then
  if v >= nv and nv > 0 then
    local chunk = redis.call('HGET', KEYS[1], field)
    if not chunk then return 0 end
    local pos = 1
    local tag_bytes = tonumber(ARGV[4])
    for _ = 1, (nv - 1) % size do
      local p, len, shift = pos + tag_bytes, 0, 1
      while true do
        local b = string.byte(chunk, p)
        if not b then return 0 end
        p = p + 1
        len = len + (b % 128) * shift
        if b < 128 then break end
        shift = shift * 128
      end
      pos = p + len
    end
    if string.sub(chunk, pos, pos + #ARGV[3] - 1) == ARGV[3] then return 2 end
  end
  return 0
end
if (nv - 1) % size == 0 then
  redis.call('HSET', KEYS[1], 'v', nv, 'r', ARGV[2], field, ARGV[3])
else
  local chunk = redis.call('HGET', KEYS[1], field) or ''
  redis.call('HSET', KEYS[1], 'v', nv, 'r', ARGV[2], field, chunk .. ARGV[3])
end
if ARGV[5] == '' then
  redis.call('PERSIST', KEYS[1])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
end
-- The wake-up is best effort: pcall, so that a refused publish (e.g. an ACL user without
-- channel rights) cannot fail a write that is already done; watchers then poll.
redis.pcall(ARGV[7], KEYS[1], nv)
return 1
"""

# Returns -1 when there is no match, else {version, chunk, chunk, ...}: the chunks from the
# one holding version ARGV[1] + 1 (false for a missing one), none when nothing is newer.
_LOG = """
local v = redis.call('HGET', KEYS[1], 'v')
if not v then return -1 end
v = tonumber(v)
local after = tonumber(ARGV[1])
if after >= v then return {v} end
local size = tonumber(ARGV[2])
local fields = {}
for k = math.floor(after / size), math.floor((v - 1) / size) do
  fields[#fields + 1] = 'l' .. k
end
local out = redis.call('HMGET', KEYS[1], unpack(fields))
table.insert(out, 1, v)
return out
"""


# -- documents, indexes, feeds (DocStore) --------------------------------------------------

# KEYS[1] the document hash, KEYS[2..] index sorted sets. ARGV: expected version, data, the
# number of removals r, then r pairs (KEYS position, member) to remove, then pairs to add.
# Returns 1 written, 2 already written with these very bytes (a retry), 0 version mismatch.
_PUT_DOC = """
local cur = redis.call('HMGET', KEYS[1], 'v', 'd')
local v = tonumber(cur[1] or '0')
local expected = tonumber(ARGV[1])
if v ~= expected then
  if v == expected + 1 and cur[2] == ARGV[2] then return 2 end
  return 0
end
redis.call('HSET', KEYS[1], 'v', expected + 1, 'd', ARGV[2])
local i = 4
for _ = 1, tonumber(ARGV[3]) do
  redis.call('ZREM', KEYS[tonumber(ARGV[i])], ARGV[i + 1])
  i = i + 2
end
while i <= #ARGV do
  redis.call('ZADD', KEYS[tonumber(ARGV[i])], 0, ARGV[i + 1])
  i = i + 2
end
return 1
"""

# KEYS[1] the feed hash (n: last seq, x: trimmed, m:<source>: marks; also the wake-up
# channel), KEYS[2] the item list. ARGV: mark field, version, now, cutoff (now -
# keep_seconds), keep, 'PUBLISH' or 'SPUBLISH', then the items. An item is stored as
# "<now> <data>". Returns 1 appended, 0 version not above the mark.
_FEED_APPEND = """
local version = tonumber(ARGV[2])
if version <= tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0') then return 0 end
local meta = redis.call('HMGET', KEYS[1], 'n', 'x')
local n, x = tonumber(meta[1] or '0'), tonumber(meta[2] or '0')
local batch = {}
for i = 7, #ARGV do
  batch[#batch + 1] = ARGV[3] .. ' ' .. ARGV[i]
  if #batch == 1000 then
    redis.call('RPUSH', KEYS[2], unpack(batch))
    batch = {}
  end
end
if #batch > 0 then redis.call('RPUSH', KEYS[2], unpack(batch)) end
n = n + #ARGV - 6
local cutoff, keep = tonumber(ARGV[4]), tonumber(ARGV[5])
while n - x > keep do
  local head = redis.call('LINDEX', KEYS[2], 0)
  if not head then break end
  local at = tonumber(string.sub(head, 1, string.find(head, ' ', 1, true) - 1))
  if not (at < cutoff) then break end
  redis.call('LPOP', KEYS[2])
  x = x + 1
end
redis.call('HSET', KEYS[1], 'n', n, 'x', x, ARGV[1], version)
redis.pcall(ARGV[6], KEYS[1], n)
return 1
"""

# KEYS[1] the feed hash, KEYS[2] the item list. ARGV: after, limit. Returns {last, trimmed,
# first seq, item, item, ...} (items as stored: "<time> <data>").
_FEED_READ = """
local meta = redis.call('HMGET', KEYS[1], 'n', 'x')
local n, x = tonumber(meta[1] or '0'), tonumber(meta[2] or '0')
local first = math.max(tonumber(ARGV[1]), x) + 1
local out = {n, x, first}
if first > n then return out end
local last = math.min(n, first + tonumber(ARGV[2]) - 1)
local items = redis.call('LRANGE', KEYS[2], first - x - 1, last - x - 1)
for i = 1, #items do out[#out + 1] = items[i] end
return out
"""


# -- schedules ------------------------------------------------------------------------------

# KEYS[1] the schedule's sorted set. ARGV: limit, lease (ms). The store's clock decides what
# is due (TIME: replicas' clocks do not matter). Returns {now, claimed until, member, ...}.
_SCHEDULE_CLAIM = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
local till = now + tonumber(ARGV[2])
local out = {now, till}
for i = 1, #due do
  redis.call('ZADD', KEYS[1], till, due[i])
  out[#out + 1] = due[i]
end
return out
"""

# KEYS[1] the schedule. ARGV: member, claimed time, new time ('' removes). 1 settled, 0 the
# member moved since the claim (or is gone).
_SCHEDULE_SETTLE = """
local cur = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not cur or tonumber(cur) ~= tonumber(ARGV[2]) then return 0 end
if ARGV[3] == '' then
  redis.call('ZREM', KEYS[1], ARGV[1])
else
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
end
return 1
"""


# -- heartbeats ---------------------------------------------------------------------------

# KEYS[1] the group's sorted set. ARGV: member, keep (ms). Returns the store's now.
_BEAT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. (now - tonumber(ARGV[2])))
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return now
"""

# KEYS[1] the group. ARGV: limit. Returns {now, member, time, member, time ...}, newest first.
_BEATS = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {now}
local got = redis.call('ZREVRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1, 'WITHSCORES')
for i = 1, #got do out[#out + 1] = got[i] end
return out
"""


_ACK = """
local n = 0
for i = 1, #ARGV do
  n = n + redis.call('XACK', KEYS[1], 'workers', ARGV[i])
  redis.call('XDEL', KEYS[1], ARGV[i])
end
return n
"""

DUE_GROUP = "workers"
DUE_MAXLEN = 100_000


class _Script:
    """A Lua script run by EVALSHA; its SHA comes from ``register_script``."""

    def __init__(self, client: Client, source: str) -> None:
        self.source = source
        self.sha: str = client.register_script(source).sha


DEFAULT_MAX_CONNECTIONS = 64
"""Command connections per store (per node on a cluster) unless configured otherwise."""

DEFAULT_POOL_TIMEOUT = 2.0
"""Seconds a command waits for a free command connection, while no command completes,
before ``StoreUnavailable``."""
POOL_QUEUE_CAP = 30.0
"""Seconds a command waits for a free command connection at most, however the queue moves."""

LOG_CHUNK = 128
"""Log entries per hash field: a write rewrites (and replicates) at most one chunk."""


def _new_write_id() -> str:
    """A random write id for a caller that gave none (the log keeps its 32-bit tag)."""
    return secrets.token_hex(8)


def _tag(write_id: str) -> bytes:
    return bytes.fromhex(write_tag(write_id))


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        if n:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _frame(tag: bytes, data: bytes) -> bytes:
    """One log entry as the chunks hold it: tag, LEB128 length, data."""
    return tag + _varint(len(data)) + data


def _unframe(chunk: bytes, first: int) -> list[LogEntry]:
    """The entries of ``chunk``, numbered from version ``first``."""
    out: list[LogEntry] = []
    pos, version = 0, first
    while pos < len(chunk):
        tag = chunk[pos : pos + WRITE_TAG_BYTES].hex()
        pos += WRITE_TAG_BYTES
        size, shift = 0, 0
        while True:
            byte = chunk[pos]
            pos += 1
            size |= (byte & 0x7F) << shift
            if byte < 0x80:
                break
            shift += 7
        out.append(LogEntry(version, chunk[pos : pos + size], tag))
        pos += size
        version += 1
    return out


def _ttl_ms(ttl_seconds: int | None) -> str:
    if ttl_seconds is None:
        return ""
    if ttl_seconds <= 0:
        raise ValueError("ttl_seconds must be positive or None")
    return str(ttl_seconds * 1000)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class PoolExhausted(RedisConnectionError):
    """Every command connection stayed busy for the whole pool timeout (overload, not an
    outage: not retried, and it does not mark the store down)."""


def connection_name(what: str) -> str:
    """The ``CLIENT SETNAME`` of this process's connections for ``what`` (``store``,
    ``limits`` ...): ``skyline-<what>-<pid>``, so that ``CLIENT LIST`` tells an operator
    which process, and which part of it, holds each connection."""
    return f"skyline-{what}-{os.getpid()}"


class _BoundedPool(BlockingConnectionPool):
    """redis-py's blocking pool (a caller waits for a free connection), whose timeout is
    told apart from a failed connect."""

    async def get_connection(self, *args: Any, **kwargs: Any) -> AbstractConnection:
        try:
            connection: AbstractConnection = await super().get_connection(  # type: ignore[no-untyped-call]
                *args, **kwargs
            )
            return connection
        except RedisConnectionError as exc:
            if isinstance(exc.__cause__, TimeoutError):
                raise PoolExhausted(
                    f"no free Redis connection in {self.timeout} s "
                    f"({self.max_connections} in use)"
                ) from exc
            raise


def _pubsub_options(given: dict[str, Any]) -> dict[str, Any]:
    """A pub/sub connection's settings from a command connection's: RESP2 bytes (replies
    parsed here), no client-side retries (the multiplexer reconnects), no pool plumbing."""
    options = {k: v for k, v in given.items() if k not in _POOL_ONLY}
    options.update(protocol=2, decode_responses=False, retry=Retry(NoBackoff(), 0),
                   maint_notifications_config=None)
    return options


_POOL_ONLY = frozenset({"maint_notifications_pool_handler", "maint_notifications_config",
                        "orig_host_address", "orig_socket_timeout",
                        "orig_socket_connect_timeout", "max_connections", "connection_class",
                        "retry"})


class RedisStore:
    """``MatchStore`` and ``DocStore`` on Redis. See the module docstring for keys, scripts
    and retries.

    Attributes: ``round_trips`` (commands sent on command connections, retries included),
    ``script_loads`` (``NOSCRIPT`` fallbacks), ``is_cluster``, ``prefix``; of the watch
    wake-ups: ``pubsub_connections`` (open now), ``wakeups`` (messages received),
    ``subscribed_channels`` (channels subscribed now).
    """

    def __init__(
        self,
        client: Client,
        prefix: str = "skyline:",
        *,
        retry_budget: float = 2.0,
        backoff_base: float = 0.05,
        backoff_cap: float = 0.5,
        watch_block_ms: int = 2000,
        shard_options: dict[str, Any] | None = None,
        max_commands: int | None = None,
        pool_timeout: float = DEFAULT_POOL_TIMEOUT,
    ) -> None:
        if "{" in prefix or "}" in prefix:
            raise ValueError("the key prefix must not contain braces (they are hash tags)")
        self.client: Client = client
        self.prefix = prefix
        self.is_cluster = isinstance(client, RedisCluster)
        self.retry_budget = retry_budget
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self.watch_block_ms = watch_block_ms
        #: Overrides of the pub/sub connections' settings (by default the client's own:
        #: credentials, TLS, timeouts, client name).
        self.shard_options = dict(shard_options or {})
        #: Set when Redis refused a subscription (ACL): watchers poll instead.
        self.wakeups_refused = False
        self.pool_timeout = pool_timeout
        # Commands in flight at most as many as the pool has connections (per node on a
        # cluster), queued first come, first served (asyncio's semaphore is fair; redis-py's
        # blocking pool lets a newcomer take a connection a long waiter was woken for, and
        # the cluster client has no waiting at all: it raises MaxConnectionsError).
        if max_commands is None:
            if isinstance(client, RedisCluster):
                max_commands = client.nodes_manager.connection_kwargs.get("max_connections")
            else:
                max_commands = getattr(client.connection_pool, "max_connections", None)
        self._command_slots = asyncio.Semaphore(max_commands) if max_commands else None
        self._wakeups = Wakeups(
            connect=self._pubsub_connection,
            owner=self._owner if isinstance(client, RedisCluster) else lambda key: SINGLE_NODE,
            sharded=isinstance(client, RedisCluster),
            on_refused=self._refuse_wakeups,
            prepare=self._discover if isinstance(client, RedisCluster) else None,
            backoff_base=backoff_base,
            backoff_cap=backoff_cap,
            poll=backoff_cap,
            connect_timeout=self._connect_budget(),
        )
        self.round_trips = 0
        self._completed = 0  # commands that got their answer (or failed): queue progress
        #: Set when a call spent its retry budget; cleared by the next success.
        self.known_down = False
        #: Writes Redis refused at ``maxmemory`` (``StoreFull``), logged once a minute.
        self.full = FullReports(log, "Redis (maxmemory reached)")
        self.script_loads = 0
        self._create = _Script(client, _CREATE)
        self._cas = _Script(client, _CAS)
        self._log = _Script(client, _LOG)
        self._ack = _Script(client, _ACK)
        self._put_doc = _Script(client, _PUT_DOC)
        self._feed_append = _Script(client, _FEED_APPEND)
        self._feed_read = _Script(client, _FEED_READ)
        self._schedule_claim = _Script(client, _SCHEDULE_CLAIM)
        self._schedule_settle = _Script(client, _SCHEDULE_SETTLE)
        self._beat = _Script(client, _BEAT)
        self._beats = _Script(client, _BEATS)
        self._due_group_ready = False

    @property
    def full_refusals(self) -> int:
        """Writes Redis refused so far because it reached ``maxmemory`` (``StoreFull``)."""
        return self.full.count

    @property
    def completed_commands(self) -> int:
        """Commands that got their answer (or failed) so far: is the queue moving?"""
        return self._completed

    # -- constructors ----------------------------------------------------------------------

    @classmethod
    def from_url(
        cls,
        url: str,
        prefix: str = "skyline:",
        *,
        retry_budget: float = 2.0,
        connect_timeout: float = 0.5,
        socket_timeout: float = 5.0,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
        pool_timeout: float = DEFAULT_POOL_TIMEOUT,
        client_name: str | None = None,
        **store_options: Any,
    ) -> RedisStore:
        """A store on one Redis server (``redis://``, ``rediss://``, ``unix://`` URLs).

        At most ``max_connections`` command connections: a command waits up to
        ``pool_timeout`` seconds for a free one, then raises ``StoreUnavailable``. Watchers
        use one pub/sub connection besides (not from this pool). ``client_name`` names every
        connection (``CLIENT SETNAME``)."""
        pool = _BoundedPool.from_url(
            url,
            max_connections=max_connections,
            timeout=pool_timeout,
            socket_connect_timeout=connect_timeout,
            socket_timeout=socket_timeout,
            # Retries are ours (bounded by time, with backoff, counted).
            retry=Retry(NoBackoff(), 0),
            client_name=client_name,
        )
        client = Redis.from_pool(pool)
        return cls(client, prefix, retry_budget=retry_budget, max_commands=max_connections,
                   pool_timeout=pool_timeout, **store_options)

    @classmethod
    def from_cluster_nodes(
        cls,
        nodes: str | Sequence[str],
        prefix: str = "skyline:",
        *,
        retry_budget: float = 10.0,
        connect_timeout: float = 0.5,
        socket_timeout: float = 5.0,
        password: str | None = None,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
        pool_timeout: float = DEFAULT_POOL_TIMEOUT,
        client_name: str | None = None,
        **store_options: Any,
    ) -> RedisStore:
        """A store on a Redis Cluster; ``nodes`` is ``"host:port,host:port"`` or a list.

        At most ``max_connections`` command connections per node, and as many commands in
        flight: a command waits up to ``pool_timeout`` seconds for its turn, then raises
        ``StoreUnavailable``. Watchers use one pub/sub connection per shard primary besides.
        ``client_name`` names every connection (``CLIENT SETNAME``)."""
        names = nodes.split(",") if isinstance(nodes, str) else list(nodes)
        startup: list[ClusterNode] = []
        for name in (n.strip() for n in names):
            if not name:
                continue
            host, _, port = name.rpartition(":")
            startup.append(ClusterNode(host or "127.0.0.1", int(port)))
        if not startup:
            raise ValueError("no cluster node given")
        client = RedisCluster(
            startup_nodes=startup,
            socket_connect_timeout=connect_timeout,
            socket_timeout=socket_timeout,
            password=password,
            # No client-side retry loop: ours has backoff and a time budget. The client
            # still marks its topology stale after an error and reloads it on the next call.
            retry=Retry(NoBackoff(), 0),
            max_connections=max_connections,
            client_name=client_name,
        )
        return cls(client, prefix, retry_budget=retry_budget, max_commands=max_connections,
                   pool_timeout=pool_timeout, **store_options)

    # -- keys ------------------------------------------------------------------------------

    def key(self, match_id: str) -> str:
        """The hash key of a match."""
        if "}" in match_id or not match_id:
            raise ValueError("a match id must be non-empty and must not contain '}'")
        return f"{self.prefix}match:{{{match_id}}}"

    def doc_key(self, key: str) -> str:
        """The hash of a document (``v`` version, ``d`` data); the other keys of ``key``
        extend this name, so all of them hash to the slot of ``key``."""
        return f"{self.prefix}doc:{{{check_name(key)}}}"

    def index_key(self, key: str, index: str) -> str:
        """The sorted set (every score 0) of the index ``index`` of ``key``."""
        return f"{self.doc_key(key)}:i:{check_name(index, 'index name')}"

    def feed_key(self, key: str) -> str:
        """The hash of the feed of ``key`` (``n`` last, ``x`` trimmed, ``m:<source>`` marks);
        also its wake-up channel."""
        return f"{self.doc_key(key)}:f"

    def feed_items_key(self, key: str) -> str:
        """The list of the items of the feed of ``key`` (seq ``x + 1`` first)."""
        return f"{self.doc_key(key)}:fi"

    def due_key(self) -> str:
        """The stream of due signals (no hash tag: one key for all matches)."""
        return f"{self.prefix}bots:due"

    def bots_due_key(self) -> str:
        """The stream of due signals of all-bot matches, in the slot of ``due_key``: its
        hash tag is ``due_key`` itself (or ``due_key``'s own tag when the prefix has one)."""
        due = self.due_key()
        start = due.find("{")
        if start >= 0 and due.find("}", start + 2) > start:
            return f"{due}:all-bots"  # the prefix's tag decides the slot of both
        return f"{{{due}}}:all-bots"

    def _lane_key(self, all_bots: bool) -> str:
        return self.bots_due_key() if all_bots else self.due_key()

    # -- plumbing --------------------------------------------------------------------------

    async def _retrying(self, op: Callable[[], Awaitable[T]]) -> T:
        """Run ``op`` (one command), retrying transient failures with backoff and jitter
        until ``retry_budget`` is spent; then ``StoreUnavailable``."""
        # Known down (a call spent its whole budget and none succeeded since): one attempt
        # only, so that requests during an outage get their 503 at once instead of each
        # waiting out the budget. The first success clears it.
        budget = 0.0 if self.known_down else self.retry_budget
        deadline = time.monotonic() + budget
        delay = self.backoff_base
        while True:
            try:
                result = await op()
            except PoolExhausted as exc:
                # Overload, not an outage: waiting again would only stretch the queue.
                raise StoreUnavailable(f"Redis busy: {exc}") from exc
            except _TRANSIENT as exc:
                pause = delay * random.uniform(0.5, 1.0)
                if time.monotonic() + pause > deadline:
                    self.known_down = True
                    raise StoreUnavailable(f"Redis unavailable: {exc}") from exc
                await asyncio.sleep(pause)
                delay = min(delay * 2, self.backoff_cap)
            except ResponseError as exc:  # after _TRANSIENT: some of those are replies too
                if _out_of_memory(exc):
                    self.known_down = False  # it answered
                    # Full, not down: the server answers, and refused the write before it
                    # changed anything (a script is refused at its first write). Not retried:
                    # memory is freed by expiries or the operator, not in milliseconds.
                    raise self.full.refused(exc) from exc
                raise
            else:
                self.known_down = False
                return result

    async def _send(self, call: Callable[[], Awaitable[T]]) -> T:
        """One command through the client, once one of the ``max_commands`` slots is free
        (waiting at most ``pool_timeout``: then ``PoolExhausted``)."""
        slots = self._command_slots
        if slots is None:
            return await _guard(call())
        if slots.locked():
            await self._queue_for(slots)
        else:
            await slots.acquire()  # free: at once
        try:
            return await _guard(call())
        finally:
            self._completed += 1
            slots.release()

    async def _queue_for(self, slots: asyncio.Semaphore) -> None:
        """Wait for a command slot (first come, first served): ``PoolExhausted`` when no
        command completed for ``pool_timeout`` seconds (the connections are stuck), or after
        ``POOL_QUEUE_CAP`` seconds in all. A slow queue behind a busy event loop is not a
        stuck pool: the commands ahead complete, their replies are only read late."""
        loop = asyncio.get_running_loop()
        cap = loop.time() + max(POOL_QUEUE_CAP, self.pool_timeout)
        acquire = asyncio.ensure_future(slots.acquire())
        try:
            while True:
                seen = self._completed
                left = cap - loop.time()
                done, _ = await asyncio.wait({acquire}, timeout=min(self.pool_timeout, left))
                if done:
                    acquire.result()
                    return
                if self._completed == seen or left <= self.pool_timeout:
                    raise PoolExhausted(
                        f"no free Redis connection in {self.pool_timeout} s"
                        if self._completed == seen else
                        f"no free Redis connection in {POOL_QUEUE_CAP} s"
                    )
        except BaseException:
            if acquire.done() and not acquire.cancelled() and acquire.exception() is None:
                slots.release()  # got it just now: give it back
            else:
                acquire.cancel()
            raise

    async def _command(self, *args: Any) -> Any:
        self.round_trips += 1
        return await self._send(lambda: self.client.execute_command(*args))

    async def _run(self, script: _Script, keys: list[str], args: list[bytes | str]) -> Any:
        async def attempt() -> Any:
            self.round_trips += 1
            try:
                return await self._send(
                    lambda: self.client.evalsha(script.sha, len(keys), *keys, *args)
                )
            except NoScriptError:
                # Not cached on this server (first use, restart, failover to a fresh
                # replica): EVAL sends the body once and caches it there.
                self.round_trips += 1
                self.script_loads += 1
                return await self._send(
                    lambda: self.client.eval(script.source, len(keys), *keys, *args)
                )

        return await self._retrying(attempt)

    # -- the contract ----------------------------------------------------------------------

    async def create(
        self,
        match_id: str,
        record: bytes,
        ttl_seconds: int | None = None,
        *,
        write_id: str | None = None,
    ) -> None:
        # Our own id when the caller gives none, so that our retry after a lost reply
        # recognises its own create instead of reporting MatchExists.
        tag = _tag(write_id or _new_write_id())
        keys = [self.key(match_id)]
        result = await self._run(self._create, keys, [record, tag, _ttl_ms(ttl_seconds)])
        if int(result) != 1:
            raise MatchExists(match_id)

    async def load(self, match_id: str) -> tuple[int, bytes]:
        key = self.key(match_id)
        version, record = await self._retrying(lambda: self._command("HMGET", key, "v", "r"))
        if version is None:
            raise MatchNotFound(match_id)
        return int(version), bytes(record)

    async def load_many(self, match_ids: Sequence[str]) -> list[tuple[int, bytes] | None]:
        """``load`` of several matches in one pipeline (``_hmget_many``); None for a
        missing one."""
        replies = await self._hmget_many([self.key(m) for m in match_ids], "r")
        return [None if version is None else (int(version), bytes(record))
                for version, record in replies]

    async def _hmget_many(self, names: Sequence[str], field: str) -> list[Any]:
        """``HMGET name v <field>`` of every name in one pipeline: one round trip on a single
        node; on a cluster the client sends one batch per node that owns some of the keys, in
        parallel (counted once per node)."""
        if not names:
            return []
        nodes = len({self._owner(name) for name in names}) if self.is_cluster else 1

        async def call() -> list[Any]:
            pipe = self.client.pipeline(transaction=False)
            for name in names:
                pipe.execute_command("HMGET", name, "v", field)
            return list(await pipe.execute())

        async def attempt() -> list[Any]:
            self.round_trips += nodes
            return await self._send(call)

        return await self._retrying(attempt)

    async def compare_and_set(
        self,
        match_id: str,
        expected_version: int,
        record: bytes,
        entry: bytes,
        ttl_seconds: int | None = None,
        *,
        write_id: str | None = None,
    ) -> bool:
        tag = _tag(write_id or _new_write_id())
        args: list[bytes | str] = [
            str(int(expected_version)),
            record,
            _frame(tag, entry),
            str(WRITE_TAG_BYTES),
            _ttl_ms(ttl_seconds),
            str(LOG_CHUNK),
            "SPUBLISH" if self.is_cluster else "PUBLISH",
        ]
        result = int(await self._run(self._cas, [self.key(match_id)], args))
        if result == -1:
            raise MatchNotFound(match_id)
        return result in (1, 2)

    async def log(self, match_id: str, after: int = 0) -> list[LogEntry]:
        after = max(after, 0)
        reply = await self._run(self._log, [self.key(match_id)], [str(after), str(LOG_CHUNK)])
        if isinstance(reply, int):
            raise MatchNotFound(match_id)
        version, chunks = int(reply[0]), reply[1:]
        first_chunk = after // LOG_CHUNK
        out: list[LogEntry] = []
        for i, chunk in enumerate(chunks):
            first = (first_chunk + i) * LOG_CHUNK + 1
            entries = _unframe(bytes(chunk), first) if chunk else []
            expected = min(LOG_CHUNK, version - first + 1)
            if len(entries) != expected:  # cannot happen: the CAS appends contiguously
                raise RuntimeError(f"log chunk {first_chunk + i} of {match_id} is damaged")
            out.extend(e for e in entries if e.version > after)
        return out

    async def _version(self, key: str) -> int | None:
        raw = await self._retrying(lambda: self._command("HGET", key, "v"))
        return None if raw is None else int(raw)

    def _owner(self, key: str) -> str | None:
        """The name of the cluster node that owns ``key`` now (None: unknown)."""
        if not isinstance(self.client, RedisCluster):
            return None
        try:
            node = self.client.get_node_from_key(key)
        except (RedisClusterException, SlotNotCoveredError):
            return None
        return None if node is None else node.name

    # -- watch -----------------------------------------------------------------------------

    @property
    def pubsub_connections(self) -> int:
        """Pub/sub connections open now (one per node with watched matches)."""
        return self._wakeups.pubsub_connections

    @property
    def wakeups(self) -> int:
        """Wake-up messages received so far (all channels)."""
        return self._wakeups.wakeups

    @property
    def subscribed_channels(self) -> int:
        """Match channels subscribed now (confirmed by the server)."""
        return self._wakeups.subscribed_channels

    def _connect_budget(self) -> float:
        """Seconds a pub/sub connect (TCP, AUTH, CLIENT SETNAME) may take."""
        if isinstance(self.client, RedisCluster):
            given = self.client.nodes_manager.connection_kwargs
        else:
            given = self.client.connection_pool.connection_kwargs
        return float((given.get("socket_connect_timeout") or 5.0)
                     + (given.get("socket_timeout") or 5.0))

    def _pubsub_connection(self, node: str) -> AbstractConnection:
        """A new (unconnected) pub/sub connection to ``node``, outside the command pool."""
        if isinstance(self.client, RedisCluster):
            cluster_node = self.client.get_node(node_name=node)
            if cluster_node is None:
                raise LookupError(f"cluster node {node} is not known (any more)")
            options = _pubsub_options(cluster_node.connection_kwargs)
            options.update(self.shard_options)
            return cluster_node.connection_class(**options)
        pool = self.client.connection_pool
        options = _pubsub_options(pool.connection_kwargs)
        options.update(self.shard_options)
        return pool.connection_class(**options)

    async def _discover(self) -> None:
        """The cluster client's slot map, so that a first watcher finds its shard."""
        assert isinstance(self.client, RedisCluster)
        with contextlib.suppress(*_TRANSIENT):
            await self.client.initialize()

    def _refuse_wakeups(self, reason: Exception) -> None:
        if not self.wakeups_refused:
            log.warning("Redis refused a watcher's subscription (%s); watchers poll every "
                        "%.1f s instead. Grant the user channel rights (&%smatch:* and "
                        "&%sdoc:*).", reason, self.backoff_cap, self.prefix, self.prefix)
        self.wakeups_refused = True

    async def watch(self, match_id: str, after: int) -> AsyncGenerator[int, None]:
        key = self.key(match_id)
        last = max(after, 0)
        found = False
        # Subscribed (the server confirmed it) before the first read: any write after that
        # read wakes us. Not confirmed in time: we poll until it is.
        waiter = await self._wakeups.acquire(key)
        try:
            await waiter.settle(self.backoff_cap)
            while True:
                # The version in the hash is the truth, never a message: a primary may
                # publish a write that a failover then loses.
                version = await self._version(key)
                if version is None:
                    if not found:
                        raise MatchNotFound(match_id)  # never existed (or expired)
                    return  # expired while watched
                found = True
                while last < version:
                    last += 1
                    yield last
                # Until a message names a later version, the subscription is lost, moved or
                # confirmed again, or watch_block_ms (idle: look whether the match expired).
                await waiter.wait(last, self.watch_block_ms / 1000)
        finally:
            waiter.close()

    # -- documents, indexes, feeds (DocStore) ----------------------------------------------

    async def get_doc(self, key: str) -> Doc | None:
        name = self.doc_key(key)
        version, data = await self._retrying(lambda: self._command("HMGET", name, "v", "d"))
        return None if version is None else Doc(int(version), bytes(data))

    async def get_docs(self, keys: Sequence[str]) -> list[Doc | None]:
        replies = await self._hmget_many([self.doc_key(key) for key in keys], "d")
        return [
            None if version is None else Doc(int(version), bytes(data))
            for version, data in replies
        ]

    async def put_doc(
        self,
        key: str,
        expected_version: int,
        data: bytes,
        *,
        index_add: Sequence[tuple[str, str]] = (),
        index_remove: Sequence[tuple[str, str]] = (),
    ) -> bool:
        check_version(expected_version, "expected_version")
        keys = [self.doc_key(key)]
        position: dict[str, str] = {}  # index name -> its key's position in KEYS (1-based)

        def pairs(given: Sequence[tuple[str, str]]) -> list[str]:
            out: list[str] = []
            for index, member in check_pairs(given):
                if index not in position:
                    keys.append(self.index_key(key, index))
                    position[index] = str(len(keys))
                out += [position[index], member]
            return out

        removals, additions = pairs(index_remove), pairs(index_add)
        args: list[bytes | str] = [
            str(expected_version), bytes(data), str(len(removals) // 2), *removals, *additions
        ]
        return int(await self._run(self._put_doc, keys, args)) in (1, 2)

    async def index_add(self, key: str, index: str, members: Sequence[str]) -> None:
        name, given = self.index_key(key, index), check_members(members)
        if given:
            scored = [part for member in given for part in (0, member)]
            await self._retrying(lambda: self._command("ZADD", name, *scored))

    async def index_remove(self, key: str, index: str, members: Sequence[str]) -> None:
        name, given = self.index_key(key, index), check_members(members)
        if given:
            await self._retrying(lambda: self._command("ZREM", name, *given))

    async def index_page(
        self, key: str, index: str, *, after: str | None, limit: int
    ) -> list[str]:
        name, count = self.index_key(key, index), check_limit(limit)
        start = "-" if after is None else "(" + check_members([after])[0]
        reply = await self._retrying(
            lambda: self._command("ZRANGE", name, start, "+", "BYLEX", "LIMIT", 0, count)
        )
        return [_text(member) for member in reply]

    async def feed_append(
        self,
        key: str,
        source: str,
        version: int,
        items: Sequence[bytes],
        *,
        now: float,
        keep: int = FEED_KEEP,
        keep_seconds: float = FEED_KEEP_SECONDS,
    ) -> bool:
        check_version(version)
        check_feed_append(now, keep, keep_seconds)
        keys = [self.feed_key(key), self.feed_items_key(key)]
        args: list[bytes | str] = [
            "m:" + check_name(source, "source"),
            str(version),
            repr(float(now)),
            repr(float(now) - float(keep_seconds)),
            str(keep),
            "SPUBLISH" if self.is_cluster else "PUBLISH",
            *(bytes(item) for item in items),
        ]
        return int(await self._run(self._feed_append, keys, args)) == 1

    async def feed_marks(self, key: str, sources: Sequence[str]) -> list[int]:
        name = self.feed_key(key)
        fields = ["m:" + check_name(source, "source") for source in sources]
        if not fields:
            return []
        reply = await self._retrying(lambda: self._command("HMGET", name, *fields))
        return [0 if mark is None else int(mark) for mark in reply]

    async def feed_read(self, key: str, after: int, limit: int) -> FeedPage:
        keys = [self.feed_key(key), self.feed_items_key(key)]
        args: list[bytes | str] = [str(max(int(after), 0)), str(check_limit(limit))]
        reply = await self._run(self._feed_read, keys, args)
        last, trimmed, first = int(reply[0]), int(reply[1]), int(reply[2])
        items = [
            FeedItem(first + i, bytes(stored).split(b" ", 1)[1])
            for i, stored in enumerate(reply[3:])
        ]
        return FeedPage(items, last, trimmed)

    async def _feed_last(self, name: str) -> int:
        raw = await self._retrying(lambda: self._command("HGET", name, "n"))
        return 0 if raw is None else int(raw)

    async def watch_feed(self, key: str, after: int) -> AsyncGenerator[int, None]:
        name = self.feed_key(key)
        last = max(int(after), 0)
        # As ``watch``: subscribed (confirmed) before the first read, the feed's ``n`` is the
        # truth and a message only a wake-up; idle, it reads every watch_block_ms.
        waiter = await self._wakeups.acquire(name)
        try:
            await waiter.settle(self.backoff_cap)
            while True:
                newest = await self._feed_last(name)
                if newest > last:
                    last = newest
                    yield newest
                await waiter.wait(last, self.watch_block_ms / 1000)
        finally:
            waiter.close()

    async def signal_due(self, match_id: str, *, all_bots: bool = False) -> None:
        key = self._lane_key(all_bots)
        await self._retrying(
            lambda: self._command("XADD", key, "MAXLEN", "~", DUE_MAXLEN, "*", "m", match_id)
        )

    async def _ensure_due_group(self) -> None:
        if self._due_group_ready:
            return
        for key in (self.due_key(), self.bots_due_key()):
            try:
                await self._retrying(functools.partial(
                    self._command, "XGROUP", "CREATE", key, DUE_GROUP, "0", "MKSTREAM"))
            except ResponseError as exc:
                if "BUSYGROUP" not in str(exc):
                    raise
        self._due_group_ready = True

    async def _group_command(self, *args: Any) -> Any:
        """A consumer-group command; recreates the group once if the stream vanished."""
        await self._ensure_due_group()
        try:
            return await self._retrying(lambda: self._command(*args))
        except ResponseError as exc:
            if "NOGROUP" not in str(exc):
                raise
            self._due_group_ready = False
            await self._ensure_due_group()
            return await self._retrying(lambda: self._command(*args))

    async def _read_lane(self, consumer: str, all_bots: bool, count: int) -> list[DueSignal]:
        if count <= 0:
            return []
        reply = await self._group_command(
            "XREADGROUP", "GROUP", DUE_GROUP, consumer, "COUNT", count,
            "STREAMS", self._lane_key(all_bots), ">",
        )
        return _due_stream_entries(reply, self)

    async def claim_due(
        self,
        consumer: str,
        count: int = 16,
        block_ms: int = 1000,
        *,
        reclaim_idle_ms: int | None = DUE_RECLAIM_IDLE_MS,
        all_bots_first: int = 0,
    ) -> list[DueSignal]:
        if reclaim_idle_ms is not None:
            claimed: list[DueSignal] = []
            for all_bots in (False, True):
                if len(claimed) >= count:
                    break
                reply = await self._group_command(
                    "XAUTOCLAIM", self._lane_key(all_bots), DUE_GROUP, consumer,
                    max(reclaim_idle_ms, 0), "0-0", "COUNT", count - len(claimed),
                )
                claimed += _due_entries(reply[1] if reply else [], all_bots)
            if claimed:
                return claimed
        out = await self._read_lane(consumer, True, min(max(all_bots_first, 0), count))
        out += await self._read_lane(consumer, False, count - len(out))
        out += await self._read_lane(consumer, True, count - len(out))
        if out or block_ms <= 0:
            return out
        try:
            reply = await self._group_command(
                "XREADGROUP", "GROUP", DUE_GROUP, consumer, "COUNT", 1, "BLOCK", block_ms,
                "STREAMS", self.due_key(), self.bots_due_key(), ">", ">",
            )
        except ResponseError as exc:
            if "UNBLOCKED" not in str(exc):  # a failover under the blocked read
                raise
            return []
        return sorted(_due_stream_entries(reply, self), key=lambda signal: signal.all_bots)

    async def resume_due(self, consumer: str, count: int = 256) -> list[DueSignal]:
        reply = await self._group_command(
            "XREADGROUP", "GROUP", DUE_GROUP, consumer, "COUNT", count,
            "STREAMS", self.due_key(), self.bots_due_key(), "0", "0",
        )
        return sorted(_due_stream_entries(reply, self), key=lambda signal: signal.all_bots)

    async def ack_due(self, tokens: Sequence[str]) -> None:
        human = [t for t in tokens if not t.startswith(BOTS_TOKEN)]
        bots = [t[len(BOTS_TOKEN):] for t in tokens if t.startswith(BOTS_TOKEN)]
        for key, ids in ((self.due_key(), human), (self.bots_due_key(), bots)):
            if ids:
                await self._run(self._ack, [key], list(ids))

    # -- schedules (``Schedules``) -------------------------------------------------------

    def schedule_key(self, name: str) -> str:
        return f"{self.prefix}sched:{check_name(name, 'schedule name')}"

    async def store_time_ms(self) -> int:
        seconds, micros = await self._retrying(lambda: self._command("TIME"))
        return int(seconds) * 1000 + int(micros) // 1000

    async def schedule_lower(self, name: str, member: str, at_ms: int) -> None:
        key, at = self.schedule_key(name), check_ms(at_ms)
        check_name(member, "member")
        await self._retrying(lambda: self._command("ZADD", key, "LT", at, member))

    async def schedule_claim(
        self, name: str, limit: int, lease_ms: int
    ) -> tuple[int, list[tuple[str, int]]]:
        key = self.schedule_key(name)
        reply = await self._run(self._schedule_claim, [key],
                                [str(check_limit(limit)), str(check_ms(lease_ms, "lease"))])
        now, till = int(reply[0]), int(reply[1])
        return now, [(_text(member), till) for member in reply[2:]]

    async def schedule_settle(
        self, name: str, member: str, claimed_ms: int, at_ms: int | None
    ) -> bool:
        key = self.schedule_key(name)
        check_name(member, "member")
        new = "" if at_ms is None else str(check_ms(at_ms))
        reply = await self._run(self._schedule_settle, [key],
                                [member, str(check_ms(claimed_ms, "claim")), new])
        return int(reply) == 1

    async def schedule_remove(self, name: str, member: str) -> None:
        key = self.schedule_key(name)
        await self._retrying(lambda: self._command("ZREM", key, member))

    async def schedule_next(self, name: str) -> int | None:
        key = self.schedule_key(name)
        reply = await self._retrying(
            lambda: self._command("ZRANGE", key, 0, 0, "WITHSCORES"))
        return int(float(reply[0][1])) if reply and isinstance(reply[0], (list, tuple)) else (
            int(float(reply[1])) if reply else None)

    async def schedule_due_at(self, name: str, member: str) -> int | None:
        key = self.schedule_key(name)
        score = await self._retrying(lambda: self._command("ZSCORE", key, member))
        return None if score is None else int(float(score))

    async def schedule_size(self, name: str) -> int:
        key = self.schedule_key(name)
        return int(await self._retrying(lambda: self._command("ZCARD", key)))

    # -- heartbeats -----------------------------------------------------------------------

    def beats_key(self, name: str) -> str:
        return f"{self.prefix}beats:{check_name(name, 'heartbeat group')}"

    async def beat(self, name: str, member: str, keep_ms: int) -> int:
        key = self.beats_key(name)
        check_name(member, "member")
        if check_ms(keep_ms, "keep") <= 0:
            raise ValueError("keep must be positive")
        return int(await self._run(self._beat, [key], [member, str(keep_ms)]))

    async def beats(self, name: str) -> tuple[int, list[tuple[str, int]]]:
        key = self.beats_key(name)
        reply = await self._run(self._beats, [key], [str(PAGE_LIMIT)])
        rest = reply[1:]
        return int(reply[0]), [(_text(rest[i]), int(float(rest[i + 1])))
                               for i in range(0, len(rest) - 1, 2)]

    async def load_scripts(self) -> None:
        """Optional warm-up (e.g. at startup): cache the scripts on the server (every primary
        of a cluster), so that no later call pays the one-off ``NOSCRIPT`` fallback. Not
        needed for correctness; a replica promoted later loads them on first use."""
        for script in (self._create, self._cas, self._log, self._ack, self._put_doc,
                       self._feed_append, self._feed_read, self._schedule_claim,
                       self._schedule_settle, self._beat, self._beats):
            source = script.source

            async def load(source: str = source) -> Any:
                self.round_trips += 1
                return await self._send(lambda: self.client.script_load(source))

            await self._retrying(load)

    async def eviction_policies(self) -> dict[str, str | None]:
        """The ``maxmemory-policy`` of every node (``CONFIG GET``): node name -> policy, None
        where the node refuses ``CONFIG`` (disabled or renamed, as on most managed Redis, or
        denied to this ACL user). On a cluster every node the client knows is asked: every
        primary, and the replicas ``CLUSTER SLOTS`` lists (a replica that takes over keeps
        its own setting; Redis lists a replica there once it has replicated data). Raises
        ``StoreUnavailable`` when Redis does not answer."""
        client = self.client
        if isinstance(client, RedisCluster):
            cluster = client
            await self._retrying(lambda: self._send(cluster.initialize))
            nodes: list[tuple[str, Any]] = [(n.name, n) for n in cluster.get_nodes()]
        else:
            kwargs = client.connection_pool.connection_kwargs
            nodes = [(f"{kwargs.get('host', 'localhost')}:{kwargs.get('port', 6379)}"
                      if "path" not in kwargs else str(kwargs["path"]), None)]
        policies: dict[str, str | None] = {}
        args = ("CONFIG", "GET", "maxmemory-policy")
        for name, node in nodes:

            async def ask(node: Any = node) -> Any:
                self.round_trips += 1
                if node is None:
                    return await self._send(lambda: client.execute_command(*args))
                return await self._send(
                    lambda: cast(RedisCluster, client).execute_command(*args, target_nodes=node)
                )

            try:
                reply = await self._retrying(ask)
            except ResponseError:  # unknown command (disabled, renamed), NOPERM
                policies[name] = None
                continue
            policies[name] = _config_value(reply, "maxmemory-policy")
        return policies

    async def ping(self) -> bool:
        try:
            self.round_trips += 1
            return bool(await self._send(lambda: self.client.ping()))
        except (RedisError, OSError):
            return False

    async def close(self) -> None:
        await self._wakeups.aclose()
        await self.client.aclose()


EVICTING_POLICY_PREFIXES = ("allkeys-", "volatile-")
"""``maxmemory-policy`` values that evict keys at ``maxmemory``: ``allkeys-*`` any key,
``volatile-*`` keys with a TTL -- which every match has (``--ttl-idle``, ``--ttl-finished``),
so both lose live matches silently. ``noeviction`` refuses writes instead (503
``store_full``)."""


def evicting(policy: str) -> bool:
    """Whether Redis evicts keys under ``policy`` (``maxmemory-policy``)."""
    return policy.strip().lower().startswith(EVICTING_POLICY_PREFIXES)


def _config_value(reply: Any, name: str) -> str | None:
    """The value of ``name`` in a ``CONFIG GET`` reply (a dict, or a flat list of pairs)."""
    if isinstance(reply, dict):
        pairs = list(reply.items())
    elif isinstance(reply, (list, tuple)):
        pairs = list(zip(reply[::2], reply[1::2], strict=False))
    else:
        return None
    for key, value in pairs:
        if _text(key) == name:
            return _text(value)
    return None


def _out_of_memory(exc: ResponseError) -> bool:
    """Whether Redis refused a command at ``maxmemory`` (``-OOM command not allowed when used
    memory > 'maxmemory'``; redis-py raises ``OutOfMemoryError``, older servers wrap it in a
    script error)."""
    return isinstance(exc, OutOfMemoryError) or "OOM command not allowed" in str(exc)


async def _guard(call: Awaitable[T]) -> T:
    """Await a client call; a connection torn down under a concurrent write surfaces from
    redis-py's asyncio transport as ``AttributeError``/``TypeError`` about ``NoneType``
    (redis-py issues #3546, #4287) instead of ``ConnectionError`` -- seen here during a
    cluster failover. Report it as the connection error it is, so it is retried."""
    try:
        return await call
    except (AttributeError, TypeError) as exc:
        if "NoneType" not in str(exc):
            raise
        raise RedisConnectionError(f"connection closed during I/O: {exc}") from exc


def _fields(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return {_text(k): v for k, v in raw.items()}
    if raw is None:
        return {}
    return {_text(raw[i]): raw[i + 1] for i in range(0, len(raw), 2)}


BOTS_TOKEN = "b:"
"""The prefix of the tokens of the all-bot lane's signals (``b:<entry id>``)."""


def _due_entries(items: Any, all_bots: bool = False) -> list[DueSignal]:
    """Signals from a list of stream items ``(id, fields)``; deleted entries (no fields,
    e.g. trimmed away while pending) are skipped."""
    out: list[DueSignal] = []
    tag = BOTS_TOKEN if all_bots else ""
    for item in items or []:
        if not item or len(item) < 2:
            continue
        match_id = _fields(item[1]).get("m")
        if match_id is not None:
            out.append(DueSignal(tag + _text(item[0]), _text(match_id), all_bots))
    return out


def _due_stream_entries(reply: Any, store: RedisStore) -> list[DueSignal]:
    """Signals from an XREADGROUP reply (RESP2 list or RESP3 map; one stream per lane)."""
    if not reply:
        return []
    pairs = reply.items() if isinstance(reply, dict) else [(item[0], item[1]) for item in reply]
    bots_key = store.bots_due_key()
    out: list[DueSignal] = []
    for name, entries in pairs:
        items = cast(list[Any], entries)
        if items and isinstance(items[0], list) and items[0] and isinstance(items[0][0], list):
            items = items[0]
        out.extend(_due_entries(items, _text(name) == bots_key))
    return out
