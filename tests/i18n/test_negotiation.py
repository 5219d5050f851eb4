"""Which language a request gets (docs/api.md, "Languages")."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.i18n import LANGUAGES, negotiate
from service.i18n.negotiation import preferred_languages

TABLE = [
    # (Accept-Language, lang parameter, answered)
    (None, None, "en"),
    ("", None, "en"),
    ("cs", None, "cs"),
    ("de", None, "de"),
    ("en", None, "en"),
    ("cs-CZ", None, "cs"),
    ("de-AT,de;q=0.9", None, "de"),
    ("CS-cz", None, "cs"),
    ("cs_CZ", None, "cs"),
    ("fr", None, "en"),
    ("fr-FR, fr;q=0.9", None, "en"),
    ("fr, de;q=0.5", None, "de"),  # the best range the service has
    ("en;q=0.3, cs;q=0.9, de;q=0.5", None, "cs"),  # q-values, not the order
    ("de;q=0.5, cs;q=0.5", None, "de"),  # equal weights: the header's order
    ("cs;q=0, de", None, "de"),  # q=0: not acceptable
    ("cs;q=0", None, "en"),
    ("*", None, "en"),
    ("*, cs;q=0.5", None, "cs"),
    ("cs;q=abc, de", None, "de"),  # a malformed range is dropped
    ("cs;q=2", None, "en"),
    ("x-klingon, 123, de", None, "de"),
    ("zh-Hant-TW, de-CH-1996", None, "de"),
    # The parameter wins, whatever the header says.
    ("de", "cs", "cs"),
    ("cs", "de", "de"),
    ("cs", "en", "en"),
    (None, "cs-CZ", "cs"),
    (None, "DE", "de"),
    ("cs", "fr", "en"),  # an unknown parameter is English, not the header's language
    ("de", "", "en"),
    ("de", "??", "en"),
]


@pytest.mark.parametrize(("accept", "lang", "answered"), TABLE)
def test_negotiation(accept: str | None, lang: str | None, answered: str) -> None:
    assert negotiate(accept, lang) == answered


def test_ranges_are_ordered_by_weight_then_by_position() -> None:
    assert preferred_languages("a;q=0.2, b, c;q=0.9, d;q=0.9") == ["b", "c", "d", "a"]
    assert preferred_languages("a" * 2000) == []  # far too long: ignored


@given(st.text(max_size=300), st.one_of(st.none(), st.text(max_size=40)))
def test_any_header_and_parameter_give_a_language(accept: str, lang: str | None) -> None:
    assert negotiate(accept, lang) in LANGUAGES
