"""docs/api.md section 10 (Operations) says what ``skyline serve`` does (issue 30 item 9):
each route once, each flag once in one paragraph, and the store a server runs on without
``--redis-url`` named as it is (the embedded SQLite store in ``--data-dir``)."""

from __future__ import annotations

import re
from pathlib import Path

from service.cli import build_parser
from service.store import DEFAULT_DATA_DIR

API = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def _section() -> str:
    text = API.read_text(encoding="utf-8")
    return text.split("## 10. Operations", 1)[1].split("\n## ", 1)[0]


def test_each_route_is_listed_once() -> None:
    routes = re.findall(r"^\| `(GET|POST) ([^`]+)` \|", _section(), flags=re.MULTILINE)
    assert routes, "no route table"
    assert len(routes) == len(set(routes)), routes
    assert {path for _, path in routes} >= {"/healthz", "/readyz", "/metrics", "/openapi.json"}


def test_the_serve_flags_paragraph_is_whole_and_true() -> None:
    paragraphs = _section().split("\n\n")
    serve = [p for p in paragraphs if p.startswith("`skyline serve` flags")]
    assert len(serve) == 1
    text = serve[0]
    flags = re.findall(r"`(--[a-z0-9-]+)", text)
    assert len(flags) == len(set(flags)), flags
    # A paragraph is not split by another: the flags' sentence ends in this one.
    assert text.rstrip().endswith(".") and not any(
        p.startswith("this long") for p in paragraphs)
    # Every flag named is one `skyline serve` has.
    parser = build_parser()
    serve_parser = parser._subparsers._group_actions[0].choices["serve"]  # type: ignore[union-attr]
    known = {s for a in serve_parser._actions for s in a.option_strings}
    assert set(flags) <= known, set(flags) - known
    # Without --redis-url the server runs on the embedded SQLite store, kept in --data-dir.
    assert "in-memory" not in text
    redis = text.split("`--redis-url`", 1)[1].split("`--data-dir`", 1)[0]
    assert "SQLite" in redis
    assert f"`{DEFAULT_DATA_DIR}`" in text or f"`./{DEFAULT_DATA_DIR}`" in text
