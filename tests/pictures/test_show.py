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
from service.store.redis import RedisStore
from service.store.sqlite import DEFAULT_FILENAME, SqliteStore


def created(store: object, game: str) -> tuple[str, list[str]]:
    service = MatchService(store, ttl_finished=None, ttl_idle=None)  # type: ignore[arg-type]
    answer = asyncio.run(service.create_match(
        CreateMatchRequest(game=game, players=2, seed=4)))
    return answer.match_id, [s.token for s in answer.seats]


@pytest.mark.parametrize(("game", "marker"), [("ny1901", "open market:"), ("ginkgopolis", "[ A ]")])
def test_text_by_default(game: str, marker: str) -> None:
    store = SqliteStore(":memory:")
    match_id, _ = created(store, game)
    text = asyncio.run(show(store, match_id))
    assert text.startswith(f"{game} match {match_id} · version 0 · active")
    assert "view of spectator" in text
    assert marker in text


def test_svg_is_the_same_document_as_the_api() -> None:
    store = SqliteStore(":memory:")
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


def test_cli_reads_the_embedded_store_a_server_left(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async def create() -> str:
        store = SqliteStore(tmp_path / DEFAULT_FILENAME)
        service = MatchService(store, ttl_finished=None, ttl_idle=None)
        try:
            answer = await service.create_match(
                CreateMatchRequest(game="ny1901", players=2, seed=4))
        finally:
            await store.close()
        return answer.match_id

    match_id = asyncio.run(create())
    assert main(["show", match_id, "--data-dir", str(tmp_path), "--redis-url", ""]) == 0
    assert f"ny1901 match {match_id}" in capsys.readouterr().out


def test_cli_without_the_match_explains_where_it_looked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["show", "abc", "--redis-url", "", "--data-dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "No such match" in err and str(tmp_path) in err and "--redis-url" in err


def test_cli_refuses_a_data_folder_a_server_holds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    held = SqliteStore(tmp_path / DEFAULT_FILENAME)  # this process holds it, as a server would
    try:
        assert main(["show", "abc", "--redis-url", "", "--data-dir", str(tmp_path)]) == 1
        err = capsys.readouterr().err
        assert "in use by another Skyline process" in err and "board.svg" in err
    finally:
        asyncio.run(held.close())
