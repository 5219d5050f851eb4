"""The checked-in OpenAPI document as a TypeScript client sees it (issue #14, generated clients).

openapi-typescript 7 generates ``schema.ts`` from ``openapi/openapi.json``; ``play.ts`` (typed
only by it, through openapi-fetch, with the seat token set by middleware) must compile under
``tsc --strict`` with no cast and no ``any`` (``no_casts.mjs``), and, compiled to JavaScript,
play a New York 1901 match to its end on a live server behind a proxy that adds an event kind
and a problem code the client was not generated with.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import httpx

from tests.clients.conftest import HERE, OPENAPI, NodeTools, run, ts_build
from tests.clients.proxy import FUTURE_CODE, FUTURE_KIND, RewritingProxy

PLAY = HERE / "play.ts"
NO_CASTS = HERE / "no_casts.mjs"


def test_the_cast_check_finds_casts_non_null_assertions_and_any(
    node_tools: NodeTools, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.ts"
    bad.write_text(
        "// as any, x!, <T>y in a comment do not count\n"
        'const s = "as any";\n'
        "const a: any = 1;\n"
        "const b = s as string;\n"
        "const c = <string>s;\n"
        "const d = [1][0]!;\n"
        "const e = [1, 2] as const;\n"
    )
    done = subprocess.run(["node", str(NO_CASTS), str(bad)], capture_output=True, text=True,
                          timeout=60, cwd=HERE)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert [line.split(":")[1] for line in lines] == ["3", "4", "5", "6"], lines
    assert "the `any` type" in lines[0] and "`as`" in lines[1]
    assert "<T>x" in lines[2] and "non-null" in lines[3]


def test_typescript_client_plays_a_match_against_a_newer_server(
    node_tools: NodeTools, live_serve: str, tmp_path: Path
) -> None:
    run(["node", NO_CASTS, PLAY], what=f"no_casts.mjs (casts or `any` in {PLAY.name})")
    build = ts_build(tmp_path / "ts", [PLAY], ["schema.ts"])
    run([node_tools["openapi-typescript"], OPENAPI, "-o", build / "schema.ts"],
        what="openapi-typescript")
    run([node_tools["tsc"], "-p", build / "tsconfig.json"], cwd=build,
        what="tsc --strict over play.ts and the generated schema.ts")

    with RewritingProxy(live_serve) as proxy:
        done = run(["node", build / "out" / "play.js", proxy.url], cwd=build, timeout=180,
                   what="play.js (through the rewriting proxy)")
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    check_summary(summary, live_serve, proxy)


def check_summary(summary: dict[str, object], server: str, proxy: RewritingProxy) -> None:
    """What a client program's summary must say after a match through ``proxy``: it played
    to the end, saw every injected event and the injected problem, and the server agrees."""
    assert summary["status"] == "finished", summary
    assert summary["gameOverSeen"] is True, summary
    assert FUTURE_KIND in summary["unknownKinds"], summary  # and any newer real kind
    kinds = summary["eventKinds"]
    assert isinstance(kinds, dict)
    assert kinds["act"][FUTURE_KIND] == proxy.injected["act_events"] == summary["moves"], summary
    assert kinds["log"][FUTURE_KIND] == proxy.injected["log_events"] == summary["logEntries"]
    assert summary["problemCodes"] == {FUTURE_CODE: 1}, summary
    assert proxy.injected["problems"] == 1

    # The server itself (not through the proxy): finished, at the version the program saw,
    # one log entry per version for each of the 2 seats, no injected kind stored anywhere.
    match = httpx.get(f"{server}/v1/matches/{summary['matchId']}", timeout=10).json()
    assert match["status"] == "finished" and match["version"] == summary["version"]
    assert summary["moves"] == match["version"]  # no bots: every version is one of its moves
    assert summary["logEntries"] == 2 * match["version"]
    assert match["result"]["winners"] == summary["winners"]
    log = httpx.get(f"{server}/v1/matches/{summary['matchId']}/log", timeout=10).json()
    assert all(e["kind"] != FUTURE_KIND for entry in log["entries"] for e in entry["events"])
