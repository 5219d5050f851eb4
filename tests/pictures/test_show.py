"""``skyline show MATCH [--svg FILE]``: text by default, the board SVG with --svg."""

from __future__ import annotations

import asyncio
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from service.cli import main, show
from service.matches import MatchService
from service.matches.board import board_svg
from service.matches.models import CreateMatchRequest
from service.store.memory import MemoryStore
from service.store.redis import RedisStore


def created(store: object, game: str) -> tuple[str, list[str]]:
    service = MatchService(store, ttl_finished=None, ttl_idle=None)  # type: ignore[arg-type]
    answer = asyncio.run(service.create_match(
        CreateMatchRequest(game=game, players=2, seed=4)))
    return answer.match_id, [s.token for s in answer.seats]


@pytest.mark.parametrize(("game", "marker"), [("ny1901", "open market:"), ("ginkgopolis", "[ A ]")])
def test_text_by_default(game: str, marker: str) -> None:
    store = MemoryStore()
    match_id, _ = created(store, game)
    text = asyncio.run(show(store, match_id))
    assert text.startswith(f"{game} match {match_id} · version 0 · active")
    assert "view of spectator" in text
    assert marker in text


def test_svg_is_the_same_document_as_the_api() -> None:
    store = MemoryStore()
    match_id, tokens = created(store, "ginkgopolis")
    service = MatchService(store, ttl_finished=None, ttl_idle=None)
    expected = asyncio.run(board_svg(service, match_id, tokens[0], 0)).svg
    assert asyncio.run(show(store, match_id, token=tokens[0], svg=True, highlight=0)) == expected


def test_cli_writes_the_svg_from_redis(
    redis_url: str, redis_prefix: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async def create() -> tuple[str, list[str]]:
        store = RedisStore.from_url(redis_url, prefix=redis_prefix)
        service = MatchService(store, ttl_finished=None, ttl_idle=None)
        try:
            answer = await service.create_match(
                CreateMatchRequest(game="ny1901", players=2, seed=4))
        finally:
            await store.close()
        return answer.match_id, [s.token for s in answer.seats]

    match_id, tokens = asyncio.run(create())
    target = tmp_path / "board.svg"
    common = ["--redis-url", redis_url, "--redis-prefix", redis_prefix]
    assert main(["show", match_id, "--svg", str(target), "--token", tokens[1], *common]) == 0
    root = ET.fromstring(target.read_text(encoding="utf-8"))
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert "seat 1" in target.read_text(encoding="utf-8")
    assert main(["show", match_id, *common]) == 0
    assert f"ny1901 match {match_id}" in capsys.readouterr().out
    assert main(["show", "missing", *common]) == 1
    assert "No such match" in capsys.readouterr().err


def test_cli_without_a_store_explains_itself(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "abc", "--redis-url", ""]) == 1
    assert "--redis-url" in capsys.readouterr().err
