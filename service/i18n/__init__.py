"""Languages (issue 14): English, Czech and German.

- ``negotiate(accept_language, lang)``: the language of a request (``lang`` wins; q-values;
  ``cs-CZ`` is Czech; anything else English);
- ``T``/``TN``/``N_``/``NN_``: message markers (``messages.py``); ``Text.render(lang)``;
- ``translator(lang)``: the Babel catalogue of a language (``locales/``).

Every message id is English, with named placeholders; the Czech and German catalogues are
``locales/{cs,de}/LC_MESSAGES/skyline.po`` (compiled ``.mo`` beside them), the template
``locales/messages.pot`` is extracted from the code by ``pybabel extract`` (``make
translations``; ``tests/i18n`` fails on a missing or stale translation). This package imports
nothing of ours: every other unit may use it.
"""

from __future__ import annotations

from .messages import N_, NN_, TN, Sentences, T, Text, plural, render, render_value, sentences
from .negotiation import DEFAULT_LANGUAGE, LANGUAGES, Lang, is_language, negotiate
from .translations import DOMAIN, LOCALES, TEMPLATE, Translator, translator

__all__ = [
    "DEFAULT_LANGUAGE",
    "DOMAIN",
    "LANGUAGES",
    "LOCALES",
    "NN_",
    "N_",
    "TEMPLATE",
    "TN",
    "Lang",
    "Sentences",
    "T",
    "Text",
    "Translator",
    "is_language",
    "negotiate",
    "plural",
    "render",
    "render_value",
    "sentences",
    "translator",
]
