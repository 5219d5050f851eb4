"""The embedded store keeps every acknowledged move through ``kill -9`` (issue 12).

A real ``skyline serve`` on a data folder is killed with SIGKILL 20 times while 8 writers
play through REST (4-player New York 1901 matches; two of them with a bot seat, which the
server's in-process worker plays). Every move is posted with its own ``Idempotency-Key``; a
move whose answer was lost to the kill is posted again, with the same key, after the
restart -- as a client would. After each restart:

- every acknowledged move is in the log at the version its answer named, with the action
  that was sent (the log shows a seat its own actions);
- versions are contiguous (1..latest), and every human entry in the log is one the writers
  had acknowledged: nothing unacknowledged appears, nothing appears twice;
- a bot seat that was to move gets played again (the worker resumes after the restart).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.listening import listens
from tests.support.redis_servers import free_port

ROOT = Path(__file__).resolve().parents[2]
KILLS = 20
WRITERS = 8
BOT_MATCHES = 2  # of the WRITERS matches, this many have a bot in seat 3
WAIT = 60.0  # bounds every wait for the server


class Server:
    """``skyline serve`` on ``data_dir``; ``kill()`` is SIGKILL, ``start()`` waits for it."""

    def __init__(self, data_dir: Path, log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.data_dir = data_dir
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    async def start(self) -> None:
        """Start the server and wait for it; on a port another test took meanwhile, again
        on a new port (``url`` follows)."""
        for _ in range(5):
            if await self._start_once():
                return
            self.port = free_port()
            self.url = f"http://127.0.0.1:{self.port}"
        raise AssertionError("no free port kept long enough to start on")

    async def _start_once(self) -> bool:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SKYLINE_")}
        start = self.log.stat().st_size if self.log.exists() else 0
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "service.cli", "serve", "--port", str(self.port),
                 "--data-dir", str(self.data_dir), "--log-level", "warning",
                 "--bot-budget", "1"],
                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        async with httpx.AsyncClient(timeout=2) as client:
            async with asyncio.timeout(WAIT):
                while True:
                    if self.process.poll() is not None:
                        told = self.log.read_bytes()[start:].decode(errors="replace")
                        if "address already in use" in told.lower():
                            return False
                        raise AssertionError(told[-3000:])
                    with contextlib.suppress(httpx.TransportError):
                        # ...and ours: another test's server may have taken the port first.
                        if ((await client.get(f"{self.url}/readyz")).status_code == 200
                                and listens(self.process.pid, self.port)):
                            return True
                    await asyncio.sleep(0.05)

    def kill(self) -> None:
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=WAIT)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.kill()


@dataclass
class Writer:
    """One match and its seats' tokens; what was acknowledged, and the move in flight."""

    match_id: str
    tokens: dict[int, str]
    rng: random.Random
    acked: dict[int, tuple[int, dict[str, Any]]] = field(default_factory=dict)
    """version -> (seat, action) of every acknowledged move."""
    pending: tuple[str, int, dict[str, Any]] | None = None
    """(Idempotency-Key, seat, action) of a move whose answer was lost."""
    finished: bool = False

    async def play(self, client: httpx.AsyncClient, base: str, stop: asyncio.Event) -> None:
        """Post moves until ``stop`` is set, the server goes away or the match ends."""
        url = f"{base}/v1/matches/{self.match_id}"
        while not stop.is_set() and not self.finished:
            try:
                if self.pending is None and not await self._choose(client, url):
                    await asyncio.sleep(0.02)  # the bot's turn: the worker plays it
                    continue
                await self._post(client, url)
            except httpx.TransportError:
                return  # the server was killed: the move (if any) stays pending

    async def settle(self, client: httpx.AsyncClient, base: str) -> None:
        """Post the move whose answer was lost once more, with the same Idempotency-Key: the
        first answer if it landed (nothing is written again), else it lands now."""
        if self.pending is not None:
            await self._post(client, f"{base}/v1/matches/{self.match_id}")

    async def _choose(self, client: httpx.AsyncClient, url: str) -> bool:
        """Pick a legal move of an active human seat as ``pending``; False when none is."""
        state = (await client.get(url)).json()
        if state["status"] == "finished":
            self.finished = True
            return False
        seats = [s for s in state["activeSeats"] if s in self.tokens]
        if not seats:
            return False
        moves = (await client.get(f"{url}/legal-moves", headers=self.auth(seats[0]))).json()
        if not moves["moves"]:
            return False
        self.pending = (uuid.uuid4().hex, seats[0], self.rng.choice(moves["moves"]))
        return True

    async def _post(self, client: httpx.AsyncClient, url: str) -> None:
        assert self.pending is not None
        key, seat, action = self.pending
        answer = await client.post(
            f"{url}/actions", json={"action": action},
            headers={**self.auth(seat), "Idempotency-Key": key},
        )
        if answer.status_code == 200:
            self.acked[answer.json()["version"]] = (seat, action)
            self.pending = None
        elif answer.status_code in (409, 422):
            # Refused and not written (a bot moved first): choose again.
            assert answer.json()["code"] in ("not_your_turn", "version_conflict"), answer.text
            self.pending = None
        else:
            raise AssertionError(f"unexpected answer {answer.status_code}: {answer.text}")

    def auth(self, seat: int) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[seat]}"}


async def check(client: httpx.AsyncClient, base: str, writer: Writer) -> tuple[int, int]:
    """Assert the log holds exactly the acknowledged human moves, contiguously; returns
    (latest version, number of bot moves)."""
    url = f"{base}/v1/matches/{writer.match_id}"
    seen: dict[int, tuple[int | None, Any]] = {}
    latest = 0
    for seat in writer.tokens:
        after: int | None = 0
        while after is not None:  # every page (a log page holds at most 200 versions)
            page = (await client.get(f"{url}/log?after={after}",
                                     headers=writer.auth(seat))).json()
            latest = page["latestVersion"]
            for entry in page["entries"]:
                if entry["seat"] == seat:
                    seen[entry["version"]] = (seat, entry["action"])
                else:
                    seen.setdefault(entry["version"], (entry["seat"], None))
            after = page["nextAfter"]
    assert sorted(seen) == list(range(1, latest + 1)), "versions are not contiguous"
    human = {v: sa for v, sa in seen.items() if sa[0] in writer.tokens}
    for version, (seat, action) in writer.acked.items():
        assert human.get(version) == (seat, action), f"acknowledged move {version} lost"
    assert set(human) == set(writer.acked), "a move nobody acknowledged is in the log"
    return latest, len(seen) - len(human)


@contextlib.contextmanager
def serving(tmp_path: Path) -> Iterator[Server]:
    server = Server(tmp_path / "data", tmp_path / "serve.log")
    try:
        yield server
    finally:
        server.stop()


async def _create(client: httpx.AsyncClient, base: str, n: int) -> Writer:
    body: dict[str, Any] = {"game": "ny1901", "players": 4, "seed": 1000 + n}
    if n < BOT_MATCHES:
        body["bots"] = {"3": "random"}
    created = (await client.post(f"{base}/v1/matches", json=body)).json()
    tokens = {s["seat"]: s["token"] for s in created["seats"]}
    return Writer(created["matchId"], tokens, random.Random(n))


@pytest.mark.slow
async def test_every_acknowledged_move_survives_kill_9(tmp_path: Path) -> None:
    chaos = random.Random(12)
    with serving(tmp_path) as server:
        await server.start()
        async with httpx.AsyncClient(timeout=10) as client:
            writers = [await _create(client, server.url, n) for n in range(WRITERS)]
            bot_moves = [0] * BOT_MATCHES
            for _ in range(KILLS):
                stop = asyncio.Event()
                tasks = [asyncio.create_task(w.play(client, server.url, stop)) for w in writers]
                await asyncio.sleep(chaos.uniform(0.2, 0.6))
                server.kill()  # mid-flight: some answers are lost
                stop.set()
                await asyncio.gather(*tasks)
                await server.start()
                for n, writer in enumerate(writers):
                    await writer.settle(client, server.url)
                    _, bots = await check(client, server.url, writer)
                    if n < BOT_MATCHES:
                        bot_moves[n] = bots
            totals = [len(w.acked) for w in writers]
            print("acknowledged moves per writer:", totals, "bot moves:", bot_moves)
            assert all(t > 0 for t in totals) and sum(totals) >= 100, totals
            assert all(b > 0 for b in bot_moves), bot_moves  # the bots played across restarts


def test_the_durability_test_finds_a_lost_move() -> None:
    """``check``'s assertions bite: a writer claiming a move the log lacks fails them."""
    writer = Writer("m", {0: "t"}, random.Random(0))
    writer.acked = {1: (0, {"type": "x"})}

    class Log(httpx.AsyncBaseTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            return httpx.Response(200, json={"latestVersion": 0, "entries": [], "nextAfter": None})

    async def run() -> None:
        async with httpx.AsyncClient(transport=Log()) as client:
            await check(client, "http://x", writer)

    with pytest.raises(AssertionError, match="lost"):
        asyncio.run(run())
