"""The README's layout tells the truth: it lists every package under ``service/``, one a
line, and nothing that is not there (issue 32, item 4)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _layout_section() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("## Layout\n")
    end = readme.index("\n## ", start + 1)
    return readme[start:end]


def test_the_readme_layout_lists_every_package_under_service() -> None:
    packages = {f"service/{p.name}/" for p in (ROOT / "service").iterdir()
                if p.is_dir() and (p / "__init__.py").exists()}
    listed = set(re.findall(r"`(service/[a-z0-9_]+/)`", _layout_section()))
    assert packages - listed == set(), "packages missing from the README's layout"
    assert listed - packages == set(), "the README's layout lists packages that do not exist"


def test_each_package_has_a_line_of_its_own() -> None:
    lines = [line for line in _layout_section().splitlines() if line.startswith("- ")]
    for line in lines:
        assert len(re.findall(r"`service/[a-z0-9_]+/`", line)) <= 1, line


def test_the_readme_still_opens_with_its_two_commands() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    head = readme[: readme.index("## ")]
    assert re.search(r"^make run\b", head, re.M) and re.search(r"^make test\b", head, re.M)
