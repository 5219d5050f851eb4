"""Start and stop real Redis servers for tests: one server, or a local 6-node Redis Cluster.

Used by the root conftest (fixtures ``redis_url``, ``redis_cluster``), the store fault tests
and multi-replica tests. Every process is started in a temporary directory with persistence
off (``--save "" --appendonly no``) on free ports, and stopped by ``stop()`` -- call it in a
``finally`` (or use the objects as context managers) so no server outlives its test run.

    with RedisServer.start() as server:          # server.url, server.port
        server.stop(); server.restart(); server.kill()

    with RedisClusterProcesses.start() as cluster:   # 3 primaries + 3 replicas
        cluster.nodes_arg                            # "127.0.0.1:p1,127.0.0.1:p2,..."
        primary = cluster.primary_for_key("skyline:match:{m1}")
        cluster.crash(primary)                       # DEBUG SEGFAULT
        cluster.failover(cluster.replica_of(primary))  # CLUSTER FAILOVER on a replica
        cluster.wait_healthy()

Plain ``subprocess`` + the synchronous redis-py client: these helpers run from sync
fixtures and from threads of async tests alike.
"""

from __future__ import annotations

import contextlib
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import ClassVar, Self

import redis
from redis.crc import key_slot
from redis.exceptions import RedisError

__all__ = [
    "RedisClusterProcesses",
    "RedisNode",
    "RedisServer",
    "find_redis_server",
    "free_port",
    "ping",
]

_HOST = "127.0.0.1"


def find_redis_server() -> str | None:
    """Path of the ``redis-server`` binary, or None."""
    return shutil.which("redis-server")


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((_HOST, port))
        except OSError:
            return False
    return True


def free_port(*, with_bus: bool = False) -> int:
    """A port that is free now (and ``port + 10000`` too when ``with_bus``: the cluster bus).

    Chosen at random in 20000-29999 rather than by the kernel, so that parallel test
    workers rarely collide and the bus port stays below 65536."""
    for _ in range(500):
        port = random.randint(20000, 29999)
        if _port_free(port) and (not with_bus or _port_free(port + 10000)):
            return port
    raise RuntimeError("no free port found")


def ping(url: str, timeout: float = 0.5) -> bool:
    """True when a Redis answers PING at ``url``."""
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except (RedisError, OSError, ValueError):
        return False


@dataclass
class RedisNode:
    """One ``redis-server`` process on ``host:port`` with its own directory."""

    port: int
    directory: Path
    extra_args: list[str] = field(default_factory=list)
    host: str = _HOST
    process: subprocess.Popen[bytes] | None = None

    @property
    def name(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def url(self) -> str:
        return f"redis://{self.host}:{self.port}"

    def client(self, timeout: float = 2.0) -> redis.Redis:
        """A synchronous client to this very node (not cluster-aware)."""
        return redis.Redis(
            host=self.host, port=self.port, socket_connect_timeout=timeout, socket_timeout=timeout
        )

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def launch(self) -> None:
        """Start the process (again) with the same port, directory and arguments."""
        if self.alive:
            return
        binary = find_redis_server()
        if binary is None:
            raise RuntimeError("redis-server is not installed")
        self.directory.mkdir(parents=True, exist_ok=True)
        args = [
            binary,
            "--port", str(self.port),
            "--bind", self.host,
            "--dir", str(self.directory),
            "--save", "",
            "--appendonly", "no",
            "--daemonize", "no",
            "--logfile", str(self.directory / "redis.log"),
            *self.extra_args,
        ]
        # A new session: a Ctrl-C to pytest does not kill the servers before stop() runs.
        self.process = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        self.wait_ready()

    def wait_ready(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"redis-server on {self.name} exited: {self.log_tail()}")
            if ping(self.url, timeout=0.2):
                return
            time.sleep(0.05)
        raise RuntimeError(f"redis-server on {self.name} did not answer in {timeout}s")

    def stop(self, timeout: float = 5.0) -> None:
        """Terminate gracefully (SIGTERM), then SIGKILL if it lingers."""
        proc = self.process
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout)

    def kill(self) -> None:
        """``kill -9``: no shutdown, no goodbye to clients or the cluster."""
        proc = self.process
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGKILL)
        proc.wait(5)

    def restart(self) -> None:
        self.stop()
        self.launch()

    def log_tail(self, lines: int = 20) -> str:
        path = self.directory / "redis.log"
        if not path.exists():
            return "(no log)"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


class RedisServer:
    """A standalone ``redis-server`` on a free port, in a temporary directory."""

    def __init__(self, node: RedisNode, tempdir: tempfile.TemporaryDirectory[str]) -> None:
        self.node = node
        self._tempdir = tempdir

    @classmethod
    def start(cls, port: int | None = None, extra_args: list[str] | None = None) -> RedisServer:
        tempdir = tempfile.TemporaryDirectory(prefix="skyline-redis-")
        node = RedisNode(port or free_port(), Path(tempdir.name), list(extra_args or []))
        try:
            node.launch()
        except BaseException:
            node.kill()
            tempdir.cleanup()
            raise
        return cls(node, tempdir)

    @property
    def port(self) -> int:
        return self.node.port

    @property
    def url(self) -> str:
        return self.node.url

    @property
    def alive(self) -> bool:
        return self.node.alive

    def stop(self) -> None:
        """Stop the server; ``restart()`` brings it back on the same port."""
        self.node.stop()

    def kill(self) -> None:
        self.node.kill()

    def restart(self) -> None:
        self.node.restart()

    def close(self) -> None:
        """Stop for good and remove the directory."""
        self.node.stop()
        self._tempdir.cleanup()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class RedisClusterProcesses:
    """A local Redis Cluster: ``primaries`` primaries with one replica each, on free ports.

    ``nodes`` lists every node (index order = start order; roles change with failovers, ask
    ``primaries_now()`` / ``role()``)."""

    NODE_ARGS: ClassVar[list[str]] = [
        "--cluster-enabled", "yes",
        "--cluster-node-timeout", "2000",
        "--enable-debug-command", "local",
        # Replicas sync at once (the default waits 5 s to batch diskless syncs): until a
        # replica has synced, losing its primary would lose the data.
        "--repl-diskless-sync-delay", "0",
    ]

    def __init__(self, nodes: list[RedisNode], tempdir: tempfile.TemporaryDirectory[str]) -> None:
        self.nodes = nodes
        self._tempdir = tempdir

    @classmethod
    def start(cls, primaries: int = 3, timeout: float = 60.0) -> RedisClusterProcesses:
        cli = shutil.which("redis-cli")
        if cli is None or find_redis_server() is None:
            raise RuntimeError("redis-server and redis-cli are needed for a local cluster")
        tempdir = tempfile.TemporaryDirectory(prefix="skyline-cluster-")
        nodes: list[RedisNode] = []
        cluster = cls(nodes, tempdir)
        try:
            used: set[int] = set()
            for i in range(primaries * 2):
                port = free_port(with_bus=True)
                while port in used:
                    port = free_port(with_bus=True)
                used.add(port)
                node = RedisNode(port, Path(tempdir.name) / f"n{i}", list(cls.NODE_ARGS))
                nodes.append(node)
                node.launch()
            subprocess.run(
                [cli, "--cluster", "create", *(n.name for n in nodes),
                 "--cluster-replicas", "1", "--cluster-yes"],
                check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout,
            )
            cluster.wait_healthy(timeout)
        except BaseException:
            cluster.close()
            raise
        return cluster

    # -- topology --------------------------------------------------------------------------

    @property
    def nodes_arg(self) -> str:
        """``"host:port,host:port,..."`` for ``RedisStore.from_cluster_nodes``."""
        return ",".join(n.name for n in self.nodes)

    def _live(self) -> list[RedisNode]:
        return [n for n in self.nodes if n.alive]

    def node_named(self, name: str) -> RedisNode:
        for node in self.nodes:
            if node.name == name:
                return node
        raise KeyError(name)

    def role(self, node: RedisNode) -> str:
        """``"master"`` or ``"slave"`` as the node itself says."""
        with contextlib.closing(node.client()) as client:
            return str(client.execute_command("ROLE")[0].decode())

    def primaries_now(self) -> list[RedisNode]:
        return [n for n in self._live() if self.role(n) == "master"]

    def node_id(self, node: RedisNode) -> str:
        with contextlib.closing(node.client()) as client:
            return str(client.execute_command("CLUSTER", "MYID").decode())

    def _cluster_lines(self) -> list[list[str]]:
        """``CLUSTER NODES`` as seen by a live node, split into fields."""
        errors: list[str] = []
        for node in self._live():
            try:
                with contextlib.closing(node.client()) as client:
                    return [line.split() for line in _cluster_nodes(client)]
            except RedisError as exc:
                errors.append(str(exc))
        raise RuntimeError(f"no live cluster node answers: {errors}")

    def _own_slots(self, node: RedisNode) -> list[tuple[int, int]] | None:
        """The slot ranges ``node`` serves by its own account; None when it is a replica."""
        with contextlib.closing(node.client()) as client:
            lines = [line.split() for line in _cluster_nodes(client)]
        for fields in lines:
            if "myself" not in fields[2].split(","):
                continue
            if "master" not in fields[2].split(","):
                return None
            ranges = []
            for item in fields[8:]:
                if item.startswith("["):
                    continue  # a slot being migrated
                first, _, last = item.partition("-")
                ranges.append((int(first), int(last or first)))
            return ranges
        return None

    def primary_for_key(self, key: str | bytes) -> RedisNode:
        """The live node that serves ``key``'s slot now, by its own account."""
        slot = key_slot(key.encode() if isinstance(key, str) else key)
        for node in self._live():
            try:
                ranges = self._own_slots(node)
            except RedisError:
                continue
            if ranges and any(a <= slot <= b for a, b in ranges):
                return node
        raise RuntimeError(f"no live node serves {key!r}")

    def replica_of(self, primary: RedisNode) -> RedisNode:
        """A live replica of ``primary``."""
        primary_id = self.node_id(primary)
        for fields in self._cluster_lines():
            flags, master = fields[2].split(","), fields[3]
            if "slave" in flags and master == primary_id and "fail" not in flags:
                node = self.node_named(fields[1].split("@", 1)[0])
                if node.alive:
                    return node
        raise RuntimeError(f"{primary.name} has no live replica")

    # -- faults ----------------------------------------------------------------------------

    def crash(self, node: RedisNode) -> None:
        """``DEBUG SEGFAULT``: the node dies at once, as in a real crash."""
        with contextlib.closing(node.client()) as client, contextlib.suppress(RedisError):
            client.execute_command("DEBUG", "SEGFAULT")
        if node.process is not None:
            node.process.wait(10)

    def kill(self, node: RedisNode) -> None:
        """``kill -9``."""
        node.kill()

    def restart(self, node: RedisNode) -> None:
        """Start a stopped or crashed node again; it rejoins (as a replica) from its
        nodes.conf. Waits until the cluster is healthy again."""
        node.launch()
        self.wait_healthy()

    def failover(self, replica: RedisNode, timeout: float = 20.0) -> None:
        """``CLUSTER FAILOVER`` on ``replica``; returns once it is the primary everywhere."""
        with contextlib.closing(replica.client()) as client:
            client.execute_command("CLUSTER", "FAILOVER")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.role(replica) == "master":
                # ...and the old primary knows it: no slot claimed twice.
                self.wait_healthy(max(deadline - time.monotonic(), 1.0))
                return
            time.sleep(0.05)
        raise RuntimeError(f"{replica.name} was not promoted in {timeout}s")

    def wait_healthy(self, timeout: float = 30.0) -> None:
        """Until every live node says ``cluster_state:ok``, the live primaries serve all
        16384 slots exactly once by their own account, every live node is known and healthy
        in every view, and every live replica has synced with its primary."""
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            try:
                states = []
                for node in self._live():
                    with contextlib.closing(node.client()) as client:
                        info = client.execute_command("CLUSTER", "INFO").decode()
                        view = [line.split() for line in _cluster_nodes(client)]
                    fields = dict(
                        line.split(":", 1) for line in info.split("\r\n") if ":" in line
                    )
                    states.append(
                        fields.get("cluster_state") == "ok"
                        and fields.get("cluster_slots_ok") == "16384"
                        and self._view_settled(view)
                    )
                    last = info
                covered = 0
                for node in self._live():
                    covered += sum(b - a + 1 for a, b in self._own_slots(node) or [])
                if states and all(states) and covered == 16384 and self._replicas_synced():
                    return
            except RedisError as exc:
                last = str(exc)
            time.sleep(0.1)
        raise RuntimeError(f"cluster not healthy after {timeout}s: {last}")

    def wait_replica_caught_up(self, primary: RedisNode, timeout: float = 30.0) -> None:
        """Until a replica of ``primary`` has applied everything ``primary`` had written when
        this was called (its link up, its offset at least the primary's then). A fault test
        calls it before crashing a primary: what was written before is then on the replica,
        and any loss is the fault's own, not a replica still catching up under load."""
        with contextlib.closing(primary.client()) as client:
            wanted = int(client.info("replication").get("master_repl_offset", 0))
        deadline = time.monotonic() + timeout
        last: object = None
        while time.monotonic() < deadline:
            try:
                replica = self.replica_of(primary)
                with contextlib.closing(replica.client()) as client:
                    info = client.info("replication")
                last = info
                if (info.get("master_link_status") == "up"
                        and int(info.get("slave_repl_offset", -1)) >= wanted):
                    return
            except (RedisError, RuntimeError) as exc:
                last = exc
            time.sleep(0.05)
        raise RuntimeError(f"no replica of {primary.name} caught up in {timeout}s: {last}")

    def _replicas_synced(self) -> bool:
        """Every live replica has its link to its primary up (initial sync done)."""
        for node in self._live():
            with contextlib.closing(node.client()) as client:
                info = client.info("replication")
            if info.get("role") == "slave" and info.get("master_link_status") != "up":
                return False
        return True

    def _view_settled(self, view: list[list[str]]) -> bool:
        """One node's CLUSTER NODES: every live node known and healthy, every primary in
        it owns slots (a fresh replica shows up as an empty primary until it is told)."""
        live = {n.name for n in self._live()}
        seen = set()
        for fields in view:
            name, flags = fields[1].split("@", 1)[0], fields[2].split(",")
            if name not in live:
                continue
            seen.add(name)
            if {"fail", "fail?", "handshake", "noaddr"} & set(flags):
                return False
            if "master" in flags and len(fields) < 9:
                return False
        return seen == live

    # -- lifecycle -------------------------------------------------------------------------

    def close(self) -> None:
        """Stop every node (also the ones already dead) and remove the directories."""
        for node in self.nodes:
            try:
                node.stop(timeout=3)
            except Exception:
                node.kill()
        self._tempdir.cleanup()

    stop = close

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _cluster_nodes(client: redis.Redis) -> list[str]:
    raw = client.execute_command("CLUSTER", "NODES")
    text = raw.decode() if isinstance(raw, bytes) else str(raw)
    return [line for line in text.splitlines() if line.strip()]


def _pairs(flat: object) -> dict[bytes, object]:
    """A RESP map that arrived as a flat list (or already as a dict) as a dict."""
    if isinstance(flat, dict):
        return {(k.encode() if isinstance(k, str) else k): v for k, v in flat.items()}
    items = list(flat)  # type: ignore[call-overload]
    return {
        (k.encode() if isinstance(k, str) else k): v
        for k, v in zip(items[::2], items[1::2], strict=True)
    }
