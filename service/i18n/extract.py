"""A ``pybabel extract`` method for the games' refusal codes (``babel.cfg``: ``[refusals:
service/games/*/codes.py]``).

The engines import nothing of ours, so their ``codes.py`` tables cannot mark their English
descriptions for translation; this reads them as they are: every ``Refusal(rules,
"description")`` value of the module's dict, with the code as an extracted comment. A
refused move's problem ``detail`` is that description in Czech and German.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator, Mapping
from typing import IO, Any


def _literal(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def refusals(
    fileobj: IO[bytes], keywords: Collection[str], comment_tags: Collection[str],
    options: Mapping[str, Any],
) -> Iterator[tuple[int, str | None, str, list[str]]]:
    """(line, None, description, [comment]) of every refusal in the file."""
    source = fileobj.read().decode(str(options.get("encoding", "utf-8")))
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Dict):
            continue
        for key, value in zip(node.keys, node.values, strict=True):
            if (
                key is None
                or not isinstance(value, ast.Call)
                or not isinstance(value.func, ast.Name)
                or value.func.id != "Refusal"
                or len(value.args) < 2
            ):
                continue
            code, description = _literal(key), _literal(value.args[1])
            if code is not None and description is not None:
                yield value.args[1].lineno, None, description, [f"refusal code: {code}"]
