"""The checked-in OpenAPI document passes ``redocly lint`` with the recommended rules: 0 errors.

Warnings are shown in the test's output (``-rA``/``-s``) but do not fail it.
"""

from __future__ import annotations

import json
import subprocess
from collections import Counter

from tests.clients.conftest import OPENAPI, ROOT, NodeTools, tool_env


def test_redocly_recommended_rules_report_no_error(node_tools: NodeTools) -> None:
    done = subprocess.run(
        [node_tools["redocly"], "lint", "--extends", "recommended", "--format", "json",
         str(OPENAPI.relative_to(ROOT))],
        cwd=ROOT, capture_output=True, text=True, timeout=180, env=tool_env(),
    )
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError as error:
        raise AssertionError(
            f"redocly printed no JSON report ({error}; exit {done.returncode}):\n"
            f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        ) from None
    problems = report["problems"]
    by_rule = Counter((p["severity"], p["ruleId"]) for p in problems)
    print(f"redocly {report['version']}: {dict(by_rule)}")
    errors = [f"{p['ruleId']}: {p['message']} at {p['location'][0]['pointer']}"
              for p in problems if p["severity"] == "error"]
    assert not errors, f"redocly lint: {len(errors)} errors:\n" + "\n".join(errors)
    assert report["totals"]["errors"] == 0 and done.returncode == 0, done.stderr[-3000:]
