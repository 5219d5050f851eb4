"""One composition root, settings declared once (issue 32, item 3).

- ``skyline worker`` and the worker loops ``skyline serve`` runs itself are built from the
  same settings: same match rules (``waiting_ttl``, chosen seeds, shortest deadline), same
  bot options, metrics wired in both.
- ``MatchService`` is constructed in one place of ``service`` (``service/composition.py``).
- Every flag is a ``Settings`` field: its default is the field's one default, the
  environment (``SKYLINE_<FIELD>``) overrides it, a flag overrides the environment.
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from service.cli import build_parser, main
from service.matches import MatchService
from service.settings import Settings, default_of
from service.workers.bots import BotWorker

SERVICE = Path(__file__).resolve().parent.parent / "service"
MATCH_RULES = {
    "SKYLINE_WAITING_TTL": "4321",
    "SKYLINE_ALLOW_CHOSEN_SEEDS": "1",
    "SKYLINE_MIN_SECONDS_PER_MOVE": "77",
    "SKYLINE_WORKER_CONCURRENCY": "3",
    "SKYLINE_GUEST_TTL": "2d",
    "SKYLINE_TTL_FINISHED": "5000",
}


class Seen:
    """What one process's bot worker was built with."""

    def __init__(self, worker: BotWorker) -> None:
        service: MatchService = worker.service
        creation: Any = service.create_match.__self__  # type: ignore[attr-defined]
        self.rules = (service.storage.waiting_ttl, creation.allow_chosen_seeds,
                      creation.min_move_seconds, service.storage.ttl_finished)
        self.concurrency = worker.concurrency
        self.metrics_wired = service.metrics.live is not None


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[Seen]:
    """Records every ``BotWorker`` built, and makes its loop end at once."""
    seen: list[Seen] = []
    original = BotWorker.__init__

    def init(self: BotWorker, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        seen.append(Seen(self))

    async def run(self: BotWorker) -> None:
        return None

    monkeypatch.setattr(BotWorker, "__init__", init)
    monkeypatch.setattr(BotWorker, "run", run)
    return seen


def _serve_once(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> None:
    """``skyline serve``, with uvicorn replaced by one start and stop of the app."""
    import service.api.serving as serving

    class OneStart:
        def __init__(self, config: Any, **_: Any) -> None:
            self.app = config.app

        def run(self) -> None:
            with TestClient(self.app):
                pass

    monkeypatch.setattr(serving, "StreamAwareServer", OneStart)
    monkeypatch.setattr(serving, "tune_collector", lambda: None)
    assert main(["serve", *argv]) == 0


def test_worker_and_serve_loops_get_the_same_settings(
    built: list[Seen], monkeypatch: pytest.MonkeyPatch, redis_url: str, redis_prefix: str,
) -> None:
    for name, value in MATCH_RULES.items():
        monkeypatch.setenv(name, value)
    assert main(["worker", "--redis-url", redis_url, "--redis-prefix", redis_prefix]) == 0
    _serve_once(monkeypatch, ["--data-dir", ":memory:"])
    worker, serve = built
    assert worker.rules == serve.rules == (4321, True, 77, 5000)
    assert worker.concurrency == serve.concurrency == 3
    assert worker.metrics_wired and serve.metrics_wired


def test_worker_flags_set_the_match_rules_too(
    built: list[Seen], redis_url: str, redis_prefix: str,
) -> None:
    assert main(["worker", "--redis-url", redis_url, "--redis-prefix", redis_prefix,
                 "--waiting-ttl", "99", "--allow-chosen-seeds",
                 "--min-seconds-per-move", "15"]) == 0
    assert built[0].rules[:3] == (99, True, 15)


def test_match_service_is_constructed_in_one_place() -> None:
    found = sorted(
        str(path.relative_to(SERVICE)) for path in SERVICE.rglob("*.py")
        if path.parent != SERVICE / "matches" and "MatchService(" in path.read_text()
    )
    assert found == ["composition.py"]


def test_listeners_subscribe_explicitly() -> None:
    """No module outside ``service/matches`` reaches into its listener lists."""
    reaching = sorted(
        str(path.relative_to(SERVICE)) for path in SERVICE.rglob("*.py")
        if path.parent != SERVICE / "matches"
        and re.search(r"\.(listeners|warners)\.append\(", path.read_text())
    )
    assert reaching == []


# -- settings: one default each, the environment, the flags -------------------------------
def _options(command: str) -> dict[str, argparse.Action]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {action.dest: action for action in sub.choices[command]._actions
            if action.dest in Settings.model_fields}


@pytest.mark.parametrize("command", ["serve", "worker", "show", "verify"])
def test_every_flag_is_a_setting_and_defaults_to_its_one_default(
    command: str, monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in [n for n in os.environ if n.startswith("SKYLINE_")]:
        monkeypatch.delenv(name)
    options = _options(command)
    assert options, command
    for dest, action in options.items():
        assert action.default == default_of(dest), dest
        mentioned = re.findall(r"SKYLINE_([A-Z_]+)", action.help or "")
        for env in mentioned:  # a variable a flag's help names is a setting
            assert env.lower() in Settings.model_fields, (dest, env)


def test_every_setting_has_a_flag() -> None:
    flags = set(_options("serve")) | set(_options("worker"))
    programmatic = {"limits", "webhooks", "worker_options"}  # whole objects, for tests
    assert set(Settings.model_fields) - programmatic == flags


def test_the_environment_then_a_flag_override_the_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert Settings().waiting_ttl == default_of("waiting_ttl")
    monkeypatch.setenv("SKYLINE_WAITING_TTL", "600")
    monkeypatch.setenv("SKYLINE_TRUSTED_PROXIES", "10.0.0.0/8, 127.0.0.1")
    monkeypatch.setenv("SKYLINE_RATE_CREATE", "10/30")
    monkeypatch.setenv("SKYLINE_HEADER_TIMEOUT", "0")
    from_env = Settings()
    assert from_env.waiting_ttl == 600
    assert from_env.trusted_proxies == ("10.0.0.0/8", "127.0.0.1")
    assert from_env.rate_create.spec() == "10/30"
    assert from_env.header_timeout is None  # 0: no limit
    args = build_parser().parse_args(["serve", "--waiting-ttl", "700"])
    assert (args.waiting_ttl, args.rate_create.spec()) == (700, "10/30")
    from service.cli import settings_of

    settings = settings_of(args)
    assert (settings.waiting_ttl, settings.trusted_proxies) == (700, from_env.trusted_proxies)
    assert settings.limit_settings().policies["create"].spec() == "10/30"


def test_a_malformed_variable_is_named(monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SKYLINE_GUEST_TTL", "soon")
    with pytest.raises(SystemExit) as exit_:
        build_parser()
    assert exit_.value.code == 2
    assert "SKYLINE_GUEST_TTL" in capsys.readouterr().err


async def test_the_loops_stop_and_close_after_one_of_them_died(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import asyncio

    from service.composition import build_services
    from service.store import SqliteStore
    from service.workers.clocks import ClockWorker

    async def die(self: ClockWorker) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(ClockWorker, "run", die)
    store = SqliteStore(":memory:")
    services = build_services(Settings(heartbeat_seconds=0.05), store)
    loops = services.worker_loops("serve")
    assert loops.bots.consumer == "embedded"  # one process owns the embedded file
    loops.start()
    await asyncio.sleep(0.2)
    assert loops.tasks["clocks"].done() and loops.tasks["heartbeat"].done()  # no more beats
    await loops.close(cancel_bots=True)
    assert all(task.done() for task in loops.tasks.values())
    await services.aclose()
    await store.close()
