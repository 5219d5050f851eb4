"""The reference client's move words (service/web/static/describe.js) come from the
catalogue: run under Node with the served catalogue documents (no browser needed)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from service.catalogue import catalogue_of

STATIC = Path(__file__).resolve().parents[2] / "service" / "web" / "static"
NODE = shutil.which("node")

SCRIPT = """
import { readFileSync } from "node:fs";
import { describe, indexCatalogue, nyTileWords, gkTileWords, ruleWords, ruleText }
  from "%(module)s";
const [ny, gk] = JSON.parse(readFileSync(process.argv[2], "utf8")).map(indexCatalogue);
const out = {
  b4: nyTileWords("B4", ny),
  singer: nyTileWords("singer", ny),
  unknown: nyTileWords("B4", null),
  grab: describe("ny1901", {type: "land_grab"}, null, ny),
  build: describe("ny1901", {type: "build", tile: "park_row", rotation: 1, x: 3, y: 4}, null, ny),
  street: ruleWords("street:broadway", ny),
  streetText: ruleText("street:broadway", ny),
  plain: ruleWords("street:broadway", null),
  gkTile: gkTileWords(26, gk),
  exploit: describe("ginkgopolis", {type: "choose_card", card: 6, tile: null}, null, gk),
  urbanize: describe("ginkgopolis", {type: "choose_card", card: 61, tile: 26}, null, gk),
  draft: describe("ginkgopolis", {type: "draft_character", character: 72}, null, gk),
  district: ruleWords("district:blue-5", gk),
  card: ruleWords("card:red-20", gk),
};
console.log(JSON.stringify(out));
"""


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_move_words_come_from_the_catalogue(tmp_path: Path) -> None:
    ny, gk = (json.loads(catalogue_of(g).body) for g in ("ny1901", "ginkgopolis"))
    script = tmp_path / "run.mjs"
    script.write_text(SCRIPT % {"module": (STATIC / "describe.js").as_uri()})
    documents = tmp_path / "catalogues.json"
    documents.write_text(json.dumps([ny, gk]))
    assert NODE is not None
    done = subprocess.run([NODE, str(script), str(documents)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    b4 = next(t for t in ny["tiles"] if t["id"] == "B4")
    assert out["b4"] == f"B4 ({b4['level']}, {b4['points']} points)"
    singer = next(t for t in ny["legendary"] if t["id"] == "singer")
    assert out["singer"] == (f"legendary Singer ({singer['heightFeet']} ft, "
                             f"{singer['points']} points)")
    assert out["unknown"] == "B4"
    grab = next(c for c in ny["actionCards"] if c["id"] == "land_grab")
    assert out["grab"] == {"group": "Action cards", "text": "Play Land Grab",
                           "detail": grab["text"]}
    assert out["build"]["text"].startswith("Build legendary Park Row (391 ft, 6 points) at")
    assert out["street"] == "Broadway majority"
    assert out["streetText"].startswith("At the end of the game, 5 points")
    assert out["plain"] == "Street: Broadway"
    assert out["gkTile"] == "Blue 7"
    assert out["exploit"]["text"] == "Exploit building Red 7 with its card"
    assert out["exploit"]["detail"] == gk["buildingCards"][6]["text"]
    assert out["urbanize"]["text"] == "Urbanize at token B with tile Blue 7"
    assert out["draft"]["text"] == "Keep the red character of set 1"
    assert out["draft"]["detail"].startswith("Take 1 resource, 1 tile, and 1 VP")
    assert out["district"] == "Districts: blue-5"
    assert out["card"] == "Red 20"
