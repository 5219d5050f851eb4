"""``python -m mutation [--full] [--only TEXT]``: plant each mutant of ``plants.py`` in a
scratch copy of the repository and run the tests that must catch it; print a line per
mutant as it goes, then the survivors. Exit 1 when a mutant survived or is stale.

``--full`` runs the whole suite (``pytest -n auto``) per mutant instead of its own tests:
what ``make test`` would say (slow: minutes per mutant)."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .plants import MUTANTS, Mutant

ROOT = Path(__file__).resolve().parent.parent


def scratch_copy() -> Path:
    """The project's files as they are in the work tree (tracked, and new ones git does not
    ignore) in a new temporary folder."""
    listing = ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    files = subprocess.run(listing, cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    folder = Path(tempfile.mkdtemp(prefix="skyline-mutants-"))
    for name in filter(None, files):
        source = ROOT / name
        if source.is_file():
            target = folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return folder


def run(mutant: Mutant, copy: Path, full: bool) -> str:
    """'killed', 'survived', 'stale' (the snippet or a test file is gone) or 'error'."""
    path = copy / mutant.path
    text = path.read_text(encoding="utf-8")
    if text.count(mutant.original) != 1:
        return "stale"
    if not all((copy / test).exists() for test in mutant.tests):
        return "stale"
    path.write_text(text.replace(mutant.original, mutant.mutated), encoding="utf-8")
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SKYLINE_")}
        env["PYTHONPATH"] = str(copy)
        tests = ["-n", "auto"] if full else ["-x", "-p", "no:xdist", *mutant.tests]
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
            cwd=copy, env=env, capture_output=True, timeout=1800,
        )
        # 1: tests failed; 2: collection broke (make test fails too). 3-5: no verdict.
        return {0: "survived", 1: "killed", 2: "killed"}.get(result.returncode, "error")
    finally:
        path.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="the whole suite per mutant")
    parser.add_argument("--only", default="", help="only mutants whose name contains this")
    args = parser.parse_args(argv)
    chosen = [m for m in MUTANTS if args.only in m.name]
    copy = scratch_copy()
    outcomes: dict[str, str] = {}
    try:
        print(f"{len(chosen)} mutants, scratch copy {copy}", flush=True)
        for n, mutant in enumerate(chosen, 1):
            start = time.monotonic()
            outcome = run(mutant, copy, args.full)
            outcomes[mutant.name] = outcome
            print(f"[{n}/{len(chosen)}] {outcome:8} {time.monotonic() - start:5.0f} s  "
                  f"{mutant.name}", flush=True)
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    bad = {name: outcome for name, outcome in outcomes.items() if outcome != "killed"}
    killed = len(outcomes) - len(bad)
    print(f"\nkilled {killed} of {len(outcomes)}")
    for name, outcome in bad.items():
        print(f"  {outcome}: {name}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
