"""Messages: English message ids with named placeholders, rendered in a language later.

The service decides *what* to say where it knows the facts (a refusal, an event, a move) and
the transport decides *in which language* once it knows the request's: a ``Text`` carries
the message id and its values until ``render(lang)``. Message ids are the English sentences
themselves, with ``str.format`` placeholders (``{version}``); ``pybabel extract`` finds them
through the markers below (``babel.cfg`` and the Makefile's ``translations`` target list the
keywords):

- ``T(msgid, **values)`` -> a ``Text`` (``gettext``);
- ``TN(singular, plural, n, **values)`` -> a ``Text`` whose form follows ``n`` (``ngettext``;
  ``{n}`` is ``n``);
- ``N_(msgid)`` marks a message kept as data (a dict of names) and returns it unchanged;
  ``NN_(singular, plural)`` does the same for a plural pair;
- ``ApiError.of(code, "literal detail")`` marks its literal detail (keyword ``of:2``).

A value may itself be a ``Text`` (rendered in the same language), or a list or tuple of
values (rendered, then joined as the language lists things: "A, B and C", "A, B a C").
A source comment starting with ``name:`` right above a message marks it as a name: its
translation may equal the English (docs/decisions.md, "Translations").
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from babel import Locale
from babel.lists import format_list

from .negotiation import DEFAULT_LANGUAGE, Lang
from .translations import translator


@dataclass(frozen=True, slots=True)
class Text:
    """A message and its values, not yet in any language."""

    msgid: str
    values: Mapping[str, Any] = field(default_factory=dict)
    plural: str | None = None
    """The plural message id (``TN``): the form is chosen by ``values["n"]``."""
    english: str | None = None
    """An English wording that replaces the message in English (an engine's own, more
    specific refusal: the other languages get the translated meaning of its code)."""

    def render(self, lang: Lang = DEFAULT_LANGUAGE) -> str:
        if lang == DEFAULT_LANGUAGE and self.english is not None:
            return self.english
        tr = translator(lang)
        values = {name: render_value(value, lang) for name, value in self.values.items()}
        count = self.values.get("n", 0)
        count = count if isinstance(count, int) else 0
        if self.plural is not None:
            template = tr.ngettext(self.msgid, self.plural, count)
        else:
            template = tr.gettext(self.msgid)
        if not values:
            return template
        try:
            return template.format(**values)
        except (KeyError, IndexError, ValueError):
            # A translation that does not fit its values (tests/i18n keeps them in step):
            # say it in English rather than fail the answer.
            english = self.msgid if self.plural is None or count == 1 else self.plural
            return english.format_map(_Missing(values))

    def __str__(self) -> str:
        return self.render(DEFAULT_LANGUAGE)


class _Missing(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def render_value(value: Any, lang: Lang) -> str:
    """A placeholder's value in ``lang``: a ``Text`` rendered, a list joined as a list."""
    if isinstance(value, Text | Sentences):
        return value.render(lang)
    if isinstance(value, Sequence) and not isinstance(value, str):
        items = [render_value(item, lang) for item in value]
        return format_list(items, locale=_locale(lang)) if items else ""
    return str(value)


@functools.cache
def _locale(lang: Lang) -> Locale:
    """Parsed once: babel reads a locale's data anew for every ``Locale`` it makes."""
    return Locale.parse(lang)


def render(text: Text | Sentences | str, lang: Lang = DEFAULT_LANGUAGE) -> str:
    """``text`` in ``lang``: a plain string is a message id without values (translated when
    the catalogue has it, else kept as it is)."""
    if isinstance(text, Text | Sentences):
        return text.render(lang)
    return translator(lang).gettext(text) if lang != DEFAULT_LANGUAGE else text


def T(msgid: str, **values: Any) -> Text:
    """A message with named placeholders (``pybabel`` keyword ``T``)."""
    return Text(msgid, values)


def TN(singular: str, plural: str, n: int, **values: Any) -> Text:
    """A message with a singular and a plural form chosen by ``n`` (keyword ``TN:1,2``)."""
    return Text(singular, {"n": n, **values}, plural=plural)


def N_(msgid: str) -> str:
    """Marks ``msgid`` for extraction and returns it (keyword ``N_``)."""
    return msgid


def NN_(singular: str, plural: str) -> tuple[str, str]:
    """Marks a plural pair for extraction and returns it (keyword ``NN_:1,2``)."""
    return singular, plural


def plural(forms: tuple[str, str], n: int, **values: Any) -> Text:
    """A ``Text`` of a pair marked with ``NN_``, its form chosen by ``n``."""
    return Text(forms[0], {"n": n, **values}, plural=forms[1])


@dataclass(frozen=True, slots=True)
class Sentences:
    """Whole sentences one after the other, each a message of its own (never a sentence
    assembled from pieces)."""

    parts: tuple[Text, ...]

    def render(self, lang: Lang = DEFAULT_LANGUAGE) -> str:
        return " ".join(part.render(lang) for part in self.parts)

    def __str__(self) -> str:
        return self.render(DEFAULT_LANGUAGE)


def sentences(*parts: Text | None) -> Sentences:
    """``parts`` (None: left out) as consecutive sentences."""
    return Sentences(tuple(part for part in parts if part is not None))
