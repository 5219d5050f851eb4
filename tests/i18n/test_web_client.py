"""The reference client asks for its language on every request (service/web/static/api.js),
run under Node with a stand-in ``fetch`` (no browser needed)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

STATIC = Path(__file__).resolve().parents[2] / "service" / "web" / "static"
NODE = shutil.which("node")

SCRIPT = """
import { Api, LANGUAGES } from "%(module)s";
const seen = [];
globalThis.fetch = async (url, init) => {
  seen.push({ url, headers: init.headers });
  return { ok: true, status: 200, json: async () => ({}) };
};
const api = new Api("", "cs");
await api.catalogue("ny1901", 3);
await api.legalMoves("m1", "token");
api.lang = "de";
await api.log("m1", null, 0);
console.log(JSON.stringify({ seen, languages: LANGUAGES, fallback: new Api("", "fr").lang }));
"""


@pytest.mark.skipif(NODE is None, reason="needs node")
def test_the_client_sends_its_language(tmp_path: Path) -> None:
    script = tmp_path / "run.mjs"
    script.write_text(SCRIPT % {"module": (STATIC / "api.js").as_uri()})
    assert NODE is not None
    done = subprocess.run([NODE, str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    catalogue, moves, log = out["seen"]
    assert catalogue["url"] == "/v1/games/ny1901?rulesVersion=3&lang=cs"
    assert [r["headers"]["Accept-Language"] for r in out["seen"]] == ["cs", "cs", "de"]
    assert moves["headers"]["Authorization"] == "Bearer token"
    assert log["url"] == "/v1/matches/m1/log?after=0"
    assert out["languages"] == {"en": "English", "cs": "Čeština", "de": "Deutsch"}
    assert out["fallback"] == "en"


def test_the_client_shows_the_servers_sentences() -> None:
    app = (STATIC / "app.js").read_text("utf-8")
    assert "legal.texts" in app and "e.text" in app  # moves' texts, events' text
    assert "localStorage.setItem(LANG_KEY" in app  # the choice is remembered
    assert 'id="lang"' in (STATIC / "index.html").read_text("utf-8")
