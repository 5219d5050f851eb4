"""The message catalogues: ``locales/<lang>/LC_MESSAGES/skyline.mo``, compiled from the
``.po`` files beside them (``make translations``; ``tests/i18n`` checks that they match).

English is the source language: its "catalogue" returns every message id as it is.
"""

from __future__ import annotations

import gettext
from functools import cache
from pathlib import Path
from typing import Final, Protocol

from babel.support import Translations

from .negotiation import DEFAULT_LANGUAGE, LANGUAGES, Lang

DOMAIN: Final = "skyline"
LOCALES: Final = Path(__file__).resolve().parent / "locales"
"""``<lang>/LC_MESSAGES/skyline.po`` and ``.mo``, and the template ``messages.pot``."""
TEMPLATE: Final = LOCALES / "messages.pot"


class Translator(Protocol):
    def gettext(self, message: str, /) -> str: ...

    def ngettext(self, singular: str, plural: str, n: int, /) -> str: ...


class MissingCatalogue(RuntimeError):
    """A language without its compiled catalogue (run ``make translations``)."""


@cache
def translator(lang: Lang) -> Translator:
    """The translations of ``lang`` (English: the message ids themselves)."""
    if lang == DEFAULT_LANGUAGE:
        return gettext.NullTranslations()
    if lang not in LANGUAGES:
        raise ValueError(f"not a language of the service: {lang!r}")
    path = LOCALES / lang / "LC_MESSAGES" / f"{DOMAIN}.mo"
    if not path.is_file():
        raise MissingCatalogue(f"{path} is missing: run `make translations`")
    with path.open("rb") as handle:
        return Translations(handle, domain=DOMAIN)
