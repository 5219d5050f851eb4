"""Root fixtures: real Redis for the tests that need it (never mocked, never skipped).

- ``redis_url`` (session): ``$SKYLINE_TEST_REDIS_URL``, else ``redis://127.0.0.1:6379`` when
  it answers PING, else a ``redis-server`` started here on a free port (persistence off) and
  stopped at the end of the session; with no server at all the test fails with what to do.
- ``redis_prefix`` (function): a unique key prefix for one test; its keys are deleted after
  the test (SCAN + DEL on ``redis_url``).
- ``redis_cluster`` (session): a local 6-node Redis Cluster (3 primaries + 3 replicas),
  started on first use, stopped at the end; yields ``RedisClusterProcesses`` (``.nodes``,
  ``.nodes_arg`` = ``"host:port,..."`` for ``RedisStore.from_cluster_nodes``, fault helpers).
- ``redis_cluster_prefix`` (function): like ``redis_prefix``, cleaned on the cluster.

And the ``slow`` marker (``tests/support/slow.py``; docs/testing.md, "The inner loop"): every
test that uses a fixture declared ``@starts_processes`` is marked ``slow`` at collection, and
such a fixture refuses to start for a test that is not.

Process management lives in ``tests/support/redis_servers.py``.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator

import pytest
import redis
from redis.cluster import ClusterNode, RedisCluster

from tests.support.redis_servers import RedisClusterProcesses, RedisServer, find_redis_server, ping
from tests.support.slow import RefuseUnmarked, mark_slow, starts_processes

_NO_REDIS = (
    "These tests need a real Redis. None answers at {url}, and no `redis-server` binary is "
    "installed to start one. Install it (Debian/Ubuntu: `apt-get install redis-server`; "
    "macOS: `brew install redis`) or set SKYLINE_TEST_REDIS_URL to a Redis you can use."
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    mark_slow(items)


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin("skyline-refuse-unmarked"):
        config.pluginmanager.register(RefuseUnmarked(), "skyline-refuse-unmarked")


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """URL of a Redis that answers for the whole session (see the module docstring)."""
    url = os.environ.get("SKYLINE_TEST_REDIS_URL")
    if url:
        if not ping(url, timeout=2.0):
            pytest.fail(f"SKYLINE_TEST_REDIS_URL={url} does not answer PING", pytrace=False)
        yield url
        return
    default = "redis://127.0.0.1:6379"
    if ping(default):
        yield default
        return
    if find_redis_server() is None:
        pytest.fail(_NO_REDIS.format(url=default), pytrace=False)
    with RedisServer.start() as server:
        yield server.url


def new_prefix() -> str:
    """A key prefix no other test uses (no braces: they are Redis Cluster hash tags)."""
    return f"skyline-test:{uuid.uuid4().hex[:12]}:"


def delete_prefix(client: redis.Redis | RedisCluster, prefix: str) -> None:
    """Delete every key starting with ``prefix`` (SCAN, then DEL key by key so that it works
    on a cluster too)."""
    keys = list(client.scan_iter(match=prefix + "*", count=1000))
    for key in keys:
        client.delete(key)


@pytest.fixture
def redis_prefix(redis_url: str) -> Iterator[str]:
    """A unique key prefix for this test; its keys on ``redis_url`` are deleted afterwards."""
    prefix = new_prefix()
    yield prefix
    client = redis.Redis.from_url(redis_url, socket_connect_timeout=2, socket_timeout=5)
    try:
        delete_prefix(client, prefix)
    finally:
        client.close()


@pytest.fixture(scope="session")
@starts_processes
def redis_cluster() -> Iterator[RedisClusterProcesses]:
    """A local Redis Cluster for the session (3 primaries, 3 replicas, on free ports)."""
    if find_redis_server() is None:
        pytest.fail(_NO_REDIS.format(url="(a local cluster)"), pytrace=False)
    cluster = RedisClusterProcesses.start()
    try:
        yield cluster
    finally:
        cluster.close()


@pytest.fixture(scope="module")
@starts_processes
def fault_cluster() -> Iterator[RedisClusterProcesses]:
    """A cluster of the test module's own, for tests that crash and fail over nodes (the
    session's ``redis_cluster`` stays whole for everyone else)."""
    if find_redis_server() is None:
        pytest.fail(_NO_REDIS.format(url="(a local cluster)"), pytrace=False)
    cluster = RedisClusterProcesses.start()
    try:
        yield cluster
    finally:
        cluster.close()


@pytest.fixture
def redis_cluster_prefix(redis_cluster: RedisClusterProcesses) -> Iterator[str]:
    """A unique key prefix for this test; its keys on the cluster are deleted afterwards."""
    prefix = new_prefix()
    yield prefix
    with contextlib.suppress(redis.RedisError):
        # Fault tests may leave a node down; wait for a full slot map before cleaning.
        redis_cluster.wait_healthy()
        client = RedisCluster(
            startup_nodes=[ClusterNode(n.host, n.port) for n in redis_cluster.nodes if n.alive],
            socket_connect_timeout=2,
            socket_timeout=5,
        )
        try:
            for node in client.get_primaries():
                node_client = client.get_redis_connection(node)
                for key in list(node_client.scan_iter(match=prefix + "*", count=1000)):
                    node_client.delete(key)
        finally:
            client.close()
