"""service/pictures depends only on service.games (and the standard library): it draws views."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PICTURES = Path(__file__).resolve().parents[2] / "service" / "pictures"


def test_pictures_import_only_the_games_and_the_standard_library() -> None:
    files = sorted(PICTURES.rglob("*.py"))
    assert files
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                ours = name == "service.games" or name.startswith("service.games.")
                assert ours or top in sys.stdlib_module_names, f"{path.name} imports {name}"
