"""`skyline worker` / `skyline serve --worker` configuration, and the worker on a Redis
Cluster (the due stream lives in its own slot, apart from the matches)."""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from service import games
from service.bots import Budget
from service.cli import build_parser
from service.games.base import dump_action
from service.matches import MatchService
from service.matches.models import CreateMatchRequest
from service.store.redis import RedisStore
from service.workers.bots import BotWorker

SKYLINE = str(Path(sys.executable).parent / "skyline")


def test_worker_reads_flags_and_environment(monkeypatch: Any) -> None:
    monkeypatch.setenv("SKYLINE_REDIS_URL", "redis://example:6379/3")
    monkeypatch.setenv("SKYLINE_REDIS_PREFIX", "sky:")
    monkeypatch.setenv("SKYLINE_WORKER_CONCURRENCY", "3")
    monkeypatch.setenv("SKYLINE_BOT_BUDGET", "50,1s")
    args = build_parser().parse_args(["worker", "--consumer", "w-7"])
    assert (args.redis_url, args.redis_prefix, args.worker_concurrency) == (
        "redis://example:6379/3", "sky:", 3)
    assert args.bot_budget == Budget(iterations=50, seconds=1.0)
    assert args.worker_consumer == "w-7"
    flags = build_parser().parse_args(
        ["worker", "--prefix", "other:", "--concurrency", "8", "--redis-cluster", "h:7000"])
    assert (flags.redis_prefix, flags.worker_concurrency, flags.redis_cluster) == (
        "other:", 8, "h:7000")
    serve = build_parser().parse_args(["serve"])
    assert serve.worker is True  # issue 30: serve runs the worker loops itself, on any store
    assert build_parser().parse_args(["serve", "--worker"]).worker is True
    assert build_parser().parse_args(["serve", "--no-worker"]).worker is False
    monkeypatch.setenv("SKYLINE_WORKER", "0")
    assert build_parser().parse_args(["serve"]).worker is False


def test_worker_without_redis_says_what_to_do() -> None:
    env = {"PATH": "/usr/bin:/bin"}
    result = subprocess.run([SKYLINE, "worker"], capture_output=True, text=True, env=env,
                            timeout=120)
    assert result.returncode == 2
    assert "--redis-url" in result.stderr


@pytest.mark.redis
async def test_the_worker_plays_bot_seats_on_a_redis_cluster(
    redis_cluster: Any, redis_cluster_prefix: str
) -> None:
    store = RedisStore.from_cluster_nodes(redis_cluster.nodes_arg, prefix=redis_cluster_prefix)
    service = MatchService(store, ttl_finished=None, ttl_idle=None)
    worker = BotWorker(service, consumer="cluster-w", budget=Budget(iterations=3),
                       block_ms=200)
    running = asyncio.create_task(worker.run())
    try:
        created = await service.create_match(CreateMatchRequest(
            game="ny1901", players=2, seed=9, bots={"1": "greedy"}))
        match_id, token = created.match_id, created.seats[0].token
        rng = random.Random(9)
        async with asyncio.timeout(300):  # a safety net, not a measurement
            while True:
                state = await service.get_state(match_id, token)
                if state.status == "finished":
                    break
                if 0 not in state.active_seats:
                    async for _ in store.watch(match_id, state.version):
                        break  # the worker moved
                    continue
                moves = (await service.legal_moves(match_id, token)).moves
                action = dump_action(games.get("ny1901"), rng.choice(moves))
                await service.act(match_id, token, action, state.version, None)
        log = await store.log(match_id)
        assert [e.version for e in log] == list(range(1, state.version + 1))
        assert worker.moves > 0
    finally:
        worker.stop()
        await running
        await store.close()
