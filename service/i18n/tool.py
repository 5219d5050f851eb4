"""``make translations``: extract the messages, merge them into the catalogues, compile.

    python -m service.i18n.tool            # extract + update + compile (make translations)
    python -m service.i18n.tool extract    # only messages.pot

Runs ``pybabel`` (Babel's command line) from the repository root with the keywords of
``messages.py`` and the source map ``babel.cfg``; ``tests/i18n`` extracts the same way into a
temporary file to check that ``messages.pot`` is up to date. After an update, translate
every new or fuzzy entry of ``locales/{cs,de}/LC_MESSAGES/skyline.po`` (the tests fail until
none is left), then run it again to compile.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from babel.messages.frontend import CommandLineInterface

from .negotiation import DEFAULT_LANGUAGE, LANGUAGES
from .translations import DOMAIN, LOCALES, TEMPLATE

ROOT: Final = Path(__file__).resolve().parents[2]
"""The repository root (``babel.cfg``; ``service/`` is what gets extracted)."""
MAPPING: Final = ROOT / "babel.cfg"
KEYWORDS: Final = ("T", "TN:1,2", "N_", "NN_:1,2", "of:2")
"""The markers of ``messages.py`` (``of:2``: the literal detail of ``ApiError.of``)."""
COMMENT_TAGS: Final = ("name:", "TRANSLATORS:")
"""Source comments kept for the translators: ``name:`` marks a name (its translation may
equal the English), ``TRANSLATORS:`` a note."""
NAME_TAG: Final = "name:"
TRANSLATED: Final = tuple(lang for lang in LANGUAGES if lang != DEFAULT_LANGUAGE)


def _pybabel(*args: str) -> None:
    CommandLineInterface().run(["pybabel", "--quiet", *args])  # type: ignore[no-untyped-call]


def extract(output: Path = TEMPLATE) -> None:
    """Write the template of every message in ``service/`` to ``output``."""
    keywords = [arg for keyword in KEYWORDS for arg in ("-k", keyword)]
    tags = [arg for tag in COMMENT_TAGS for arg in ("-c", tag)]
    with contextlib.chdir(ROOT):  # locations relative to the repository: service/errors.py
        _pybabel(
            "extract", "-F", MAPPING.name, "--no-default-keywords", *keywords, *tags,
            "--project=Skyline", "--version=1", "--copyright-holder=Skyline",
            "--msgid-bugs-address=-", "--no-wrap", "-o", str(output.resolve()), "service",
        )


def update() -> None:
    """Merge the template into each language's catalogue (new entries empty, obsolete ones
    dropped)."""
    for lang in TRANSLATED:
        _pybabel("update", "-D", DOMAIN, "-i", str(TEMPLATE), "-d", str(LOCALES), "-l", lang,
                 "--init-missing", "--ignore-obsolete", "--no-wrap")


def compile_catalogues() -> None:
    """Compile every ``.po`` into its ``.mo`` (fuzzy entries left out)."""
    for lang in TRANSLATED:
        _pybabel("compile", "-D", DOMAIN, "-d", str(LOCALES), "-l", lang)


def main(argv: Sequence[str]) -> int:
    steps = list(argv) or ["extract", "update", "compile"]
    actions = {"extract": extract, "update": update, "compile": compile_catalogues}
    unknown = [step for step in steps if step not in actions]
    if unknown:
        print(f"unknown step(s): {', '.join(unknown)}; use {', '.join(actions)}",
              file=sys.stderr)
        return 2
    for step in steps:
        actions[step]()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
