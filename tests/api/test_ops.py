"""Operations: health, readiness, metrics, CORS, store outages (503 + Retry-After), bot seats,
the schema export check, and `skyline serve` configuration."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from service.bots import Budget
from service.cli import build_parser
from service.store import MatchStore, StoreUnavailable
from service.store.sqlite import SqliteStore
from tests.api.conftest import REAL_GAMES, TOY, create, make_app, stored

ROOT = Path(__file__).resolve().parents[2]


class FlakyStore(SqliteStore):
    """An embedded store that can be switched off: every call raises ``StoreUnavailable``."""

    down = False

    def _check(self) -> None:
        if self.down:
            raise StoreUnavailable("switched off")

    async def load(self, match_id: str) -> tuple[int, bytes]:
        self._check()
        return await super().load(match_id)

    async def create(self, match_id: str, record: bytes, ttl_seconds: int | None = None,
                     **kwargs: Any) -> None:
        self._check()
        await super().create(match_id, record, ttl_seconds, **kwargs)

    async def compare_and_set(self, *args: Any, **kwargs: Any) -> bool:
        self._check()
        return await super().compare_and_set(*args, **kwargs)

    async def ping(self) -> bool:
        self._check()
        return await super().ping()


def test_health_and_readiness() -> None:
    store = FlakyStore(":memory:")
    with TestClient(make_app(store)) as client:
        assert client.get("/healthz").json() == {"status": "ok"}
        assert client.get("/readyz").status_code == 200
        match = create(client)
        store.down = True
        ready = client.get("/readyz")
        assert ready.status_code == 503
        assert ready.json()["code"] == "store_unavailable"
        assert client.get("/healthz").status_code == 200  # alive, just not ready
        for response in (
            client.get(match.url),
            client.post("/v1/matches", json={"game": TOY, "players": 2}),
            client.post(f"{match.url}/actions", headers=match.auth(0),
                        json={"action": {"type": "pass"}}),
        ):
            assert response.status_code == 503
            assert response.json()["code"] == "store_unavailable"
            assert response.headers["retry-after"] == "1"
        store.down = False
        assert stored(client, match.id)[0] == 0  # nothing half-written
        assert client.get("/readyz").status_code == 200


def test_metrics_count_requests_conflicts_and_actions(client: TestClient) -> None:
    match = create(client)
    client.post(f"{match.url}/actions", headers=match.auth(0), json={"action": {"type": "pass"}})
    client.get("/v1/matches/nosuchmatch")
    text = client.get("/metrics")
    assert text.headers["content-type"].startswith("text/plain")
    body = text.text
    assert 'skyline_http_requests_total{method="POST",route="/v1/matches",status="201"} 1' in body
    assert 'route="/v1/matches/{match_id}",status="404"} 1' in body
    assert 'skyline_actions_total{game="toy",rules_version="1"} 1' in body
    assert "skyline_cas_conflicts_total 0" in body
    assert 'skyline_http_request_duration_seconds_bucket{le="+Inf",route="/v1/matches"} 1' in body


def test_cors_allows_only_configured_origins() -> None:
    with TestClient(make_app(cors_origins=("https://play.example",))) as client:
        preflight = client.options(
            "/v1/games",
            headers={"Origin": "https://play.example", "Access-Control-Request-Method": "POST",
                     "Access-Control-Request-Headers": "authorization,idempotency-key"},
        )
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == "https://play.example"
        simple = client.get("/v1/games", headers={"Origin": "https://play.example"})
        assert "etag" in simple.headers["access-control-expose-headers"].lower()
        other = client.get("/v1/games", headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in other.headers


def wait_past(client: TestClient, match_id: str, version: int) -> None:
    """Block until the match has a version after ``version`` (the in-process bot worker
    moved), watching the app's own store on the app's loop."""
    store: MatchStore = client.app.state.store  # type: ignore[attr-defined]

    async def next_version() -> None:
        async with asyncio.timeout(120):  # a safety net against a hang, not a measurement
            async for _ in store.watch(match_id, version):
                return

    assert client.portal is not None
    client.portal.call(next_version)


def play_human_seats(client: TestClient, match: Any, seat: int = 0) -> dict[str, Any]:
    """Play ``seat`` (the last legal move each time) until the match is over, waiting for
    the bot worker whenever a bot seat is to move; the final state."""
    while True:
        state: dict[str, Any] = client.get(match.url, headers=match.auth(seat)).json()
        if state["status"] == "finished":
            return state
        if seat not in state["activeSeats"]:
            wait_past(client, match.id, state["version"])
            continue
        moves = client.get(f"{match.url}/legal-moves", headers=match.auth(seat)).json()
        response = client.post(f"{match.url}/actions", headers=match.auth(seat),
                               json={"action": moves["moves"][-1]})
        assert response.status_code == 200, response.text


def test_bot_seats_move_by_themselves(client: TestClient) -> None:
    match = create(client, players=3, bots={"1": "random", "2": "random"})
    assert set(match.tokens) == {0}
    final = play_human_seats(client, match)
    assert final["bots"] == {"1": "random", "2": "random"}  # public: also for spectators
    log = client.get(f"{match.url}/log").json()["entries"]
    assert {e["seat"] for e in log} == {0, 1, 2}
    assert [e["version"] for e in log] == list(range(1, final["version"] + 1))


def test_exported_schemas_are_up_to_date() -> None:
    """`skyline export-schema --check` (run as the CLI: only the real games registered)."""
    result = subprocess.run(
        [str(Path(sys.executable).parent / "skyline"), "export-schema", "--check"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr


def test_export_check_fails_on_drift(tmp_path: Path) -> None:
    skyline = str(Path(sys.executable).parent / "skyline")
    written = subprocess.run([skyline, "export-schema", "--root", str(tmp_path)],
                             capture_output=True, text=True, timeout=300)
    assert written.returncode == 0, written.stderr
    fresh = subprocess.run([skyline, "export-schema", "--check", "--root", str(tmp_path)],
                           capture_output=True, text=True, timeout=300)
    assert fresh.returncode == 0, fresh.stderr
    exported = tmp_path / "openapi" / "openapi.json"
    exported.write_text(exported.read_text().replace('"3.1.0"', '"3.0.0"'))
    drift = subprocess.run([skyline, "export-schema", "--check", "--root", str(tmp_path)],
                           capture_output=True, text=True, timeout=300)
    assert drift.returncode == 1
    assert "openapi/openapi.json" in drift.stderr


def test_serve_reads_flags_and_environment(monkeypatch: Any) -> None:
    monkeypatch.setenv("SKYLINE_PORT", "9123")
    monkeypatch.setenv("SKYLINE_REDIS_URL", "redis://example:6379/2")
    monkeypatch.setenv("SKYLINE_CORS_ORIGINS", "https://a.example,https://b.example")
    monkeypatch.setenv("SKYLINE_TTL_FINISHED", "0")
    monkeypatch.setenv("SKYLINE_MAX_BODY_BYTES", "2048")
    args = build_parser().parse_args(["serve", "--port", "9000"])
    assert args.port == 9000  # a flag wins over the environment
    assert args.redis_url == "redis://example:6379/2"
    assert args.cors_origins == ("https://a.example", "https://b.example")
    assert args.ttl_finished is None
    assert args.max_body_bytes == 2048
    from_env = build_parser().parse_args(["serve"])
    assert from_env.port == 9123
    assert from_env.redis_cluster is None


@pytest.mark.parametrize("game", REAL_GAMES)
@pytest.mark.parametrize("kind", ["greedy", "search"])
def test_built_in_bot_kinds_play_the_real_games(game: str, kind: str) -> None:
    app = make_app(worker_options={"budget": Budget(iterations=4)})
    with TestClient(app) as client:
        match = create(client, game=game, players=2, bots={"1": kind})
        for _ in range(40):  # the human plays (first listed moves) until the bot has moved
            if any(e["seat"] == 1 for e in client.get(f"{match.url}/log").json()["entries"]):
                break
            state = client.get(match.url, headers=match.auth(0)).json()
            if state["status"] == "finished":
                break
            if 0 not in state["activeSeats"]:
                wait_past(client, match.id, state["version"])
                continue
            moves = client.get(f"{match.url}/legal-moves", headers=match.auth(0)).json()
            response = client.post(f"{match.url}/actions", headers=match.auth(0),
                                   json={"action": moves["moves"][0]})
            assert response.status_code == 200, response.text
        assert any(e["seat"] == 1 for e in client.get(f"{match.url}/log").json()["entries"])


def test_bot_kind_needs_a_bot_for_the_game(client: TestClient) -> None:
    response = client.post("/v1/matches", json={"game": TOY, "players": 2,
                                                "bots": {"1": "search"}})
    assert response.status_code == 422
    assert response.json()["code"] == "bad_bots"


def test_matches_expire_after_idle_and_finished_ttls() -> None:
    now = [1000.0]
    store = SqliteStore(":memory:", clock=lambda: now[0])
    with TestClient(make_app(store, ttl_idle=600, ttl_finished=60)) as client:
        match = create(client, options={"rounds": 1})
        assert store.ttl(match.id) == 600
        for seat in (0, 1):
            client.post(f"{match.url}/actions", headers=match.auth(seat),
                        json={"action": {"type": "pass"}})
        assert store.ttl(match.id) == 600  # each move renews the idle TTL
        for seat in (0, 1):
            hand = client.get(match.url, headers=match.auth(seat)).json()["view"]["hand"]
            client.post(f"{match.url}/actions", headers=match.auth(seat),
                        json={"action": {"type": "play", "card": hand[0]}})
        assert client.get(match.url).json()["status"] == "finished"
        assert store.ttl(match.id) == 60
        now[0] += 61
        response = client.get(match.url)
        assert response.status_code == 404
        assert response.json()["code"] == "match_not_found"


def test_a_lost_due_signal_is_sent_again_by_the_next_read() -> None:
    """The human's move is stored, then its due signal is lost (the replica died between
    the compare-and-set and the signal): the answer is still the human's success, and the
    next read of the match signals it again, so the worker plays the bot."""

    class LosesFirstSignal(FlakyStore):
        signals = 0

        async def signal_due(self, match_id: str, *, all_bots: bool = False) -> None:
            self.signals += 1
            if self.signals == 1:
                raise StoreUnavailable("lost the signal")
            await super().signal_due(match_id, all_bots=all_bots)

    store = LosesFirstSignal(":memory:")
    app = make_app(store)
    app.state.match_service.resignal_after = 0  # (else: only once the bot waited 2 s)
    with TestClient(app) as client:
        match = create(client, players=2, bots={"1": "random"})  # seat 0 starts: no signal
        response = client.post(f"{match.url}/actions", headers=match.auth(0),
                               json={"action": {"type": "pass"}})
        assert response.status_code == 200
        assert response.json()["state"]["activeSeats"] == [1]  # the bot owes a move
        assert store.signals == 1
        state = client.get(match.url, headers=match.auth(0)).json()  # signals again
        assert store.signals >= 2  # (and the bot's own moves may signal again)
        if state["version"] == 1:
            wait_past(client, match.id, 1)
        assert stored(client, match.id)[0] >= 2
