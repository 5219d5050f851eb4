"""The message catalogues cannot go stale or half-translated (docs/testing.md, "Translations").

- ``messages.pot`` is what ``pybabel extract`` finds in the code today (re-extracted here);
- every message has a non-fuzzy translation in Czech and German, with the same placeholders;
- a Czech or German text equal to its English message fails, unless the message is marked
  as a name (a ``name:`` source comment, docs/decisions.md) or has no words;
- Czech has the three plural forms (1, 2-4, 5+: forms 0, 1, 2, pairwise different), German
  two;
- the compiled ``.mo`` files say exactly what the ``.po`` files say;
- German Ginkgopolis messages say they are Skyline's own terms.
"""

from __future__ import annotations

import gettext
import re
import string
from functools import cache
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog, Message
from babel.messages.mofile import read_mo
from babel.messages.plurals import get_plural
from babel.messages.pofile import read_po

from service.i18n import LOCALES, TEMPLATE
from service.i18n.tool import NAME_TAG, TRANSLATED, extract

GK_NOTE = "Skyline's own Ginkgopolis term"


@cache
def template() -> Catalog:
    with TEMPLATE.open("rb") as handle:
        return read_po(handle)


@cache
def catalogue(lang: str) -> Catalog:
    with (LOCALES / lang / "LC_MESSAGES" / "skyline.po").open("rb") as handle:
        return read_po(handle, locale=lang)


def messages(catalog: Catalog) -> list[Message]:
    return [m for m in catalog if m.id]


def ids(message: Message) -> tuple[str, ...]:
    return tuple(message.id) if isinstance(message.id, tuple | list) else (message.id,)


def strings(message: Message) -> tuple[str, ...]:
    value = message.string
    return tuple(value) if isinstance(value, tuple | list) else (value,)


def fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def is_name(message: Message) -> bool:
    return any(comment.startswith(NAME_TAG) for comment in message.auto_comments)


def wordless(text: str) -> bool:
    """Only placeholders, digits and punctuation ("{colour} {number}")."""
    return not re.search(r"[^\W\d_]", re.sub(r"\{[^}]*\}", "", text))


def test_there_are_messages_for_every_part_of_the_service() -> None:
    places = {location.split("/")[1] for m in messages(template())
              for location, _ in m.locations}
    assert {"errors.py", "catalogue", "texts", "games", "matches", "api"} <= places
    assert len(messages(template())) > 250


def test_the_template_is_what_the_code_says_today(tmp_path: Path) -> None:
    fresh = tmp_path / "messages.pot"
    extract(fresh)
    with fresh.open("rb") as handle:
        now = {m.id for m in messages(read_po(handle))}
    committed = {m.id for m in messages(template())}
    assert sorted(map(str, now - committed)) == [], "new messages: run `make translations`"
    assert sorted(map(str, committed - now)) == [], "gone messages: run `make translations`"


@pytest.mark.parametrize("lang", TRANSLATED)
def test_every_message_is_translated(lang: str) -> None:
    translated = {m.id: m for m in messages(catalogue(lang))}
    missing = [m.id for m in messages(template()) if m.id not in translated]
    assert missing == [], f"{lang}: run `make translations` (pybabel update)"
    for message in translated.values():
        assert not message.fuzzy, f"{lang}: fuzzy: {message.id!r}"
        assert all(strings(message)), f"{lang}: untranslated: {message.id!r}"
    obsolete = [m for m in translated if m not in {t.id for t in messages(template())}]
    assert obsolete == []


@pytest.mark.parametrize("lang", TRANSLATED)
def test_placeholders_are_kept(lang: str) -> None:
    for message in messages(catalogue(lang)):
        wanted = set().union(*(fields(i) for i in ids(message)))
        for text in strings(message):
            assert fields(text) == wanted, (lang, message.id, text)
            text.format(**{name: "x" for name in wanted})  # a valid format string


@pytest.mark.parametrize("lang", TRANSLATED)
def test_a_translation_equal_to_the_english_is_a_marked_name(lang: str) -> None:
    same = [
        message.id for message in messages(catalogue(lang))
        if any(text == english for text, english in zip(strings(message), ids(message),
                                                         strict=False))
        and not is_name(message) and not all(wordless(i) for i in ids(message))
    ]
    assert same == [], f"{lang}: translate these, or mark them `# name:` in the code"


def test_names_are_marked_in_the_template_and_kept_by_the_catalogues() -> None:
    names = {m.id for m in messages(template()) if is_name(m)}
    assert {"Gold Tycoon", "Market Shift", "Land Grab", "Construction Boom"} <= names
    for lang in TRANSLATED:
        assert names == {m.id for m in messages(catalogue(lang)) if is_name(m)}


def test_the_checks_catch_an_untranslated_entry() -> None:
    message = Message("Acquire lot {lot}", "Acquire lot {lot}")
    assert not is_name(message) and not wordless("Acquire lot {lot}")
    assert wordless("{colour} {number}") and wordless("-")
    assert fields("{player} built {tile} ({points}).") == {"player", "tile", "points"}


def _plural_index(lang: str, n: int) -> int:
    expression = catalogue(lang).plural_expr
    return int(gettext.c2py(expression)(n))


def test_czech_has_three_plural_forms_chosen_by_1_2_5() -> None:
    czech = catalogue("cs")
    assert czech.num_plurals == 3
    # The catalogue's rule picks the same form as CLDR's Czech rule for every count (Babel
    # releases spell the expression differently, so compare what it does, not its text).
    cldr = gettext.c2py(get_plural("cs").plural_expr)
    rule = gettext.c2py(czech.plural_expr)
    assert [rule(n) for n in range(200)] == [cldr(n) for n in range(200)]
    assert [_plural_index("cs", n) for n in (1, 2, 3, 4, 5, 11, 21, 0)] == [0, 1, 1, 1, 2, 2, 2, 2]
    plurals = [m for m in messages(czech) if isinstance(m.id, tuple)]
    assert len(plurals) > 20
    for message in plurals:
        forms = strings(message)
        assert len(forms) == 3, message.id
        assert len(set(forms)) == 3, f"Czech forms for 1, 2 and 5 must differ: {message.id}"


def test_german_has_two_plural_forms() -> None:
    german = catalogue("de")
    assert german.num_plurals == 2
    assert [_plural_index("de", n) for n in (1, 2, 5, 0)] == [0, 1, 1, 1]
    for message in messages(german):
        if isinstance(message.id, tuple):
            assert len(strings(message)) == 2, message.id


@pytest.mark.parametrize("lang", TRANSLATED)
def test_the_compiled_catalogue_matches_the_po_file(lang: str) -> None:
    with (LOCALES / lang / "LC_MESSAGES" / "skyline.mo").open("rb") as handle:
        compiled = read_mo(handle)

    def table(catalog: Catalog) -> dict[tuple[str, ...], tuple[str, ...]]:
        return {tuple(ids(m)): tuple(strings(m)) for m in messages(catalog) if not m.fuzzy}

    assert table(compiled) == table(catalogue(lang)), "run `make translations` to compile"
    assert compiled.plural_expr == catalogue(lang).plural_expr


def test_german_ginkgopolis_terms_are_marked_as_our_translation() -> None:
    for message in messages(catalogue("de")):
        files = {location for location, _ in message.locations}
        if files and all("ginkgopolis" in f for f in files):
            assert any(GK_NOTE in c for c in message.user_comments), message.id


def test_the_rulebooks_terms_are_used() -> None:
    czech = {m.id: m.string for m in messages(catalogue("cs"))}
    german = {m.id: m.string for m in messages(catalogue("de"))}
    # New York 1901: the Czech rulebook, the German review.
    assert czech["Land Grab"] == "Přivlastnění půdy"
    assert czech["Construction Boom"] == "Stavitelská horečka"
    assert czech["Generation King"] == "Král technologií"
    assert "pozemek" in str(czech["Acquire lot {lot}"])
    assert "Grundstück" in str(german["Acquire lot {lot}"])
    assert german["Master Architect"] == "Master Architekt"
    # Ginkgopolis: the Czech rulebook.
    assert czech["Exploit"] == "Zužitkování"
    assert czech["Build up"] == "Stavba patra"
    assert czech["Urbanize"] == "Urbanizace"
