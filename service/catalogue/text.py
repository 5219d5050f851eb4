"""How the catalogue fills its texts, in the language asked for (``service.i18n``).

Every text is a whole sentence kept as a message (English, marked with ``N_``/``NN_``) in one
module per game (ny1901_text.py, ginkgopolis_text.py), with named placeholders ({points},
{street}) that the builders fill with numbers and names read from the engines. A text that
depends on a count is a (singular, plural) pair: the language's plural rule picks the form
(Czech has three). Proper names (people, streets, parks, buildings) are facts of the engines'
data and are not translated; names that are messages (card names) carry a ``name:`` comment
(their translation may equal the English).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from service.i18n import Lang, T, plural, render_value

Plural = tuple[str, str]
"""(singular, plural) message ids of one text."""


class Words:
    """The catalogue's messages in one language."""

    def __init__(self, lang: Lang) -> None:
        self.lang = lang

    def __call__(self, msgid: str, **values: Any) -> str:
        """``msgid`` translated, its placeholders filled."""
        return T(msgid, **values).render(self.lang)

    def plural(self, forms: Plural, count: int, **values: Any) -> str:
        """The form of ``forms`` for ``count`` (``{n}``), filled with ``values``."""
        return plural(forms, count, **values).render(self.lang)

    def list(self, items: Iterable[str]) -> str:
        """Items joined as the language lists them ("A, B and C")."""
        return render_value(list(items), self.lang)


def numbers(values: list[int] | tuple[int, ...]) -> str:
    """Counts of a tiered rule written as 3 / 6 / 10 (language-neutral)."""
    return " / ".join(str(v) for v in values)
