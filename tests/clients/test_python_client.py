"""The checked-in OpenAPI document as a Python client sees it (issue #14, generated clients).

openapi-python-client (pinned in pyproject's dev extras) generates the package
``skyline_client`` from ``openapi/openapi.json`` afresh on every run, into
``tests/clients/.cache/python`` (ignored by git; kept so that mypy's cache there stays warm
and a developer can read what was generated); ``play_client.py``
(typed only by it, the seat token set by ``AuthenticatedClient``) must pass ``mypy --strict``
and play a New York 1901 match to its end on a live server behind a proxy that adds an event
kind and a problem code the client was not generated with.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

from tests.clients.conftest import CACHE, HERE, OPENAPI, ROOT, file_lock, run
from tests.clients.proxy import RewritingProxy
from tests.clients.test_typescript_client import check_summary

BIN = Path(sys.executable).parent
PLAY = HERE / "play_client.py"
# Warnings of the generator that are its own limits, not the document's: the board picture
# (image/svg+xml) and the event stream (text/event-stream) are not JSON, so it leaves their
# bodies out of the generated functions (their JSON problems are still parsed).
TOLERATED_WARNINGS = ("Unsupported content_type image/svg+xml",
                      "Unsupported content_type text/event-stream")


def generate(out: Path) -> Path:
    """``skyline_client`` generated into ``out`` (replacing what was there); returns the
    folder to put on the path."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    config = out / "config.json"
    config.write_text(json.dumps({
        "project_name_override": "skyline-client",
        "package_name_override": "skyline_client",
        "post_hooks": [],  # no ruff formatting of scratch code
    }))
    done = run([BIN / "openapi-python-client", "generate", "--path", OPENAPI,
                "--output-path", out / "skyline_client", "--meta", "none", "--config", config],
               what="openapi-python-client generate")
    # Each warning runs from a line "WARNING ..." to the next one (or the end).
    warnings = [part for part in re.split(r"^(?=WARNING )", done.stdout + "\n" + done.stderr,
                                          flags=re.MULTILINE) if part.startswith("WARNING ")]
    unexpected = [w for w in warnings if not any(t in w for t in TOLERATED_WARNINGS)]
    assert not unexpected, "openapi-python-client warnings:\n\n" + "\n\n".join(unexpected)
    return out


def test_python_client_plays_a_match_against_a_newer_server(
    live_serve: str, tmp_path: Path
) -> None:
    CACHE.mkdir(exist_ok=True)
    with file_lock(CACHE / "python.lock"):
        path = generate(CACHE / "python")
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("SKYLINE_")},
               "PYTHONPATH": str(path), "MYPYPATH": str(path)}
        run([BIN / "mypy", "--strict", "--cache-dir", CACHE / "mypy", PLAY], cwd=ROOT, env=env,
            what="mypy --strict play_client.py (with the generated client)")

        with RewritingProxy(live_serve) as proxy:
            done = run([sys.executable, PLAY, proxy.url], cwd=tmp_path, env=env, timeout=180,
                       what="play_client.py (through the rewriting proxy)")
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    check_summary(summary, live_serve, proxy)
    # Created with the guest's credential and a time control (issue 30 items 3 and 5).
    assert summary["timeControl"] == {"correspondence": {"secondsPerMove": 3600}}, summary
